package main

import (
	"encoding/json"
	"fmt"
	"image"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/traces"
	"github.com/kvsim/kvsim/ui/draw"
	"github.com/kvsim/kvsim/ui/state"
	"github.com/kvsim/kvsim/wasm/proto"
)

// Views of the page.
const (
	ViewRun   = "run"
	ViewSweep = "sweep"
)

// Sweep sources.
const (
	SweepBuiltin = "builtin" // traces/connectors.yaml, as `kvsim sweep` without --config
	SweepPanel   = "panel"   // the config in the panel
)

// DefaultSweepVary is the sweep view's grid: `kvsim sweep`'s default.
var DefaultSweepVary = []string{
	"host_offload.num_host_blocks=64,128,192,256,384,512,1024,2048",
	"connector=offloading_v0_24,offloading_v0_32,simple_cpu_v0_32",
}

// MaxSweepWorkers bounds the sweep's Web Workers.
const MaxSweepWorkers = 8

// SweepPageRows is the point table's page length.
const SweepPageRows = 48

// Sweep is the sweep view: a grid of --vary values over a config, whose
// points run in several Web Workers (each evaluates points by index with
// core/sweep); the page hands out indices, shows the points as they come
// and draws the curves. The files are gathered by a worker with
// core/sweep's Collect, so they are the bytes `kvsim sweep` writes.
type Sweep struct {
	Source  string
	Vary    string // one --vary per line
	Workers int

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

	id       int
	spec     map[string]any
	next     int
	start    time.Time
	lastDraw time.Time
	dirty    bool
	img      *image.RGBA
}

// SweepPoint is one point of the grid as the page knows it.
type SweepPoint struct {
	Done    bool
	Values  []string
	P       proto.SweepPoint
	summary any // the summary text (a JavaScript string in the browser)
}

func newSweep(workers int) *Sweep {
	return &Sweep{Source: SweepBuiltin, Vary: strings.Join(DefaultSweepVary, "\n"),
		Workers: max(1, min(workers, 4))}
}

// SetView switches between the run and the sweep view.
func (a *App) SetView(v string) {
	defer a.guard()
	if v != ViewSweep {
		v = ViewRun
	}
	a.View = v
	a.updateURL()
}

// SweepSetSource picks the config the sweep varies.
func (a *App) SweepSetSource(s string) {
	if s == SweepPanel || s == SweepBuiltin {
		a.Sw.Source = s
	}
}

// SweepSetVary sets the grid (one --vary per line).
func (a *App) SweepSetVary(text string) { a.Sw.Vary = text }

// SweepSetWorkers sets how many Web Workers run the points.
func (a *App) SweepSetWorkers(v string) {
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 1 && n <= MaxSweepWorkers {
		a.Sw.Workers = n
	}
}

// SweepVaries is the grid's --vary arguments: the lines of the text,
// trimmed, without a leading "--vary".
func (s *Sweep) SweepVaries() []string {
	var out []string
	for _, l := range strings.Split(s.Vary, "\n") {
		l = strings.TrimSpace(l)
		l = strings.TrimSpace(strings.TrimPrefix(l, "--vary"))
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// SweepCommand is the CLI command that makes the same sweep.
func (a *App) SweepCommand() string {
	s := a.Sw
	cmd := "kvsim sweep"
	if s.Source == SweepPanel {
		cmd += " --config " + a.Name
	}
	for _, v := range s.SweepVaries() {
		if strings.ContainsAny(v, " {}[]\"'") {
			v = "'" + v + "'"
		}
		cmd += " --vary " + v
	}
	return cmd + " --output-dir DIR"
}

// CanSweep tells whether the sweep can start.
func (a *App) CanSweep() bool {
	return !a.Sw.Running && (a.Sw.Source == SweepBuiltin || a.Cfg != nil)
}

// SweepRun starts the sweep: the plan from worker 0, then the points.
func (a *App) SweepRun() {
	defer a.guard()
	s := a.Sw
	if s.Running {
		return
	}
	s.Err, s.Status = "", ""
	spec := map[string]any{"vary": toAny(s.SweepVaries())}
	if s.Source == SweepPanel {
		if a.Cfg == nil {
			s.Err = "The config in the panel has an error; fix it first."
			return
		}
		spec["config"], spec["name"] = a.YAML, a.Name
		if a.Form.Source.Type == config.SourceTrace {
			if u := a.Uploads[a.Form.Source.Path]; u != nil {
				spec["traces"] = map[string]any{u.Name: u.text}
			}
		}
	} else {
		b, err := traces.Read("connectors.yaml")
		if err != nil {
			s.Err = err.Error()
			return
		}
		spec["config"], spec["name"] = string(b), "traces/connectors.yaml"
	}
	a.seq++
	s.id, s.spec = a.seq, spec
	s.Running, s.Plan, s.Points, s.Done, s.next, s.Page = true, nil, nil, 0, 0, 0
	s.CSV, s.JSON, s.Curves = nil, nil, nil
	s.start = a.host.Now()
	s.dirty = true
	s.Status = "checking the grid…"
	a.host.PostSweep(0, map[string]any{"op": proto.OpSweepPlan, "id": s.id, "sweep": spec})
}

// SweepCancel stops the sweep (its workers are terminated).
func (a *App) SweepCancel() {
	defer a.guard()
	s := a.Sw
	if !s.Running {
		return
	}
	a.host.StopSweep()
	s.Running, s.id = false, -1
	s.Status = fmt.Sprintf("Sweep cancelled after %d of %d points.", s.Done, len(s.Points))
}

// sweepDeliver takes a sweep worker's reply; it tells whether to render.
func (a *App) sweepDeliver(m WorkerMsg) bool {
	s := a.Sw
	if m.ID != s.id || !s.Running {
		return false
	}
	fail := func(msg string) bool {
		a.host.StopSweep()
		s.Running, s.id = false, -1
		s.Err, s.Status = msg, ""
		s.dirty = true
		return true
	}
	switch m.Type {
	case proto.OpSweepPlan:
		if m.Err != nil {
			return fail(m.Err.Msg)
		}
		var p proto.SweepPlan
		if err := json.Unmarshal([]byte(m.Plan), &p); err != nil {
			return fail("bad sweep plan: " + err.Error())
		}
		s.Plan = &p
		s.Points = make([]SweepPoint, p.Points)
		for i := range s.Points {
			s.Points[i].Values = pointValues(&p, i)
		}
		n := min(s.Workers, p.Points)
		for w := 0; w < n; w++ {
			a.sweepNext(w)
		}
		s.Status = fmt.Sprintf("0 of %d points", p.Points)
		return true
	case proto.OpSweepPoint:
		if m.Err != nil {
			return fail(fmt.Sprintf("point %d: %s", m.Index, m.Err.Msg))
		}
		if m.Index < 0 || m.Index >= len(s.Points) || s.Points[m.Index].Done {
			return false
		}
		pt := &s.Points[m.Index]
		if err := json.Unmarshal([]byte(m.Point), &pt.P); err != nil {
			return fail("bad sweep point: " + err.Error())
		}
		pt.Done, pt.summary = true, m.Summary
		s.Done++
		s.dirty = true
		s.Status = fmt.Sprintf("%d of %d points", s.Done, len(s.Points))
		if s.next < len(s.Points) {
			a.sweepNext(m.Worker)
		}
		if s.Done == len(s.Points) {
			sums := make([]any, len(s.Points))
			for i := range s.Points {
				sums[i] = s.Points[i].summary
			}
			s.Status = "writing sweep.csv and sweep.json…"
			a.host.PostSweep(m.Worker, map[string]any{"op": proto.OpSweepCollect, "id": s.id, "sweep": s.spec, "summaries": sums})
			return true
		}
		// render at most every 100 ms; the progress bar moves in place
		if now := a.host.Now(); now.Sub(s.lastDraw) >= 100*time.Millisecond {
			s.lastDraw = now
			return true
		}
		return false
	case proto.OpSweepCollect:
		if m.Err != nil {
			return fail(m.Err.Msg)
		}
		var c proto.SweepCurves
		if err := json.Unmarshal([]byte(m.Curves), &c); err != nil {
			return fail("bad sweep curves: " + err.Error())
		}
		s.Curves, s.CSV, s.JSON = &c, m.CSV, m.JSON
		s.Running = false
		s.Ms = float64(a.host.Now().Sub(s.start).Microseconds()) / 1000
		s.Status = fmt.Sprintf("%d points in %s ms with %d workers.", len(s.Points), state.Ms(math.Round(s.Ms)), min(s.Workers, len(s.Points)))
		s.dirty = true
		return true
	}
	return false
}

// sweepNext hands the next point to worker w.
func (a *App) sweepNext(w int) {
	s := a.Sw
	i := s.next
	s.next++
	a.host.PostSweep(w, map[string]any{"op": proto.OpSweepPoint, "id": s.id, "sweep": s.spec, "index": i})
}

// pointValues is point i's value on each axis (the first axis varies
// slowest, as in core/sweep).
func pointValues(p *proto.SweepPlan, i int) []string {
	out := make([]string, len(p.Axes))
	for a := len(p.Axes) - 1; a >= 0; a-- {
		k := len(p.Axes[a].Values)
		out[a] = p.Axes[a].Values[i%k]
		i /= k
	}
	return out
}

// SweepPct is the sweep's progress bar width.
func (a *App) SweepPct() string {
	n := max(1, len(a.Sw.Points))
	return strconv.FormatFloat(float64(a.Sw.Done)*100/float64(n), 'f', 1, 64) + "%"
}

// SweepRows is the visible page of the point table.
func (a *App) SweepRows() []int {
	s := a.Sw
	from := min(s.Page*SweepPageRows, len(s.Points))
	to := min(from+SweepPageRows, len(s.Points))
	out := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// SweepPages is the number of table pages.
func (a *App) SweepPages() int { return (len(a.Sw.Points) + SweepPageRows - 1) / SweepPageRows }

// SweepTurn turns the table page.
func (a *App) SweepTurn(d int) { a.Sw.Page = max(0, min(a.SweepPages()-1, a.Sw.Page+d)) }

// SweepDownload offers sweep.csv or sweep.json.
func (a *App) SweepDownload(kind string) {
	defer a.guard()
	s := a.Sw
	switch {
	case kind == "sweep.csv" && s.CSV != nil:
		a.host.Download(kind, s.CSV)
	case kind == "sweep.json" && s.JSON != nil:
		a.host.Download(kind, s.JSON)
	}
}

// sweepLines are the plot's lines: the finished sweep's curves (core/sweep's
// Series), or while it runs the points evaluated so far, grouped as the
// plan's lines.
func (a *App) sweepLines() []draw.SweepLine {
	s := a.Sw
	if s.Plan == nil || s.Plan.X < 0 {
		return nil
	}
	var out []draw.SweepLine
	for k, l := range s.Plan.Lines {
		dl := draw.SweepLine{Name: l.Name, X: l.X}
		if c := s.Curves; c != nil {
			// the finished sweep: y by x from the collected result
			dl.Restored = curveAt(c.Restored, k, l.X)
			dl.Recomputed = curveAt(c.Recomputed, k, l.X)
			dl.TTFTP50 = curveAt(c.TTFTP50, k, l.X)
			dl.TTFTP99 = curveAt(c.TTFTP99, k, l.X)
		} else {
			for _, i := range l.Points {
				p := s.Points[i]
				dl.Restored = append(dl.Restored, pointNum(p.Done, p.P.Restored))
				dl.Recomputed = append(dl.Recomputed, pointNum(p.Done, p.P.Recomputed))
				dl.TTFTP50 = append(dl.TTFTP50, pointNum(p.Done, p.P.TTFTP50))
				dl.TTFTP99 = append(dl.TTFTP99, pointNum(p.Done, p.P.TTFTP99))
			}
		}
		out = append(out, dl)
	}
	return out
}

// curveAt reads curve k's y at each x (NaN where it has none).
func curveAt(cs []proto.Curve, k int, xs []float64) []float64 {
	out := make([]float64, len(xs))
	for j := range out {
		out[j] = math.NaN()
	}
	if k >= len(cs) {
		return out
	}
	c := cs[k]
	for j, x := range xs {
		for i, cx := range c.X {
			if cx == x && i < len(c.Y) {
				out[j] = c.Y[i]
				break
			}
		}
	}
	return out
}

func pointNum(done bool, s string) float64 {
	if !done || s == "" {
		return math.NaN()
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return f
}

// SweepPlotWidth and SweepPlotHeight are the plot canvas's size.
func (a *App) SweepPlotWidth() int {
	if a.Sw.img == nil {
		return 900
	}
	return a.Sw.img.Rect.Dx()
}

func (a *App) SweepPlotHeight() int {
	if a.Sw.img == nil {
		return draw.SweepPlotHeight(900, nil)
	}
	return a.Sw.img.Rect.Dy()
}

// sweepDraw draws the plot canvas after a render (see AfterRender).
func (a *App) sweepDraw() {
	s := a.Sw
	if a.View != ViewSweep {
		return
	}
	w := a.host.Width("sweep-plot")
	if w <= 0 {
		return
	}
	w = max(320, min(1600, w))
	lines := a.sweepLines()
	var names []string
	for _, l := range lines {
		names = append(names, l.Name)
	}
	if h := draw.SweepPlotHeight(w, names); s.img == nil || s.img.Rect.Dx() != w || s.img.Rect.Dy() != h {
		s.img = image.NewRGBA(image.Rect(0, 0, w, h))
		s.dirty = true
	}
	if s.dirty {
		s.dirty = false
		xl := ""
		if s.Plan != nil {
			xl = s.Plan.XLabel
		}
		draw.SweepPlot(s.img, xl, lines)
	}
	a.host.Blit("sweep-plot", s.img)
}

// SweepCell formats a point's column for the table.
func SweepCell(p SweepPoint, v string) string {
	if !p.Done {
		return "…"
	}
	if v == "" {
		return "–"
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return v
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return state.Thousands(int64(f))
	}
	return state.Ms(f)
}
