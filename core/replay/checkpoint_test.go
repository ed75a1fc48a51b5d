package replay

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/internal/harness"
	"github.com/kvsim/kvsim/core/record"
)

// Recording a pass window from a checkpoint gives the record and reports of
// recording it from the first pass, whatever windows the store served
// before (forward, back, past the end), with snapshots thinned out
// (docs/model/engine.md ("Checkpoints")).
func TestCheckpointsChangeNothing(t *testing.T) {
	taken, restored, jobs := 0, 0, 0
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
	t.Logf("%d windows recorded from checkpoints: %d snapshots taken, %d runs from one", jobs, taken, restored)
	if jobs < 200 || taken < 100 || restored < 50 {
		t.Errorf("%d windows, %d snapshots, %d restores: the worlds no longer test checkpoints", jobs, taken, restored)
	}
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
