package main

import (
	"reflect"
	"slices"
	"testing"

	"github.com/kvsim/kvsim/wasm/proto"
)

// splitRun is the §A (docs/model/cases.md) config on two replicas under synthetic requests
// arriving at a fixed rate, with a private SimpleCPU tier: a run that may
// be split across workers (replay.Parts).
func splitRun(t *testing.T, requests bool) *proto.RunJob {
	return &proto.RunJob{Config: string(mustRead(t, "connectors.yaml")), Name: "connectors.yaml", Requests: requests,
		Overrides: []string{"engine.workers.aggregated.parallelism.replicas=2",
			"traffic={source: {type: synthetic, input_tokens: 256, output_tokens: 24, cached_prefix_tokens: 128}, load: {type: constant_rate, requests_per_second: 40}, stop: {requests: 400}}",
			hostOffload + "={num_host_blocks: 256, connector: simple_cpu_v0_32}"},
		Variants: []proto.Variant{{Label: "split"}}}
}

// TestPartsAndMerge: the parts of a run that splits, each run as its own
// job (RunJob.Part) and merged from their payloads in another order
// (OpMerge), answer the whole run's results: the same view, rows,
// prediction.json and requests.jsonl. Parts that are missing or not parts
// are refused with an error reply.
func TestPartsAndMerge(t *testing.T) {
	whole, wa := roundTrip(t, proto.Request{Op: proto.OpRun, ID: 1, Run: splitRun(t, true)}, nil, nil)
	if whole.Error != nil || whole.Result.Results[0].Error != nil {
		t.Fatalf("whole run: %+v", whole.Result.Results[0].Error)
	}
	var bins [][]byte
	for i := range 2 {
		run := splitRun(t, false)
		run.Part = &proto.Part{Of: 2, Index: i}
		r, a := roundTrip(t, proto.Request{Op: proto.OpRun, ID: 2 + i, Run: run}, nil, nil)
		if r.Error != nil || len(r.Result.Results) != 1 || r.Result.Results[0].Part == 0 || r.Result.Results[0].View != nil {
			t.Fatalf("part %d: %+v", i, r)
		}
		bins = append(bins, a.bins[r.Result.Results[0].Part-1])
	}
	slices.Reverse(bins)
	merge := &proto.MergeJob{Spec: *splitRun(t, true), Parts: []proto.BinRef{1, 2}}
	m, ma := roundTrip(t, proto.Request{Op: proto.OpMerge, ID: 9, Merge: merge}, payloads{bins: bins}, nil)
	if m.Type != proto.MsgResult || m.Error != nil || len(m.Result.Results) != 1 || m.Result.Results[0].Error != nil {
		t.Fatalf("merge: %+v", m)
	}
	got, want := m.Result.Results[0], whole.Result.Results[0]
	gv, wv := *got.View, *want.View
	gv.ElapsedMs, wv.ElapsedMs = 0, 0
	if !reflect.DeepEqual(gv, wv) {
		t.Errorf("merged view %+v, whole %+v", gv, wv)
	}
	if ma.textOf(t, got.Prediction) != wa.textOf(t, want.Prediction) || ma.textOf(t, got.Requests) != wa.textOf(t, want.Requests) {
		t.Error("merged prediction.json or requests.jsonl differ from the whole run's")
	}
	if !slices.Equal(ma.bins[got.Rows-1], wa.bins[want.Rows-1]) {
		t.Error("merged rows differ from the whole run's")
	}
	for name, bad := range map[string]payloads{"one part": {bins: bins[:1]}, "not parts": {bins: [][]byte{{1, 2}, {3}}}} {
		job := *merge
		if name == "one part" {
			job.Parts = job.Parts[:1]
		}
		r, _ := roundTrip(t, proto.Request{Op: proto.OpMerge, ID: 10, Merge: &job}, bad, nil)
		if r.Type != proto.MsgResult || r.ID != 10 || r.Error == nil {
			t.Errorf("%s: merged (%+v)", name, r)
		}
	}
	r, _ := roundTrip(t, proto.Request{Op: proto.OpMerge, ID: 11, Merge: merge}, nil, nil)
	if r.Error == nil {
		t.Error("a merge without its payloads merged")
	}
}

// TestSingleRunFansOutWhenItSplits: a single run that may fan out
// (RunJob.FanOut) does when its records keep a window and it splits: the
// fan-out progress gives each variant's parts; one that does not split
// runs here as before.
func TestSingleRunFansOutWhenItSplits(t *testing.T) {
	for _, tc := range []struct {
		requests string
		parts    []int // nil: no fan-out
	}{{"6000", []int{2}}, {"300", nil}} {
		run := splitRun(t, false)
		run.Overrides[1] = "traffic={source: {type: synthetic, input_tokens: 16, output_tokens: 2}, load: {type: constant_rate, requests_per_second: 400}, stop: {requests: " + tc.requests + "}}"
		run.Passes, run.FanOut = true, true
		var parts []int
		fanned := 0
		r, _ := roundTrip(t, proto.Request{Op: proto.OpRun, ID: 5, Run: run}, nil, func(p *answer) {
			if pr := p.reply.Progress; pr != nil && pr.FanOut {
				fanned++
				parts = pr.Parts
			}
		})
		if r.Error != nil || len(r.Result.Results) != 1 || r.Result.Results[0].Error != nil {
			t.Fatalf("%s sessions: %+v", tc.requests, r.Result.Results[0].Error)
		}
		if fanned > 1 || !slices.Equal(parts, tc.parts) || (r.Result.Results[0].View == nil) != (tc.parts != nil) {
			t.Errorf("%s sessions: %d fan-outs, parts %v (want %v), view %v", tc.requests, fanned, parts, tc.parts, r.Result.Results[0].View != nil)
		}
	}
}
