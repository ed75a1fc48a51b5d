package replay

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/internal/harness"
	"github.com/kvsim/kvsim/core/record"
)

// TestStopAfterWindow: a run that stops once every rank has run the last
// pass of its record's window (Capture.StopAfterWindow, the page's pass
// view) keeps the record the whole run keeps, byte for byte, over random
// worlds and windows at their start, middle and end; it is cut short
// when events remain after the window, and then it says so.
func TestStopAfterWindow(t *testing.T) {
	stopped, whole := 0, 0
	for seed := uint64(1); seed <= 60; seed++ {
		_, yaml, rows := randomWorldOf(seed)
		open := func(string) (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader(harness.RowsJSONL(rows))), nil
		}
		job := Job{Name: "world.yaml", Config: []byte(yaml), Traces: Traces{Files: open}, Capture: Capture{Passes: true}}
		full, err := Run(job)
		if err != nil {
			continue // refused by validation, as TestRandomWorldsRunClean counts
		}
		most := 0
		for k := range full.Record.Ranks {
			most = max(most, full.Record.RunPasses(k))
		}
		if full.RankPasses != most {
			t.Errorf("world %d: Output.RankPasses %d; the record's longest rank ran %d passes", seed, full.RankPasses, most)
		}
		for _, w := range [][2]int{{1, 5}, {most / 3, most/3 + 10}, {most - 3, most + 20}} {
			spec := fmt.Sprintf("%d:%d", max(w[0], 1), max(w[1], 1))
			win, err := record.ParseWindow(spec)
			if err != nil {
				t.Fatal(err)
			}
			job.Capture = Capture{Passes: true, Window: win}
			want, err := Run(job)
			if err != nil {
				continue // a window of no pass is refused, stopped or not
			}
			job.Capture.StopAfterWindow = true
			got, err := Run(job)
			if err != nil {
				t.Fatalf("world %d, window %s: stopped run: %v", seed, spec, err)
			}
			if windowJSONL(t, want.Record, win) != windowJSONL(t, got.Record, win) {
				t.Errorf("world %d, window %s: the stopped run's record differs from the whole run's\n%s", seed, spec, yaml)
			}
			if got.Stopped {
				stopped++
				if got.Stats.Passes > want.Stats.Passes || got.Prediction != nil {
					t.Errorf("world %d, window %s: stopped after %d of %d passes, prediction %d bytes", seed, spec,
						got.Stats.Passes, want.Stats.Passes, len(got.Prediction))
				}
			} else {
				whole++
				if !bytes.Equal(got.Prediction, want.Prediction) {
					t.Errorf("world %d, window %s: not stopped, yet its prediction.json differs", seed, spec)
				}
			}
		}
	}
	t.Logf("%d runs stopped after their window, %d ran whole", stopped, whole)
	if stopped < 30 || whole < 10 {
		t.Errorf("%d stopped and %d whole runs: the worlds no longer test both", stopped, whole)
	}
}
