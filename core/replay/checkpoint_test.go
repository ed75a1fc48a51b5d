package replay

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/internal/harness"
	"github.com/kvsim/kvsim/core/record"
	"github.com/kvsim/kvsim/traces"
)

// Recording a pass window from a checkpoint gives the record and reports of
// recording it from the first pass, whatever windows the store served
// before (forward, back, past the end), with snapshots thinned out
// (docs/model/engine.md ("Checkpoints")), and with warm-ups (Warm) run in
// slices of a few instants between the windows in half of the worlds.
func TestCheckpointsChangeNothing(t *testing.T) {
	taken, restored, jobs, warmed := 0, 0, 0, 0
	for seed := uint64(1); seed <= 60; seed++ {
		_, yaml, rows := randomWorldOf(seed)
		open := func(string) (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader(harness.RowsJSONL(rows))), nil
		}
		job := Job{Name: "world.yaml", Config: []byte(yaml), Traces: Traces{Files: open}, Workloads: NewWorkloads()}
		full, err := Run(job)
		if err != nil {
			continue // refused by validation, as TestRandomWorldsRunClean counts
		}
		most := full.RankPasses
		cps := &Checkpoints{Max: 3, Every: int64(1 + seed%5)}
		if seed%3 == 0 {
			cps.MaxBytes = 1 // none fits: the store turns off after its first
		}
		rng := rand.New(rand.NewPCG(seed, 21))
		for range 6 {
			if seed%2 == 1 {
				job.Checkpoints, job.Check = cps, true
				instants := 0
				for range 1 + rng.IntN(4) {
					done, err := cps.Warm(job, func() bool { instants++; return instants%9 != 0 })
					if err != nil {
						t.Fatalf("world %d: warm-up: %v", seed, err)
					}
					if done {
						warmed++
						break
					}
				}
			}
			from := 1 + rng.IntN(most+4)
			spec := fmt.Sprintf("%d:%d", from, from+rng.IntN(12))
			win, err := record.ParseWindow(spec)
			if err != nil {
				t.Fatal(err)
			}
			job.Capture = Capture{Passes: true, Window: win, StopAfterWindow: true}
			job.Checkpoints, job.Check = nil, false
			want, werr := Run(job)
			job.Checkpoints, job.Check = cps, true
			got, gerr := Run(job)
			if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
				t.Fatalf("world %d, window %s: error %v; from the start %v", seed, spec, gerr, werr)
			}
			if werr != nil {
				continue
			}
			jobs++
			var a, b bytes.Buffer
			werr, gerr = want.Record.WriteWindow(&a, win), got.Record.WriteWindow(&b, win)
			switch {
			case fmt.Sprint(werr) != fmt.Sprint(gerr):
				t.Errorf("world %d, window %s: writing the record: %v; from the start %v", seed, spec, gerr, werr)
			case !bytes.Equal(a.Bytes(), b.Bytes()):
				t.Errorf("world %d, window %s: the record from a checkpoint differs from the one from the start\n%s\n%s", seed, spec, yaml, firstDiff(a.String(), b.String()))
			case got.Stopped != want.Stopped || got.RankPasses != want.RankPasses:
				t.Errorf("world %d, window %s: stopped %v after %d passes; from the start %v after %d", seed, spec, got.Stopped, got.RankPasses, want.Stopped, want.RankPasses)
			case !bytes.Equal(got.SummaryJSON(), want.SummaryJSON()) || !bytes.Equal(got.Prediction, want.Prediction):
				t.Errorf("world %d, window %s: the reports differ\n%s\n%s", seed, spec, got.SummaryJSON(), want.SummaryJSON())
			}
		}
		if cps.MaxBytes == 1 && (cps.Restored > 0 || len(cps.snaps) > 0 || cps.Taken > 1) {
			t.Errorf("world %d: a store with no room took %d snapshots, kept %d, served %d runs", seed, cps.Taken, len(cps.snaps), cps.Restored)
		}
		taken += cps.Taken
		restored += cps.Restored
	}
	t.Logf("%d windows recorded from checkpoints: %d snapshots taken, %d runs from one, %d warm-ups ended", jobs, taken, restored, warmed)
	if jobs < 200 || taken < 100 || restored < 50 || warmed < 20 {
		t.Errorf("%d windows, %d snapshots, %d restores: the worlds no longer test checkpoints", jobs, taken, restored)
	}
}

// windowJSONL is rec's passes.jsonl of win.
func windowJSONL(t *testing.T, rec *record.Record, win record.Window) string {
	t.Helper()
	var b strings.Builder
	if err := rec.WriteWindow(&b, win); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// firstDiff shows the first line where two records differ.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range min(len(w), len(g)) {
		if w[i] != g[i] {
			return fmt.Sprintf("line %d:\nfrom the start:   %s\nfrom checkpoint: %s", i+1, w[i], g[i])
		}
	}
	return fmt.Sprintf("%d lines; from the start %d", len(g), len(w))
}

// TestWarmSpreadsTheSnapshots: a warm-up (Checkpoints.Warm), run in
// slices, takes the run to its end and leaves the store's snapshots spread
// over it, so that a window near the end is then recorded from a snapshot
// near it (and as from the start); a second warm-up has nothing to do,
// and a job with another config drops the snapshots and warms again.
func TestWarmSpreadsTheSnapshots(t *testing.T) {
	data, err := traces.Read("connectors.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tr := connectorsTrace(t, 400)
	job := Job{Name: "connectors.yaml", Config: data, Sets: benchSets, Traces: Traces{Inline: tr}, Workloads: NewWorkloads()}
	full, err := Run(job)
	if err != nil {
		t.Fatal(err)
	}
	cps := &Checkpoints{Max: 4, Every: 200}
	job.Checkpoints = cps
	steps, instants := 0, 0
	for done := false; !done; steps++ {
		if done, err = cps.Warm(job, func() bool { instants++; return instants%500 != 0 }); err != nil {
			t.Fatal(err)
		}
		if steps > 10_000 {
			t.Fatal("the warm-up never ends")
		}
	}
	groups := full.Stats.Passes
	var at []int64
	for _, s := range cps.snaps {
		at = append(at, s.group)
	}
	t.Logf("%d group passes; warmed in %d steps, %d snapshots taken, kept at %v", groups, steps, cps.Taken, at)
	if len(at) != cps.Max || at[0] > int64(groups)/3 || at[len(at)-1] < int64(groups)*2/3 {
		t.Errorf("snapshots at group passes %v of %d: not spread over the run", at, groups)
	}
	taken := cps.Taken
	if done, _ := cps.Warm(job, func() bool { return true }); !done || cps.Taken != taken {
		t.Errorf("a warmed store warmed again: done %v, %d snapshots taken after %d", done, cps.Taken, taken)
	}
	most := full.RankPasses
	win, err := record.ParseWindow(fmt.Sprintf("%d:%d", most-30, most-10))
	if err != nil {
		t.Fatal(err)
	}
	job.Capture = Capture{Passes: true, Window: win, StopAfterWindow: true}
	got, err := Run(job)
	if err != nil {
		t.Fatal(err)
	}
	job.Checkpoints = nil
	want, err := Run(job)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := windowJSONL(t, want.Record, win), windowJSONL(t, got.Record, win); a != b {
		t.Errorf("the window after a warm-up differs from the one from the start\n%s", firstDiff(a, b))
	}
	if cps.Restored != 1 {
		t.Errorf("the window near the end ran from %d snapshots; want 1", cps.Restored)
	}
	job.Checkpoints, job.Sets = cps, append(slices.Clone(benchSets), "traffic.load.concurrency=32")
	if done, err := cps.Warm(job, func() bool { return false }); done || err != nil || cps.Kept() != 0 {
		t.Errorf("another config's warm-up: done %v, %v, %d snapshots kept", done, err, cps.Kept())
	}
}
