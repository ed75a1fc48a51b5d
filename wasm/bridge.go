// Command sim.wasm is the browser bridge: it runs the replay core inside a
// Web Worker (public/sim-worker.js) and answers the page's messages. This
// file is the part that does not touch JavaScript, so it is tested natively
// and under GOOS=js GOARCH=wasm alike; main_js.go converts between
// JavaScript objects and these types.
//
// The bridge holds no simulation logic: it parses the config with
// core/config, builds the workload and runs it with core/replay, and
// encodes the reports with the core's own encoders. What it adds is the
// view the UI draws (wasm/proto), computed from the report records.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/engine"
	"github.com/kvsim/kvsim/core/record"
	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/core/trace"
	"github.com/kvsim/kvsim/traces"
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
	// Result is kept so that the page can ask for the big report files
	// later (file), instead of every run shipping them.
	Result *replay.Result
	// Record is the per-pass record, when the job asked for it and the
	// run is small enough (MaxRecordRequests); RecordNote says why not.
	Record     *record.Record
	RecordNote string
}

// Report files the page can ask for after a run.
const (
	FileRequests = "requests.jsonl"
	FilePasses   = "passes.jsonl"
)

// file encodes one of the run's report files.
func (o *runOut) file(kind string) ([]byte, *jobError) {
	if o.Result == nil {
		return nil, &jobError{Kind: "internal", Msg: "no result to encode"}
	}
	switch kind {
	case FileRequests:
		return o.Result.RequestsJSONL(), nil
	case FilePasses:
		if o.Record == nil {
			msg := "passes.jsonl: this run kept no per-pass record"
			if o.RecordNote != "" {
				msg = "passes.jsonl: " + o.RecordNote
			}
			return nil, &jobError{Kind: "run", Msg: msg}
		}
		var b bytes.Buffer
		if err := o.Record.WriteJSONL(&b); err != nil {
			return nil, &jobError{Kind: "internal", Msg: err.Error()}
		}
		return b.Bytes(), nil
	}
	return nil, &jobError{Kind: "internal", Msg: fmt.Sprintf("unknown report file %q", kind)}
}

// rerun makes variant i of the job again (runs are deterministic, so the
// result equals the first one) for a file request the worker cannot
// serve from memory.
func (j *job) rerun(i int) runOut {
	vs := j.Variants
	if len(vs) == 0 {
		vs = []proto.Variant{{}}
	}
	if i < 0 || i >= len(vs) {
		return runOut{Err: &jobError{Kind: "internal", Msg: fmt.Sprintf("no variant %d", i)}}
	}
	return j.runOne(i, vs[i], nil)
}

// A jobError is an error as the page shows it: the message is exactly the
// CLI's, the other fields place it next to the control it concerns.
type jobError struct {
	Kind      string // "config", "trace", "run", "internal"
	Msg       string
	Path      string // config field path, or trace field
	Line, Col int
	Variant   string
}

func (e *jobError) Error() string { return e.Msg }

// classify turns an error from the core into a jobError.
func classify(err error) *jobError {
	var ce *config.Error
	var te *trace.Error
	switch {
	case errors.As(err, &ce):
		return &jobError{Kind: "config", Msg: ce.Error(), Path: ce.Path, Line: ce.Line, Col: ce.Col}
	case errors.As(err, &te):
		return &jobError{Kind: "trace", Msg: err.Error(), Path: te.Field, Line: te.Line, Col: te.Col}
	}
	return &jobError{Kind: "run", Msg: err.Error()}
}

// opener serves uploaded traces first, then the built-in examples.
func (j *job) opener() replay.Opener {
	return func(p string) (io.ReadCloser, error) {
		if t, ok := j.Traces[p]; ok {
			return io.NopCloser(strings.NewReader(t)), nil
		}
		rc, err := traces.Open(p)
		if err != nil {
			return nil, fmt.Errorf("%s is neither a built-in trace nor an uploaded one (built-in: %s)", p,
				strings.Join(builtinTraces(), ", "))
		}
		return rc, nil
	}
}

func builtinTraces() []string {
	var out []string
	for _, n := range traces.Names() {
		if strings.HasSuffix(n, ".jsonl") {
			out = append(out, n)
		}
	}
	return out
}

// progressFunc receives (variant index, done, total) now and then.
type progressFunc func(variant, done, total int)

// run makes every variant of a run job. It never panics: a panic in the
// core becomes an "internal" error of that variant.
func (j *job) run(progress progressFunc) []runOut {
	vs := j.Variants
	if len(vs) == 0 {
		vs = []proto.Variant{{}}
	}
	out := make([]runOut, len(vs))
	for i, v := range vs {
		out[i] = j.runOne(i, v, progress)
	}
	return out
}

func (j *job) runOne(i int, v proto.Variant, progress progressFunc) (out runOut) {
	out.Label = v.Label
	defer func() {
		if r := recover(); r != nil {
			out = runOut{Label: v.Label, Err: &jobError{Kind: "internal", Variant: v.Label,
				Msg: fmt.Sprintf("internal error: %v\n%s", r, debug.Stack())}}
		}
	}()
	fail := func(err error) runOut {
		e := classify(err)
		e.Variant = v.Label
		return runOut{Label: v.Label, Err: e}
	}
	name := j.Name
	if name == "" {
		name = "config.yaml"
	}
	sets := append(slices.Clip(j.Overrides), v.Sets...)
	cfg, err := config.Parse(name, "", []byte(j.Config), sets)
	if err != nil {
		return fail(err)
	}
	wl, err := replay.Workload(cfg, j.opener())
	if err != nil {
		return fail(err)
	}
	opts := engine.Options{MaxPasses: j.MaxPasses}
	if progress != nil {
		opts.Progress = func(done, total int) { progress(i, done, total) }
	}
	var rr *record.Recorder
	if j.Passes {
		if wl.Rows <= MaxRecordRequests {
			rr = record.NewRecorder()
			opts.Observer = rr
		} else {
			out.RecordNote = fmt.Sprintf("the pass view keeps the per-pass record of runs of at most %d requests; this one has %d",
				MaxRecordRequests, wl.Rows)
		}
	}
	start := time.Now()
	res, err := replay.Run(cfg, wl, opts)
	if err != nil {
		return fail(err)
	}
	elapsed := time.Since(start)
	if progress != nil {
		n := len(res.Records)
		progress(i, n, n)
	}
	out.Prediction = res.PredictionJSON()
	if j.Requests {
		out.RequestsJS = res.RequestsJSONL()
	}
	out.View = view(res)
	out.View.Label = v.Label
	out.View.ElapsedMs = float64(elapsed.Microseconds()) / 1000
	out.Result = res
	if rr != nil {
		out.Record = rr.Record()
	}
	return out
}

// view computes what the UI shows of res.
func view(res *replay.Result) proto.View {
	s := res.Summary
	v := proto.View{Recomputed: s.CommittedPrefillTokens, Restored: s.FirstAdmissionHostTokens,
		TTFTP50: s.TTFT.Median, TTFTP99: s.TTFT.P99, Requests: s.NumRequests, Completed: s.CompletedRequests,
		Rejected: s.RejectedRequests, Preemptions: s.Preemptions, DurationMs: s.DurationMs, HasHost: s.G2 != nil,
		InputTokens: s.TotalInputTokens}
	v.Passes = res.Engine.RunStats().Passes
	turns := map[int]*proto.Turn{}
	for i := range res.Records {
		r := &res.Records[i]
		row := proto.Row{ID: r.RequestID, Session: r.SessionID, Turn: r.Turn, TTFT: -1, Input: r.InputLength,
			Status: r.Status, Prefill: r.PrefillWorker, Decode: r.DecodeWorker}
		v.PD = v.PD || r.DecodeWorker >= 0
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

// check validates an uploaded trace the way a run would read it.
func (j *job) check() (info proto.TraceInfo, jerr *jobError) {
	defer func() {
		if r := recover(); r != nil {
			jerr = &jobError{Kind: "internal", Msg: fmt.Sprintf("internal error: %v", r)}
		}
	}()
	wl, err := trace.Read(strings.NewReader(j.Text), trace.Options{Name: j.Name, Format: j.Format, BlockSize: j.BlockSize})
	if err != nil {
		return info, classify(err)
	}
	info.Name = j.Name
	info.Sessions = len(wl.Sessions)
	info.Requests = wl.Rows
	return info, nil
}
