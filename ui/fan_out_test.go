package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/wasm/proto"
)

// fanReply is sweep worker k's reply r.
func fanReply(t *testing.T, k int, r proto.Reply, bins [][]byte, texts ...any) WorkerMsg {
	t.Helper()
	m := reply(t, r, bins, texts...)
	m.Worker = k
	return m
}

// TestFanOut: a compare whose records keep a window runs each run in a
// sweep worker of its own once the run worker says so; the results show
// when every run and the run worker's windows are in, the pass view reads
// the run worker's records, requests.jsonl replays the results' job and
// passes.jsonl the windows'. A sweep cannot start meanwhile; a helper that
// runs out of memory ends the compare with the run's number, and Cancel
// stops the helpers.
func TestFanOut(t *testing.T) {
	h := &nopHost{width: 600}
	a := NewRoot(h, "")
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgReady}, nil))
	job := h.last()
	if job.Run == nil || len(job.Run.Variants) != 3 || !job.Run.FanOut {
		t.Fatalf("the default compare posted %+v", job.Run)
	}
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgProgress, ID: job.ID, Progress: &proto.Progress{Variants: 3, FanOut: true}}, nil))
	if len(h.swept) != 3 {
		t.Fatalf("%d runs sent to the sweep's workers", len(h.swept))
	}
	for k, p := range h.swept {
		r := p.msg.Req.Run
		if p.w != k || r == nil || len(r.Variants) != 1 || r.Variants[0].Label != job.Run.Variants[k].Label || r.Passes || r.FanOut || r.Config != job.Run.Config {
			t.Errorf("run %d went to worker %d as %+v", k, p.w, r)
		}
	}
	a.SetView("sweep")
	if a.Sweep.CanRun() || !strings.Contains(render(t, a), `id="sweep-wait"`) {
		t.Error("a sweep can start while the compare uses its workers, or the page does not say why not")
	}
	a.SetView("run")
	a.Deliver(fanReply(t, 1, proto.Reply{Type: proto.MsgProgress, ID: h.swept[1].msg.Req.ID, Progress: &proto.Progress{Done: 30, Total: 60}}, nil))
	if a.Runs.ProgressMsg != "3 runs at once: 30 of 60 requests" {
		t.Errorf("progress %q", a.Runs.ProgressMsg)
	}
	for k, p := range h.swept {
		v := proto.View{Label: p.msg.Req.Run.Variants[0].Label, Restored: int64(k), Requests: 2, Completed: 2, RankPasses: 9000 + k}
		bins := [][]byte{proto.EncodeRows([]proto.Row{{ID: "s0t0", Session: "s0", TTFT: 2, Input: 256, Status: "completed"}})}
		a.Deliver(fanReply(t, k, proto.Reply{Type: proto.MsgResult, ID: p.msg.Req.ID, Result: &proto.RunResult{
			Results: []proto.Outcome{{Label: v.Label, View: &v, Rows: 1, Prediction: 1}}}}, bins, "{}"))
	}
	if !a.Runs.Running || len(a.Runs.Results) == 3 && a.Runs.Results[2].View != nil && a.Runs.Results[2].View.Restored == 2 {
		t.Fatal("the results show before the run worker's windows")
	}
	meta := []proto.PassMeta{{Recorded: true, BlockSize: 4, Stopped: true, Ranks: []proto.RankMeta{{Passes: 2000, Lines: 2000, First: 1, Ran: 2001, G1: 3}}}, {}, {}}
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgResult, ID: job.ID, Result: &proto.RunResult{Results: make([]proto.Outcome, 3), Passes: meta}}, nil))
	if a.Runs.Running || len(a.Runs.Results) != 3 || !strings.Contains(a.Runs.Status, "(3 runs at once)") {
		t.Fatalf("after every reply: running %v, %d results, status %q", a.Runs.Running, len(a.Runs.Results), a.Runs.Status)
	}
	for k, r := range a.Runs.Results {
		if r.View == nil || r.View.Restored != int64(k) || len(r.View.Rows) != 1 {
			t.Errorf("result %d: %+v", k, r.View)
		}
	}
	if seek := h.last(); seek.Seek == nil || seek.Seek.Run != job.ID {
		t.Errorf("the pass view asks %+v", seek)
	}
	// The window's bound is the longest rank of the results' runs.
	a.Runs.Passes.TypeFrom("9003")
	a.Runs.Passes.ShowFrom()
	if !strings.Contains(a.Runs.Passes.FromErr, "the longest rank ran 9,002 passes") || a.Runs.Running {
		t.Errorf("from 9,003: %q", a.Runs.Passes.FromErr)
	}
	a.Runs.Download(proto.FileRequests)
	if f := h.last().File; f == nil || f.Run == job.ID || f.Spec == nil || f.Spec.Passes || f.Spec.FanOut {
		t.Errorf("requests.jsonl asked as %+v", f)
	}
	a.Runs.fileID = 0
	a.Runs.Download(proto.FilePasses)
	if f := h.last().File; f == nil || f.Run != job.ID || f.Spec == nil || !f.Spec.PassesOnly || f.Spec.FanOut {
		t.Errorf("passes.jsonl asked as %+v", f)
	}

	// A helper that runs out of memory ends the compare, naming its run.
	a.Runs.Run()
	job = h.last()
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgProgress, ID: job.ID, Progress: &proto.Progress{Variants: 3, FanOut: true}}, nil))
	stopped := h.stopped
	a.Deliver(fanReply(t, 1, proto.Reply{Type: proto.MsgDead, ID: h.swept[len(h.swept)-2].msg.Req.ID, Error: &proto.Error{Kind: "memory", Msg: "out of memory"}}, nil))
	if a.Runs.Running || a.Runs.fan != nil || !strings.Contains(a.Runs.RunErr, "ran out of memory on run 2 of 3") || h.stopped != stopped+1 {
		t.Errorf("after a helper died: running %v, error %q, stops %d", a.Runs.Running, a.Runs.RunErr, h.stopped-stopped)
	}
	if a.Sweep.Err != "" || !a.Sweep.CanRun() {
		t.Errorf("the sweep took the compare's failure: %q", a.Sweep.Err)
	}
	// Cancel stops the helpers too.
	a.Runs.Run()
	job = h.last()
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgProgress, ID: job.ID, Progress: &proto.Progress{Variants: 3, FanOut: true}}, nil))
	a.Runs.Cancel()
	if a.Runs.Running || a.Runs.fan != nil || h.stopped != stopped+2 {
		t.Errorf("after Cancel: running %v, stops %d", a.Runs.Running, h.stopped-stopped)
	}
}

// TestSplits: a run is split into as many parts as it may be, at most
// the cores it has to itself.
func TestSplits(t *testing.T) {
	for _, tc := range []struct {
		parts    []int
		n, cores int
		want     []int
	}{
		{[]int{2}, 1, 2, []int{2}},
		{[]int{4}, 1, 2, []int{2}},
		{[]int{4}, 1, 8, []int{4}},
		{[]int{1}, 1, 8, []int{1}},
		{[]int{2, 1, 2}, 3, 8, []int{2, 1, 2}},
		{[]int{4, 4, 4}, 3, 8, []int{2, 2, 2}},
		{[]int{2, 2, 2}, 3, 2, []int{1, 1, 1}},
		{nil, 3, 8, []int{1, 1, 1}},
	} {
		if got := splits(tc.parts, tc.n, tc.cores); !slices.Equal(got, tc.want) {
			t.Errorf("splits(%v, %d, %d) = %v, want %v", tc.parts, tc.n, tc.cores, got, tc.want)
		}
	}
}

// TestFanOutParts: a single run that splits runs as parts in two sweep
// workers (RunJob.Part); the progress is the slower part's; once both
// parts are in, the worker of the last one merges them (OpMerge, the
// parts as its binary payloads); a merge that says the run must run whole
// runs it whole there, and its results show with the run worker's window.
func TestFanOutParts(t *testing.T) {
	h := &nopHost{width: 600}
	a := NewRoot(h, "")
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgReady}, nil))
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgResult, ID: h.last().ID, Result: &proto.RunResult{Results: make([]proto.Outcome, 3)}}, nil))
	a.Runs.Compare.Set = nil
	a.Runs.Run()
	job := h.last()
	if job.Run == nil || len(job.Run.Variants) != 1 || !job.Run.FanOut {
		t.Fatalf("a single run posted %+v", job.Run)
	}
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgProgress, ID: job.ID, Progress: &proto.Progress{Variants: 1, FanOut: true, Parts: []int{4}}}, nil))
	if len(h.swept) != 2 {
		t.Fatalf("%d jobs sent to the sweep's workers, want 2 parts (2 cores)", len(h.swept))
	}
	for i, p := range h.swept {
		r := p.msg.Req.Run
		if p.w != i || r == nil || r.Part == nil || *r.Part != (proto.Part{Of: 2, Index: i}) || r.Passes || r.FanOut || len(r.Variants) != 1 {
			t.Fatalf("part %d went to worker %d as %+v", i, p.w, r)
		}
	}
	a.Deliver(fanReply(t, 0, proto.Reply{Type: proto.MsgProgress, ID: h.swept[0].msg.Req.ID, Progress: &proto.Progress{Done: 50, Total: 60}}, nil))
	a.Deliver(fanReply(t, 1, proto.Reply{Type: proto.MsgProgress, ID: h.swept[1].msg.Req.ID, Progress: &proto.Progress{Done: 20, Total: 60}}, nil))
	if a.Runs.ProgressMsg != "1 run in 2 parts at once: 20 of 60 requests" {
		t.Errorf("progress %q", a.Runs.ProgressMsg)
	}
	for _, i := range []int{1, 0} {
		a.Deliver(fanReply(t, i, proto.Reply{Type: proto.MsgResult, ID: h.swept[i].msg.Req.ID, Result: &proto.RunResult{
			Results: []proto.Outcome{{Label: "x", Part: 1}}}}, [][]byte{{byte(i)}}))
	}
	if len(h.swept) != 3 {
		t.Fatalf("%d jobs posted after both parts, want a merge", len(h.swept))
	}
	merge := h.swept[2]
	if m := merge.msg.Req.Merge; merge.msg.Req.Op != proto.OpMerge || merge.w != 0 || m == nil || len(m.Parts) != 2 ||
		len(merge.msg.Bins) != 2 || merge.msg.Bins[0][0] != 0 || merge.msg.Bins[1][0] != 1 || m.Spec.Part != nil || len(m.Spec.Variants) != 1 {
		t.Fatalf("merge posted to worker %d as %+v with %v", merge.w, merge.msg.Req, merge.msg.Bins)
	}
	a.Deliver(fanReply(t, 0, proto.Reply{Type: proto.MsgResult, ID: merge.msg.Req.ID, Error: &proto.Error{Kind: proto.ErrKindHeldBack, Msg: "held back"}}, nil))
	whole := h.swept[len(h.swept)-1]
	if r := whole.msg.Req.Run; len(h.swept) != 4 || whole.w != 0 || r == nil || r.Part != nil || len(r.Variants) != 1 {
		t.Fatalf("after a held-back merge: %d jobs, the last %+v", len(h.swept), whole.msg.Req)
	}
	// The run worker's window comes first and is indexed before the run
	// is merged: the pass view takes the index when it opens.
	meta := []proto.PassMeta{{Recorded: true, BlockSize: 4, Stopped: true, Ranks: []proto.RankMeta{{Passes: 2000, Lines: 2000, First: 1, Ran: 2001, G1: 3}}}}
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgResult, ID: job.ID, Result: &proto.RunResult{Results: make([]proto.Outcome, 1), Passes: meta, Indexing: true}}, nil))
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgIndex, ID: job.ID, Index: &proto.IndexReply{Indexed: 5, Total: 10}}, nil))
	if !a.Runs.Running {
		t.Fatal("the results show before the run is merged")
	}
	v := proto.View{Label: "x", Restored: 7, Requests: 2, Completed: 2, RankPasses: 9000}
	bins := [][]byte{proto.EncodeRows([]proto.Row{{ID: "s0t0", Session: "s0", TTFT: 2, Input: 256, Status: "completed"}})}
	a.Deliver(fanReply(t, 0, proto.Reply{Type: proto.MsgResult, ID: whole.msg.Req.ID, Result: &proto.RunResult{
		Results: []proto.Outcome{{Label: "x", View: &v, Rows: 1, Prediction: 1}}}}, bins, "{}"))
	if pv := a.Runs.Passes.pv; pv == nil || pv.Indexed != 5 || pv.Total != 10 {
		t.Errorf("the pass view did not take the index reply that came before it opened: %+v", pv)
	}
	if a.Runs.Running || len(a.Runs.Results) != 1 || a.Runs.Results[0].View == nil || a.Runs.Results[0].View.Restored != 7 ||
		!strings.Contains(a.Runs.Status, "(1 run in 2 parts at once)") {
		t.Fatalf("after every reply: running %v, results %+v, status %q", a.Runs.Running, a.Runs.Results, a.Runs.Status)
	}
}

// TestFanOutIndexesAfterTheRuns: the run worker of a fanned-out job does
// not index its windows on its own (it would take CPU from the runs); once
// the results are in, the page asks it to (one index request for the
// windows' job).
func TestFanOutIndexesAfterTheRuns(t *testing.T) {
	h := &nopHost{width: 600}
	a := NewRoot(h, "")
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgReady}, nil))
	job := h.last()
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgProgress, ID: job.ID, Progress: &proto.Progress{Variants: 3, FanOut: true}}, nil))
	meta := []proto.PassMeta{{Recorded: true, BlockSize: 4, Stopped: true, Ranks: []proto.RankMeta{{Passes: 2000, Lines: 2000, First: 1, Ran: 2001, G1: 3}}}, {}, {}}
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgResult, ID: job.ID, Result: &proto.RunResult{Results: make([]proto.Outcome, 3), Passes: meta, Indexing: true}}, nil))
	indexAsks := func() int {
		n := 0
		for _, m := range h.posted {
			if m.Req.Op == proto.OpIndex && m.Req.ID == job.ID {
				n++
			}
		}
		return n
	}
	for k, p := range h.swept {
		if indexAsks() != 0 {
			t.Fatalf("the page asked for the index before run %d's results", k)
		}
		v := proto.View{Label: p.msg.Req.Run.Variants[0].Label, Requests: 2, Completed: 2}
		bins := [][]byte{proto.EncodeRows([]proto.Row{{ID: "s0t0", Session: "s0", TTFT: 2, Input: 256, Status: "completed"}})}
		a.Deliver(fanReply(t, k, proto.Reply{Type: proto.MsgResult, ID: p.msg.Req.ID, Result: &proto.RunResult{
			Results: []proto.Outcome{{Label: v.Label, View: &v, Rows: 1, Prediction: 1}}}}, bins, "{}"))
	}
	if a.Runs.Running || indexAsks() != 1 {
		t.Errorf("after the results: running %v, %d index requests", a.Runs.Running, indexAsks())
	}
}
