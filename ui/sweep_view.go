package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/traces"
	"github.com/kvsim/kvsim/ui/state"
	"github.com/kvsim/kvsim/wasm/proto"
)

// Sweep sources.
const (
	SweepBuiltin = "builtin" // traces/connectors.yaml, as `kvsim sweep` without --config
	SweepPanel   = "panel"   // the config in the panel
)

// DefaultSweepVary is the sweep view's grid: `kvsim sweep`'s default.
var DefaultSweepVary = []string{
	"host_offload.num_host_blocks=64,128,192,256,384,512,1024,2048",
	"connector=" + strings.Join(config.Connectors, ","),
}

// MaxSweepWorkers bounds the sweep's Web Workers.
const MaxSweepWorkers = state.MaxSweepWorkers

// SweepPageRows is the point table's page length.
const SweepPageRows = 48

// SweepView is the sweep view: a grid of --vary values over a config,
// whose points run in several Web Workers (each evaluates points by index
// with core/sweep); the view hands out indices, shows the points as they
// come and draws the curves. The files are gathered by a worker with
// core/sweep's Collect, so they are the bytes `kvsim sweep` writes.
type SweepView struct {
	page    *Root
	Source  string
	Vary    string // one --vary per line
	Workers int
	// WorkersText and WorkersErr: a Web Workers value that was refused,
	// shown in the field with its message, or (typing set) one being
	// typed, kept through renders until the field's change event.
	WorkersText, WorkersErr string
	typing                  bool

	Running bool
	Err     string
	Status  string
	Plan    *proto.SweepPlan
	Points  []SweepPoint
	Done    int
	Page    int
	// files and curves of the finished sweep
	CSV, JSON any
	Curves    *proto.SweepCurves
	Ms        float64 // wall time of the last sweep, plan to files
	// Retired counts the sweep workers replaced because the memory they
	// reported was above Host.RetireBytes (this session); mem is each
	// worker's wasm memory as its last reply said (a wasm memory never
	// shrinks).
	Retired int
	mem     []int64

	id        int
	spec      proto.SweepSpec
	specTexts []any // the texts the spec's traces name
	next      int   // the next point to hand out
	start     time.Time
	lastDraw  time.Time
	plot      sweepPlot
}

// SweepPoint is one point of the grid as the page knows it.
type SweepPoint struct {
	Done    bool
	Values  []string
	P       proto.SweepPoint
	summary any // the summary text (a JavaScript string in the browser)
}

func newSweepView(page *Root, workers int) *SweepView {
	return &SweepView{page: page, Source: SweepBuiltin, Vary: strings.Join(DefaultSweepVary, "\n"),
		Workers: max(1, min(workers, 4))}
}

// SetSource picks the config the sweep varies.
func (c *SweepView) SetSource(s string) {
	if s == SweepPanel || s == SweepBuiltin {
		c.Source = s
		if c.page.Sweep != nil {
			c.page.updateURL()
		}
	}
}

// SetVary sets the grid (one --vary per line).
func (c *SweepView) SetVary(text string) {
	c.Vary = text
	c.page.updateURL()
}

// share is what the link holds of the sweep view: its grid and its
// config's source, "" for the defaults.
func (c *SweepView) share() (vary, source string) {
	if c.Vary != strings.Join(DefaultSweepVary, "\n") {
		vary = c.Vary
	}
	if c.Source != SweepBuiltin {
		source = c.Source
	}
	return vary, source
}

// open restores what a link holds of the sweep view.
func (c *SweepView) open(vary, source string) {
	c.Vary = strings.Join(DefaultSweepVary, "\n")
	if vary != "" {
		c.Vary = vary
	}
	c.Source = SweepBuiltin
	if source == SweepPanel {
		c.Source = source
	}
}

// SetWorkers sets how many Web Workers run the points. A value that is not
// a whole number from 1 to MaxSweepWorkers stays in the field with a
// message, and the sweep cannot start until it is fixed.
func (c *SweepView) SetWorkers(v string) {
	c.typing = false
	n, err := state.SweepWorkers(v)
	if err != nil {
		c.WorkersText, c.WorkersErr = v, err.Error()
		return
	}
	c.Workers, c.WorkersText, c.WorkersErr = n, "", ""
}

// TypingWorkers keeps what is being typed in the Web Workers field, so a
// render before the change event (a worker's progress, say) does not put
// the old value back under the user's cursor.
func (c *SweepView) TypingWorkers(v string) {
	c.WorkersText, c.typing = v, true
}

// WorkersValue is what the Web Workers field shows.
func (c *SweepView) WorkersValue() string {
	if c.WorkersErr != "" || c.typing {
		return c.WorkersText
	}
	return strconv.Itoa(c.Workers)
}

// Open opens finished point i in the run view: the sweep's config with
// the point's overrides written into the YAML (as --set would), compare
// off, and runs it there.
func (c *SweepView) Open(i int) {
	defer c.page.guard()
	if i < 0 || i >= len(c.Points) || !c.Points[i].Done {
		return
	}
	text := c.spec.Config
	for _, set := range c.Points[i].P.Sets {
		path, value, _ := strings.Cut(set, "=")
		var err error
		if text, err = state.SetYAML(text, path, value); err != nil {
			c.Err = fmt.Sprintf("point %d cannot open in the run view: %v", i, err)
			return
		}
	}
	p := c.page
	p.Example = nil
	p.Compare.Set = nil
	p.View = ViewRun
	p.Runs.reset(0, 0)
	p.Panel.setYAML(text, state.NoField)
	p.Runs.Run()
}

// Varies is the grid's --vary arguments: the lines of the text, trimmed,
// without a leading "--vary".
func (c *SweepView) Varies() []string {
	var out []string
	for _, l := range strings.Split(c.Vary, "\n") {
		l = strings.TrimSpace(l)
		l = strings.TrimSpace(strings.TrimPrefix(l, "--vary"))
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// Command is the CLI command that makes the same sweep.
func (c *SweepView) Command() string {
	cmd := "kvsim sweep"
	if c.Source == SweepPanel {
		cmd += " --config " + c.page.Panel.Name
	}
	for _, v := range c.Varies() {
		if strings.ContainsAny(v, " {}[]\"'") {
			v = "'" + v + "'"
		}
		cmd += " --vary " + v
	}
	return cmd + " --output-dir DIR"
}

// CanRun tells whether the sweep can start.
func (c *SweepView) CanRun() bool {
	return !c.Running && c.page.Runs.fan == nil && c.WorkersErr == "" && (c.Source == SweepBuiltin || !c.page.Panel.Invalid())
}

// RunTitle explains the Run sweep button.
func (c *SweepView) RunTitle() string {
	if c.page.Runs.fan != nil {
		return "the run under way in the Run view uses the sweep's workers"
	}
	return "run every point of the grid in the Web Workers"
}

// Run starts the sweep: the plan from worker 0, then the points.
func (c *SweepView) Run() {
	defer c.page.guard()
	if c.Running {
		return
	}
	if c.page.Runs.fan != nil {
		c.Err = "The run under way in the Run view uses the sweep's workers; wait for it, or cancel it."
		return
	}
	c.Err, c.Status = "", ""
	m := Message{Req: proto.Request{Op: proto.OpSweepPlan}}
	spec, err := c.newSpec(&m)
	if err != "" {
		c.Err = err
		return
	}
	c.id, c.spec, c.specTexts = c.page.nextID(), spec, m.Texts
	c.Running, c.Plan, c.Points, c.Done, c.next, c.Page = true, nil, nil, 0, 0, 0
	c.CSV, c.JSON, c.Curves = nil, nil, nil
	c.start = c.page.host.Now()
	c.plot.dirty = true
	c.Status = "checking the grid…"
	m.Req.ID, m.Req.SweepPlan = c.id, &proto.SweepPlanJob{Spec: spec}
	for w := range c.mem {
		c.retire(w) // the workers this sweep does not use too
	}
	c.page.host.PostSweep(0, m)
}

// newSpec is the sweep every message carries: the config, its name, the
// grid and the traces it reads (texts of m); or why there is none.
func (c *SweepView) newSpec(m *Message) (proto.SweepSpec, string) {
	spec := proto.SweepSpec{Vary: c.Varies()}
	if c.Source == SweepPanel {
		p := c.page.Panel
		if p.Cfg == nil {
			return spec, "The config in the panel has an error; fix it first."
		}
		spec.Config, spec.Name, spec.Traces = p.YAML, p.Name, p.Traces.attach(m)
		return spec, ""
	}
	b, err := traces.Read("connectors.yaml")
	if err != nil {
		return spec, err.Error()
	}
	spec.Config, spec.Name = string(b), "traces/connectors.yaml"
	return spec, ""
}

// message is a sweep request with the spec's texts.
func (c *SweepView) message(req proto.Request) Message {
	req.ID = c.id
	return Message{Req: req, Texts: append([]any(nil), c.specTexts...)}
}

// Cancel stops the sweep (its workers are terminated).
func (c *SweepView) Cancel() {
	defer c.page.guard()
	if !c.Running {
		return
	}
	c.stop()
	c.Running, c.id = false, -1
	c.Status = fmt.Sprintf("Sweep cancelled after %s of %s points.", state.Thousands(int64(c.Done)), state.Thousands(int64(len(c.Points))))
}

// failed stops the sweep with a message (a worker failed, or none could
// start).
func (c *SweepView) failed(msg string) {
	c.Running = false
	c.Err = msg
}

// deliver takes a sweep worker's reply; it tells whether to render.
func (c *SweepView) deliver(m WorkerMsg) bool {
	if m.ID != c.id || !c.Running {
		return false
	}
	var err error
	render := true
	switch m.Type {
	case proto.OpSweepPlan:
		err = c.takePlan(m)
	case proto.OpSweepPoint:
		render, err = c.takePoint(m)
	case proto.OpSweepCollect:
		err = c.takeFiles(m)
	default:
		return false
	}
	if err != nil {
		c.stop()
		c.Running, c.id = false, -1
		c.Err, c.Status = err.Error(), ""
		c.plot.dirty = true
		return true
	}
	return render
}

// takePlan takes the validated grid and hands each worker its first point.
func (c *SweepView) takePlan(m WorkerMsg) error {
	if m.Error != nil {
		return errors.New(m.Error.Msg)
	}
	if m.SweepPlan == nil {
		return errors.New("bad sweep plan: the worker sent none")
	}
	p := *m.SweepPlan
	c.Plan = &p
	c.Points = make([]SweepPoint, p.Points)
	for i := range c.Points {
		c.Points[i].Values = pointValues(&p, i)
	}
	for w := 0; w < min(c.Workers, p.Points); w++ {
		c.hand(w)
	}
	c.Status = "0 of " + state.Thousands(int64(p.Points)) + " points"
	return nil
}

// takePoint takes one evaluated point, hands its worker the next, and
// asks a worker for the files when every point is in. It renders at most
// every 100 ms (the progress bar moves in place).
func (c *SweepView) takePoint(m WorkerMsg) (render bool, err error) {
	r := m.SweepPoint
	if m.Error != nil {
		i := -1
		if r != nil {
			i = r.Index
		}
		return true, fmt.Errorf("point %d: %s", i, m.Error.Msg)
	}
	if r == nil {
		return true, errors.New("bad sweep point: the worker sent none")
	}
	if r.Index < 0 || r.Index >= len(c.Points) || c.Points[r.Index].Done {
		return false, nil
	}
	pt := &c.Points[r.Index]
	pt.P = r.Point
	pt.Done, pt.summary = true, m.Text(r.Summary)
	c.Done++
	c.plot.dirty = true
	c.Status = fmt.Sprintf("%s of %s points", state.Thousands(int64(c.Done)), state.Thousands(int64(len(c.Points))))
	if c.next < len(c.Points) {
		c.hand(m.Worker)
	}
	if c.Done == len(c.Points) {
		msg := c.message(proto.Request{Op: proto.OpSweepCollect})
		job := &proto.SweepCollectJob{Spec: c.spec, Summaries: make([]proto.TextRef, len(c.Points))}
		for i := range c.Points {
			job.Summaries[i] = msg.text(c.Points[i].summary)
		}
		msg.Req.SweepCollect = job
		c.Status = "writing sweep.csv and sweep.json…"
		c.post(m.Worker, msg)
		return true, nil
	}
	if now := c.page.host.Now(); now.Sub(c.lastDraw) >= 100*time.Millisecond {
		c.lastDraw = now
		return true, nil
	}
	return false, nil
}

// takeFiles takes the finished sweep's files and curves.
func (c *SweepView) takeFiles(m WorkerMsg) error {
	if m.Error != nil {
		return errors.New(m.Error.Msg)
	}
	f := m.SweepFiles
	if f == nil || m.Text(f.CSV) == nil || m.Text(f.JSON) == nil {
		return errors.New("bad sweep files: the worker sent none")
	}
	cv := f.Curves
	c.Curves, c.CSV, c.JSON = &cv, m.Text(f.CSV), m.Text(f.JSON)
	c.Running = false
	c.Ms = float64(c.page.host.Now().Sub(c.start).Microseconds()) / 1000
	c.Status = fmt.Sprintf("%s points in %s with %d workers.", state.Thousands(int64(len(c.Points))), state.Duration(c.Ms), min(c.Workers, len(c.Points)))
	c.plot.dirty = true
	return nil
}

// hand gives the next point to worker w.
func (c *SweepView) hand(w int) {
	i := c.next
	c.next++
	c.post(w, c.message(proto.Request{Op: proto.OpSweepPoint,
		SweepPoint: &proto.SweepPointJob{Spec: c.spec, Index: i}}))
}

// post sends a job to worker w, replacing the worker first when it grew
// above Host.RetireBytes.
func (c *SweepView) post(w int, msg Message) {
	c.retire(w)
	c.page.host.PostSweep(w, msg)
}

// noteMem records the wasm memory sweep worker w reported with a reply.
func (c *SweepView) noteMem(w int, mem int64) {
	for len(c.mem) <= w {
		c.mem = append(c.mem, 0)
	}
	c.mem[w] = mem
}

// retire replaces sweep worker w when its memory is above the threshold
// (it is idle: it is called before the worker's next job).
func (c *SweepView) retire(w int) {
	if w < len(c.mem) {
		retireLarge(c.page.host.RetireBytes(), &c.mem[w], &c.Retired, func() { c.page.host.RestartSweepWorker(w) })
	}
}

// stop terminates every sweep worker (their memory goes with them).
func (c *SweepView) stop() {
	c.page.host.StopSweep()
	c.mem = nil
}

// Pct is the sweep's progress bar width.
func (c *SweepView) Pct() string {
	n := max(1, len(c.Points))
	return strconv.FormatFloat(float64(c.Done)*100/float64(n), 'f', 1, 64) + "%"
}

// Rows is the visible page of the point table (point indices).
func (c *SweepView) Rows() []int {
	from := min(c.Page*SweepPageRows, len(c.Points))
	to := min(from+SweepPageRows, len(c.Points))
	out := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// Pages is the number of table pages.
func (c *SweepView) Pages() int { return (len(c.Points) + SweepPageRows - 1) / SweepPageRows }

// Turn turns the table page by d.
func (c *SweepView) Turn(d int) { c.Page = max(0, min(c.Pages()-1, c.Page+d)) }

// Download offers sweep.csv or sweep.json.
func (c *SweepView) Download(kind string) {
	defer c.page.guard()
	switch {
	case kind == "sweep.csv" && c.CSV != nil:
		c.page.host.Download(kind, c.CSV)
	case kind == "sweep.json" && c.JSON != nil:
		c.page.host.Download(kind, c.JSON)
	}
}

// draw pushes the plot to its canvas (see Root.AfterRender).
func (c *SweepView) draw() { c.plot.draw(c.page.host, c.Plan, c.Points, c.Curves) }

func (c *SweepView) finished() bool { return c.CSV != nil && !c.Running }

func (c *SweepView) tableNote() string {
	return fmt.Sprintf("%s of %s evaluated", state.Thousands(int64(c.Done)), state.Thousands(int64(len(c.Points))))
}

func (c *SweepView) pageNote() string { return fmt.Sprintf("page %d of %d", c.Page+1, c.Pages()) }
