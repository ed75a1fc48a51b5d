package main

import (
	"strings"
	"testing"

	"github.com/kvsim/kvsim/ui/state"
	"github.com/kvsim/kvsim/wasm/proto"
)

// TestMooncakePick: picking the Mooncake trace loads the preset, retires
// the guided example, fetches the trace once with progress, keeps Run off
// until it is here, then runs with the fetched text attached under the
// path the preset reads.
func TestMooncakePick(t *testing.T) {
	h := &nopHost{}
	a := NewRoot(h, "")
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgReady}, nil))
	a.Deliver(result(t, h, [][2]int64{{11488, 8800}, {14144, 6544}, {12432, 8368}}, nil))
	// the default page compares connectors, which need a G2 tier the
	// preset lacks: picking it switches to one run
	a.Panel.Traces.Pick(state.MooncakeTrace)
	if a.Compare.Set != nil {
		t.Errorf("still comparing %+v", a.Compare.Set)
	}
	if a.Panel.YAML != state.MooncakePreset() {
		t.Fatal("the preset was not loaded")
	}
	if len(h.fetches) != 1 || h.fetches[0].url != "traces/conversation_trace.jsonl.gz" {
		t.Fatalf("fetches %+v", h.fetches)
	}
	if a.ExampleApplies() {
		t.Error("the §A example box still applies")
	}
	if a.Runs.CanRun() || !strings.Contains(a.Runs.RunTitle(), "still being fetched") {
		t.Errorf("Run is on while fetching (title %q)", a.Runs.RunTitle())
	}
	h.fetches[0].progress(394326, 788651)
	html := render(t, a)
	mustContain(t, html, `id="mooncake-progress"`, "394,326 of 788,651 bytes", "Mooncake conversation (12,031 requests)",
		`id="mooncake-note"`, "Cut short")
	if strings.Contains(html, `id="example-box"`) {
		t.Error("the example box is shown")
	}
	n := len(h.posted)
	a.Runs.Run() // a click that reaches a disabled button does nothing
	if len(h.posted) != n {
		t.Error("a run started before the trace was here")
	}
	h.fetches[0].done("TRACE", nil)
	if !a.Runs.CanRun() || a.Panel.Err(state.FTrace) != "" {
		t.Fatalf("Run is off after the fetch: %q / %q", a.Runs.RunTitle(), a.Panel.Err(state.FTrace))
	}
	if html := render(t, a); strings.Contains(html, `id="mooncake-progress"`) || strings.Contains(html, `id="mooncake-error"`) {
		t.Error("progress or error shown after the fetch")
	}
	a.Runs.Run()
	m := h.posted[len(h.posted)-1]
	if m.Req.Op != proto.OpRun || len(m.Req.Run.Traces) != 1 || m.Req.Run.Traces[0].Path != "conversation_trace.jsonl" ||
		m.Texts[m.Req.Run.Traces[0].Text-1] != "TRACE" || m.Req.Run.Config != state.MooncakePreset() {
		t.Fatalf("run %+v texts %v", m.Req.Run, m.Texts)
	}
	// picking it again reuses the text
	a.Panel.Traces.Pick("g2-restore.jsonl")
	a.Panel.Traces.Pick(state.MooncakeTrace)
	if len(h.fetches) != 1 || !a.Panel.Traces.Mooncake() || a.Panel.Traces.Blocked() != "" {
		t.Errorf("fetched %d times; blocked %q", len(h.fetches), a.Panel.Traces.Blocked())
	}
}

// TestMooncakeFetchFailure: a failed fetch shows its cause and Retry,
// keeps Run off; Retry fetches again and a success enables Run.
func TestMooncakeFetchFailure(t *testing.T) {
	h := &nopHost{}
	a := NewRoot(h, "")
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgReady}, nil))
	a.Deliver(result(t, h, [][2]int64{{11488, 8800}, {14144, 6544}, {12432, 8368}}, nil))
	a.Panel.Traces.Pick(state.MooncakeTrace)
	h.fetches[0].done(nil, &state.FetchError{Status: 404, Msg: "Not Found"})
	want := "Could not fetch the Mooncake trace (traces/conversation_trace.jsonl.gz): the server answered HTTP 404."
	if a.Runs.CanRun() || !strings.HasPrefix(a.Runs.RunTitle(), want) {
		t.Errorf("after a 404 Run is on or says %q", a.Runs.RunTitle())
	}
	html := render(t, a)
	mustContain(t, html, `id="mooncake-error"`, want, `id="mooncake-retry"`)
	a.Panel.Traces.Retry()
	if len(h.fetches) != 2 || !a.Panel.Traces.Fetch.Busy() {
		t.Fatalf("Retry: %d fetches, phase %d", len(h.fetches), a.Panel.Traces.Fetch.Phase)
	}
	if html := render(t, a); strings.Contains(html, `id="mooncake-error"`) {
		t.Error("the error stays during the retry")
	}
	h.fetches[1].done(nil, &state.FetchError{Stalled: true, Msg: "stalled"})
	if !strings.Contains(a.Panel.Traces.Fetch.Err, "no data arrived for 30 s") {
		t.Errorf("stall message %q", a.Panel.Traces.Fetch.Err)
	}
	a.Panel.Traces.Retry()
	h.fetches[2].done("TRACE", nil)
	if !a.Runs.CanRun() {
		t.Errorf("Run off after a successful retry: %q", a.Runs.RunTitle())
	}
}

// TestMooncakeLink: a link whose config reads the Mooncake trace fetches
// it and runs once it is here (not before).
func TestMooncakeLink(t *testing.T) {
	frag := state.Share{YAML: state.MooncakePreset()}.Fragment()
	h := &nopHost{}
	a := NewRoot(h, frag)
	if len(h.fetches) != 1 {
		t.Fatalf("fetches %d", len(h.fetches))
	}
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgReady}, nil))
	if h.last().Op == proto.OpRun {
		t.Fatal("ran before the trace was here")
	}
	h.fetches[0].done("TRACE", nil)
	if r := h.last(); r.Op != proto.OpRun || len(r.Run.Traces) != 1 {
		t.Fatalf("no run after the fetch: %+v", r)
	}
}
