package replay

import (
	"fmt"
	"math"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/engine"
	"github.com/kvsim/kvsim/core/numfmt"
	"github.com/kvsim/kvsim/core/record"
	"github.com/kvsim/kvsim/core/report"
	"github.com/kvsim/kvsim/core/trace"
)

// A Job is one replay a front end asks for: the config text and its
// overrides, where its traces come from, what to capture, and the limits
// that bound it. Run turns a Job into an Output or one *Error.
type Job struct {
	// Name is the config's name in error positions ("config.yaml" when
	// empty); Dir is its directory (config.Config.Dir).
	Name, Dir string
	// Config is the config text: YAML (JSON is YAML).
	Config []byte
	// Sets are --set PATH=VALUE overrides, applied in order.
	Sets []string
	// Traces says where traffic.source.paths are read from.
	Traces Traces
	// Capture says which optional outputs to make.
	Capture Capture
	// Limits are the front end's own bounds, checked after DefaultLimits.
	Limits Limits
	// Progress, when set, is called now and then with the requests
	// finished and the total (the last call has done == total).
	Progress func(done, total int)
	// Workloads, when set, shares built workloads between jobs (a sweep's
	// points, a compare's variants); nil builds the workload for this job.
	Workloads *Workloads
	// Check runs the invariant checker after every pass (slower; tests).
	Check bool
	// NoFastForward turns off the engine's fast-forward of pure decode
	// passes (engine.Options.NoFastForward): the same reports, slower;
	// for comparisons and measurements.
	NoFastForward bool
	// Checkpoints, when set, records a pass window stopped after it
	// (Capture.StopAfterWindow) from the nearest engine snapshot before
	// the window, and keeps the snapshots taken on the way for the next
	// job of the same config and workload (the page's pass view).
	Checkpoints *Checkpoints
	// NoShard runs one engine where the run could be split across several
	// (docs/model/engine.md ("Sharded runs")): the same reports, on one
	// processor.
	NoShard bool
	// Part, when its Of is over 1, runs one part of a run split across
	// processes (Parts says into how many it may be split): Output.Part is
	// then what Merge needs of it, and Output's other fields describe the
	// part alone (no Prediction, Requests or Record).
	Part Part
}

// Capture names the optional outputs of a job.
type Capture struct {
	// Requests fills Output.Requests with requests.jsonl.
	Requests bool
	// Passes fills Output.Record with the per-pass record.
	Passes bool
	// SkipLargeRecord: when the job has more requests than
	// Limits.MaxRecordRequests, run it without the per-pass record (and
	// say why in Output.RecordNote) instead of refusing it; with
	// LargeWindow, keep that pass window of the record instead (the page's
	// pass view then shows those passes, and RecordNote says so).
	SkipLargeRecord bool
	LargeWindow     record.Window
	// Window, when not whole, keeps only the passes of the record in it
	// (docs/record.md ("Windowed records")): the job first runs without a
	// record to find them (record.Locator), refuses a window that holds no
	// pass or whose lines are estimated over Limits.MaxRecordBytes, then
	// runs again storing only those passes, so the record's memory grows
	// with the window, not with the run.
	Window record.Window
	// StopAfterWindow: when the record keeps a window of pass numbers
	// (Window, or LargeWindow applied), end the run once every rank has run
	// the window's last pass (engine.Options.Stop, record.Recorder.Past).
	// The record is the one the whole run would keep; Output.Stopped says
	// when the run was cut, and then its reports are of the run so far
	// and its Prediction and Requests are left empty. The page's pass view
	// moves its window this way: a window near the start costs a fraction
	// of the run.
	StopAfterWindow bool
}

// An Output is a finished job.
type Output struct {
	// Config is the config the job ran.
	Config *config.Config
	// Summary is prediction.json's summary; Prediction is prediction.json.
	Summary    report.Summary
	Prediction []byte
	// Records holds every request's record, in request order.
	Records []report.Request
	// Requests is requests.jsonl when Capture.Requests asked for it.
	Requests []byte
	// Record is the per-pass record when Capture.Passes asked for it;
	// RecordNote says why it is missing when the job skipped it.
	Record     *record.Record
	RecordNote string
	// Stats are the run-level figures (passes, G2 and G3 counters).
	Stats report.Run
	// Size is what the job needed, as Limits measure it.
	Size Size
	// Engines is how many engines ran the job at once: 1, or more when its
	// workers were split across processors (docs/model/engine.md
	// ("Sharded runs")). The reports do not depend on it.
	Engines int
	// Stopped: Capture.StopAfterWindow ended the run after the record's
	// window, so Summary, Records and Stats are those of the run so far.
	Stopped bool
	// RankPasses is the most passes a DP rank ran (of the run so far
	// when Stopped).
	RankPasses int
	// Part is the encoded result of a Job.Part, for Merge.
	Part []byte
}

// SummaryJSON is the summary as one JSON object on one line (the CLI's
// --format json, a sweep point).
func (o *Output) SummaryJSON() []byte { return report.SummaryJSON(o.Summary) }

// RequestsJSONL encodes requests.jsonl from the records (for a front end
// that asks for it after the run).
func (o *Output) RequestsJSONL() []byte { return report.RequestsJSONL(o.Records) }

// Run parses, bounds and runs one job. Its error is always an *Error. It
// never panics: a panic inside the core becomes a KindInternal error.
func Run(job Job) (out *Output, err error) {
	defer func() {
		if v := recover(); v != nil {
			out, err = nil, internalError(v)
		}
	}()
	out, e := run(&job)
	if e != nil {
		return nil, e
	}
	return out, nil
}

// Check makes every check Run makes before it reads a trace: the config,
// its overrides and the limits on the engine (and, for synthetic sources,
// on the workload). A front end uses it to refuse a job, or the points of a
// sweep, before running anything. Its error is always an *Error.
func Check(job Job) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = internalError(v)
		}
	}()
	_, _, _, e := prepare(&job, false)
	if e != nil {
		return e
	}
	return nil
}

func run(job *Job) (*Output, *Error) {
	cfg, wl, size, e := prepare(job, true)
	if e != nil {
		return nil, e
	}
	note := ""
	for _, lim := range []Limits{DefaultLimits(), job.Limits} {
		e, n := checkCapture(cfg, &size, job.Capture, lim)
		if e != nil {
			return nil, e
		}
		if n != "" {
			note = n
		}
	}
	large := ""
	if note != "" && !job.Capture.LargeWindow.Whole() {
		large, note = note, ""
		job.Capture.Window = job.Capture.LargeWindow
	}
	if job.Part.on() {
		return job.runPart(cfg, wl, size)
	}
	ranges, e := job.checkRecordBytes(cfg, wl, note)
	if e != nil {
		return nil, e
	}
	out, e := job.execute(cfg, wl, size, note, ranges)
	if e == nil && large != "" && out.Stopped {
		out.RecordNote = fmt.Sprintf("%s, so only passes %s of each rank are kept (this run stopped after them; kvsim predict --capture-window writes any window)",
			large, windowText(job.Capture.Window))
	} else if e == nil && large != "" {
		out.RecordNote = fmt.Sprintf("%s, so only passes %s of each rank are kept (the run has %s group passes; kvsim predict --capture-window writes any window)",
			large, windowText(job.Capture.Window), numfmt.Thousands(out.Stats.Passes))
		if most, kept := ranPasses(out.Record); !kept {
			out.RecordNote += fmt.Sprintf("; no rank ran that far (the longest ran %s passes)", numfmt.Thousands(int64(most)))
		}
	}
	return out, e
}

// ranPasses is the most passes a rank of rec ran, and whether rec keeps
// any pass.
func ranPasses(rec *record.Record) (most int, kept bool) {
	if rec == nil {
		return 0, false
	}
	for k := range rec.Ranks {
		most = max(most, rec.RunPasses(k))
		kept = kept || rec.FirstPass(k) <= rec.NumLines(k)
	}
	return most, kept
}

// windowText is a pass window as a reader says it: "1 to 2,000".
func windowText(w record.Window) string {
	if w.Time {
		return w.Spec
	}
	to := "the last"
	if !math.IsInf(w.To, 1) {
		to = numfmt.Thousands(int64(w.To))
	}
	return numfmt.Thousands(int64(max(w.From, 1))) + " to " + to
}

// prepare parses the job's config, builds its workload (when build is set
// or the source is synthetic, whose size is known without building it)
// and checks both against DefaultLimits and then against the job's own
// limits. Every default limit is checked before any of the job's, so a job
// over the defaults is refused with the same message by every front end.
func prepare(job *Job, build bool) (*config.Config, *trace.Workload, Size, *Error) {
	cfg, at, err := Parse(job)
	if err != nil {
		return nil, nil, Size{}, AsError(err)
	}
	cfg, wl, size, e := check(job, cfg, at, build)
	if e != nil {
		return nil, nil, size, placed(at, e)
	}
	return cfg, wl, size, nil
}

func check(job *Job, cfg *config.Config, at *config.Places, build bool) (*config.Config, *trace.Workload, Size, *Error) {
	var err error
	if job.Traces.Inline != nil && cfg.Traffic.Source.Type != config.SourceTrace {
		return nil, nil, Size{}, AsError(cfg.Refuse("traffic.source.type",
			"a trace was given with the job, but source type "+cfg.Traffic.Source.Type+" reads no trace"))
	}
	size := engineSize(cfg)
	synthetic := cfg.Traffic.Source.Type != config.SourceTrace
	if synthetic {
		syntheticSize(cfg, &size)
	}
	var wl *trace.Workload
	for _, lim := range []Limits{DefaultLimits(), job.Limits} {
		if e := checkEngine(cfg, at, &size, lim); e != nil {
			return nil, nil, size, e
		}
		if !synthetic && build && wl == nil {
			if wl, err = job.Workloads.get(cfg, job.Traces.opener(cfg)); err != nil {
				return nil, nil, size, AsError(err)
			}
			workloadSize(cfg, wl, &size)
		}
		if synthetic || wl != nil {
			if e := checkWorkload(cfg, at, &size, lim); e != nil {
				return nil, nil, size, e
			}
		}
	}
	if synthetic && build {
		if wl, err = job.Workloads.get(cfg, nil); err != nil {
			return nil, nil, size, AsError(err)
		}
	}
	return cfg, wl, size, nil
}

// Parse parses the job's config with its overrides, and says where each
// path was written.
func Parse(job *Job) (*config.Config, *config.Places, error) {
	name := job.Name
	if name == "" {
		name = "config.yaml"
	}
	return config.ParsePlaced(name, job.Dir, job.Config, job.Sets)
}

// execute runs the engine and encodes what the job asked for.
// ranges are each rank's passes in Capture.Window (checkRecordBytes).
func (job *Job) execute(cfg *config.Config, wl *trace.Workload, size Size, note string, ranges []record.PassRange) (*Output, *Error) {
	opts := engine.Options{Check: job.Check, Progress: job.Progress, MaxPasses: job.Limits.MaxPasses,
		NoFastForward: job.NoFastForward}
	var rr *record.Recorder
	if job.Capture.Passes && note == "" {
		rr = record.NewRecorder()
		if !job.Capture.Window.Whole() {
			rr = record.NewWindowRecorder(job.Capture.Window, ranges)
			if job.Capture.StopAfterWindow {
				opts.Stop = rr.Past
			}
		}
		opts.Observer = rr
	}
	var res *Result
	var err error
	engines := 1
	if rr != nil && usable(job, wl) {
		res, rr, err = job.Checkpoints.run(cfg, wl, opts, job.Capture.Window, ranges)
	} else if n := shards(cfg, wl, opts); n > 1 && !job.NoShard {
		var split bool
		if res, split, err = runSplit(cfg, wl, opts, n); split {
			engines = n
		}
	} else {
		res, err = RunWith(cfg, wl, opts)
	}
	if err != nil {
		return nil, AsError(err)
	}
	out := &Output{Config: cfg, Summary: res.Summary, Records: res.Records, Stats: res.Stats, Size: size,
		RecordNote: note, Engines: engines, Stopped: res.Engine != nil && res.Engine.Stopped(), RankPasses: res.RankPasses}
	if out.Stopped {
		out.Record = rr.Record()
		return out, nil
	}
	out.Prediction = res.PredictionJSON()
	if job.Capture.Requests {
		out.Requests = res.RequestsJSONL()
	}
	if rr != nil {
		out.Record = rr.Record()
	}
	if job.Progress != nil {
		n := len(res.Records)
		job.Progress(n, n)
	}
	return out, nil
}

// KeepsWindow tells whether job's per-pass record would keep only
// Capture.LargeWindow: the job asks for the record, may skip it when it is
// too large (SkipLargeRecord), and is over a limit for a whole one. It
// builds the workload as Run would (share job.Workloads with the run that
// follows) and runs nothing; a job Run would refuse gets its error. The
// page runs the compared runs of such a job in workers of their own
// (docs/ui.md, "Compared long runs").
func KeepsWindow(job Job) (keeps bool, err error) {
	defer func() {
		if v := recover(); v != nil {
			keeps, err = false, internalError(v)
		}
	}()
	if !job.Capture.Passes || !job.Capture.SkipLargeRecord || job.Capture.LargeWindow.Whole() {
		return false, nil
	}
	cfg, _, size, e := prepare(&job, true)
	if e != nil {
		return false, e
	}
	for _, lim := range []Limits{DefaultLimits(), job.Limits} {
		e, note := checkCapture(cfg, &size, job.Capture, lim)
		if e != nil {
			return false, e
		}
		keeps = keeps || note != ""
	}
	return keeps, nil
}

// A Cost is what Estimate says of a job.
type Cost struct {
	// Units is a deterministic cost in abstract units that grow with the
	// work the engine does: the block-table slots and block identities
	// the workload needs, the requests, and the G1 and G2 tables it sizes.
	Units int64
	// Trace is the trace path the job reads ("" for a synthetic source).
	Trace string
}

// Estimate says what running job will cost. It builds the workload as Run
// would (share job.Workloads with the runs that follow) and runs nothing.
// A job that Run would refuse gets its error (an *Error), with Trace set
// when the config could be parsed. Sharded sweeps balance their shards by
// Units (docs/sweep.md, "Sharding", compares it with measured CPU time).
func Estimate(job Job) (c Cost, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = internalError(v)
		}
	}()
	cfg, at, perr := Parse(&job)
	if perr != nil {
		return c, AsError(perr)
	}
	if src := cfg.Traffic.Source; src.Type == config.SourceTrace && len(src.Paths) > 0 {
		c.Trace = src.Paths[0]
	}
	_, _, size, e := check(&job, cfg, at, true)
	if e != nil {
		return c, placed(at, e)
	}
	c.Units = size.cost()
	return c, nil
}

// cost is Estimate's figure for a Size: slots and identities one unit
// each, a request 64 (its scheduling, routing and record), a G1 or G2
// block an eighth (its table entry is touched when the tier fills). Each
// term is rounded down to an integer before the sum so that the figure is
// the same on every platform.
func (s *Size) cost() int64 {
	return int64(s.KVSlots) + int64(s.Identities) + 64*s.Requests + int64(s.G1Total/8) + int64(s.G2Total/8) + 1
}

// checkRecordBytes refuses a per-pass record whose estimated size
// (RecordBytes) is over Limits.MaxRecordBytes: it runs the job once
// without the record to count its passes, or for a Capture.Window the
// passes in it, which it returns as each rank's range.
func (job *Job) checkRecordBytes(cfg *config.Config, wl *trace.Workload, note string) ([]record.PassRange, *Error) {
	lim := job.Limits.MaxRecordBytes
	win := job.Capture.Window
	if !job.Capture.Passes || note != "" || (lim <= 0 && !win.Time) {
		// Without a bound, a pass window needs no first run: each
		// rank keeps the window's pass numbers (nil ranges).
		return nil, nil
	}
	opts := engine.Options{MaxPasses: job.Limits.MaxPasses}
	var loc *record.Locator
	if !win.Whole() {
		loc = record.NewLocator(win)
		opts.Observer = loc
	}
	res, err := RunWith(cfg, wl, opts)
	if err != nil {
		return nil, AsError(err)
	}
	passes := res.Engine.RunStats().Passes
	size, perLine := RecordBytes(cfg, passes)
	what := "the per-pass record of this run"
	var ranges []record.PassRange
	if loc != nil {
		ranges = loc.Ranges()
		kept := loc.Kept()
		if kept == 0 && !loc.Open() {
			return nil, &Error{Kind: KindConfig, Msg: fmt.Sprintf("the capture window %s holds no pass of the run (%s group passes, the last ending at %v ms)",
				win.Spec, numfmt.Thousands(passes), float64(res.Engine.Now()))}
		}
		size = float64(kept) * perLine
		what = fmt.Sprintf("the window %s of the per-pass record (%s pass lines)", win.Spec, numfmt.Thousands(kept))
	}
	if lim <= 0 || size <= lim {
		return ranges, nil
	}
	if loc != nil {
		return nil, &Error{Kind: KindLimit, Msg: fmt.Sprintf("%s would be about %s (about %s a line), more than the limit of %s; take a smaller window",
			what, numfmt.Bytes(size), numfmt.Bytes(perLine), numfmt.Bytes(lim))}
	}
	return nil, &Error{Kind: KindLimit, Msg: fmt.Sprintf("%s would be about %s (%s passes, about %s a line), more than the limit of %s",
		what, numfmt.Bytes(size), numfmt.Thousands(passes), numfmt.Bytes(perLine), numfmt.Bytes(lim))}
}
