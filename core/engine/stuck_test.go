package engine_test

import (
	"slices"
	"testing"
)

// TestPreemptedRequestLargerThanG1 documents a gap: R1's prompt plus
// generated tokens outgrow the 5-block G1 (8 + 19 tokens of KV need 7
// blocks). R1 preempts R2, then itself; re-admission needs 6 blocks, more
// than G1 has. vLLM rejects only a fresh request for that; without the
// Decision of docs/model/pass.md ("Rejections at admission") R1 would fail the
// admission test forever, block R2 behind it, and the run would end with both
// requests neither completed nor rejected.
func TestPreemptedRequestLargerThanG1(t *testing.T) {
	w := world{G1: 5, MaxSeq: 2}
	rows := []row{
		{ID: "R1", At: 0, Hash: []int{1, 2}, In: 8, Out: 20},
		{ID: "R2", At: 0, Hash: []int{3}, In: 3, Out: 20},
	}
	o := runWorld(t, w, rows, nil)
	var stuck []string
	for id, r := range o.Recs {
		if r.Status == "" {
			stuck = append(stuck, id)
		}
	}
	slices.Sort(stuck)
	if len(stuck) > 0 {
		t.Fatalf("model gap: the run ended with %v in flight (no terminal status, no error); a re-admission that can never fit G1 is neither rejected nor reported", stuck)
	}
}
