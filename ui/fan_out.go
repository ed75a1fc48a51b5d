package main

import (
	"fmt"

	"github.com/kvsim/kvsim/ui/state"
	"github.com/kvsim/kvsim/wasm/proto"
)

// A fanOut is a compare whose runs each run in a worker of their own (the
// sweep's workers) for their results, while the run worker keeps only the
// pass view's window of every run, stopping each after it
// (proto.RunJob.FanOut and PassesOnly; docs/ui.md, "Compared long
// runs"). The results then come in the time of the longest run, not of all
// of them in turn, and no worker holds more than one run's reports. Only
// compares whose records keep a window fan out: the run worker says so
// (a FanOut progress) once it has read the trace.
type fanOut struct {
	ids         []int     // each run's job id; run k goes to sweep worker k
	results     []*Result // nil until run k's reply
	done, total []int     // each run's progress, in requests
	left        int       // replies still awaited, the run worker's included
	passes      *proto.RunResult
	passesID    int
}

// index is the run whose job id is id (-1: none; f may be nil).
func (f *fanOut) index(id int) int {
	if f == nil {
		return -1
	}
	for k, x := range f.ids {
		if x == id {
			return k
		}
	}
	return -1
}

// FanMem is the most wasm memory a sweep worker reported, the workers a
// compare's runs fan out to (tests read it from the run bar).
func (c *RunView) FanMem() int64 {
	var m int64
	for _, x := range c.page.Sweep.mem {
		m = max(m, x)
	}
	return m
}

// mayFanOut tells whether a job of n runs may fan out: a compare, on a
// machine with more than one core, while no sweep uses the workers.
func (c *RunView) mayFanOut(n int) bool {
	return n > 1 && c.page.host.Cores() > 1 && !c.page.Sweep.Running
}

// startFan sends every run of the running job to a sweep worker of its
// own, for its results alone.
func (c *RunView) startFan() {
	run := c.runMsg.Req.Run
	n := len(run.Variants)
	f := &fanOut{ids: make([]int, n), results: make([]*Result, n), done: make([]int, n), total: make([]int, n), left: n + 1}
	for k, v := range run.Variants {
		f.ids[k] = c.page.nextID()
		spec := proto.RunJob{Config: run.Config, Name: run.Name, Overrides: run.Overrides, Variants: []proto.Variant{v},
			Traces: run.Traces, MaxPasses: run.MaxPasses}
		c.page.Sweep.post(k, Message{Req: proto.Request{Op: proto.OpRun, ID: f.ids[k], Run: &spec}, Texts: c.runMsg.Texts})
	}
	c.fan = f
	c.variant, c.variants = 0, n
	c.ProgressMsg = fmt.Sprintf("%d runs at once: starting…", n)
}

// fanProgress moves the progress bar by the runs' requests done.
func (c *RunView) fanProgress(k int, p *proto.Progress) {
	f := c.fan
	f.done[k], f.total[k] = p.Done, p.Total
	done, total := 0, 0
	for i := range f.done {
		done, total = done+f.done[i], total+f.total[i]
	}
	if total > 0 {
		c.Progress = float64(done) / float64(total)
	}
	c.ProgressMsg = fmt.Sprintf("%d runs at once: %s of %s requests", len(f.ids), state.Thousands(int64(done)), state.Thousands(int64(total)))
}

// fanResult takes run k's results.
func (c *RunView) fanResult(k int, m WorkerMsg) {
	f := c.fan
	if f.results[k] != nil {
		return
	}
	label := c.runMsg.Req.Run.Variants[k].Label
	switch {
	case m.Error != nil:
		f.results[k] = &Result{Label: label, Err: m.Error}
	case m.Result == nil || len(m.Result.Results) != 1:
		f.results[k] = &Result{Label: label, Err: &proto.Error{Kind: "internal", Msg: "bad view: the worker sent none"}}
	default:
		f.results[k] = outcome(&m, &m.Result.Results[0])
	}
	f.done[k] = f.total[k]
	f.left--
	c.fanFinish()
}

// fanPasses takes the run worker's reply: the records' shape, or the
// job's error (which ends the compare).
func (c *RunView) fanPasses(m WorkerMsg) {
	if m.Error != nil || m.Result == nil {
		c.stopFan()
		c.result(m)
		return
	}
	c.fan.passes, c.fan.passesID = m.Result, m.ID
	c.fan.left--
	c.fanFinish()
}

// fanFinish shows the compare once every reply is in.
func (c *RunView) fanFinish() {
	f := c.fan
	if f.left > 0 {
		return
	}
	c.fan = nil
	c.Running = false
	c.Runs++
	c.RunMs = float64(c.page.host.Now().Sub(c.runStart).Microseconds()) / 1000
	// Files: requests.jsonl is replayed from the job (no worker keeps
	// the runs' reports); passes.jsonl comes from the run worker's
	// windows, or replays them.
	results := *c.runMsg
	spec := *results.Req.Run
	spec.FanOut, spec.Passes = false, false
	results.Req.Run = &spec
	passes := *c.runMsg
	pspec := *passes.Req.Run
	pspec.FanOut, pspec.PassesOnly = false, true
	passes.Req.Run = &pspec
	c.resultsRun, c.resultsMsg = -1, &results
	c.passesRun, c.passesMsg = f.passesID, &passes
	c.Status = fmt.Sprintf("Done in %s (%d runs at once).", state.Duration(c.RunMs), len(f.ids))
	c.show(f.results, f.passes)
	// The run worker's runs stopped after their windows: the results say
	// how far the longest rank went.
	c.Passes.ran = 0
	for _, r := range f.results {
		if r.View != nil {
			c.Passes.ran = max(c.Passes.ran, r.View.RankPasses)
		}
	}
}

// stopFan ends a fanned-out compare: its workers stop.
func (c *RunView) stopFan() {
	if c.fan != nil {
		c.fan = nil
		c.page.Sweep.stop()
	}
}

// fanDied: sweep worker w, running run w of the compare, stopped (it ran
// out of memory, or its program exited). The compare ends; the run worker
// is kept.
func (c *RunView) fanDied(w int, kind, why string, mem int64) {
	n := len(c.fan.ids)
	c.stopFan()
	c.Running, c.jobID = false, -1
	c.Runs++
	if kind == "memory" {
		c.RunErr = fmt.Sprintf("The simulator ran out of memory on run %d of %d (%s MiB in use). "+
			"It has been restarted; press Run to try again.", w+1, n, state.Thousands(mem>>20))
		return
	}
	c.RunErr = "The simulator stopped during run " + fmt.Sprint(w+1) + " of " + fmt.Sprint(n) + " (" + why + ") and has been restarted. " +
		"The run was probably too large for the browser; press Run to try again, or a smaller config."
}

// fanFailed: a sweep worker running a run of the compare failed.
func (c *RunView) fanFailed(msg string) {
	c.stopFan()
	c.Running, c.jobID = false, -1
	c.RunErr = "The simulation worker failed: " + msg
}
