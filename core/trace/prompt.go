package trace

// PromptLengths returns the prompt length of every turn of session i,
// assuming every earlier turn completed with its full OutputLength (the
// engine may end a turn early at context_length, or reject it).
//
// With Accumulate, prompt(k) = prompt(k−1) + output(k−1) + content(k)
// (docs/model/traffic.md ("Prompt construction")); otherwise each turn's
// content is its whole prompt.
func (w *Workload) PromptLengths(i int) []int {
	turns := w.Sessions[i].Turns
	out := make([]int, len(turns))
	prompt := 0
	for k := range turns {
		if w.Accumulate {
			if k > 0 {
				prompt += turns[k-1].OutputLength
			}
			prompt += turns[k].ContentLength
		} else {
			prompt = turns[k].ContentLength
		}
		out[k] = prompt
	}
	return out
}

// AppendContent appends the turn's own tokens, the run-length expansion
// of Content truncated to ContentLength, to dst.
func (t *Turn) AppendContent(dst []uint32) []uint32 {
	left := t.ContentLength
	run := max(t.RunLength, 1)
	for _, id := range t.Content {
		if left <= 0 {
			break
		}
		n := min(run, left)
		for range n {
			dst = append(dst, id)
		}
		left -= n
	}
	return dst
}
