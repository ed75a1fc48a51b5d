package main

import (
	"fmt"
	"runtime/debug"

	"github.com/kvsim/kvsim/ui/state"
	"github.com/kvsim/kvsim/wasm/proto"
)

// Views of the page.
const (
	ViewRun   = "run"
	ViewSweep = "sweep"
)

// Root is the page: the header, the config panel and the run or sweep
// view. It owns the browser (Host) and the page's components, routes each
// worker reply to the component it answers, and keeps the link in the URL.
// Components call it from event handlers (vugu holds the render lock then);
// worker replies arrive through Deliver, under the same lock.
type Root struct {
	host Host
	// View is ViewRun or ViewSweep.
	View string
	// Example is the guided example on the page (nil: the user's own
	// config).
	Example *state.Example
	// Fatal is an internal error (a handler's panic) shown over the page.
	Fatal  string
	Copied bool

	Panel   *ConfigPanel
	Compare *CompareSetup
	Runs    *RunView
	Sweep   *SweepView

	// Policies are the connector profiles' policies, from the worker's
	// ready reply (built from the rules table; empty until it answers).
	Policies []proto.Policy

	seq int // the last message id
}

// NewRoot builds the page and applies the link's fragment.
func NewRoot(h Host, fragment string) *Root {
	c := &Root{host: h, View: ViewRun}
	c.Panel = newConfigPanel(c)
	c.Compare = &CompareSetup{page: c, G2Text: "192, 2048, none"}
	c.Runs = newRunView(c)
	c.Sweep = newSweepView(c, h.Cores())
	share, err := state.ParseFragment(fragment)
	if err != nil {
		c.Runs.RunErr = err.Error() + "; showing the default example instead"
		share = state.DefaultExample().Share()
	}
	c.applyShare(share)
	c.Runs.autoRun = c.Panel.Cfg != nil && c.Panel.Traces.Note == ""
	return c
}

// applyShare opens what a link (or an example) holds.
func (c *Root) applyShare(s state.Share) {
	c.Example = state.ExampleByID(s.Example)
	c.View = ViewRun
	if s.View == ViewSweep {
		c.View = ViewSweep
	}
	c.Compare.Set = s.Compare
	c.Sweep.open(s.SweepVary, s.SweepSource)
	c.Runs.reset(s.Pass, s.Rank)
	c.Panel.open(s.YAML, s.Upload)
}

// guard turns a panic in a handler into a message instead of a dead page
// (vugu stops its render loop when a handler panics). Handlers defer it.
func (c *Root) guard() {
	if r := recover(); r != nil {
		c.Fatal = fmt.Sprintf("internal error: %v", r)
		println(c.Fatal, string(debug.Stack()))
	}
}

// ExampleApplies tells whether the guided example's text still describes
// the page: its config (trace included) is the panel's, unedited. Once the
// config or the trace changes, the example box retires (its numbers no
// longer apply) and the link no longer names it.
func (c *Root) ExampleApplies() bool {
	return c.Example != nil && c.Panel.YAML == c.Example.YAML()
}

// DismissFatal closes the internal-error banner (the page went on after
// the handler that failed); a new run closes it too.
func (c *Root) DismissFatal() { c.Fatal = "" }

// nextID is a new message id.
func (c *Root) nextID() int {
	c.seq++
	return c.seq
}

// share is what the link holds of the page (without the pass view's place
// and the uploaded trace).
func (c *Root) share() state.Share {
	s := state.Share{YAML: c.Panel.YAML, Compare: c.Compare.Set}
	if c.View == ViewSweep {
		s.View = ViewSweep
	}
	s.SweepVary, s.SweepSource = c.Sweep.share()
	if c.ExampleApplies() {
		s.Example = c.Example.ID
	}
	return s
}

// updateURL writes the page's state into the URL's fragment.
func (c *Root) updateURL() {
	s := c.share()
	s.Pass, s.Rank = c.Runs.Passes.place()
	s.Upload = c.Panel.Traces.ref()
	c.host.SetFragment(s.Fragment())
	c.Copied = false
}

// ShareURL is the link to the current view.
func (c *Root) ShareURL() string { return c.host.Location() + "#" + c.share().Fragment() }

// CopyLink copies the share link.
func (c *Root) CopyLink() {
	c.host.Copy(c.ShareURL())
	c.Copied = true
}

// SetView switches between the run and the sweep view.
func (c *Root) SetView(v string) {
	defer c.guard()
	if v != ViewSweep {
		v = ViewRun
	}
	c.View = v
	c.updateURL()
}

// OpenLink applies a link's fragment (the user edited or pasted the URL)
// and runs it.
func (c *Root) OpenLink(frag string) {
	defer c.guard()
	share, err := state.ParseFragment(frag)
	if err != nil {
		c.Runs.RunErr = err.Error()
		return
	}
	c.applyShare(share)
	if c.Panel.Cfg != nil && c.Panel.Traces.Note == "" {
		c.Runs.Run()
	}
}

// PickExample opens a guided example and runs it.
func (c *Root) PickExample(id string) {
	defer c.guard()
	ex := state.ExampleByID(id)
	if ex == nil {
		return
	}
	c.applyShare(ex.Share())
	c.Runs.Run()
}

// Deliver hands a worker message to the component it answers (the host
// holds the render lock). It tells whether the page needs a render:
// progress messages only move a progress bar, which the host updates in
// place (a vugu render walks the whole page).
func (c *Root) Deliver(m WorkerMsg) (render bool) {
	defer c.guard()
	render = true
	if m.Worker < 0 && m.Mem > 0 {
		c.Runs.WorkerMem = m.Mem
	}
	if m.Worker >= 0 && m.Mem > 0 {
		c.Sweep.noteMem(m.Worker, m.Mem)
	}
	if m.Type == proto.MsgDead {
		c.workerDied(m)
		return render
	}
	if m.Error != nil && m.ID == 0 {
		// not the answer to a request: the worker cannot serve at all
		c.workerFailed(m)
		return render
	}
	switch m.Type {
	case proto.MsgReady:
		if m.Ready != nil {
			c.Policies = m.Ready.Policies
		}
		if m.Worker < 0 {
			c.Runs.ready() // a (fresh) sweep worker's ready says nothing of the run worker
		}
	case proto.MsgProgress, proto.MsgResult, proto.MsgFile:
		render = c.Runs.deliver(m)
	case proto.MsgChecked:
		render = c.Panel.Traces.checked(m)
	case proto.MsgIndex:
		render = !c.Runs.holdIndex(m) && c.Runs.Passes.index(m)
	case proto.MsgFrame:
		render = c.Runs.Passes.frames(m)
	case proto.OpSweepPlan, proto.OpSweepPoint, proto.OpSweepCollect:
		render = c.Sweep.deliver(m)
	default:
		if m.Error != nil {
			c.workerFailed(m) // a reply of no known type
		}
	}
	return render
}

// workerFailed shows a worker's failure where its work shows.
func (c *Root) workerFailed(m WorkerMsg) {
	if m.Worker >= 0 {
		c.sweepWorkerFailed(m.Error.Msg)
		return
	}
	c.Runs.workerFailed(m.Error.Msg)
}

// sweepWorkerFailed shows a sweep worker's failure: the compare's when
// its runs use the sweep's workers (fanOut), the sweep's otherwise.
func (c *Root) sweepWorkerFailed(msg string) {
	if c.Runs.fan != nil {
		c.Runs.fanFailed(msg)
		return
	}
	c.Sweep.failed("A sweep worker failed: " + msg)
}

// workerDied replaces a worker whose Go program stopped (it exited, ran
// out of memory, or a call into it threw; sim-worker.js tells): the run
// worker at once, so the next Run works; the sweep's workers when the
// next sweep starts.
func (c *Root) workerDied(m WorkerMsg) {
	why, kind := "it stopped", ""
	if m.Error != nil {
		why, kind = m.Error.Msg, m.Error.Kind
	}
	if m.Worker >= 0 && c.Runs.fan != nil {
		var mem int64
		if m.Worker < len(c.Sweep.mem) {
			mem = c.Sweep.mem[m.Worker]
		}
		c.Runs.fanDied(m.Worker, kind, why, mem)
		return
	}
	if m.Worker >= 0 {
		c.Sweep.stop()
		c.Sweep.failed("A sweep worker stopped (" + why + "); the sweep's results are lost. Press Run sweep to try again.")
		return
	}
	c.Runs.workerDied(kind, why)
}

// Key handles the page's keyboard shortcuts; it tells whether the key was
// used.
func (c *Root) Key(key string, shift bool) bool {
	defer c.guard()
	switch key {
	case "c", "C":
		if c.View == ViewSweep {
			return false
		}
		c.Compare.Toggle()
		return true
	case "/":
		c.host.Focus(state.FTrace.ID())
		return true
	}
	if c.View == ViewSweep {
		return false
	}
	return c.Runs.Passes.Key(key, shift)
}

// AfterRender draws the canvases. vugu sets every attribute of every
// element on each render, and setting a canvas's width clears it, so each
// canvas is pushed again after every render (one copy of a kept Go
// image); the image itself is redrawn only when its data or size changed.
func (c *Root) AfterRender() {
	defer c.guard()
	c.host.SetValue("yaml", c.Panel.YAML)
	c.Runs.draw()
	if c.View == ViewSweep {
		c.Sweep.draw()
	}
}

// Resized redraws what depends on the window size.
func (c *Root) Resized() {
	c.Runs.chart.dirty = true
	c.Sweep.plot.dirty = true
}

func (c *Root) class() string {
	if c.Runs.Running {
		return "running"
	}
	return ""
}

func (c *Root) tabClass(v string) string {
	if c.View == v {
		return "tab on"
	}
	return "tab"
}

// PolicyLine is a connector profile's policy in one line ("" until the
// worker has answered).
func (c *Root) PolicyLine(connector string) string {
	if p := state.PolicyOf(c.Policies, connector); p != nil {
		return p.Line
	}
	return ""
}
