package trace

import (
	"reflect"
	"testing"

	"github.com/kvsim/kvsim/core/vtime"
)

// prompts returns the prompt of every turn of session i as the engine
// builds it, with distinct stand-in output tokens (above every content id)
// for accumulated turns.
func prompts(w *Workload, i int) [][]uint32 {
	var out [][]uint32
	var acc []uint32
	gen := GeneratedTokenBase + uint32(i)<<16
	for k := range w.Sessions[i].Turns {
		tu := &w.Sessions[i].Turns[k]
		if !w.Accumulate {
			acc = acc[:0]
		} else if k > 0 {
			for range w.Sessions[i].Turns[k-1].OutputLength {
				acc = append(acc, gen)
				gen++
			}
		}
		acc = tu.AppendContent(acc)
		out = append(out, append([]uint32(nil), acc...))
	}
	return out
}

func checkIDsBelow(t *testing.T, w *Workload) {
	t.Helper()
	for _, s := range w.Sessions {
		for _, tu := range s.Turns {
			for _, id := range tu.Content {
				if id >= w.NumContentIDs {
					t.Fatalf("%s: content id %d >= NumContentIDs %d", s.ID, id, w.NumContentIDs)
				}
			}
		}
	}
}

func TestSynthetic(t *testing.T) {
	w := Synthetic(SyntheticSpec{InputTokens: 100, OutputTokens: 7, CachedPrefixTokens: 32, Requests: 3, EngineBlockSize: 16})
	if len(w.Sessions) != 3 || w.Rows != 3 || w.Accumulate {
		t.Fatalf("%+v", w)
	}
	checkIDsBelow(t, w)
	var all [][]uint32
	for i, s := range w.Sessions {
		if s.ID != "session_"+itoa(i) || len(s.Turns) != 1 || s.ArrivalMs != 0 {
			t.Fatalf("session %+v", s)
		}
		tu := s.Turns[0]
		if tu.ContentLength != 100 || tu.OutputLength != 7 || tu.RunLength != 16 || len(tu.Content) != 7 || tu.OutputTokens != nil {
			t.Errorf("turn %+v", tu)
		}
		all = append(all, tu.AppendContent(nil))
	}
	// First 32 tokens identical, everything after unique to its request.
	seen := map[uint32]int{}
	for r, p := range all {
		if len(p) != 100 {
			t.Fatalf("prompt length %d", len(p))
		}
		if !reflect.DeepEqual(p[:32], all[0][:32]) {
			t.Errorf("request %d prefix differs", r)
		}
		for _, id := range p[32:] {
			if o, ok := seen[id]; ok && o != r {
				t.Fatalf("token %d shared by requests %d and %d", id, o, r)
			}
			seen[id] = r
		}
		for _, id := range p[:32] {
			if _, ok := seen[id]; ok {
				t.Fatalf("prefix token %d also used after the prefix", id)
			}
		}
	}
	if w.NumContentIDs != 2+3*5 {
		t.Errorf("NumContentIDs %d", w.NumContentIDs)
	}
}

func TestSyntheticUnalignedPrefixAndEdges(t *testing.T) {
	// 24 is not a multiple of 16: the run length becomes gcd(16, 24) = 8
	// so exactly 24 tokens are shared.
	w := Synthetic(SyntheticSpec{InputTokens: 40, OutputTokens: 1, CachedPrefixTokens: 24, Requests: 2, EngineBlockSize: 16})
	a, b := w.Sessions[0].Turns[0].AppendContent(nil), w.Sessions[1].Turns[0].AppendContent(nil)
	if w.Sessions[0].Turns[0].RunLength != 8 || !reflect.DeepEqual(a[:24], b[:24]) || a[24] == b[24] {
		t.Errorf("unaligned prefix: %v / %v", a, b)
	}
	checkIDsBelow(t, w)
	for _, s := range []SyntheticSpec{
		{},
		{InputTokens: -5, OutputTokens: -1, CachedPrefixTokens: -3, Requests: 2, EngineBlockSize: -1},
		{InputTokens: 10, CachedPrefixTokens: 50, Requests: 1, EngineBlockSize: 4},
		{InputTokens: 10, Requests: -1, EngineBlockSize: 4},
	} {
		w := Synthetic(s)
		checkIDsBelow(t, w)
		for _, sess := range w.Sessions {
			if got := len(sess.Turns[0].AppendContent(nil)); got != max(s.InputTokens, 0) {
				t.Errorf("%+v: prompt %d", s, got)
			}
		}
	}
}

// TestSyntheticSessionsCumulative is
// docs/model/cases.md ("Case D: smaller checks"): new 8, output 2, three
// turns ⇒ prompts of 8, 18 and 28 tokens.
func TestSyntheticSessionsCumulative(t *testing.T) {
	w := SyntheticSessions(SessionSpec{NewInputTokensPerTurn: 8, OutputTokensPerTurn: 2, Turns: 3, Sessions: 2, EngineBlockSize: 4, InterTurnDelayMs: 5})
	if !w.Accumulate || w.Rows != 6 || len(w.Sessions) != 2 {
		t.Fatalf("%+v", w)
	}
	checkIDsBelow(t, w)
	for i := range w.Sessions {
		if got := w.PromptLengths(i); !reflect.DeepEqual(got, []int{8, 18, 28}) {
			t.Errorf("session %d prompt lengths %v", i, got)
		}
		for k, p := range prompts(w, i) {
			if len(p) != []int{8, 18, 28}[k] {
				t.Errorf("session %d turn %d expanded prompt %d", i, k, len(p))
			}
		}
		var delays []vtime.Time
		for _, tu := range w.Sessions[i].Turns {
			delays = append(delays, tu.DelayMs)
		}
		if !reflect.DeepEqual(delays, []vtime.Time{0, 5, 5}) {
			t.Errorf("delays %v", delays)
		}
	}
	// No sharing without prefix groups: all content ids distinct.
	seen := map[uint32]bool{}
	for _, s := range w.Sessions {
		for _, tu := range s.Turns {
			for _, id := range tu.Content {
				if seen[id] {
					t.Fatalf("content id %d reused", id)
				}
				seen[id] = true
			}
		}
	}
	if w.NumContentIDs != uint32(len(seen)) {
		t.Errorf("NumContentIDs %d, distinct %d", w.NumContentIDs, len(seen))
	}
}

func TestSyntheticSessionsPrefixGroups(t *testing.T) {
	// 10 blocks per turn, ratio 0.25 → round(2.5) = 3 group blocks.
	w := SyntheticSessions(SessionSpec{NewInputTokensPerTurn: 40, OutputTokensPerTurn: 1, Turns: 2, Sessions: 5, PrefixGroups: 2, SharedPrefixRatio: 0.25, EngineBlockSize: 4})
	checkIDsBelow(t, w)
	first := func(i, k int) []uint32 { return w.Sessions[i].Turns[k].Content }
	for i := range 5 {
		g := first(i%2, 0)[:3]
		for k := range 2 {
			c := first(i, k)
			if !reflect.DeepEqual(c[:3], g) {
				t.Errorf("session %d turn %d group blocks %v, want %v", i, k, c[:3], g)
			}
		}
	}
	if reflect.DeepEqual(first(0, 0)[:3], first(1, 0)[:3]) {
		t.Error("groups 0 and 1 share blocks")
	}
	// The rest of each delta is unique.
	seen := map[uint32]bool{}
	for i := range 5 {
		for k := range 2 {
			for _, id := range first(i, k)[3:] {
				if seen[id] {
					t.Fatalf("fresh id %d reused", id)
				}
				seen[id] = true
			}
		}
	}
	// Ratio without groups, or groups without ratio: nothing shared.
	for _, s := range []SessionSpec{
		{NewInputTokensPerTurn: 8, OutputTokensPerTurn: 1, Turns: 2, Sessions: 3, SharedPrefixRatio: 1, EngineBlockSize: 4},
		{NewInputTokensPerTurn: 8, OutputTokensPerTurn: 1, Turns: 2, Sessions: 3, PrefixGroups: 3, EngineBlockSize: 4},
	} {
		w := SyntheticSessions(s)
		if w.NumContentIDs != 3*2*2 {
			t.Errorf("%+v: NumContentIDs %d", s, w.NumContentIDs)
		}
	}
	// Ratio 1 with one group: every session's first turn is identical.
	w = SyntheticSessions(SessionSpec{NewInputTokensPerTurn: 10, OutputTokensPerTurn: 1, Turns: 2, Sessions: 3, PrefixGroups: 1, SharedPrefixRatio: 1, EngineBlockSize: 4})
	if !reflect.DeepEqual(prompts(w, 0)[0], prompts(w, 2)[0]) || w.NumContentIDs != 3 {
		t.Errorf("ratio 1: %v %v ids %d", prompts(w, 0)[0], prompts(w, 2)[0], w.NumContentIDs)
	}
}

func TestSyntheticSessionsEdges(t *testing.T) {
	for _, s := range []SessionSpec{
		{},
		{Turns: 3, Sessions: -1},
		{Turns: 0, Sessions: 4, NewInputTokensPerTurn: 4},
		{Turns: 2, Sessions: 2, NewInputTokensPerTurn: -4, OutputTokensPerTurn: -1, EngineBlockSize: 0, SharedPrefixRatio: 7, PrefixGroups: 9, InterTurnDelayMs: -3},
		{Turns: 2, Sessions: 2, NewInputTokensPerTurn: 5, EngineBlockSize: 2, SharedPrefixRatio: -1, PrefixGroups: 1},
	} {
		w := SyntheticSessions(s)
		checkIDsBelow(t, w)
		if w.Rows != len(w.Sessions)*max(s.Turns, 0) {
			t.Errorf("%+v: rows %d", s, w.Rows)
		}
		for _, sess := range w.Sessions {
			for _, tu := range sess.Turns {
				if tu.DelayMs < 0 || tu.OutputLength < 0 || len(tu.AppendContent(nil)) != max(s.NewInputTokensPerTurn, 0) {
					t.Errorf("%+v: turn %+v", s, tu)
				}
			}
		}
	}
}
