package state

import (
	"fmt"
	"strings"

	"github.com/kvsim/kvsim/wasm/proto"
)

// Explain is a guided example's closing paragraph, built from the runs on
// the page (their views and, for a compare, the worker's divergences on
// the first rank): it quotes no figure the runs did not produce. runs and
// views go by result index; a nil view is a failed run. "" when the runs
// are not the example's (or not there yet).
func (e *Example) Explain(runs []Run, views []*proto.View, divs []proto.Divergence) string {
	for _, v := range views {
		if v == nil {
			return ""
		}
	}
	if len(views) == 0 || len(runs) != len(views) {
		return ""
	}
	if e.Compare != nil {
		return explainCompare(runs, views, divs)
	}
	return explainRestore(views[0])
}

// explainCompare says what each run restored and, for each later run, the
// first divergence from the first and its consequence in tokens.
func explainCompare(runs []Run, views []*proto.View, divs []proto.Divergence) string {
	var parts []string
	for i, v := range views {
		parts = append(parts, fmt.Sprintf("%s %s", runs[i].Short, Thousands(v.Restored)))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "In these runs the tokens restored from G2 at first admission are: %s.", strings.Join(parts, ", "))
	for i := range divs {
		d := &divs[i]
		if d.Rank != 0 || d.Run >= len(runs) || d.Refused != "" {
			continue
		}
		first, this := runs[0], runs[d.Run]
		if d.Pass == 0 {
			fmt.Fprintf(&b, " %s and %s hold the same blocks in every pass.", this.Short, first.Short)
			continue
		}
		fmt.Fprintf(&b, " %s first differs from %s at pass %d; ", this.Short, first.Short, d.Pass)
		b.WriteString(strings.TrimPrefix(Consequence(first, this, d), "Consequence: "))
	}
	return b.String()
}

// explainRestore says what the request named "restore" reused and when
// its first token came, against the others.
func explainRestore(v *proto.View) string {
	var restore *proto.Row
	var others []string
	for i := range v.Rows {
		r := &v.Rows[i]
		if r.ID == "restore" {
			restore = r
		} else if r.TTFT >= 0 {
			others = append(others, fmt.Sprintf("%s %s ms", r.ID, Ms(r.TTFT)))
		}
	}
	if restore == nil {
		return ""
	}
	s := fmt.Sprintf("In this run \"restore\" reuses %s of its %s prompt tokens from G2 and %s from G1, and recomputes %s; its first token comes %s ms after it arrives",
		Thousands(int64(restore.Host)), Thousands(int64(restore.Input)), Thousands(int64(restore.G1)), Thousands(int64(restore.Recomputed)), Ms(restore.TTFT))
	if len(others) > 0 {
		s += " (time to first token of the others: " + strings.Join(others, ", ") + ")"
	}
	return s + "."
}
