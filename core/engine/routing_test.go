package engine_test

// Hand-derived routing scenarios through the real engine
// (docs/model/engine.md ("Placement"), ("KV router")): two workers of one
// DP rank, block size 4, prefill 2 ms, decode 1 ms; every expected worker
// below is derived in the comment from the policy's rule, and round robin
// (w0, w1, w0, …) is given for contrast.

import (
	"testing"
)

// routed runs rows and checks the worker each request was routed to, and
// that every entry names the policy.
func routed(t *testing.T, w world, rows []row, policy string, want map[string]int) {
	t.Helper()
	o := runWorld(t, w, rows, nil)
	o.AllCompleted()
	for _, r := range rows {
		rec := o.Rec(r.ID)
		if len(rec.Routing) != 1 {
			t.Fatalf("%s: %d routing entries", r.ID, len(rec.Routing))
		}
		h := rec.Routing[0]
		if int(h.Worker) != want[r.ID] {
			t.Errorf("%s routed to w%d; want w%d", r.ID, h.Worker, want[r.ID])
		}
		if h.Policy == 0 {
			t.Errorf("%s: the entry names no policy (%s)", r.ID, policy)
		}
	}
}

// TestRouting_LeastLoaded: fewest running + queued requests, the lowest id
// among equals.
//
//	t=0  a (10 tokens out): w0 0, w1 0 → tie → w0. a runs to t=11.
//	t=1  b: w0 1 (a), w1 0 → w1; b is done at 3.
//	t=4  c: w0 1 (a), w1 0 → w1 (round robin: w0); c runs [4,6].
//	t=5  d: w0 1 (a), w1 1 (c) → tie → w0 (round robin: w1); d runs on w0
//	     with a until 9.
//	t=8  e: w0 2 (a, d), w1 0 → w1 (round robin: w0).
func TestRouting_LeastLoaded(t *testing.T) {
	w := world{G1: 64, Replicas: 2, Routing: "least_loaded"}
	rows := []row{
		{ID: "a", At: 0, Hash: []int{1}, Out: 10},
		{ID: "b", At: 1, Hash: []int{2}, Out: 1},
		{ID: "c", At: 4, Hash: []int{3}, Out: 1},
		{ID: "d", At: 5, Hash: []int{4}, Out: 1},
		{ID: "e", At: 8, Hash: []int{5}, Out: 1},
	}
	routed(t, w, rows, "least_loaded", map[string]int{"a": 0, "b": 1, "c": 1, "d": 0, "e": 1})
}

// TestRouting_SessionAffinity: a session's turns go to its first turn's
// rank (its home) while home is admissible: running + queued requests
// fewer than max_sequences, here 1.
//
//	t=0    L (10 out): tie → w0. A0: w0 1, w1 0 → w1, A's home.
//	t=2.5  M (10 out): w0 1 (L), w1 0 (A0 done at 2) → w1; M runs to 13.5.
//	t=3    A1 (A0 done at 2, delay 1): home w1 holds M, 1 < 1 fails: not
//	       admissible → least loaded: w0 1 (L), w1 1 (M) → tie → w0. A1
//	       waits for L (max_sequences 1), runs [11,13].
//	t=14   A2 (delay 1): home w1 is empty again → w1.
//
// Round robin: L w0, A0 w1, M w0, A1 w1, A2 w0.
func TestRouting_SessionAffinity(t *testing.T) {
	w := world{G1: 64, Replicas: 2, MaxSeq: 1, Routing: "session_affinity"}
	rows := []row{
		{ID: "L", At: 0, Hash: []int{1}, Out: 10},
		{ID: "A0", Session: "A", At: 0, Hash: []int{2}, Out: 1},
		{ID: "A1", Session: "A", Later: true, Delay: 1, Hash: []int{2, 3}, Out: 1},
		{ID: "A2", Session: "A", Later: true, Delay: 1, Hash: []int{2, 3, 4}, Out: 1},
		{ID: "M", At: 2.5, Hash: []int{5}, Out: 10},
	}
	routed(t, w, rows, "session_affinity", map[string]int{"L": 0, "A0": 1, "M": 1, "A1": 0, "A2": 1})
}

// kvRows: P (3 blocks) at 0; Q (P's 3 blocks + 1) and R (1 block of its
// own) at 3, after P is done (its blocks idle in its worker's G1).
var kvRows = []row{
	{ID: "P", At: 0, Hash: []int{1, 2, 3}, Out: 1},
	{ID: "Q", At: 3, Hash: []int{1, 2, 3, 4}, Out: 1},
	{ID: "R", At: 3, Hash: []int{9}, Out: 1},
}

// TestRouting_KVRouter: logit = 1 × prefill blocks + decode blocks, the
// lowest wins (bs 4).
//
//	P (12 tokens, 3 blocks), both empty: prefill 12/4 = 3, decode 0+3 = 3
//	  → 6 and 6; equal cached blocks (0) → the seeded draw: seed 0's first
//	  draw is 0.8915 → ⌊0.8915 × 2⌋ = 1 → w1.
//	Q (16 tokens, 4 blocks) at 3: w1 caches 3 leading blocks (idle):
//	  prefill (16−12)/4 = 1, decode 0+4−0 = 4 → 5; w0: 16/4 + 4 = 8 → w1.
//	R (4 tokens, 1 block), with Q queued on w1 (its fresh 4 tokens, 4
//	  blocks to come): w1 (4+4)/4 + (4+1) = 7; w0 4/4 + 1 = 2 → w0.
//
// Round robin: w0, w1, w0.
func TestRouting_KVRouter(t *testing.T) {
	w := world{G1: 64, Replicas: 2, Routing: "{policy: kv_router, seed: 0}"}
	routed(t, w, kvRows, "kv_router", map[string]int{"P": 1, "Q": 1, "R": 0})
	o := runWorld(t, w, kvRows, nil)
	if h := o.Rec("Q").Routing[0]; h.Overlap != 3 {
		t.Errorf("Q's overlap_blocks %d; want 3", h.Overlap)
	}
}

// TestRouting_KVRouterTemperature: temperature 1, seed 5 (draws 0.8053,
// 0.1818, 0.5475). Candidates in order w0, w1; p(i) ∝ exp(−(logit_i −
// min) / ((max − min) × 1)); the first whose cumulative p reaches the
// draw wins.
//
//	P: 6 and 6 → uniform, p(w0) = 0.5 < 0.8053 → w1.
//	Q: w0 8, w1 5 → p(w0) = e^−1 / (1 + e^−1) = 0.2689 ≥ 0.1818 → w0,
//	   the costlier worker.
//	R: w0 holds Q queued (its fresh 16 tokens, 4 blocks to come):
//	   (16+4)/4 + (4+1) = 10; w1 (P's blocks idle) 4/4 + 1 = 2 →
//	   p(w0) = 0.2689 < 0.5475 → w1.
func TestRouting_KVRouterTemperature(t *testing.T) {
	w := world{G1: 64, Replicas: 2, Routing: "{policy: kv_router, temperature: 1, seed: 5}"}
	routed(t, w, kvRows, "kv_router", map[string]int{"P": 1, "Q": 0, "R": 1})
}
