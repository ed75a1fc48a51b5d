package main

import (
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/sweep"
	"github.com/kvsim/kvsim/wasm/proto"
)

// roundTrip serves a request the way the worker does: encoded as the page
// encodes it, decoded, served, and the reply encoded and decoded again.
func roundTrip(t *testing.T, req proto.Request, in texts, progress func(*answer)) (proto.Reply, *answer) {
	t.Helper()
	if in == nil {
		in = textList(nil)
	}
	b, err := proto.EncodeRequest(&req)
	if err != nil {
		t.Fatal(err)
	}
	got, bad := proto.DecodeRequest(b)
	if bad != nil {
		t.Fatalf("%s: %s", b, bad.Error.Msg)
	}
	a := serve(&got, in, progress)
	rb, err := proto.EncodeReply(&a.reply)
	if err != nil {
		t.Fatal(err)
	}
	return proto.DecodeReply(rb), a
}

// text is the text a reply names.
func (a *answer) textOf(t *testing.T, r proto.TextRef) string {
	t.Helper()
	if r < 1 || int(r) > len(a.texts) {
		t.Fatalf("no text %d of %d", r, len(a.texts))
	}
	return a.texts[r-1].(string)
}

// TestServeRun: a run request with an uploaded trace (a text of the
// message) gives the golden reports, the view with its rows as a binary
// payload, progress replies, and the pass metadata; the report file comes
// from the kept run and, from another worker, from the run's spec.
func TestServeRun(t *testing.T) {
	c := goldenCases[0]
	trace := string(mustRead(t, "delta-sessions.jsonl"))
	run := &proto.RunJob{Config: string(mustRead(t, c.config)), Name: c.config, Requests: true, Passes: true,
		Variants: []proto.Variant{{Label: "simple", Sets: c.sets}},
		Traces:   []proto.TraceText{{Path: "delta-sessions.jsonl", Text: 1}}}
	progress := 0
	r, a := roundTrip(t, proto.Request{Op: proto.OpRun, ID: 7, Run: run}, textList{trace}, func(p *answer) {
		if p.reply.Type == proto.MsgProgress && p.reply.Progress != nil && p.reply.ID == 7 {
			progress++
		}
	})
	if r.Type != proto.MsgResult || r.ID != 7 || r.Error != nil || r.Result == nil || len(r.Result.Results) != 1 {
		t.Fatalf("reply %+v", r)
	}
	o := r.Result.Results[0]
	if o.Error != nil || o.View == nil {
		t.Fatalf("outcome %+v", o)
	}
	compareGolden(t, c.name, "prediction.json", []byte(a.textOf(t, o.Prediction)))
	compareGolden(t, c.name, "requests.jsonl", []byte(a.textOf(t, o.Requests)))
	if o.View.Restored != c.restored || o.View.Recomputed != c.recomputed || o.View.Label != "simple" {
		t.Errorf("view %+v", o.View)
	}
	rows, err := proto.DecodeRows(a.bins[o.Rows-1])
	if err != nil || len(rows) != 48 || rows[0].ID != "s0t0" {
		t.Errorf("rows: %d %v", len(rows), err)
	}
	if progress == 0 || len(r.Result.Passes) != 1 || !r.Result.Passes[0].Recorded || !r.Result.Indexing || a.next != 7 {
		t.Errorf("progress %d, passes %+v, indexing %v, next %d", progress, r.Result.Passes, r.Result.Indexing, a.next)
	}
	for _, runID := range []int{7, 99} {
		spec := *run
		f, fa := roundTrip(t, proto.Request{Op: proto.OpFile, ID: 8,
			File: &proto.FileJob{Run: runID, Variant: 0, Kind: proto.FileRequests, Spec: &spec}}, textList{trace}, nil)
		if f.Type != proto.MsgFile || f.Error != nil || f.File == nil {
			t.Fatalf("file (run %d): %+v", runID, f)
		}
		compareGolden(t, c.name, "requests.jsonl", []byte(fa.textOf(t, f.File.Text)))
	}
	// the index runs to its end, then a seek answers a frame
	var ir *proto.IndexReply
	for i := 0; i < 1000 && (ir == nil || !ir.Done); i++ {
		x, _ := roundTrip(t, proto.Request{Op: proto.OpIndex, ID: 7, Index: &proto.IndexJob{}}, nil, nil)
		ir = x.Index
	}
	if ir == nil || !ir.Done || len(ir.Timelines) != 1 || len(ir.Timelines[0]) != 1 {
		t.Fatalf("index %+v", ir)
	}
	s, sa := roundTrip(t, proto.Request{Op: proto.OpSeek, ID: 9, Seek: &proto.SeekJob{Run: 7, Passes: []int{3}}}, nil, nil)
	if s.Type != proto.MsgFrame || s.Frame == nil || len(s.Frame.Frames) != 1 || s.Frame.Frames[0].Meta == nil ||
		s.Frame.Frames[0].Meta.Pass != 3 {
		t.Fatalf("seek %+v", s)
	}
	var f proto.Frame
	if err := proto.DecodeFrame(sa.bins[s.Frame.Frames[0].Bin-1], &f); err != nil || len(f.G1) == 0 {
		t.Errorf("frame: %v", err)
	}
}

// TestServeSweep runs the default sweep through the sweep requests, the
// summaries travelling back as texts of the collect request.
func TestServeSweep(t *testing.T) {
	sweepCache.key, sweepCache.plan = "", nil
	spec := proto.SweepSpec{Config: string(mustRead(t, sweep.DefaultConfig)), Name: "traces/" + sweep.DefaultConfig, Vary: sweep.DefaultVary}
	p, _ := roundTrip(t, proto.Request{Op: proto.OpSweepPlan, ID: 3, SweepPlan: &proto.SweepPlanJob{Spec: spec}}, nil, nil)
	if p.Error != nil || p.SweepPlan == nil || p.SweepPlan.Points != 24 {
		t.Fatalf("plan %+v", p)
	}
	var sums textList
	collect := &proto.SweepCollectJob{Spec: spec}
	for i := 0; i < p.SweepPlan.Points; i++ {
		r, a := roundTrip(t, proto.Request{Op: proto.OpSweepPoint, ID: 3, SweepPoint: &proto.SweepPointJob{Spec: spec, Index: i}}, nil, nil)
		if r.Error != nil || r.SweepPoint == nil || r.SweepPoint.Index != i {
			t.Fatalf("point %d: %+v", i, r)
		}
		sums = append(sums, a.textOf(t, r.SweepPoint.Summary))
		collect.Summaries = append(collect.Summaries, proto.TextRef(len(sums)))
	}
	r, a := roundTrip(t, proto.Request{Op: proto.OpSweepCollect, ID: 3, SweepCollect: collect}, sums, nil)
	if r.Error != nil || r.SweepFiles == nil || len(r.SweepFiles.Curves.Restored) != 3 {
		t.Fatalf("collect %+v", r)
	}
	compareGolden(t, "sweep-A", "csv", []byte(a.textOf(t, r.SweepFiles.CSV)))
	compareGolden(t, "sweep-A", "json", []byte(a.textOf(t, r.SweepFiles.JSON)))
	// a failed point names itself
	bad := spec
	bad.Vary = []string{"connector=nope"}
	r, _ = roundTrip(t, proto.Request{Op: proto.OpSweepPoint, ID: 4, SweepPoint: &proto.SweepPointJob{Spec: bad, Index: 5}}, nil, nil)
	if r.Error == nil || r.SweepPoint == nil || r.SweepPoint.Index != 5 {
		t.Errorf("bad point %+v", r)
	}
}

// TestServeBadRequests: a request that does not decode, lacks its
// payload, names a text it does not carry or asks for an unknown op is
// answered with an error of the right reply type, never a panic.
func TestServeBadRequests(t *testing.T) {
	for _, c := range []struct {
		name, msg, typ string
		id             int
	}{
		{"not JSON", `{`, proto.MsgResult, 0},
		{"no op", `{"id":3}`, proto.MsgResult, 3},
		{"wrong type", `{"op":"check","id":4,"check":{"text":"x"}}`, proto.MsgChecked, 4},
		{"wrong id type", `{"op":"seek","id":"x"}`, proto.MsgFrame, 0},
	} {
		req, bad := proto.DecodeRequest([]byte(c.msg))
		if bad == nil {
			t.Errorf("%s: decoded as %+v", c.name, req)
			continue
		}
		if bad.Type != c.typ || bad.ID != c.id || bad.Error == nil || !strings.Contains(bad.Error.Msg, "could not read") {
			t.Errorf("%s: reply %+v", c.name, bad)
		}
	}
	for _, c := range []struct {
		name string
		req  proto.Request
		typ  string
	}{
		{"run without its job", proto.Request{Op: proto.OpRun, ID: 1}, proto.MsgResult},
		{"unknown op", proto.Request{Op: "nope", ID: 2}, proto.MsgResult},
		{"check without its text", proto.Request{Op: proto.OpCheck, ID: 3, Check: &proto.CheckJob{Name: "x", Text: 2}}, proto.MsgChecked},
		{"run without its trace", proto.Request{Op: proto.OpRun, ID: 4, Run: &proto.RunJob{Config: "x",
			Traces: []proto.TraceText{{Path: "t.jsonl", Text: 1}}}}, proto.MsgResult},
		{"collect without its summaries", proto.Request{Op: proto.OpSweepCollect, ID: 5, SweepCollect: &proto.SweepCollectJob{
			Spec: proto.SweepSpec{Config: string(mustRead(t, sweep.DefaultConfig)), Vary: sweep.DefaultVary}, Summaries: []proto.TextRef{1}}},
			proto.OpSweepCollect},
		{"seek of a run gone", proto.Request{Op: proto.OpSeek, ID: 6, Seek: &proto.SeekJob{Run: 12345}}, proto.MsgFrame},
		{"file of a run gone", proto.Request{Op: proto.OpFile, ID: 7, File: &proto.FileJob{Run: 12345}}, proto.MsgFile},
	} {
		r, _ := roundTrip(t, c.req, nil, nil)
		if r.Type != c.typ || r.ID != c.req.ID || r.Error == nil || r.Error.Msg == "" {
			t.Errorf("%s: reply %+v", c.name, r)
		}
	}
}

// TestServeReady: the worker's start answers every connector profile's
// policy, built from the rules table.
func TestServeReady(t *testing.T) {
	r, _ := roundTrip(t, proto.Request{Op: proto.OpInit}, nil, nil)
	if r.Type != proto.MsgReady || r.Error != nil || r.Ready == nil || len(r.Ready.Policies) != 3 {
		t.Fatalf("reply %+v", r)
	}
	for _, p := range r.Ready.Policies {
		if p.Connector == "" || !strings.HasPrefix(p.Line, "evicts "+p.Evicts) {
			t.Errorf("policy %+v", p)
		}
	}
}

// TestDebugJobRefused: the test-only debug job (it allocates until the
// program dies) is refused, with an error and no progress, unless the
// worker's test hook allows it.
func TestDebugJobRefused(t *testing.T) {
	progressed := 0
	r, _ := roundTrip(t, proto.Request{Op: proto.OpRun, ID: 7, Run: &proto.RunJob{Config: "x", Debug: &proto.DebugJob{AllocMiB: 64}}},
		nil, func(*answer) { progressed++ })
	if r.Type != proto.MsgResult || r.ID != 7 || r.Error == nil || r.Error.Msg != "debug jobs are for tests only" || progressed != 0 {
		t.Errorf("reply %+v, error %+v, %d progress replies", r, r.Error, progressed)
	}
}
