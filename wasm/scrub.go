package main

import (
	"encoding/json"
	"maps"

	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/wasm/proto"
)

// scrub is what the pass view's window moves share (docs/ui.md, "Window
// moves from checkpoints"): the inputs of the last job that kept only the
// pass view's window (PassesOnly), the workloads built from them, and a
// single run's engine checkpoints (replay.Checkpoints; a compare keeps
// none, see ScrubBytes). The next such job with the same inputs re-runs
// from the nearest checkpoint before its window instead of from the first
// pass; any other job drops them first, so a worker never holds them
// beside a run of its own.
var scrub struct {
	key       string
	traces    map[string]string // compared by content: an upload may change
	workloads *replay.Workloads
	cps       []*replay.Checkpoints
}

// ScrubBytes is the memory the checkpoints of a single run may take in
// the worker (replay.Checkpoints.MaxBytes, which counts the identity pages
// they share once). On the Mooncake trace (pages about 50 MB, a checkpoint
// 23 MB, 51 MB with a 200,000-block G2 tier) it keeps 6, and the worker
// stayed at 387 MiB over 8 window moves (256 MiB kept 8 at the same
// memory, and the moves were no faster). A compare keeps none: its three
// runs' G2 checkpoints do not fit beside their windows (the run worker
// reached 701 MiB over 4 moves with a third of this each, against 528
// without, and the moves took 4.7–23.6 s against 3.4–20.8).
const ScrubBytes = 192 << 20

// scrubState returns the workloads and the checkpoints (one per variant)
// of a PassesOnly job with n variants, kept from the last one when its
// inputs are the same.
func (j *job) scrubState(n int) (*replay.Workloads, []*replay.Checkpoints) {
	key, err := json.Marshal(struct {
		Config, Name string
		Overrides    []string
		Variants     []proto.Variant
		MaxPasses    int64
	}{j.Config, j.Name, j.Overrides, j.Variants, j.MaxPasses})
	if err == nil && string(key) == scrub.key && len(scrub.cps) == n && maps.Equal(j.Traces, scrub.traces) {
		return scrub.workloads, scrub.cps
	}
	dropScrub()
	if err != nil {
		return replay.NewWorkloads(), make([]*replay.Checkpoints, n)
	}
	scrub.key, scrub.traces, scrub.workloads = string(key), j.Traces, replay.NewWorkloads()
	scrub.cps = make([]*replay.Checkpoints, n)
	if n == 1 { // a compare's runs re-run from the start (ScrubBytes)
		scrub.cps[0] = &replay.Checkpoints{MaxBytes: ScrubBytes}
	}
	return scrub.workloads, scrub.cps
}

// dropScrub forgets the checkpoints (before a run that needs the memory).
func dropScrub() {
	scrub.key, scrub.traces, scrub.workloads, scrub.cps = "", nil, nil, nil
}

// warmer is the warm-up of a single long run's checkpoints (serveWarm),
// or nil: the checkpoints of a run the pass view shows a window of, run
// in this worker or not, so that the first move and those far from
// every move before start near their window. A run that had no store
// (it ran here whole, not as a window move) gets one; a compare keeps
// none (ScrubBytes).
func (j *job) warmer(outs []runOut) func(more func() bool) (bool, int, error) {
	if len(outs) != 1 || outs[0].Record == nil || outs[0].Record.Windowed() == "" || outs[0].Output == nil || j.Part != nil {
		return nil
	}
	if len(j.checkpoints) != 1 || j.checkpoints[0] == nil {
		// a run that ran whole here (it dropped any store first): a new
		// store, with the workload the run read
		read := j.workloads
		j.workloads, j.checkpoints = j.scrubState(1)
		if read != nil {
			scrub.workloads, j.workloads = read, read
		}
	}
	cps := j.checkpoints[0]
	if cps == nil {
		return nil
	}
	job := j.replayJob(j.variants()[0])
	job.Checkpoints = cps
	limitMemory(true) // the run is over: the worker holds its window and the checkpoints
	return func(more func() bool) (bool, int, error) {
		done, err := cps.Warm(job, more)
		return done, cps.Kept(), err
	}
}
