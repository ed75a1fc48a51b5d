package main

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vugu/vugu"
	"github.com/vugu/vugu/staticrender"

	"github.com/kvsim/kvsim/ui/state"
	"github.com/kvsim/kvsim/wasm/proto"
)

// render builds the page with vugu's static renderer, as the browser's
// render loop would, and returns its HTML.
func render(t *testing.T, a *Root) string {
	t.Helper()
	env, err := vugu.NewBuildEnv()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := staticrender.New(&buf).Render(env.RunBuild(a)); err != nil {
		t.Fatal(err)
	}
	a.AfterRender()
	return buf.String()
}

// fieldErrs lists the panel's field errors.
func fieldErrs(p *ConfigPanel) []string {
	var out []string
	for f, e := range p.errs {
		if e != "" {
			out = append(out, state.Field(f).String()+": "+e)
		}
	}
	return out
}

func mustContain(t *testing.T, html string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(html, p) {
			t.Errorf("the page lacks %q", p)
		}
	}
}

// reply is a worker's reply as the host hands it to the page: encoded as
// the worker encodes it and decoded as the host decodes it, with its
// binary payloads and texts (bins[i] is BinRef i+1, texts[i] TextRef i+1).
func reply(t *testing.T, r proto.Reply, bins [][]byte, texts ...any) WorkerMsg {
	t.Helper()
	b, err := proto.EncodeReply(&r)
	if err != nil {
		t.Fatal(err)
	}
	return readReply(b, bins, texts, -1)
}

// result builds the worker's reply to the last run message, with the
// given restored/recomputed per variant.
func result(t *testing.T, h *nopHost, nums [][2]int64, passes []proto.PassMeta) WorkerMsg {
	t.Helper()
	req := h.last()
	if req.Op != proto.OpRun || req.Run == nil {
		t.Fatalf("last message %+v", req)
	}
	res := &proto.RunResult{Passes: passes}
	var bins [][]byte
	var texts []any
	for i, v := range req.Run.Variants {
		view := proto.View{Label: v.Label, Restored: nums[i][0], Recomputed: nums[i][1], Requests: 2, Completed: 2,
			Turns: []proto.Turn{{Turn: 0, Requests: 2, Recomputed: 512}}}
		bins = append(bins, proto.EncodeRows([]proto.Row{{ID: "s0t0", Session: "s0", TTFT: 2, Input: 256, Recomputed: 256, Status: "completed"},
			{ID: "s1t0", Session: "s1", TTFT: 5, Input: 256, Recomputed: 256, Status: "completed"}}))
		texts = append(texts, "{}")
		res.Results = append(res.Results, proto.Outcome{Label: v.Label, View: &view, Rows: proto.BinRef(len(bins)),
			Prediction: proto.TextRef(len(texts))})
	}
	return reply(t, proto.Reply{Type: proto.MsgResult, ID: req.ID, Result: res}, bins, texts...)
}

// TestDefaultPageAndRun: the page opens on the §A (docs/model/cases.md) example in compare
// mode, runs it when the worker is ready, and shows one row per run.
func TestDefaultPageAndRun(t *testing.T) {
	h := &nopHost{}
	a := NewRoot(h, "")
	html := render(t, a)
	mustContain(t, html, `id="run"`, `id="f-g1"`, `id="f-g2"`, `id="conn-simple_cpu_v0_32"`, `id="yaml"`, `id="compare-setup"`,
		`id="example-box"`, `id="passview"`, "Why the eviction order matters", `id="f-pd"`, "split each request", `id="view-sweep"`)
	if !a.Runs.Busy() {
		t.Error("the default page does not plan its run")
	}
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgReady}, nil))
	run := h.last()
	if run.Op != proto.OpRun || run.Run == nil || len(run.Run.Variants) != 3 || !run.Run.Passes {
		t.Fatalf("run message %+v", run)
	}
	// progress needs no render; results do
	if a.Deliver(reply(t, proto.Reply{Type: proto.MsgProgress, ID: run.ID, Progress: &proto.Progress{Done: 10, Total: 48, Variants: 3}}, nil)) {
		t.Error("a progress message asked for a render")
	}
	if a.Runs.Pct() == "0.0%" {
		t.Error("progress not taken")
	}
	if !a.Deliver(result(t, h, [][2]int64{{11488, 8800}, {14144, 6544}, {12432, 8368}}, nil)) {
		t.Error("results asked for no render")
	}
	html = render(t, a)
	mustContain(t, html, "11,488", "14,144", "12,432", "8,368", `class="cmp-row sel"`, "s1t0", "Done in")
	if a.Runs.Runs != 1 || a.Runs.Running {
		t.Errorf("runs %d running %v", a.Runs.Runs, a.Runs.Running)
	}
	// the request table sorts and pages
	a.Runs.Table.SortBy("ttft")
	if rows := a.Runs.Table.Rows(); len(rows) != 2 || rows[0].ID != "s1t0" {
		t.Errorf("sorted rows %+v", rows)
	}
	a.Runs.Table.SortBy("ttft") // a second click reverses
	if rows := a.Runs.Table.Rows(); len(rows) != 2 || rows[0].ID != "s0t0" {
		t.Errorf("rows sorted again %+v", rows)
	}
	// the table keeps its order for one view: another view is sorted anew
	if p := a.Runs.Table.placement(); len(p) != 2 {
		t.Errorf("placement %+v", p)
	}
	v := *a.Runs.Sel().View
	v.Rows = []proto.Row{{ID: "b", TTFT: 1}, {ID: "a", TTFT: 2}}
	a.Runs.Sel().View = &v
	if rows := a.Runs.Table.Rows(); len(rows) != 2 || rows[0].ID != "b" || len(a.Runs.Table.placement()) != 1 {
		t.Errorf("another view's rows %+v, placement %+v", rows, a.Runs.Table.placement())
	}
	// requests.jsonl comes from the worker, replayed from the run's spec
	a.Runs.Download("requests.jsonl")
	f := h.last()
	if f.Op != proto.OpFile || f.File == nil || f.File.Run != run.ID || f.File.Spec == nil || f.File.Spec.Config != run.Run.Config {
		t.Fatalf("file request %+v", f)
	}
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgFile, ID: f.ID, File: &proto.FileReply{Kind: proto.FileRequests, Text: 1}}, nil, "x"))
	if len(h.downloads) != 1 || h.downloads[0] != "offloading-v0-24-requests.jsonl" {
		t.Errorf("downloads %v", h.downloads)
	}
}

// TestControlsEditYAML: a control edits the YAML, a rejected value shows
// the CLI's message next to it and blocks Run, a fix clears it.
func TestControlsEditYAML(t *testing.T) {
	h := &nopHost{}
	a := NewRoot(h, "#ex=B")
	a.Panel.OnField(state.FG1, "0")
	if msg := a.Panel.Err(state.FG1); !strings.Contains(msg, "kv_cache.capacity.blocks") || !strings.HasPrefix(msg, "config.yaml:") {
		t.Errorf("G1 error %q", msg)
	}
	if a.Runs.CanRun() {
		t.Error("Run allowed with a rejected config")
	}
	if a.Panel.Value(state.FG1) != "0" {
		t.Errorf("the field shows %q, not what was typed", a.Panel.Value(state.FG1))
	}
	html := render(t, a)
	mustContain(t, html, `id="err-g1"`, `class="field bad"`)
	a.Panel.OnField(state.FG1, "5")
	if a.Panel.Err(state.FG1) != "" || !a.Runs.CanRun() || !strings.Contains(a.Panel.YAML, "blocks: 5") {
		t.Errorf("after the fix: %q %v", a.Panel.Err(state.FG1), a.Runs.CanRun())
	}
	a.Panel.OnYAML(a.Panel.YAML + "\nbogus: [\n")
	if a.Panel.YAMLErr == "" || a.Runs.CanRun() {
		t.Error("a broken YAML is accepted")
	}
	a.Panel.OnField(state.FConnector, "simple_cpu_v0_32")
	if a.Panel.Err(state.FConnector) == "" {
		t.Error("a control edit of a YAML that does not parse went through")
	}
}

// TestLinkRestoresState: the fragment the app writes restores the same
// config and compare set-up in a new app.
func TestLinkRestoresState(t *testing.T) {
	h := &nopHost{}
	a := NewRoot(h, "")
	a.Panel.OnField(state.FG2, "2048")
	a.Compare.SetConnector("simple_cpu_v0_32", false)
	b := NewRoot(&nopHost{}, h.frag)
	if b.Panel.YAML != a.Panel.YAML || b.Compare.Set == nil || b.Compare.Set.String() != a.Compare.Set.String() {
		t.Errorf("restored %q / %v, want %q / %v", b.Panel.YAML, b.Compare.Set, a.Panel.YAML, a.Compare.Set)
	}
	a.Compare.Toggle()
	c := NewRoot(&nopHost{}, h.frag)
	if c.Compare.Set != nil {
		t.Error("compare mode came back")
	}
	if d := NewRoot(&nopHost{}, "#ex=nope"); d.Runs.RunErr == "" || d.Example == nil {
		t.Error("a bad link is not reported")
	}
}

// TestPassViewFlow: results with records open the pass view; the index
// sends it to the example's focus; frames arrive, keys step.
func TestPassViewFlow(t *testing.T) {
	h := &nopHost{width: 600}
	a := NewRoot(h, "#ex=B")
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgReady}, nil))
	meta := []proto.PassMeta{{Recorded: true, BlockSize: 4, Ranks: []proto.RankMeta{{Passes: 6, Lines: 6, G1: 3, G2: 8}}}}
	a.Deliver(result(t, h, [][2]int64{{8, 28}}, meta))
	pv := a.Runs.Passes.pv
	if pv == nil || pv.Runs != 1 {
		t.Fatalf("pass view %+v", pv)
	}
	seek := h.last()
	if seek.Op != proto.OpSeek || seek.Seek == nil || seek.Seek.Passes[0] != 1 {
		t.Fatalf("seek %v", seek)
	}
	tl := &proto.Timeline{Start: make([]float64, 6), End: make([]float64, 6), Counts: make([][proto.NumMarks]uint16, 6)}
	tl.Counts[3][proto.MarkRestore] = 1
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgIndex, ID: a.Runs.resultsRun,
		Index: &proto.IndexReply{Done: true, Indexed: 6, Total: 6, Timelines: [][]proto.BinRef{{1}}}},
		[][]byte{proto.EncodeTimeline(tl)}))
	if pv.Pass != 4 {
		t.Errorf("the §B example opened at pass %d, want the restore pass 4", pv.Pass)
	}
	// the frame of the first seek is stale; the page asks again
	frame := func(pass int) []byte {
		b := []byte{3, 0, 0, 0, 0, 0, 0, 0}
		for i := 0; i < 3; i++ {
			c := make([]byte, proto.SlotBytes)
			c[0] = '.'
			for k := 4; k < proto.SlotBytes; k++ {
				c[k] = 0xff
			}
			c[20], c[21], c[22], c[23] = 0, 0, 0, 0
			b = append(b, c...)
		}
		return append(b, 0, 0, 0, 0)
	}
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgFrame, ID: pv.seekID,
		Frame: &proto.FrameReply{Frames: []*proto.FrameOut{{Bin: 1, Meta: &proto.FrameMeta{Pass: 1}}}}}, [][]byte{frame(1)}))
	again := h.last()
	if again.Op != proto.OpSeek || again.Seek == nil || again.Seek.Passes[0] != 4 {
		t.Fatalf("no seek for the new position: %v", again)
	}
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgFrame, ID: pv.seekID,
		Frame: &proto.FrameReply{Frames: []*proto.FrameOut{{Bin: 1, Meta: &proto.FrameMeta{Pass: 4, NumEvents: 1,
			Events: []proto.EventLine{{Kind: "h2d_complete", Text: "restored"}}}}}}}, [][]byte{frame(4)}))
	html := render(t, a)
	mustContain(t, html, `data-pass="4"`, `data-ready`, "restored", `id="pv-canvas-0"`, `data-layout=`)
	if !strings.Contains(h.frag, "pass=4") {
		t.Errorf("the link %q lacks the pass", h.frag)
	}
	// the scrubber renders with its frame, not on its own input
	if a.Runs.Passes.Scrub(5) || pv.Pass != 5 || h.last().Op != proto.OpSeek || h.last().Seek.Passes[0] != 5 {
		t.Errorf("Scrub(5): asked for a render or no frame (pass %d, last message %v)", pv.Pass, h.last())
	}
	if a.Runs.Passes.Scrub(5) {
		t.Error("Scrub to the pass asked for renders while its frame is on its way")
	}
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgFrame, ID: pv.seekID,
		Frame: &proto.FrameReply{Frames: []*proto.FrameOut{{Bin: 1, Meta: &proto.FrameMeta{Pass: 5}}}}}, [][]byte{frame(5)}))
	if !a.Runs.Passes.Scrub(5) {
		t.Error("Scrub to the pass shown asked for no render, and no frame is coming")
	}
	a.Runs.Passes.SeekTo(4)
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgFrame, ID: pv.seekID,
		Frame: &proto.FrameReply{Frames: []*proto.FrameOut{{Bin: 1, Meta: &proto.FrameMeta{Pass: 4}}}}}, [][]byte{frame(4)}))
	if !a.Key("ArrowLeft", false) || pv.Pass != 3 {
		t.Errorf("ArrowLeft: pass %d", pv.Pass)
	}
	if !a.Key("ArrowRight", true) || pv.Pass != 4 {
		t.Errorf("Shift+ArrowRight (next restore): pass %d", pv.Pass)
	}
	if !a.Key(" ", false) || !h.playing {
		t.Error("Space does not play")
	}
	if a.Key("x", false) {
		t.Error("an unused key was taken")
	}
}

// TestPassViewWindow: results that keep a window of a long run (passes
// 100,000 to 100,005 of 216,000) open at the window's first pass, keep
// seeks and jumps inside it, and "show passes from" refuses what no rank
// reached and runs the config again from a pass it did reach.
func TestPassViewWindow(t *testing.T) {
	h := &nopHost{width: 600}
	a := NewRoot(h, "")
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgReady}, nil))
	const first = 100_000
	meta := []proto.PassMeta{{Recorded: true, BlockSize: 4, Ranks: []proto.RankMeta{{Passes: first + 5, Lines: first + 5, First: first, Ran: 216_000, G1: 3, G2: 8}}}, {}, {}}
	a.Deliver(result(t, h, [][2]int64{{8, 28}, {8, 28}, {8, 28}}, meta))
	pv := a.Runs.Passes.pv
	if pv == nil || !pv.Windowed() || pv.Pass != first || pv.FirstLine() != first {
		t.Fatalf("pass view at %d (first %d)", pv.Pass, pv.FirstLine())
	}
	if seek := h.last(); seek.Seek == nil || seek.Seek.Passes[0] != first {
		t.Fatalf("seek %v", seek)
	}
	tl := &proto.Timeline{First: first, Start: make([]float64, 6), End: []float64{1, 2, 3, 4, 5, 6}, Counts: make([][proto.NumMarks]uint16, 6)}
	tl.Counts[3][proto.MarkRestore] = 1
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgIndex, ID: a.Runs.resultsRun,
		Index: &proto.IndexReply{Done: true, Indexed: 6, Total: 6, Timelines: [][]proto.BinRef{{1}}}},
		[][]byte{proto.EncodeTimeline(tl)}))
	// the worker's warm-up of the checkpoints follows the index: shown
	// once it is over, and the timeline stays
	warm := func(w proto.WarmReply) bool {
		return a.Deliver(reply(t, proto.Reply{Type: proto.MsgIndex, ID: a.Runs.resultsRun,
			Index: &proto.IndexReply{Done: true, Indexed: 6, Total: 6, Warm: &w}}, nil))
	}
	if warm(proto.WarmReply{Checkpoints: 2}) || pv.warmed() != nil || a.Runs.Passes.checkpointsNote() != "" {
		t.Errorf("a warm-up step under way: warmed %q, note %q", pv.warmed(), a.Runs.Passes.checkpointsNote())
	}
	if !warm(proto.WarmReply{Done: true, Checkpoints: 6}) || pv.warmed() != 6 || len(pv.Timelines) != 1 {
		t.Errorf("the warm-up's end: warmed %q, %d timelines", pv.warmed(), len(pv.Timelines))
	}
	mustContain(t, render(t, a), `data-warmed="6"`, `moves start from the nearest of 6 checkpoints spread over the run`)
	a.Runs.Passes.SeekTo(1)
	if pv.Pass != first {
		t.Errorf("seek to pass 1 shows pass %d, want the window's first %d", pv.Pass, first)
	}
	if p := pv.nextEvent(pv.Pass, proto.MarkRestore, +1); p != first+3 {
		t.Errorf("next restore at %d, want %d", p, first+3)
	}
	if p := pv.nextEvent(first+5, proto.MarkRestore, -1); p != first+3 {
		t.Errorf("previous restore at %d, want %d", p, first+3)
	}
	mustContain(t, render(t, a), `id="pv-window"`, `min="100000"`)
	if v := a.Runs.Passes.fromValue(); v != "100000" {
		t.Errorf("the from field shows %q", v)
	}
	for _, bad := range []string{"0", "216001", "ten"} {
		a.Runs.Passes.TypeFrom(bad)
		a.Runs.Passes.ShowFrom()
		if a.Runs.Passes.FromErr != "Give a pass from 1 to 216,000 (the longest rank ran 216,000 passes)." || a.Runs.Running {
			t.Errorf("from %q: %q, running %v", bad, a.Runs.Passes.FromErr, a.Runs.Running)
		}
	}
	// A worker above the retire threshold but below MoveRetireFactor
	// times it keeps its checkpoints of these results for the move.
	restarts := h.restarts
	a.Runs.WorkerMem = DefaultRetireBytes + 1
	a.Runs.Passes.TypeFrom("150,000")
	a.Runs.Passes.ShowFrom()
	if h.restarts != restarts || a.Runs.Retired != 0 {
		t.Errorf("the window move retired a worker of %d bytes", DefaultRetireBytes+1)
	}
	run := h.last()
	if run.Op != proto.OpRun || run.Run == nil || run.Run.FromPass != 150_000 || !a.Runs.Running {
		t.Fatalf("show from 150,000 posted %+v", run)
	}
	if a.Runs.Passes.linkPass != 150_000 {
		t.Errorf("the next results open at %d", a.Runs.Passes.linkPass)
	}
	// The window move runs for the pass view alone: the results stay,
	// the pass view opens on the new job's records, passes.jsonl comes
	// from that job, and the pass limit stays the whole run's although
	// the moved job stopped after its window.
	if !run.Run.PassesOnly || a.Runs.resultsRun == run.ID {
		t.Errorf("the window move is not a pass-view job: %+v", run.Run)
	}
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgProgress, ID: run.ID, Progress: &proto.Progress{Variant: 1, Variants: 3, Done: 5, Total: 40}}, nil))
	if want := "passes from 150,000 (each run stops after them): run 2 of 3: 5 of 40 requests"; a.Runs.ProgressMsg != want {
		t.Errorf("progress %q; want %q", a.Runs.ProgressMsg, want)
	}
	results := a.Runs.Results
	moved := []proto.PassMeta{{Recorded: true, BlockSize: 4, Stopped: true,
		Ranks: []proto.RankMeta{{Passes: 151_999, Lines: 151_999, First: 150_000, Ran: 152_000, G1: 3, G2: 8}}}, {}, {}}
	res := &proto.RunResult{Passes: moved, Results: make([]proto.Outcome, 3)}
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgResult, ID: run.ID, Result: res}, nil))
	if len(a.Runs.Results) != 3 || &a.Runs.Results[0] != &results[0] || a.Runs.RunErr != "" || a.Runs.Running {
		t.Fatalf("after the window move: %d results, error %q, running %v", len(a.Runs.Results), a.Runs.RunErr, a.Runs.Running)
	}
	if pv := a.Runs.Passes.pv; pv == nil || pv.Pass != 150_000 || !pv.Windowed() {
		t.Fatalf("the moved pass view is not at 150,000: %+v", pv)
	}
	if seek := h.last(); seek.Seek == nil || seek.Seek.Run != run.ID || seek.Seek.Passes[0] != 150_000 {
		t.Errorf("seek after the move %+v", seek.Seek)
	}
	a.Runs.Download(proto.FilePasses)
	if f := h.last(); f.File == nil || f.File.Run != run.ID || f.File.Spec == nil || f.File.Spec.FromPass != 150_000 {
		t.Errorf("passes.jsonl asked of %+v", f.File)
	}
	a.Runs.Passes.TypeFrom("216001")
	a.Runs.Passes.ShowFrom()
	if !strings.Contains(a.Runs.Passes.FromErr, "the longest rank ran 216,000 passes") {
		t.Errorf("after the move the limit says %q", a.Runs.Passes.FromErr)
	}
	// The run-wide scrubber: inside the window it seeks; elsewhere it
	// moves the window so that the pass is a tenth of the way in, and
	// opens there.
	mustContain(t, render(t, a), `id="pv-run"`, `max="216000"`, "pass 150,000 of 216,000 in the whole run")
	if l := a.Runs.Passes.dragLabel(151_000); l != "release to show pass 151,000 of 216,000" {
		t.Errorf("dragged inside the window: %q", l)
	}
	if l := a.Runs.Passes.dragLabel(999_999); l != "release to show pass 216,000 of 216,000 (the view runs again from the nearest checkpoint)" {
		t.Errorf("dragged past the end: %q", l)
	}
	a.Runs.Passes.pv.Runs = 2 // a compare keeps no checkpoints
	if l := a.Runs.Passes.dragLabel(1); l != "release to show pass 1 of 216,000 (each compared run runs again up to there)" {
		t.Errorf("a compare's drag: %q", l)
	}
	a.Runs.Passes.pv.Runs = 1
	posted := len(h.posted)
	a.Runs.Passes.MoveTo(151_000)
	if pv := a.Runs.Passes.pv; pv.Pass != 151_000 || a.Runs.Running || len(h.posted) > posted+1 || h.last().Op == proto.OpRun {
		t.Errorf("a pass inside the window: at %d, running %v, posted %+v", pv.Pass, a.Runs.Running, h.last())
	}
	for _, c := range []struct{ to, from, at int }{{60_000, 59_800, 60_000}, {500, 300, 500}, {150, 1, 150}, {999_999, 214_001, 216_000}} {
		a.Runs.Passes.MoveTo(c.to)
		run := h.last()
		if run.Run == nil || run.Run.FromPass != c.from || !run.Run.PassesOnly || a.Runs.Passes.linkPass != c.at {
			t.Fatalf("the whole-run scrubber to %d posted %+v, opens at %d; want the window from %d, open at %d", c.to, run.Run, a.Runs.Passes.linkPass, c.from, c.at)
		}
		a.Runs.Passes.MoveTo(c.to + 1) // while a move runs: nothing
		if h.last().ID != run.ID {
			t.Errorf("a second move started while the first ran: %+v", h.last())
		}
		a.Deliver(reply(t, proto.Reply{Type: proto.MsgResult, ID: run.ID, Result: &proto.RunResult{Passes: []proto.PassMeta{{Recorded: true, BlockSize: 4, Stopped: true,
			Ranks: []proto.RankMeta{{Passes: c.from + 1999, Lines: c.from + 1999, First: c.from, Ran: c.from + 2000, G1: 3, G2: 8}}}, {}, {}},
			Results: make([]proto.Outcome, 3)}}, nil))
		if pv := a.Runs.Passes.pv; pv == nil || pv.Pass != c.at || pv.FirstLine() != c.from {
			t.Errorf("after the move to %d the view is at %+v", c.to, pv)
		}
	}
	// a link to a pass keeps the window from that pass
	h2 := &nopHost{width: 600}
	b := NewRoot(h2, "#ex=B&pass=150000")
	b.Deliver(reply(t, proto.Reply{Type: proto.MsgReady}, nil))
	if run := h2.last(); run.Run == nil || run.Run.FromPass != 150_000 {
		t.Errorf("a link to pass 150,000 ran %+v", run.Run)
	}
}

// TestPDToggleFlow: the P/D toggle turns §B into prefill and decode roles
// with their own controls; with §A's mooncake-delta trace the validator's
// message shows next to the toggle and the trace picker, and Run is off.
func TestPDToggleFlow(t *testing.T) {
	h := &nopHost{}
	a := NewRoot(h, "#ex=B")
	p := a.Panel
	p.OnField(state.FPD, "true")
	if !p.Form.PD() || p.Cfg == nil || len(fieldErrs(p)) != 0 {
		t.Fatalf("P/D on §B: form %+v errors %v\n%s", p.Form, fieldErrs(p), p.YAML)
	}
	html := render(t, a)
	mustContain(t, html, `id="f-decode_replicas"`, `id="f-kv_bw"`, "Prefill replicas", "250,000 bytes per token")
	p.OnField(state.FDecodeReplicas, "2")
	if p.Form.DecodeReplicas != 2 || p.Form.Replicas != 1 {
		t.Errorf("decode replicas: %+v", p.Form)
	}
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgReady}, nil))
	a.Runs.Run()
	if v := h.last().Run.Variants[0].Label; v != "P/D, offloading v0.24, G2 8 blocks" {
		t.Errorf("label %v", v)
	}

	b := NewRoot(&nopHost{}, "")
	bp := b.Panel
	bp.OnField(state.FConnector, "offloading_v0_24")
	bp.OnField(state.FPD, "true")
	for _, f := range []state.Field{state.FPD, state.FTrace} {
		if !strings.Contains(bp.Err(f), "mooncake-delta requires engine.mode aggregated") {
			t.Errorf("%v error %q", f, bp.Err(f))
		}
	}
	if b.Runs.CanRun() || !bp.PDOn() {
		t.Error("Run allowed, or the toggle shows off")
	}
	mustContain(t, render(t, b), `id="err-pd"`)
	// the radios follow every click while the config does not parse
	for _, k := range []string{"offloading_v0_32", "offloading_v0_24"} {
		bp.OnField(state.FConnector, k)
		if !bp.ConnectorOn(k) || !strings.Contains(bp.YAML, "connector: "+k) {
			t.Errorf("clicked %s: radio on %v, YAML has it %v", k, bp.ConnectorOn(k), strings.Contains(bp.YAML, "connector: "+k))
		}
	}
	bp.OnField(state.FPD, "false")
	if bp.Cfg == nil || bp.PDOn() || len(fieldErrs(bp)) != 0 {
		t.Errorf("P/D off again: %v", fieldErrs(bp))
	}
}

// TestSweepFlow: the sweep view asks worker 0 for the plan, hands the
// points out to its workers by index, and gathers the files.
func TestSweepFlow(t *testing.T) {
	h := &nopHost{width: 900}
	a := NewRoot(h, "#view=sweep")
	if a.View != ViewSweep || a.Example == nil {
		t.Fatalf("view %q example %v", a.View, a.Example)
	}
	mustContain(t, render(t, a), `id="sweep-run"`, `id="sweep-vary"`, "kvsim sweep --vary host_offload.num_host_blocks=64,128")
	a.Sweep.Run()
	if len(h.swept) != 1 || h.swept[0].w != 0 || h.swept[0].msg.Req.Op != proto.OpSweepPlan || h.swept[0].msg.Req.SweepPlan == nil {
		t.Fatalf("plan request %+v", h.swept)
	}
	spec := h.swept[0].msg.Req.SweepPlan.Spec
	if spec.Name != "traces/connectors.yaml" || len(spec.Vary) != 2 {
		t.Errorf("spec %+v", spec)
	}
	id := h.swept[0].msg.Req.ID
	plan := proto.SweepPlan{Points: 4, X: 0, XLabel: "G2 size (blocks)", Axes: []proto.SweepAxis{
		{Path: "host_offload.num_host_blocks", Values: []string{"192", "2048"}, Numeric: true},
		{Path: "connector", Values: []string{"offloading_v0_24", "simple_cpu_v0_32"}}},
		Lines: []proto.SweepLine{{Name: "offloading_v0_24", Points: []int{0, 2}, X: []float64{192, 2048}},
			{Name: "simple_cpu_v0_32", Points: []int{1, 3}, X: []float64{192, 2048}}}}
	a.Deliver(reply(t, proto.Reply{Type: proto.OpSweepPlan, ID: id, SweepPlan: &plan}, nil))
	if len(h.swept) != 3 || h.swept[1].w != 0 || h.swept[2].w != 1 || h.swept[2].msg.Req.SweepPoint.Index != 1 {
		t.Fatalf("points handed out %+v", h.swept[1:])
	}
	nums := [][2]string{{"11488", "8800"}, {"12432", "8368"}, {"14144", "6544"}, {"15568", "5248"}}
	for i, n := range nums {
		pt := proto.SweepPoint{Restored: n[0], Recomputed: n[1], TTFTP50: "6", TTFTP99: "71"}
		m := reply(t, proto.Reply{Type: proto.OpSweepPoint, ID: id, SweepPoint: &proto.PointReply{Index: i, Summary: 1, Point: pt}}, nil, "{}")
		m.Worker = i % 2
		a.Deliver(m)
	}
	last := h.swept[len(h.swept)-1]
	if c := last.msg.Req.SweepCollect; last.msg.Req.Op != proto.OpSweepCollect || c == nil || len(c.Summaries) != 4 ||
		len(last.msg.Texts) != 4 || last.msg.Texts[c.Summaries[3]-1] != "{}" {
		t.Fatalf("collect %+v", last)
	}
	a.Deliver(reply(t, proto.Reply{Type: proto.OpSweepCollect, ID: id, SweepFiles: &proto.SweepFiles{CSV: 1, JSON: 2}}, nil, "a,b\n", "{}"))
	if a.Sweep.Running || a.Sweep.CSV == nil {
		t.Fatal("the sweep did not finish")
	}
	html := render(t, a)
	mustContain(t, html, `data-key="192|offloading_v0_24"`, "11,488", "15,568", `id="sweep-plot"`, "4 points in")
	a.Sweep.Download("sweep.csv")
	if len(h.downloads) != 1 || h.downloads[0] != "sweep.csv" {
		t.Errorf("downloads %v", h.downloads)
	}
	// a point opens in the run view: its overrides written into the YAML
	a.Sweep.Points[3].P.Sets = []string{"engine.workers.aggregated.kv_cache.host_offload.num_host_blocks=2048",
		"engine.workers.aggregated.kv_cache.host_offload.connector=offloading_v0_24"}
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgReady}, nil))
	a.Runs.Cancel()
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgReady}, nil))
	a.Sweep.Open(3)
	if a.View != ViewRun || a.Compare.Set != nil || a.Panel.Form.G2 != 2048 || a.Panel.Form.Connector != "offloading_v0_24" ||
		!a.Runs.Running || h.last().Run.Config != a.Panel.YAML {
		t.Errorf("open point 3: view %q, form %+v, running %v", a.View, a.Panel.Form, a.Runs.Running)
	}
	a.Runs.Cancel()
	a.SetView(ViewSweep)
	// cancel stops the workers
	a.Sweep.Run()
	a.Sweep.Cancel()
	if h.stopped == 0 || a.Sweep.Running {
		t.Error("cancel did not stop the sweep")
	}
}

// TestStaleResultsWhileRunning: results belong to the config they ran; a
// run of a changed config keeps them marked stale (and their pass view
// closed) until its own results arrive, and a failed or cancelled run
// leaves them stale.
func TestStaleResultsWhileRunning(t *testing.T) {
	h := &nopHost{}
	a := NewRoot(h, "")
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgReady}, nil))
	a.Deliver(result(t, h, [][2]int64{{1, 2}, {3, 4}, {5, 6}}, nil))
	r := a.Runs
	if r.Stale() {
		t.Fatal("fresh results are stale")
	}
	a.Panel.OnField(state.FG1, "100")
	if !r.Stale() {
		t.Fatal("a changed config leaves the results current")
	}
	steps := []struct {
		name      string
		act       func()
		stale     bool
		noteHas   string
		wantNotes bool
	}{
		{"run started", r.Run, true, "under way", true},
		{"run failed", func() {
			a.Deliver(reply(t, proto.Reply{Type: proto.MsgResult, ID: h.last().ID, Error: &proto.Error{Kind: "internal", Msg: "boom"}}, nil))
		}, true, "press Run", true},
		{"run again, cancelled", func() { r.Run(); r.Cancel() }, true, "press Run", true},
		{"run again, results", func() { r.Run(); a.Deliver(result(t, h, [][2]int64{{7, 8}, {9, 10}, {11, 12}}, nil)) }, false, "", false},
	}
	for _, s := range steps {
		s.act()
		if r.Stale() != s.stale {
			t.Errorf("%s: stale %v, want %v", s.name, r.Stale(), s.stale)
		}
		html := render(t, a)
		if got := strings.Contains(html, `id="stale"`); got != s.wantNotes {
			t.Errorf("%s: stale note shown %v, want %v", s.name, got, s.wantNotes)
		}
		if s.noteHas != "" && !strings.Contains(r.StaleNote(), s.noteHas) {
			t.Errorf("%s: note %q lacks %q", s.name, r.StaleNote(), s.noteHas)
		}
	}
}

// TestBadWorkerMessages: a reply that does not decode, or lacks what its
// type promises, becomes a visible error where its answer was expected,
// never a panic; a worker that cannot serve at all (sim.wasm did not
// start) says so.
func TestBadWorkerMessages(t *testing.T) {
	h := &nopHost{}
	a := NewRoot(h, "")
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgReady}, nil))
	run := h.last()
	bad := readReply([]byte(`{"type":"result","id":`+strconv.Itoa(run.ID)+`,"result":{"results":"nope"}}`), nil, nil, -1)
	if !a.Deliver(bad) || a.Runs.Running || !strings.Contains(a.Runs.RunErr, "could not read a worker message") {
		t.Errorf("an undecodable result: running %v, error %q", a.Runs.Running, a.Runs.RunErr)
	}
	if a.Fatal != "" {
		t.Errorf("a bad message panicked: %s", a.Fatal)
	}
	// a result without its payload
	a.Runs.Run()
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgResult, ID: h.last().ID}, nil))
	if a.Runs.Running || a.Runs.RunErr == "" {
		t.Errorf("an empty result: running %v, error %q", a.Runs.Running, a.Runs.RunErr)
	}
	// a view whose rows do not decode, and a prediction that is missing
	a.Runs.Run()
	m := result(t, h, [][2]int64{{1, 2}, {3, 4}, {5, 6}}, nil)
	m.Bins[1] = []byte{1, 2, 3}
	a.Deliver(m)
	if r := a.Runs.Results; len(r) != 3 || r[1].Err == nil || !strings.Contains(r[1].Err.Msg, "bad view") || r[0].View == nil {
		t.Errorf("results %+v", r)
	}
	// not JSON at all, and no envelope (sim.wasm did not start: id 0)
	for _, b := range []string{`{`, `{"type":"result","id":0,"error":{"kind":"internal","msg":"sim.wasm did not start: x"}}`} {
		a.Runs.RunErr = ""
		a.Deliver(readReply([]byte(b), nil, nil, -1))
		if a.Runs.RunErr == "" || a.Fatal != "" {
			t.Errorf("%s: error %q, fatal %q", b, a.Runs.RunErr, a.Fatal)
		}
	}
	// a sweep worker's broken reply stops the sweep with a message
	a.Sweep.Run()
	a.Deliver(readReply([]byte(`{"type":"sweep-plan","id":`+strconv.Itoa(a.Sweep.id)+`,"sweep_plan":[]}`), nil, nil, 0))
	if a.Sweep.Running || !strings.Contains(a.Sweep.Err, "could not read") {
		t.Errorf("sweep: running %v, error %q", a.Sweep.Running, a.Sweep.Err)
	}
	// a frame reply that names a payload it does not carry
	b := NewRoot(&nopHost{}, "#ex=B")
	bh := b.host.(*nopHost)
	b.Deliver(reply(t, proto.Reply{Type: proto.MsgReady}, nil))
	meta := []proto.PassMeta{{Recorded: true, BlockSize: 4, Ranks: []proto.RankMeta{{Passes: 6, Lines: 6, G1: 3, G2: 8}}}}
	b.Deliver(result(t, bh, [][2]int64{{8, 28}}, meta))
	pv := b.Runs.Passes.pv
	b.Deliver(reply(t, proto.Reply{Type: proto.MsgFrame, ID: pv.seekID, Frame: &proto.FrameReply{Frames: []*proto.FrameOut{{Bin: 3}}}}, nil))
	if pv.Frames[0] == nil || pv.Frames[0].err == "" || b.Fatal != "" {
		t.Errorf("frame without its payload: %+v, fatal %q", pv.Frames[0], b.Fatal)
	}
}

// TestDeadWorker: sim-worker.js's "dead" reply (the Go program stopped)
// ends the run it was serving with a short message, replaces the worker at
// once, and the next Run goes to the new worker; a panic's text shows only
// under the collapsed details.
func TestDeadWorker(t *testing.T) {
	h := &nopHost{}
	a := NewRoot(h, "")
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgReady}, nil))
	a.Runs.Run()
	runs := a.Runs.Runs
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgDead, ID: h.last().ID,
		Error: &proto.Error{Kind: "internal", Msg: "the simulator exited"}}, nil))
	if h.restarts != 1 || a.Runs.Running || a.Runs.WorkerReady || a.Runs.Runs != runs+1 ||
		!strings.Contains(a.Runs.RunErr, "has been restarted") {
		t.Errorf("restarts %d, running %v, ready %v, error %q", h.restarts, a.Runs.Running, a.Runs.WorkerReady, a.Runs.RunErr)
	}
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgReady}, nil))
	a.Fatal = "internal error: runtime error: makeslice: len out of range" // a handler's panic, earlier
	a.Runs.Run()
	if !a.Runs.Running || a.Runs.RunErr != "" || a.Fatal != "" {
		t.Errorf("the next run: running %v, error %q, banner %q", a.Runs.Running, a.Runs.RunErr, a.Fatal)
	}
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgResult, ID: h.last().ID,
		Error: &proto.Error{Kind: "internal", Msg: "internal error: runtime error: makeslice: len out of range\ngoroutine 1 [running]:"}}, nil))
	html := render(t, a)
	at := strings.Index(html, `id="run-error"`)
	if at < 0 {
		t.Fatalf("no run error: %s", html)
	}
	box := html[at:]
	box = box[:strings.Index(box, "</details>")]
	if !strings.Contains(box, state.InternalNote) || strings.Contains(box[:strings.Index(box, "<details")], "makeslice") {
		t.Errorf("an internal error shows open: %s", box)
	}
}

// TestExampleBoxRetires: the guided example's box shows while the config
// is the example's; an edit retires it (and the link stops naming it), and
// undoing the edit brings it back.
func TestExampleBoxRetires(t *testing.T) {
	a := NewRoot(&nopHost{}, "#ex=B")
	if !a.ExampleApplies() || !strings.Contains(render(t, a), `id="example-box"`) {
		t.Fatal("no example box on #ex=B")
	}
	orig := a.Panel.YAML
	a.Panel.OnField(state.FG1, "64")
	if a.ExampleApplies() || strings.Contains(render(t, a), `id="example-box"`) || strings.Contains(a.share().Fragment(), "ex=") {
		t.Error("the example box stays after an edit")
	}
	a.Panel.OnYAML(orig)
	if !a.ExampleApplies() {
		t.Error("the example box does not come back when the edit is undone")
	}
}

// TestPDConnectorCompare: a connector compare cannot run on a P/D config
// (the v0.32 profiles require the aggregated role): Run is disabled with
// the reason; a G2-size compare runs, its rows naming P/D and the
// connector.
func TestPDConnectorCompare(t *testing.T) {
	h := &nopHost{}
	a := NewRoot(h, "#ex=B")
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgReady}, nil))
	a.Runs.Cancel() // the link's own run
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgReady}, nil))
	a.Panel.OnField(state.FPD, "true")
	a.Compare.Toggle()
	if a.Runs.CanRun() || !strings.Contains(a.Compare.Problem(), "not available with P/D") {
		t.Errorf("connector compare with P/D: can run %v, problem %q", a.Runs.CanRun(), a.Compare.Problem())
	}
	mustContain(t, render(t, a), `id="err-compare"`)
	a.Compare.SetAxis(state.AxisG2)
	if !a.Runs.CanRun() {
		t.Fatalf("G2 compare with P/D: %q", a.Runs.RunTitle())
	}
	a.Runs.Run()
	if l := h.last().Run.Variants[0].Label; l != "P/D, offloading v0.24, G2 192 blocks" {
		t.Errorf("label %q", l)
	}
}

// TestSweepSetUp: a refused Web Workers value stays in its field with a
// message and blocks the sweep; the link keeps the grid and the source.
func TestSweepSetUp(t *testing.T) {
	h := &nopHost{}
	a := NewRoot(h, "#view=sweep")
	for _, bad := range []string{"0", "100", "-1", "two"} {
		a.Sweep.SetWorkers(bad)
		if a.Sweep.WorkersErr == "" || a.Sweep.WorkersValue() != bad || a.Sweep.CanRun() || a.Sweep.Workers != 2 {
			t.Errorf("workers %q: error %q, field %q, can run %v", bad, a.Sweep.WorkersErr, a.Sweep.WorkersValue(), a.Sweep.CanRun())
		}
	}
	mustContain(t, render(t, a), `id="err-sweep-workers"`)
	a.Sweep.TypingWorkers("7")
	if v := a.Sweep.WorkersValue(); v != "7" {
		t.Errorf("while typing 7 the field shows %q", v)
	}
	a.Sweep.SetWorkers("3")
	if a.Sweep.WorkersErr != "" || a.Sweep.Workers != 3 || !a.Sweep.CanRun() {
		t.Errorf("workers 3: %q %d", a.Sweep.WorkersErr, a.Sweep.Workers)
	}
	grid := "connector=offloading_v0_24,simple_cpu_v0_32\nhost_offload.num_host_blocks=64,4096"
	a.Sweep.SetVary(grid)
	a.Sweep.SetSource(SweepPanel)
	b := NewRoot(&nopHost{}, h.frag)
	if b.View != ViewSweep || b.Sweep.Vary != grid || b.Sweep.Source != SweepPanel {
		t.Errorf("the link %q restores view %q, grid %q, source %q", h.frag, b.View, b.Sweep.Vary, b.Sweep.Source)
	}
}

// TestRankSummary: a run of several DP ranks lists every rank with its
// passes and pools under the picker; clicking a row shows that rank.
func TestRankSummary(t *testing.T) {
	h := &nopHost{width: 900}
	a := NewRoot(h, "#ex=B")
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgReady}, nil))
	meta := []proto.PassMeta{{Recorded: true, BlockSize: 4, Ranks: []proto.RankMeta{
		{Worker: 0, Rank: 0, Passes: 6, Lines: 6, G1: 3, G2: 8}, {Worker: 0, Rank: 1, Passes: 1234, Lines: 1234, G1: 3000}}}}
	a.Deliver(result(t, h, [][2]int64{{8, 28}}, meta))
	html := render(t, a)
	mustContain(t, html, `id="pv-ranks"`, `id="pv-rank-row-1"`, "worker 0, DP rank 1", "1,234", "3,000")
	a.Runs.Passes.SetRank("1")
	if a.Runs.Passes.pv.Rank != 1 || a.Runs.Passes.rankRowClass(1) != "sel" {
		t.Errorf("rank %d", a.Runs.Passes.pv.Rank)
	}
}

// TestOutOfMemory: a "dead" reply of kind "memory" (sim-worker.js saw the
// Go runtime's "fatal error: out of memory") names the run of the job it
// was on and the memory in use; the worker is replaced and Run works.
func TestOutOfMemory(t *testing.T) {
	h := &nopHost{}
	a := NewRoot(h, "")
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgReady}, nil))
	a.Runs.Run()
	id := h.last().ID
	p := reply(t, proto.Reply{Type: proto.MsgProgress, ID: id, Progress: &proto.Progress{Variant: 2, Done: 10, Total: 48, Variants: 3}}, nil)
	p.Mem = 4275896320
	a.Deliver(p)
	if a.Runs.WorkerMem != 4275896320 {
		t.Errorf("worker memory %d", a.Runs.WorkerMem)
	}
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgDead, ID: id,
		Error: &proto.Error{Kind: "memory", Msg: "fatal error: out of memory"}}, nil))
	want := "The simulator ran out of memory on run 3 of 3 (4,077 MiB in use). It has been restarted; press Run to try again."
	if a.Runs.RunErr != want || h.restarts != 1 || a.Runs.Running || a.Runs.WorkerMem != 0 {
		t.Errorf("error %q, restarts %d, running %v, mem %d", a.Runs.RunErr, h.restarts, a.Runs.Running, a.Runs.WorkerMem)
	}
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgReady}, nil))
	a.Runs.Run()
	if !a.Runs.Running || a.Runs.RunErr != "" || h.restarts != 1 {
		t.Errorf("the next run: running %v, error %q, restarts %d", a.Runs.Running, a.Runs.RunErr, h.restarts)
	}
}

// TestRetireLargeWorker: a run worker whose memory is above the threshold
// is replaced before the next run (not after the run, so the shown
// results keep their passes until then); one at or below it is kept.
func TestRetireLargeWorker(t *testing.T) {
	h := &nopHost{retire: 100 << 20}
	a := NewRoot(h, "")
	a.Deliver(reply(t, proto.Reply{Type: proto.MsgReady}, nil))
	a.Runs.Run()
	// the memory each result reports, and the restarts wanted after the
	// result and after the next Run
	for _, tc := range []struct {
		mem          int64
		after, rerun int
	}{{100 << 20, 0, 0}, {100<<20 + 1, 0, 1}, {50 << 20, 1, 1}, {3 << 30, 1, 2}} {
		m := reply(t, proto.Reply{Type: proto.MsgResult, ID: h.last().ID, Error: &proto.Error{Kind: "run", Msg: "x"}}, nil)
		m.Mem = tc.mem
		a.Deliver(m)
		if h.restarts != tc.after || a.Runs.WorkerMem != tc.mem {
			t.Errorf("memory %d: %d restarts after the run, want %d; worker memory %d", tc.mem, h.restarts, tc.after, a.Runs.WorkerMem)
		}
		a.Runs.Run()
		if h.restarts != tc.rerun || a.Runs.Retired != tc.rerun || !a.Runs.Running {
			t.Errorf("memory %d: %d restarts (%d retired) after Run, want %d; running %v", tc.mem, h.restarts, a.Runs.Retired, tc.rerun, a.Runs.Running)
		}
	}
	if html := render(t, a); !strings.Contains(html, `data-retired="2"`) || !strings.Contains(html, `data-worker-mem="0"`) {
		t.Errorf("no data attributes: %s", html[:min(len(html), 600)])
	}
}

// sweepWithMem runs a sweep of 7 points on 3 workers on the fake host,
// every reply reporting mem bytes of wasm memory, answering the jobs in
// the order they were posted from the worker each went to, then starts
// the next sweep. It returns the root, the host and the jobs of the
// first sweep as "worker:op:index" (index -1: plan or collect).
func sweepWithMem(t *testing.T, retire, mem int64) (*Root, *nopHost, []string) {
	t.Helper()
	h := &nopHost{width: 900, retire: retire}
	a := NewRoot(h, "#view=sweep")
	a.Sweep.SetWorkers("3")
	a.Sweep.Run()
	id := h.swept[0].msg.Req.ID
	plan := proto.SweepPlan{Points: 7, Axes: []proto.SweepAxis{
		{Path: "host_offload.num_host_blocks", Values: []string{"1", "2", "3", "4", "5", "6", "7"}, Numeric: true}}}
	var jobs []string
	for k := 0; k < len(h.swept) && k < 100; k++ {
		p := h.swept[k]
		var m WorkerMsg
		switch req := p.msg.Req; req.Op {
		case proto.OpSweepPlan:
			m = reply(t, proto.Reply{Type: proto.OpSweepPlan, ID: id, SweepPlan: &plan}, nil)
			jobs = append(jobs, fmt.Sprintf("%d:plan", p.w))
		case proto.OpSweepPoint:
			i := req.SweepPoint.Index
			pt := proto.SweepPoint{Restored: strconv.Itoa(1000 * i), Recomputed: strconv.Itoa(7 - i), TTFTP50: "6", TTFTP99: "71"}
			m = reply(t, proto.Reply{Type: proto.OpSweepPoint, ID: id, SweepPoint: &proto.PointReply{Index: i, Summary: 1, Point: pt}},
				nil, fmt.Sprintf("{%d}", i))
			jobs = append(jobs, fmt.Sprintf("%d:point:%d", p.w, i))
		case proto.OpSweepCollect:
			var sums []string
			for _, r := range req.SweepCollect.Summaries {
				sums = append(sums, p.msg.Texts[r-1].(string))
			}
			jobs = append(jobs, fmt.Sprintf("%d:collect:%s", p.w, strings.Join(sums, "")))
			m = reply(t, proto.Reply{Type: proto.OpSweepCollect, ID: id, SweepFiles: &proto.SweepFiles{CSV: 1, JSON: 2}}, nil, "a,b\n", "{}")
		}
		m.Worker, m.Mem = p.w, mem
		a.Deliver(m)
	}
	if a.Sweep.Running || a.Sweep.CSV == nil || a.Sweep.Done != 7 {
		t.Fatalf("the sweep did not finish: running %v, %d done, error %q", a.Sweep.Running, a.Sweep.Done, a.Sweep.Err)
	}
	a.Sweep.Run()
	return a, h, jobs
}

// TestRetireLargeSweepWorkers: a sweep worker whose reported memory is
// above the threshold is replaced before its next job (a point or the
// files) and, when idle, before the next sweep; every point is handed
// out once, to the same workers in the same order, and the points and
// files are those of the sweep without replacements.
func TestRetireLargeSweepWorkers(t *testing.T) {
	a0, h0, jobs0 := sweepWithMem(t, 0, 10<<20) // below DefaultRetireBytes: no replacement
	a1, h1, jobs1 := sweepWithMem(t, 100<<20, 100<<20+1)
	if len(h0.sweepRestarts) != 0 || a0.Sweep.Retired != 0 {
		t.Errorf("below the threshold: %d restarts, %d retired", len(h0.sweepRestarts), a0.Sweep.Retired)
	}
	want := []string{"0:plan", "0:point:0", "1:point:1", "2:point:2", "0:point:3", "1:point:4", "2:point:5", "0:point:6",
		"0:collect:{0}{1}{2}{3}{4}{5}{6}"}
	if !slices.Equal(jobs0, want) || !slices.Equal(jobs1, want) {
		t.Errorf("jobs without replacement %v\nwith %v\nwant %v", jobs0, jobs1, want)
	}
	if !reflect.DeepEqual(a0.Sweep.Points, a1.Sweep.Points) {
		t.Errorf("points differ:\n%+v\n%+v", a0.Sweep.Points, a1.Sweep.Points)
	}
	// worker 0 after the plan; each worker after a point it is followed
	// by another (0, 1, 2, 0), worker 0 before the files; then, at the
	// next sweep, the three idle workers
	restarts := []int{0, 0, 1, 2, 0, 0, 0, 1, 2}
	if !slices.Equal(h1.sweepRestarts, restarts) || a1.Sweep.Retired != len(restarts) {
		t.Errorf("restarts %v (%d retired), want %v", h1.sweepRestarts, a1.Sweep.Retired, restarts)
	}
	// the restarts come before the jobs: the next sweep's plan goes to a
	// fresh worker 0
	if last := h1.swept[len(h1.swept)-1]; last.w != 0 || last.msg.Req.Op != proto.OpSweepPlan {
		t.Errorf("next sweep's plan %+v", last)
	}
	mustContain(t, render(t, a1), `data-retired="9"`)
	// a stopped sweep's workers are gone, and so is their memory
	a1.Sweep.Cancel()
	a1.Sweep.Run()
	if a1.Sweep.Retired != 9 {
		t.Errorf("workers retired after a cancel: %d", a1.Sweep.Retired)
	}
	// a fresh sweep worker's ready does not make the run worker ready
	m := reply(t, proto.Reply{Type: proto.MsgReady}, nil)
	m.Worker = 1
	a1.Deliver(m)
	if a1.Runs.WorkerReady {
		t.Error("a sweep worker's ready made the run worker ready")
	}
}
