package main

import (
	"encoding/json"
	"maps"

	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/wasm/proto"
)

// scrub is what the pass view's window moves share (docs/ui.md, "Window
// moves from checkpoints"): the inputs of the last job that kept only the
// pass view's window (PassesOnly), the workloads built from them, and each
// variant's engine checkpoints (replay.Checkpoints). The next such job
// with the same inputs re-runs each variant from the nearest checkpoint
// before its window instead of from the first pass; any other job drops
// them first, so a worker never holds them beside a run of its own.
var scrub struct {
	key       string
	traces    map[string]string // compared by content: an upload may change
	workloads *replay.Workloads
	cps       []*replay.Checkpoints
}

// ScrubBytes is the memory the checkpoints of one job may take in the
// worker, over all its variants (replay.Checkpoints.MaxBytes, which counts
// the identity pages they share once per run). On the Mooncake trace
// (pages about 50 MB, a checkpoint 23 MB) a single run keeps 6, and its
// worker stayed at 387 MiB over 8 window moves (256 MiB kept 8, at the
// same memory, and the moves were no faster); a three-connector compare
// keeps 2 per run.
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
	for i := range scrub.cps {
		scrub.cps[i] = &replay.Checkpoints{MaxBytes: ScrubBytes / int64(n)}
	}
	return scrub.workloads, scrub.cps
}

// dropScrub forgets the checkpoints (before a run that needs the memory).
func dropScrub() {
	scrub.key, scrub.traces, scrub.workloads, scrub.cps = "", nil, nil, nil
}
