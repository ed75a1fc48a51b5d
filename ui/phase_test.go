package main

import (
	"strings"
	"testing"

	"github.com/kvsim/kvsim/ui/state"
	"github.com/kvsim/kvsim/wasm/proto"
)

// TestWarmupPhase: the pass view labels a warmed run's preparation passes,
// the first pass after the barrier and later ones, per rank; a run without
// warmup gets no label.
func TestWarmupPhase(t *testing.T) {
	meta := []proto.PassMeta{{Recorded: true, Warmup: true, BarrierMs: 20,
		Ranks: []proto.RankMeta{{Passes: 15, Prep: 10}, {Passes: 15, Prep: 9}}}}
	pv := &passState{Meta: meta}
	for _, c := range []struct {
		rank, pass  int
		want, class string
	}{
		{0, 1, "preparation pass 1 of 10", "prep"},
		{0, 10, "preparation pass 10 of 10", "prep"},
		{0, 11, "first pass after the warmup barrier (20", "profile"},
		{1, 10, "first pass after the warmup barrier", "profile"},
		{1, 12, "after the warmup barrier (20", "profile"},
	} {
		pv.Rank, pv.Pass = c.rank, c.pass
		if got := pv.phase(); !strings.HasPrefix(got, c.want) || pv.phaseClass() != c.class {
			t.Errorf("rank %d pass %d: %q (%s), want %q (%s)", c.rank, c.pass, got, pv.phaseClass(), c.want, c.class)
		}
	}
	pv.Meta[0].Warmup = false
	if got := pv.phase(); got != "" {
		t.Errorf("without warmup: %q", got)
	}
	if got := (*passState)(nil).phase(); got != "" {
		t.Errorf("nil: %q", got)
	}
}

// TestUploadFormats: the upload offers the agentic formats; weka takes
// block size 0 (the corpus's block_size) and the others refuse it, next
// to the input and with Run off.
func TestUploadFormats(t *testing.T) {
	a := NewRoot(&nopHost{}, "#ex=B")
	tp := a.Panel.Traces
	mustContain(t, render(t, a), `value="agentic_mooncake"`, `value="weka"`)
	tp.OnUpFormat("weka")
	if tp.UpBlock != 0 {
		t.Errorf("weka block size %d, want 0", tp.UpBlock)
	}
	tp.OnUpBlock("0")
	if e := a.Panel.Err(state.FUpBlock); e != "" {
		t.Errorf("weka refuses 0: %q", e)
	}
	tp.OnUpFormat("mooncake")
	if tp.UpBlock != 16 {
		t.Errorf("mooncake block size %d, want 16", tp.UpBlock)
	}
	tp.OnUpBlock("0")
	if e := a.Panel.Err(state.FUpBlock); !strings.Contains(e, "positive") || a.Runs.CanRun() {
		t.Errorf("mooncake block 0: %q, run allowed %v", e, a.Runs.CanRun())
	}
	mustContain(t, render(t, a), `id="err-upblock"`)
}
