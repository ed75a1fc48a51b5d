package main

import (
	"strings"
	"testing"

	"github.com/kvsim/kvsim/ui/state"
	"github.com/kvsim/kvsim/wasm/proto"
)

// TestAgenticReportSection: a run whose view has agentic sections shows
// their cards (after the summary cards) and, on demand, the per-lane
// table; a run without them shows no section.
func TestAgenticReportSection(t *testing.T) {
	h := &nopHost{}
	a := NewRoot(h, "#ex=B")
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgReady}, nil))
	a.Runs.Compare.Set = nil
	send := func(ag *proto.Agentic) {
		a.Runs.Run()
		req := h.last()
		view := proto.View{Label: "run", Requests: 2, Completed: 2, Agentic: ag}
		bins := [][]byte{proto.EncodeRows(nil)}
		res := &proto.RunResult{Results: []proto.Outcome{{Label: "run", View: &view, Rows: 1, Prediction: 1}}}
		a.Deliver(reply(t, proto.Reply{Type: proto.MsgResult, ID: req.ID, Result: res}, bins, "{}"))
	}
	send(nil)
	if html := render(t, a); strings.Contains(html, `id="agentic-report"`) {
		t.Error("a run without agentic sections shows them")
	}
	send(&proto.Agentic{Seed: 7, Lanes: []proto.AgenticLane{{Lane: 0, TStarMs: 91.5, LastMs: 300, History: 1, Remaining: 3, Primers: 1}},
		Warmup: &proto.AgenticWarmup{BarrierMs: 20, QuiescentMs: 20, Lanes: []proto.AgenticWarmupLane{{Primers: 1, Warmups: 10}}},
		Profile: &proto.AgenticProfile{StartMs: 20, CutoffMs: 1520, GraceEndMs: 1520, FinishedAtMs: 1520, Closed: true,
			PlaysStarted: 1200, Issued: 3600, Successful: 3600}})
	html := render(t, a)
	mustContain(t, html, `id="agentic-report"`, `id="card-ag-snapshot"`, `id="card-ag-warmup"`, `id="card-ag-requests"`,
		`id="card-ag-deadline"`, "3,600 / 3,600", "1,500", "1,200 plays started", `id="agentic-lanes-toggle"`)
	if strings.Contains(html, `id="agentic-lanes"`) {
		t.Error("the lane table is open before the toggle")
	}
	a.Runs.Agentic.Toggle()
	mustContain(t, render(t, a), `id="agentic-lanes"`, "91.5")
}

// TestProfileKnobControls: with a profile on, the trace panel shows its
// grace, drain and idle-cap controls (the drain's hint says it is not
// modelled); a refused value shows the parser's message under its control
// and turns Run off, and a good one edits the YAML.
func TestProfileKnobControls(t *testing.T) {
	h := &nopHost{}
	a := NewRoot(h, "#ex=B")
	text, err := state.UseUpload(a.Panel.YAML, "ag.jsonl", "agentic_mooncake", 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	a.Panel.OnYAML(text)
	if html := render(t, a); strings.Contains(html, `id="f-profile_drain"`) {
		t.Error("profile knobs without a profile")
	}
	a.Panel.OnField(state.FLanes, "1")
	a.Panel.OnField(state.FSnapshotSeed, "3")
	a.Panel.OnField(state.FProfileSeconds, "60")
	html := render(t, a)
	mustContain(t, html, `id="f-profile_grace"`, `id="f-profile_drain"`, `id="f-profile_tree_idle"`, `id="f-profile_global_idle"`,
		`id="profile_drain-hint"`, "not modelled")
	if v := a.Panel.Value(state.FProfileDrain); v != "10" {
		t.Errorf("drain shows %q, want the default 10", v)
	}
	a.Panel.OnField(state.FProfileGlobalIdle, "0")
	if e := a.Panel.Err(state.FProfileGlobalIdle); !strings.Contains(e, "global_idle_cap_seconds") || a.Runs.CanRun() {
		t.Errorf("global idle 0: %q, run allowed %v", e, a.Runs.CanRun())
	}
	mustContain(t, render(t, a), `id="err-profile_global_idle"`)
	a.Panel.OnField(state.FProfileGlobalIdle, "5")
	if e := a.Panel.Err(state.FProfileGlobalIdle); e != "" || !strings.Contains(a.Panel.YAML, "global_idle_cap_seconds: 5") {
		t.Errorf("global idle 5: %q\n%s", e, a.Panel.YAML)
	}
}
