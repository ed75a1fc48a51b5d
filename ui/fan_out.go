package main

import (
	"fmt"
	"slices"

	"github.com/kvsim/kvsim/ui/state"
	"github.com/kvsim/kvsim/wasm/proto"
)

// A fanOut is a run or a compare whose runs each run in a worker of their
// own (the sweep's workers) for their results, while the run worker keeps
// only the pass view's window of every run, stopping each after it
// (proto.RunJob.FanOut and PassesOnly; docs/ui.md, "Compared long
// runs"). A run that splits (replay.Parts) runs as parts in workers of
// their own when the machine has cores to spare, and a worker merges them
// (proto.MergeJob). The results then come in the time of the longest run
// or part, not of all of them in turn, and no worker holds more than one
// run's reports. Only runs whose records keep a window fan out: the run
// worker says so (a FanOut progress) once it has read the trace.
type fanOut struct {
	jobs     []fanJob   // every job posted: runs, parts, merges
	parts    [][][]byte // each run's parts as they come in
	results  []*Result  // nil until run k's results
	runs     int        // the jobs first posted (runs and parts)
	left     int        // results still awaited, the run worker's included
	passes   *proto.RunResult
	passesID int
	// indexed is the run worker's last index reply before the results
	// were all in: the pass view takes it when it opens (a split run's
	// window can be indexed before its parts are merged).
	indexed *WorkerMsg
}

// A fanJob is one job of a fanOut on a sweep worker.
type fanJob struct {
	id, w   int // job id, sweep worker
	variant int
	// part of of: of 1 is the whole run, of 0 a merge of its parts.
	part, of    int
	done, total int // progress, in requests
}

// index is the job whose id is id (-1: none; f may be nil).
func (f *fanOut) index(id int) int {
	if f == nil {
		return -1
	}
	for k, x := range f.jobs {
		if x.id == id {
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

// mayFanOut tells whether a run job may fan out: on a machine with more
// than one core, while no sweep uses the workers (the run worker then
// fans out a compare, or a single run that splits).
func (c *RunView) mayFanOut() bool {
	return c.page.host.Cores() > 1 && !c.page.Sweep.Running
}

// splits is how many parts each of n runs that may be split into parts[k]
// runs as: the cores a run has to itself, at most (one for a run whose
// count the run worker did not give).
func splits(parts []int, n, cores int) []int {
	out := make([]int, n)
	for k := range out {
		out[k] = 1
		if k < len(parts) {
			out[k] = max(1, min(parts[k], cores/n))
		}
	}
	return out
}

// startFan sends every run of the running job, or every part of it, to a
// sweep worker of its own, for its results alone.
func (c *RunView) startFan(p *proto.Progress) {
	n := max(1, len(c.runMsg.Req.Run.Variants))
	f := &fanOut{parts: make([][][]byte, n), results: make([]*Result, n), left: n + 1}
	for k, of := range splits(p.Parts, n, c.page.host.Cores()) {
		if of > 1 {
			f.parts[k] = make([][]byte, of)
		}
		for i := range of {
			c.postFan(f, fanJob{w: len(f.jobs), variant: k, part: i, of: of})
		}
	}
	f.runs = len(f.jobs)
	c.fan = f
	c.variant, c.variants = 0, n
	c.ProgressMsg = c.fanLabel() + ": starting…"
}

// spec is run k of the running job alone, without records.
func (c *RunView) spec(k int) *proto.RunJob {
	run := c.runMsg.Req.Run
	spec := &proto.RunJob{Config: run.Config, Name: run.Name, Overrides: run.Overrides, Traces: run.Traces, MaxPasses: run.MaxPasses}
	if k < len(run.Variants) {
		spec.Variants = []proto.Variant{run.Variants[k]}
	}
	return spec
}

// postFan posts job j (a run, a part, or with of 0 the merge of run
// j.variant's parts) to its sweep worker.
func (c *RunView) postFan(f *fanOut, j fanJob) {
	j.id = c.page.nextID()
	msg := Message{Req: proto.Request{ID: j.id}, Texts: c.runMsg.Texts}
	spec := c.spec(j.variant)
	switch {
	case j.of == 0:
		msg.Req.Op, msg.Bins = proto.OpMerge, f.parts[j.variant]
		m := &proto.MergeJob{Spec: *spec}
		for i := range msg.Bins {
			m.Parts = append(m.Parts, proto.BinRef(i+1))
		}
		msg.Req.Merge = m
	default:
		if j.of > 1 {
			spec.Part = &proto.Part{Of: j.of, Index: j.part}
		}
		msg.Req.Op, msg.Req.Run = proto.OpRun, spec
	}
	f.jobs = append(f.jobs, j)
	c.page.Sweep.post(j.w, msg)
}

// fanLabel says what runs at once: "3 runs at once", "1 run in 2 parts at
// once".
func (c *RunView) fanLabel() string {
	f := c.fan
	runs := "1 run"
	if n := len(f.results); n > 1 {
		runs = fmt.Sprintf("%d runs", n)
	}
	if f.runs == len(f.results) {
		return runs + " at once"
	}
	return fmt.Sprintf("%s in %d parts at once", runs, f.runs)
}

// fanProgress moves the progress bar by the runs' requests done: a split
// run's are its slowest part's (a part counts the others' requests done
// when they are routed).
func (c *RunView) fanProgress(j int, p *proto.Progress) {
	f := c.fan
	f.jobs[j].done, f.jobs[j].total = p.Done, p.Total
	done, total := 0, 0
	for k := range f.results {
		d, t := -1, 0
		for _, x := range f.jobs {
			if x.variant == k && x.of > 0 {
				if d < 0 || x.done < d {
					d = x.done
				}
				t = max(t, x.total)
			}
		}
		if f.results[k] != nil {
			d = t
		}
		done, total = done+max(d, 0), total+t
	}
	if total > 0 {
		c.Progress = float64(done) / float64(total)
	}
	c.ProgressMsg = fmt.Sprintf("%s: %s of %s requests", c.fanLabel(), state.Thousands(int64(done)), state.Thousands(int64(total)))
}

// fanResult takes job j's reply: a run's results, a part (merged once all
// of its run's are in), or a merge's results; a merge whose run must run
// whole (a part saw a worker held back) runs it whole.
func (c *RunView) fanResult(j int, m WorkerMsg) {
	f := c.fan
	job := f.jobs[j]
	k := job.variant
	if f.results[k] != nil {
		return
	}
	label := c.spec(k).Variants
	name := ""
	if len(label) == 1 {
		name = label[0].Label
	}
	var o *proto.Outcome
	if m.Error == nil && m.Result != nil && len(m.Result.Results) == 1 {
		o = &m.Result.Results[0]
	}
	switch {
	case job.of == 0 && m.Error != nil && m.Error.Kind == proto.ErrKindHeldBack:
		c.postFan(f, fanJob{w: job.w, variant: k, of: 1})
		return
	case m.Error != nil:
		f.results[k] = &Result{Label: name, Err: m.Error}
	case o == nil:
		f.results[k] = &Result{Label: name, Err: &proto.Error{Kind: "internal", Msg: "bad view: the worker sent none"}}
	case job.of > 1 && o.Error == nil:
		b := m.Bin(o.Part)
		if b == nil {
			f.results[k] = &Result{Label: name, Err: &proto.Error{Kind: "internal", Msg: "a part of the run came without its payload"}}
			break
		}
		f.parts[k][job.part] = b
		if !slices.ContainsFunc(f.parts[k], func(b []byte) bool { return b == nil }) {
			c.postFan(f, fanJob{w: job.w, variant: k, of: 0})
		}
		return
	default:
		f.results[k] = outcome(&m, o)
	}
	f.parts[k] = nil
	f.left--
	c.fanFinish()
}

// holdIndex keeps an index reply of the running fan-out's windows until
// the pass view opens on them (fanFinish); it tells whether it did.
func (c *RunView) holdIndex(m WorkerMsg) bool {
	if f := c.fan; f != nil && f.passes != nil && m.ID == f.passesID {
		f.indexed = &m
		return true
	}
	return false
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
	label := c.fanLabel()
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
	c.Status = fmt.Sprintf("Done in %s (%s).", state.Duration(c.RunMs), label)
	c.show(f.results, f.passes)
	if f.indexed != nil {
		c.Passes.index(*f.indexed)
	}
	if f.passes.Indexing && f.indexed == nil {
		// The run worker indexes the windows once asked: now, so that
		// it took no CPU from the runs.
		c.page.host.Post(Message{Req: proto.Request{Op: proto.OpIndex, ID: f.passesID, Index: &proto.IndexJob{}}})
	}
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

// fanDied: sweep worker w, running a run of the compare or a part of it,
// stopped (it ran out of memory, or its program exited). The compare ends;
// the run worker is kept.
func (c *RunView) fanDied(w int, kind, why string, mem int64) {
	n, run := len(c.fan.results), w
	for _, j := range c.fan.jobs {
		if j.w == w {
			run = j.variant // the run of its last job
		}
	}
	w = run
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
