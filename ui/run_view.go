package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kvsim/kvsim/ui/state"
	"github.com/kvsim/kvsim/wasm/proto"
)

// RunView is the run view: the guided example's text, the run bar (Run,
// compare, progress, cancel), the results of the last job (summary cards
// for one run, a row per run in compare mode), an agentic run's snapshot,
// warmup and profile, the pass view, the chart and the request table. It
// runs the panel's config in the simulation worker, one job at a time,
// and asks the worker for the report files it keeps.
type RunView struct {
	page    *Root
	Panel   *ConfigPanel
	Compare *CompareSetup
	Table   *RequestTable
	Agentic *AgenticReport
	Passes  *PassView
	chart   turnChart

	// WorkerReady: the simulation worker answers. Running: a job is in
	// it.
	WorkerReady bool
	Running     bool
	Progress    float64
	ProgressMsg string
	RunErr      string
	Status      string
	// Results are the last job's runs; Selected is the one whose details
	// show.
	Results  []*Result
	Selected int
	// Runs counts finished jobs (tests wait for it to move); RunMs is the
	// time from Run to results as the page saw it.
	Runs  int
	RunMs float64

	// WorkerMem is the run worker's wasm memory in bytes, as its last
	// message said (a wasm memory never shrinks); Retired counts workers
	// replaced because it was above Host.RetireBytes.
	WorkerMem int64
	Retired   int

	variant, variants int // the running job's run (0-based) and its number of runs

	autoRun    bool // run when the worker is ready (a link opens on its results)
	jobID      int  // the running job's id
	runMsg     *Message
	runStart   time.Time
	resultsRun int      // the job id of the shown results
	resultsMsg *Message // and its message (to replay it for files)
	// passesRun and passesMsg: the job whose records the pass view shows,
	// the results' own or a later one that moved the window (runPasses).
	passesRun int
	passesMsg *Message
	fan       *fanOut // the running compare's runs in workers of their own
	fileID    int     // the file request in flight
	fileName  string
}

// Result is one run of the last job.
type Result struct {
	Label string
	View  *proto.View
	Err   *proto.Error
	// prediction is its prediction.json (a JavaScript string in the
	// browser).
	prediction any
}

func newRunView(page *Root) *RunView {
	c := &RunView{page: page, Panel: page.Panel, Compare: page.Compare}
	c.Table = &RequestTable{Run: c, SortKey: "id"}
	c.Agentic = &AgenticReport{Run: c}
	c.Passes = &PassView{Run: c}
	return c
}

// reset drops the results (a new config opens); pass and rank place the
// pass view of the next results (0: not set).
func (c *RunView) reset(pass, rank int) {
	c.Results, c.resultsMsg = nil, nil
	c.Passes.reset(pass, rank)
}

// ready: the worker is up; a link's run starts.
func (c *RunView) ready() {
	c.WorkerReady = true
	if c.autoRun && c.Panel.Traces.Fetch.Busy() {
		return // a link's run starts when its trace is here (TracePanel.fetchMooncake)
	}
	if c.autoRun {
		c.autoRun = false
		c.Run()
	}
}

// CanRun tells whether Run is possible now.
// It is not while any control holds a value that does not apply: the YAML
// still holds the last good one, and running it would show results for a
// config the panel does not show.
func (c *RunView) CanRun() bool {
	return !c.Running && !c.Panel.Invalid() && c.Compare.Problem() == "" && c.Panel.Traces.Blocked() == ""
}

// RunTitle explains the Run button when it is disabled.
func (c *RunView) RunTitle() string {
	switch {
	case c.Running:
		return "a run is under way"
	case c.Panel.Invalid():
		return "fix the config first: " + c.Panel.FirstErr()
	case c.Compare.Problem() != "":
		return "fix the compare set-up first: " + c.Compare.Problem()
	case c.Panel.Traces.Blocked() != "":
		return c.Panel.Traces.Blocked()
	}
	return "run the config (every compared run)"
}

// runPasses runs the shown results' job again for the pass view alone,
// keeping the window of passes that starts at pass from: each run stops
// once every rank has run the window's last pass (proto.RunJob.PassesOnly),
// so a window near the start costs a fraction of the run, and the results
// on the page stay as they are.
func (c *RunView) runPasses(from int) {
	defer c.page.guard()
	if c.Running || c.resultsMsg == nil || c.resultsMsg.Req.Run == nil {
		return
	}
	c.RunErr = ""
	c.retire(MoveRetireFactor)
	spec := *c.resultsMsg.Req.Run
	spec.FromPass, spec.PassesOnly = from, true
	c.jobID = c.page.nextID()
	msg := &Message{Req: proto.Request{Op: proto.OpRun, ID: c.jobID, Run: &spec}, Texts: c.resultsMsg.Texts}
	c.runMsg = msg
	c.Running, c.Progress, c.ProgressMsg, c.Status = true, 0, "starting…", ""
	c.variant, c.variants = 0, max(1, len(spec.Variants))
	c.runStart = c.page.host.Now()
	c.page.host.Post(*msg)
}

// Busy tells whether a run is in progress or about to start.
func (c *RunView) Busy() bool { return c.Running || (c.autoRun && c.Panel.Cfg != nil) }

// Run starts a job for the panel's config (every compared run). A link's
// pass, while it waits for results, is where a long run's kept window of
// passes starts, so the link opens on that pass however long the run.
func (c *RunView) Run() { c.run(c.Passes.linkPass) }

// run starts the job; a run too long for a whole per-pass record keeps
// proto.WindowPasses passes of each rank from pass from (0: from pass 1).
func (c *RunView) run(from int) {
	defer c.page.guard()
	if c.Running {
		return
	}
	c.RunErr = ""
	if c.page.Fatal != "" && !strings.HasPrefix(c.page.Fatal, "The simulator (sim.wasm) did not load") {
		c.page.Fatal = "" // a handler's failure: the page went on; a new run starts clean
	}
	p := c.Panel
	if msg := p.Err(state.FTrace); msg != "" {
		c.RunErr = msg
		return
	}
	if p.Invalid() {
		c.RunErr = "The config has an error; fix it first: " + p.FirstErr()
		return
	}
	if p.Traces.Blocked() != "" {
		return // Run is disabled meanwhile
	}
	vs := c.Compare.variants(p.Cfg, c.singleLabel())
	if vs == nil {
		return
	}
	c.retire(1)
	c.jobID = c.page.nextID()
	msg := &Message{Req: proto.Request{Op: proto.OpRun, ID: c.jobID}}
	msg.Req.Run = &proto.RunJob{Config: p.YAML, Name: p.Name, Variants: vs, Passes: true, Traces: p.Traces.attach(msg), FromPass: from,
		FanOut: c.mayFanOut()}
	c.runMsg = msg
	c.Running, c.Progress, c.ProgressMsg, c.Status = true, 0, "starting…", ""
	c.variant, c.variants = 0, max(1, len(vs))
	c.runStart = c.page.host.Now()
	c.page.host.Post(*msg)
}

// DefaultRetireBytes: a run worker whose wasm memory grew above this is
// replaced before the next run (a wasm memory never shrinks, so a worker
// that once held a big run would start every later run near the 4 GiB
// ceiling).
const DefaultRetireBytes = 256 << 20

// MoveRetireFactor: before a window move of the shown results (runPasses)
// the run worker may hold this many times the retire threshold: twice
// 256 MiB is the 512 MiB issue 21 allows a worker. Its engine checkpoints
// of those results (docs/ui.md, "Window moves from checkpoints") are what
// makes the move fast, and a fresh worker has none.
const MoveRetireFactor = 2

// retire replaces the run worker before a run when its memory is above
// the threshold (times factor); the shown results' files and passes go
// with it.
func (c *RunView) retire(factor int64) {
	if retireLarge(factor*c.page.host.RetireBytes(), &c.WorkerMem, &c.Retired, c.page.host.RestartWorker) {
		c.WorkerReady = false
		c.Passes.lost()
	}
}

// retireLarge is the rule for every worker (the run worker, and each
// sweep worker before its next job): when *mem, the wasm memory the
// worker last reported, is above limit (Host.RetireBytes, or a multiple
// of it for a window move), restart replaces the
// worker, *retired counts it and *mem starts again from 0. It tells
// whether the worker was replaced.
func retireLarge(limit int64, mem *int64, retired *int, restart func()) bool {
	if *mem <= limit {
		return false
	}
	restart()
	*retired++
	*mem = 0
	return true
}

// singleLabel labels the one run of single-run mode.
func (c *RunView) singleLabel() string {
	f := c.Panel.Form
	pd := ""
	if f.PD() {
		pd = "P/D, "
	}
	if !f.HasG2 {
		return pd + "no G2"
	}
	return fmt.Sprintf("%s%s, G2 %d blocks", pd, state.ConnectorLabel(f.Connector), f.G2)
}

// Cancel stops the running job by replacing the worker.
func (c *RunView) Cancel() {
	defer c.page.guard()
	if !c.Running {
		return
	}
	c.Running, c.jobID, c.fileID, c.WorkerReady = false, -1, 0, false
	c.Panel.Traces.cancelCheck()
	c.page.host.RestartWorker()
	c.stopFan()
	c.Status = "Run cancelled."
}

// workerFailed: the worker died (the browser's error event), or said it
// could not serve at all.
func (c *RunView) workerFailed(msg string) {
	c.Running = false
	c.RunErr = "The simulation worker failed: " + msg
}

// workerDied: the worker's Go program stopped. The worker is replaced at
// once; the job it was running (if any) is lost, and so are its kept
// results' files and passes.
func (c *RunView) workerDied(kind, why string) {
	was := c.Running
	mem := c.WorkerMem
	c.WorkerMem = 0
	c.Running, c.jobID, c.fileID, c.WorkerReady = false, -1, 0, false
	c.Panel.Traces.cancelCheck()
	c.Passes.lost()
	c.page.host.RestartWorker()
	c.stopFan()
	if was && kind == "memory" {
		c.Runs++
		c.RunErr = fmt.Sprintf("The simulator ran out of memory on run %d of %d (%s MiB in use). "+
			"It has been restarted; press Run to try again.", c.variant+1, c.variants, state.Thousands(mem>>20))
		return
	}
	if was {
		c.Runs++
		c.RunErr = "The simulator stopped during this run (" + why + ") and has been restarted. " +
			"The run was probably too large for the browser; press Run to try again, or a smaller config."
		return
	}
	c.RunErr = "The simulator stopped (" + why + ") and has been restarted; press Run to run again."
}

// deliver takes a job's progress, its result or a report file.
func (c *RunView) deliver(m WorkerMsg) bool {
	switch m.Type {
	case proto.MsgProgress:
		switch {
		case !c.Running || m.Progress == nil:
		case m.ID == c.jobID && m.Progress.FanOut:
			c.startFan(m.Progress)
			return true
		case m.ID == c.jobID && c.fan == nil:
			c.progress(m.Progress)
		case c.fan.index(m.ID) >= 0:
			c.fanProgress(c.fan.index(m.ID), m.Progress)
		}
		return false
	case proto.MsgResult:
		switch {
		case m.ID == c.jobID && c.fan != nil:
			c.fanPasses(m)
		case m.ID == c.jobID:
			c.result(m)
		case c.fan.index(m.ID) >= 0:
			c.fanResult(c.fan.index(m.ID), m)
		}
		return true
	}
	return c.file(m)
}

// progress moves the progress bar (no render: the host moves it in place).
func (c *RunView) progress(m *proto.Progress) {
	var frac float64
	if m.Total > 0 {
		frac = float64(m.Done) / float64(m.Total)
	}
	n := max(1, m.Variants)
	c.variant, c.variants = m.Variant, n
	c.Progress = (float64(m.Variant) + frac) / float64(n)
	c.ProgressMsg = fmt.Sprintf("%s of %s requests", state.Thousands(int64(m.Done)), state.Thousands(int64(m.Total)))
	if n > 1 {
		c.ProgressMsg = fmt.Sprintf("run %d of %d: %s", m.Variant+1, n, c.ProgressMsg)
	}
	if run := c.runMsg.Req.Run; run != nil && run.PassesOnly {
		// A window move stops each run after its window, well before its
		// last request on a long run.
		c.ProgressMsg = fmt.Sprintf("passes from %s (each run stops after them): %s", state.Thousands(int64(max(run.FromPass, 1))), c.ProgressMsg)
	}
}

// result shows a finished job and opens its pass view.
func (c *RunView) result(m WorkerMsg) {
	c.Running = false
	c.Runs++
	ms := float64(c.page.host.Now().Sub(c.runStart).Microseconds()) / 1000
	if run := c.runMsg.Req.Run; run != nil && run.PassesOnly && m.Error == nil && m.Result != nil {
		// A window move: the results stay, with their own time.
		c.passesRun, c.passesMsg = m.ID, c.runMsg
		c.Status = fmt.Sprintf("Passes from %s ready in %s.", state.Thousands(int64(max(run.FromPass, 1))), state.Duration(ms))
		c.Passes.start(m.Result, "", 0)
		return
	}
	c.RunMs = ms
	if m.Error != nil {
		c.RunErr = m.Error.Msg
		return
	}
	if m.Result == nil {
		c.RunErr = "The worker's result is empty."
		return
	}
	results := make([]*Result, len(m.Result.Results))
	for i := range m.Result.Results {
		results[i] = outcome(&m, &m.Result.Results[i])
	}
	c.resultsRun, c.resultsMsg = m.ID, c.runMsg
	c.passesRun, c.passesMsg = m.ID, c.runMsg
	c.Status = "Done in " + state.Duration(c.RunMs) + "."
	c.show(results, m.Result)
}

// show puts a job's results on the page and opens the pass view on the
// records res describes.
func (c *RunView) show(results []*Result, res *proto.RunResult) {
	c.Results = results
	c.Selected = -1
	for i, r := range results {
		if r.View != nil && c.Selected < 0 {
			c.Selected = i
		}
	}
	c.Selected = max(c.Selected, 0)
	c.Table.Page = 0
	c.chart.dirty = true
	focus, run := c.focus()
	c.Passes.start(res, focus, run)
}

// outcome is one run's result as the page shows it: its view, with the
// request rows decoded from their binary payload.
func outcome(m *WorkerMsg, o *proto.Outcome) *Result {
	res := &Result{Label: o.Label, Err: o.Error, prediction: m.Text(o.Prediction)}
	if o.Error != nil {
		return res
	}
	if o.View == nil {
		res.Err = &proto.Error{Kind: "internal", Msg: "bad view: the worker sent none"}
		return res
	}
	rows, err := proto.DecodeRows(m.Bin(o.Rows))
	if err != nil {
		res.Err = &proto.Error{Kind: "internal", Msg: "bad view: " + err.Error()}
		return res
	}
	v := *o.View
	v.Rows = rows
	res.View = &v
	return res
}

// focus is where the guided example on the page opens the pass view, when
// the results are its config's.
func (c *RunView) focus() (string, int) {
	if ex := c.page.Example; ex != nil && configOf(c.resultsMsg) == ex.YAML() {
		return ex.Focus, ex.FocusRun
	}
	return "", 0
}

// file offers a report file the worker encoded.
func (c *RunView) file(m WorkerMsg) bool {
	if m.ID != c.fileID || c.fileID == 0 {
		return false
	}
	c.fileID = 0
	switch {
	case m.Error != nil:
		c.Status = c.fileName + ": " + m.Error.Msg
	case m.File == nil || m.Text(m.File.Text) == nil:
		c.Status = c.fileName + ": the worker sent no text"
	default:
		c.Status = ""
		c.page.host.Download(c.fileName, m.Text(m.File.Text))
	}
	return true
}

// SimMs is the worker's replay time of the shown results (Σ over runs).
func (c *RunView) SimMs() float64 {
	var t float64
	for _, r := range c.Results {
		if r.View != nil {
			t += r.View.ElapsedMs
		}
	}
	return t
}

// configOf is the YAML of a run message ("" for none).
func configOf(msg *Message) string {
	if msg == nil || msg.Req.Run == nil {
		return ""
	}
	return msg.Req.Run.Config
}

// Stale tells whether the config changed since the shown results ran. The
// results' config is that of their own run message, taken when they
// arrive, so during a run (and after a failed or cancelled one) the old
// results stay stale and their pass view stays closed.
//
// They are stale too while a control holds a value that does not apply
// (the YAML keeps the last good value, which may be the results' own).
func (c *RunView) Stale() bool {
	return len(c.Results) > 0 && (configOf(c.resultsMsg) != c.Panel.YAML || c.Panel.Invalid())
}

// StaleNote says why the shown results are stale.
func (c *RunView) StaleNote() string {
	if c.Panel.Invalid() {
		return "The config has an error (marked in the panel); these results are from the last config that ran."
	}
	if c.Running && configOf(c.runMsg) == c.Panel.YAML {
		return "These results are from the previous config; the new run is under way."
	}
	return "The config changed since these results; press Run to update them."
}

// Sel is the selected result (nil when there is none).
func (c *RunView) Sel() *Result {
	if c.Selected < 0 || c.Selected >= len(c.Results) {
		return nil
	}
	return c.Results[c.Selected]
}

// HasView tells whether the selected result has a view (the run
// succeeded).
func (c *RunView) HasView() bool { r := c.Sel(); return r != nil && r.View != nil }

// Select shows result i's details.
func (c *RunView) Select(i int) {
	if i >= 0 && i < len(c.Results) {
		c.Selected, c.Table.Page = i, 0
	}
}

// Download offers the selected run's report file: prediction.json at
// once, the larger files after the worker has encoded them.
func (c *RunView) Download(kind string) {
	defer c.page.guard()
	if !c.HasView() {
		return
	}
	r := c.Sel()
	name := kind
	if len(c.Results) > 1 {
		name = slug(r.Label) + "-" + name
	}
	if kind == "prediction.json" {
		c.page.host.Download(name, r.prediction)
		return
	}
	c.fileID, c.fileName = c.page.nextID(), name
	c.Status = "preparing " + name + "…"
	run, spec := c.resultsRun, c.resultsMsg
	if kind == proto.FilePasses {
		run, spec = c.passesRun, c.passesMsg // the window the pass view shows
	}
	m := Message{Req: proto.Request{Op: proto.OpFile, ID: c.fileID,
		File: &proto.FileJob{Run: run, Variant: c.Selected, Kind: kind}}}
	if spec != nil {
		m.Req.File.Spec, m.Texts = spec.Req.Run, spec.Texts
	}
	c.page.host.Post(m)
}

// HasRecord tells whether the selected run kept a per-pass record.
func (c *RunView) HasRecord() bool { return c.Passes.recorded(c.Selected) && !c.Stale() }

// RecordTitle explains the passes.jsonl button.
func (c *RunView) RecordTitle() string {
	if c.HasRecord() {
		return "the per-pass record of the selected run (kvsim inspect and kvsim diff read it)"
	}
	if c.Passes.Note != "" {
		return c.Passes.Note
	}
	return "run a config first"
}

func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}

// Pct is the progress bar's width.
func (c *RunView) Pct() string { return strconv.FormatFloat(c.Progress*100, 'f', 1, 64) + "%" }

// draw pushes the chart and the pass view to their canvases.
func (c *RunView) draw() {
	c.chart.draw(c.page.host, c.Results)
	c.Passes.draw()
}

// single is the one run's view in single-run mode.
func (c *RunView) single() *proto.View {
	if len(c.Results) != 1 {
		return nil
	}
	return c.Results[0].View
}

func (c *RunView) rowClass(i int) string {
	s := "cmp-row"
	if i == c.Selected {
		s += " sel"
	}
	if c.Results[i].Err != nil {
		s += " failed"
	}
	return s
}

// completed is a compare row's "completed / requests".
// agenticCompare tells whether the compare table shows the agentic
// columns: some compared run has agentic sections.
func (c *RunView) agenticCompare() bool {
	for _, r := range c.Results {
		if r.View != nil && r.View.Agentic != nil {
			return true
		}
	}
	return false
}

// agenticCells are a compare row's agentic cells (none for a failed run,
// or when no compared run has agentic sections).
func (c *RunView) agenticCells(r *Result) []string {
	if r.View == nil || !c.agenticCompare() {
		return nil
	}
	return state.AgenticCompareRow(r.View.Agentic)
}

// errSpan is the columns a failed compare row's message spans.
func (c *RunView) errSpan() int {
	if c.agenticCompare() {
		return 6 + len(state.AgenticCompareColumns)
	}
	return 6
}

func completed(v *proto.View) string {
	return state.Thousands(int64(v.Completed)) + " / " + state.Thousands(int64(v.Requests))
}

// runNote is the TTFT card's line under the numbers.
func runNote(v *proto.View) string {
	return fmt.Sprintf("%s of %s requests completed, %s passes, %s ms simulated", state.Thousands(int64(v.Completed)), state.Thousands(int64(v.Requests)),
		state.Thousands(v.Passes), state.Ms(v.DurationMs))
}

// explain is the guided example's closing paragraph, from the runs on the
// page ("" when the results are not the example's).
func (c *RunView) explain() string {
	ex := c.page.Example
	if ex == nil || c.Running || c.Stale() || len(c.Results) == 0 || configOf(c.resultsMsg) != ex.YAML() {
		return ""
	}
	views := make([]*proto.View, len(c.Results))
	for i, r := range c.Results {
		views[i] = r.View
	}
	var divs []proto.Divergence
	if pv := c.Passes.pv; pv != nil {
		divs = pv.Divergences
	}
	return ex.Explain(c.Passes.runs(), views, divs)
}
