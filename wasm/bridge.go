// Command sim.wasm is the browser bridge: it runs the replay core inside a
// Web Worker (public/sim-worker.js) and answers the page's messages. This
// file is the part that does not touch JavaScript, so it is tested natively
// and under GOOS=js GOARCH=wasm alike; main_js.go converts between
// JavaScript objects and these types.
//
// The bridge holds no simulation logic: each variant of a page's job is one
// replay.Job, run through core/replay (the one door into the core) with the
// page's limits; the reports are the core's own encodings. What it adds is
// the view the UI draws (wasm/proto), computed from the report records.
package main

import (
	"bytes"
	"fmt"
	"math"
	"runtime"
	"slices"
	"time"

	"github.com/kvsim/kvsim/core/record"
	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/core/report"
	"github.com/kvsim/kvsim/core/vtime"
	"github.com/kvsim/kvsim/wasm/proto"
)

// A job is one request from the page.
type job struct {
	ID int
	Op string // proto.OpRun or proto.OpCheck

	// run
	Config    string // the YAML text, as the CLI reads it
	Name      string // the config's name in error messages
	Overrides []string
	// Variants are the runs to make (compare mode); none means one run
	// with the job's own overrides only.
	Variants []proto.Variant
	// Traces are uploaded trace texts by the path the config names;
	// other paths are served from the built-in examples.
	Traces map[string]string
	// Requests and Passes ask for requests.jsonl and passes.jsonl.
	Requests, Passes bool
	// MaxPasses bounds every run (0: no bound).
	MaxPasses int64
	// FromPass starts the window of passes a long run keeps (largeWindow).
	FromPass int
	// PassesOnly: the job serves the pass view alone (proto.RunJob).
	PassesOnly bool
	// FanOut: the page may run the compared runs elsewhere (proto.RunJob);
	// fanOut, when set, tells it that it does, and run then keeps only
	// the pass view's window (PassesOnly).
	FanOut bool
	fanOut func(parts []int)
	// fanned: run fanned the job out (it keeps the pass view's windows
	// alone).
	fanned bool
	// Part runs one part of the job's one variant (proto.RunJob.Part).
	Part *proto.Part

	// workloads shares the trace's workload between the variants of a
	// run (run sets it); checkpoints are each variant's engine snapshots
	// when the job keeps the pass view's window only (scrub).
	workloads   *replay.Workloads
	checkpoints []*replay.Checkpoints

	// check: a trace to validate
	Text      string
	Format    string
	BlockSize int
}

// A runOut is one variant's outcome.
type runOut struct {
	Label      string
	Prediction []byte
	RequestsJS []byte // requests.jsonl, when the job asked for it at once
	View       proto.View
	Err        *jobError
	// Output is kept so that the page can ask for the big report files
	// later (file), instead of every run shipping them.
	Output *replay.Output
	// Record is the per-pass record, when the job asked for it and the
	// run is small enough (pageLimits); RecordNote says why not.
	Record     *record.Record
	RecordNote string
	// Part is a Part job's encoded part (replay.Output.Part), its only
	// result.
	Part []byte
}

// file encodes one of the run's report files.
func (o *runOut) file(kind string) ([]byte, *jobError) {
	if o.Output == nil {
		return nil, &jobError{Kind: "internal", Msg: "no result to encode"}
	}
	switch kind {
	case proto.FileRequests:
		if o.Output.Stopped {
			return nil, &jobError{Kind: "internal", Msg: "requests.jsonl: this run stopped after its window of passes"}
		}
		return o.Output.RequestsJSONL(), nil
	case proto.FilePasses:
		if o.Record == nil {
			msg := "passes.jsonl: this run kept no per-pass record"
			if o.RecordNote != "" {
				msg = "passes.jsonl: " + o.RecordNote
			}
			return nil, &jobError{Kind: "limit", Msg: msg}
		}
		// A windowed record (a long run's, LargeWindow) writes its window.
		win, _ := record.ParseWindow(o.Record.Windowed())
		var b bytes.Buffer
		if err := o.Record.WriteWindow(&b, win); err != nil {
			return nil, &jobError{Kind: "internal", Msg: err.Error()}
		}
		return b.Bytes(), nil
	}
	return nil, &jobError{Kind: "internal", Msg: fmt.Sprintf("unknown report file %q", kind)}
}

// variants are the job's runs: its Variants, or one with no overrides.
func (j *job) variants() []proto.Variant {
	if len(j.Variants) == 0 {
		return []proto.Variant{{}}
	}
	return j.Variants
}

// rerun makes variant i of the job again (runs are deterministic, so the
// result equals the first one) for a file request the worker cannot
// serve from memory.
func (j *job) rerun(i int) runOut {
	vs := j.variants()
	if i < 0 || i >= len(vs) {
		return runOut{Err: &jobError{Kind: "internal", Msg: fmt.Sprintf("no variant %d", i)}}
	}
	return j.runOne(i, vs[i], nil)
}

// A jobError is an error as the page shows it: the message is exactly the
// CLI's, the other fields place it next to the control it concerns.
type jobError struct {
	Kind      string // a replay.Kind, or "sweep" for a rejected grid
	Msg       string
	Path      string // config field path, or trace field
	Line, Col int
	Variant   string
}

func (e *jobError) Error() string { return e.Msg }

// asJobError is a core error as the page shows it.
func asJobError(err error) *jobError {
	re := replay.AsError(err)
	return &jobError{Kind: string(re.Kind), Msg: re.Error(), Path: re.Path, Line: re.Line, Col: re.Col}
}

// pageLimits are the bounds of the page's runs: the core's defaults, and a
// per-pass record only for runs the pass view can index (the record of a
// long run is large and indexing it takes a while in wasm).
func (j *job) pageLimits() replay.Limits {
	return replay.Limits{MaxRecordRequests: MaxRecordRequests, MaxPasses: j.MaxPasses}
}

// traces serves uploaded traces first, then the built-in examples.
func (j *job) traces() replay.Traces {
	texts := make(map[string][]byte, len(j.Traces))
	for p, t := range j.Traces {
		texts[p] = []byte(t)
	}
	return replay.Traces{Texts: texts, Builtin: true, Hint: "upload it in the trace panel"}
}

// progressFunc receives (variant index, done, total) now and then.
type progressFunc func(variant, done, total int)

// run makes every variant of a run job. It never panics: a panic in the
// core becomes an "internal" error of that variant.
func (j *job) run(progress progressFunc) []runOut {
	vs := j.variants()
	out := make([]runOut, len(vs))
	fanOut := j.FanOut && j.fanOut != nil && j.Part == nil
	if j.PassesOnly || fanOut {
		j.workloads, j.checkpoints = j.scrubState(len(vs))
	}
	if fanOut && !j.PassesOnly {
		// A run whose records keep a window: the page runs each run,
		// or each part of it, in a worker of its own for the results,
		// and this worker keeps only the pass view's window of each
		// (docs/ui.md, "Compared long runs"). A single run fans out
		// only when it splits. A job the core refuses runs as usual
		// here, to report its errors.
		if keeps, err := replay.KeepsWindow(j.replayJob(vs[0])); err == nil && keeps {
			if parts := j.parts(vs); len(vs) > 1 || parts[0] > 1 {
				j.PassesOnly, j.fanned = true, true
				j.fanOut(parts)
			}
		}
	}
	// The windows of the pass view (and a single run's checkpoints) stay
	// in this worker until its next job that is not a window move: bound
	// the memory the index, the frames and the warm-up grow on top of
	// them (issue 21: 512 MiB a Web Worker).
	limitMemory(j.PassesOnly)
	if !j.PassesOnly {
		dropScrub() // this run's workloads stay with it
		j.checkpoints = nil
		if j.workloads == nil {
			j.workloads = replay.NewWorkloads()
		}
	}
	defer func() { j.workloads, j.checkpoints = nil, nil }()
	for i, v := range vs {
		// The last run's engine (or the last job's, which serve freed) is
		// garbage now: collect it before this run allocates its own. On
		// wasm's one thread the collector's worker runs only when the
		// program yields, and a run's setup does not: a three-run compare
		// grew the heap to 298 MB of which 54 were live (docs/ui.md, "One
		// thread, no preemption").
		runtime.GC()
		out[i] = j.runOne(i, v, progress)
	}
	if j.PassesOnly && len(vs) > 1 {
		// A compare's window move: the last run's engine is garbage, and
		// the index and the frames that follow allocate on top of the
		// three windows. Collecting now sets the collector's next goal
		// from the windows alone, not from the last run's peak, so they
		// fit in the memory the runs took (docs/ui.md, "Window moves from
		// checkpoints").
		runtime.GC()
	}
	return out
}

// parts is how many parts each variant's run may be split into, without
// its per-pass record (replay.Parts; 1 when it cannot be split).
func (j *job) parts(vs []proto.Variant) []int {
	out := make([]int, len(vs))
	for i, v := range vs {
		pj := j.replayJob(v)
		pj.Capture = replay.Capture{}
		n, err := replay.Parts(pj)
		out[i] = max(1, n)
		if err != nil {
			out[i] = 1
		}
	}
	return out
}

// replayJob is the core's job for variant v.
func (j *job) replayJob(v proto.Variant) replay.Job {
	name := j.Name
	if name == "" {
		name = "config.yaml"
	}
	return replay.Job{Name: name, Config: []byte(j.Config), Sets: append(slices.Clip(j.Overrides), v.Sets...),
		Traces: j.traces(), Limits: j.pageLimits(), Workloads: j.workloads,
		Capture: replay.Capture{Requests: j.Requests, Passes: j.Passes, SkipLargeRecord: true, LargeWindow: largeWindow(j.FromPass),
			StopAfterWindow: j.PassesOnly}, Part: j.part()}
}

// part is the core's part of a Part job.
func (j *job) part() replay.Part {
	if j.Part == nil {
		return replay.Part{}
	}
	return replay.Part{Of: j.Part.Of, Index: j.Part.Index}
}

func (j *job) runOne(i int, v proto.Variant, progress progressFunc) (out runOut) {
	out.Label = v.Label
	defer func() {
		if r := recover(); r != nil {
			out = runOut{Label: v.Label, Err: &jobError{Kind: string(replay.KindInternal), Variant: v.Label,
				Msg: fmt.Sprintf("internal error: %v", r)}}
		}
	}()
	job := j.replayJob(v)
	if i < len(j.checkpoints) {
		job.Checkpoints = j.checkpoints[i]
	}
	if progress != nil {
		job.Progress = func(done, total int) { progress(i, done, total) }
	}
	start := time.Now()
	o, err := replay.Run(job)
	if err != nil {
		e := asJobError(err)
		e.Variant = v.Label
		return runOut{Label: v.Label, Err: e}
	}
	if o.Part != nil {
		out.Part = o.Part
		return out
	}
	return j.finish(v, o, time.Since(start))
}

// finish is variant v's outcome from its Output, which took elapsed.
func (j *job) finish(v proto.Variant, o *replay.Output, elapsed time.Duration) (out runOut) {
	out.Label = v.Label
	out.Prediction = o.Prediction
	out.RequestsJS = o.Requests
	out.View = view(o)
	out.View.Label = v.Label
	out.View.ElapsedMs = float64(elapsed.Microseconds()) / 1000
	out.Output, out.Record, out.RecordNote = o, o.Record, o.RecordNote
	return out
}

// view computes what the UI shows of a run.
func view(res *replay.Output) proto.View {
	s := res.Summary
	v := proto.View{Recomputed: s.CommittedPrefillTokens, Restored: s.FirstAdmissionHostTokens,
		TTFTP50: s.TTFT.Median, TTFTP99: s.TTFT.P99, Requests: s.NumRequests, Completed: s.CompletedRequests,
		Rejected: s.RejectedRequests, Preemptions: s.Preemptions, DurationMs: s.DurationMs, HasHost: s.G2 != nil,
		InputTokens: s.TotalInputTokens}
	v.Passes, v.RankPasses = res.Stats.Passes, res.RankPasses
	if a := res.Config.Engine.Workers.Aggregated; a != nil && a.Parallelism.Replicas > 1 {
		v.Workers = a.Parallelism.Replicas // P/D runs have their own column
	}
	v.Connector = connectorOf(res.Config)
	v.Agentic = agenticView(s.Agentic)
	turns := map[int]*proto.Turn{}
	for i := range res.Records {
		r := &res.Records[i]
		row := proto.Row{ID: r.RequestID, Session: r.SessionID, Turn: r.Turn, TTFT: -1, Input: r.InputLength,
			Status: r.Status, Prefill: r.PrefillWorker, Decode: r.DecodeWorker}
		v.PD = v.PD || r.DecodeWorker >= 0
		if p := r.Prefill; p != nil {
			v.Bounds = true
			row.PrefillPasses, row.ComputeMs, row.MemoryMs = p.Passes, float64(p.ComputeBoundMs), float64(p.MemoryBoundMs)
		}
		admitted := !math.IsNaN(float64(r.FirstAdmitMs))
		if r.Tokens >= 1 {
			row.TTFT = float64(r.FirstTokenMs - r.ArrivalMs)
		}
		if admitted {
			if r.HasHost {
				row.G1, row.Host = r.FirstG1, r.FirstHost
			} else {
				row.G1 = r.FirstReused
			}
			row.Recomputed = r.InputLength - r.FirstReused
		}
		v.Rows = append(v.Rows, row)
		if r.Completed() {
			v.G1Reused += int64(row.G1)
		}
		if !admitted {
			continue
		}
		t := turns[r.Turn]
		if t == nil {
			t = &proto.Turn{Turn: r.Turn}
			turns[r.Turn] = t
		}
		t.Requests++
		t.G1 += int64(row.G1)
		t.Restored += int64(row.Host)
		t.Recomputed += int64(row.Recomputed)
	}
	for _, t := range turns {
		v.Turns = append(v.Turns, *t)
	}
	slices.SortFunc(v.Turns, func(a, b proto.Turn) int { return a.Turn - b.Turn })
	return v
}

// agenticView is the run view's copy of the report's agentic sections
// (nil without them): the same figures prediction.json writes.
func agenticView(a *report.Agentic) *proto.Agentic {
	if a == nil {
		return nil
	}
	ms := func(t vtime.Time) float64 {
		if !t.IsSet() {
			return -1
		}
		return float64(t)
	}
	v := &proto.Agentic{Seed: a.Seed, Lanes: make([]proto.AgenticLane, 0, len(a.Snapshots))}
	for _, s := range a.Snapshots {
		v.Lanes = append(v.Lanes, proto.AgenticLane{Lane: s.Lane, Play: s.Play, TStarMs: ms(s.TStarMs), FirstMs: ms(s.FirstMs),
			LastMs: ms(s.LastMs), History: s.History, Remaining: s.Remaining, Primers: s.Primer})
	}
	if p := a.Phases; p != nil {
		v.Warmup = &proto.AgenticWarmup{BarrierMs: ms(p.ProfileStartMs), QuiescentMs: ms(p.QuiescentMs),
			Lanes: make([]proto.AgenticWarmupLane, 0, len(p.Lanes))}
		for _, l := range p.Lanes {
			v.Warmup.Lanes = append(v.Warmup.Lanes, proto.AgenticWarmupLane{Primers: l.Primers, Warmups: l.WarmupCompleted})
		}
	}
	if p := a.Profile; p != nil {
		v.Profile = &proto.AgenticProfile{StartMs: ms(p.StartMs), CutoffMs: ms(p.CutoffMs), GraceEndMs: ms(p.GraceEndMs),
			FinishedAtMs: ms(p.FinishedAtMs), Closed: p.FinishedAtMs.IsSet(), PlaysStarted: p.PlaysStarted, PlaysCompleted: p.PlaysCompleted, Issued: p.Issued,
			Successful: p.Successful, Canceled: p.Canceled, NeverIssued: p.NeverIssued, InFlight: p.ClientInFlight,
			IdleShifts: p.IdleShift}
	}
	return v
}

// check validates an uploaded trace the way a run would read it.
func (j *job) check() (info proto.TraceInfo, jerr *jobError) {
	t, err := replay.CheckTrace(j.Name, []byte(j.Text), j.Format, j.BlockSize)
	if err != nil {
		return info, asJobError(err)
	}
	return proto.TraceInfo{Name: j.Name, Sessions: t.Sessions, Requests: t.Requests}, nil
}
