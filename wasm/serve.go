package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/record"
	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/wasm/proto"
)

// The bridge's side of the messages (wasm/proto): serve answers one
// decoded request. It touches no JavaScript, so the protocol is tested
// natively; main_js.go opens the request's envelope and packs the answer's.

// texts gives a request's texts (proto.TextRef n, from 1) as Go strings
// and its binary payloads (proto.BinRef n, from 1).
type texts interface {
	Text(n int) (string, error)
	Bin(n int) ([]byte, error)
}

// textList is a request's texts held in Go (tests, and requests built in
// Go).
type textList []string

// Text is text n (from 1).
func (l textList) Text(n int) (string, error) {
	if n < 1 || n > len(l) {
		return "", fmt.Errorf("the message has no text %d", n)
	}
	return l[n-1], nil
}

// Bin fails: a textList has no binary payloads (payloads has).
func (l textList) Bin(n int) ([]byte, error) {
	return nil, fmt.Errorf("the message has no binary payload %d", n)
}

// payloads is a request's texts and binary payloads held in Go.
type payloads struct {
	textList
	bins [][]byte
}

// Bin is binary payload n (from 1).
func (p payloads) Bin(n int) ([]byte, error) {
	if n < 1 || n > len(p.bins) {
		return nil, fmt.Errorf("the message has no binary payload %d", n)
	}
	return p.bins[n-1], nil
}

// An answer is a reply and the payloads its refs name.
type answer struct {
	reply proto.Reply
	bins  [][]byte
	texts []any // strings (JavaScript strings once packed)
	// next is the run whose passes sim-worker.js indexes next (0: none);
	// it travels beside the reply, for the worker's own loop, with wait,
	// the milliseconds the loop waits before that step (0: at once), and
	// quiet: the loop does not post the reply to the page.
	next  int
	wait  int
	quiet bool
}

// bin adds a binary payload.
func (a *answer) bin(b []byte) proto.BinRef {
	a.bins = append(a.bins, b)
	return proto.BinRef(len(a.bins))
}

// text adds a text.
func (a *answer) text(s string) proto.TextRef {
	a.texts = append(a.texts, s)
	return proto.TextRef(len(a.texts))
}

// failed is the reply of type typ to request id with an error.
func failed(typ string, id int, e *jobError) *answer {
	return &answer{reply: proto.Reply{Type: typ, ID: id, Error: e.proto()}}
}

// proto is the error as a message carries it.
func (e *jobError) proto() *proto.Error {
	return &proto.Error{Kind: e.Kind, Msg: e.Msg, Path: e.Path, Line: e.Line, Col: e.Col, Variant: e.Variant}
}

// internalError is an internal error with a message.
func internalError(format string, args ...any) *jobError {
	return &jobError{Kind: "internal", Msg: fmt.Sprintf(format, args...)}
}

// kept is the most recent run job and its outcomes, kept for file and
// seek requests (a worker holds one job's results at a time).
var kept struct {
	id     int
	outs   []runOut
	passes *passes // the per-pass records and their timeline index
	// warm runs one step of the warm-up of a single long run's
	// checkpoints (nil: none, or over), after its index (serveIndex);
	// seekAt is when the page last asked for a frame.
	warm   func(more func() bool) (done bool, kept int, err error)
	seekAt time.Time
}

// serve answers one request; progress (nil: none wanted) receives a run's
// progress replies. It never panics: a panic becomes the request's error
// reply.
func serve(req *proto.Request, in texts, progress func(*answer)) (out *answer) {
	typ := proto.ReplyType(req.Op)
	if typ == "" {
		typ = proto.MsgResult
	}
	defer func() {
		if r := recover(); r != nil {
			out = failed(typ, req.ID, internalError("internal error: %v", r))
		}
	}()
	switch {
	case req.Op == proto.OpRun && req.Run != nil && req.Run.Debug != nil:
		return serveDebug(req.ID, req.Run, progress)
	case req.Op == proto.OpRun && req.Run != nil:
		return serveRun(req.ID, req.Run, in, progress)
	case req.Op == proto.OpMerge && req.Merge != nil:
		return serveMerge(req.ID, req.Merge, in)
	case req.Op == proto.OpCheck && req.Check != nil:
		return serveCheck(req.ID, req.Check, in)
	case req.Op == proto.OpFile && req.File != nil:
		return serveFile(req.ID, req.File, in)
	case req.Op == proto.OpInit:
		return serveReady(req.ID)
	case req.Op == proto.OpIndex:
		return serveIndex(req.ID)
	case req.Op == proto.OpSeek && req.Seek != nil:
		return serveSeek(req.ID, req.Seek)
	case req.Op == proto.OpSweepPlan && req.SweepPlan != nil:
		return serveSweepPlan(req.ID, &req.SweepPlan.Spec, in)
	case req.Op == proto.OpSweepPoint && req.SweepPoint != nil:
		return serveSweepPoint(req.ID, req.SweepPoint, in)
	case req.Op == proto.OpSweepCollect && req.SweepCollect != nil:
		return serveSweepCollect(req.ID, req.SweepCollect, in)
	}
	if proto.ReplyType(req.Op) == "" {
		return failed(typ, req.ID, internalError("unknown op %q", req.Op))
	}
	return failed(typ, req.ID, internalError("a %s message without its %s", req.Op, req.Op))
}

// traceTexts resolves uploaded traces to their texts, by path.
func traceTexts(ts []proto.TraceText, in texts) (map[string]string, *jobError) {
	if len(ts) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(ts))
	for _, t := range ts {
		s, err := in.Text(int(t.Text))
		if err != nil {
			return nil, internalError("trace %s: %v", t.Path, err)
		}
		out[t.Path] = s
	}
	return out, nil
}

// runJob is the bridge's job for a run message.
func runJob(id int, r *proto.RunJob, in texts) (*job, *jobError) {
	tr, err := traceTexts(r.Traces, in)
	if err != nil {
		return nil, err
	}
	return &job{ID: id, Op: proto.OpRun, Config: r.Config, Name: r.Name, Overrides: r.Overrides, Variants: r.Variants,
		Traces: tr, Requests: r.Requests, Passes: r.Passes || r.PassesOnly, MaxPasses: r.MaxPasses, FromPass: r.FromPass,
		PassesOnly: r.PassesOnly, FanOut: r.FanOut, Part: r.Part}, nil
}

// serveRun runs every variant, keeps the outcomes (and the per-pass
// records) for later requests, and answers with the views.
func serveRun(id int, r *proto.RunJob, in texts, progress func(*answer)) *answer {
	j, jerr := runJob(id, r, in)
	if jerr != nil {
		return failed(proto.MsgResult, id, jerr)
	}
	var pf progressFunc
	if progress != nil {
		var last time.Time
		variants := max(1, len(j.Variants))
		pf = func(variant, done, total int) {
			now := time.Now()
			if done < total && now.Sub(last) < 50*time.Millisecond {
				return
			}
			last = now
			progress(&answer{reply: proto.Reply{Type: proto.MsgProgress, ID: id,
				Progress: &proto.Progress{Variant: variant, Variants: variants, Done: done, Total: total}}})
		}
	}
	if progress != nil {
		j.fanOut = func(parts []int) {
			progress(&answer{reply: proto.Reply{Type: proto.MsgProgress, ID: id,
				Progress: &proto.Progress{Variants: len(parts), FanOut: true, Parts: parts}}})
		}
	}
	kept.id, kept.outs, kept.passes, kept.warm = 0, nil, nil, nil // free the previous run first
	outs := j.run(pf)
	kept.id, kept.outs, kept.warm = id, outs, j.warmer(outs)
	recs := make([]*record.Record, len(outs))
	anyRec := false
	for i, o := range outs {
		recs[i] = o.Record
		anyRec = anyRec || o.Record != nil
	}
	if anyRec {
		kept.passes = newPasses(recs)
		for i, o := range outs {
			if o.Output != nil {
				kept.passes.setPrompts(i, o.Output.Records)
			}
		}
	}
	a := &answer{reply: proto.Reply{Type: proto.MsgResult, ID: id}}
	res := &proto.RunResult{Results: make([]proto.Outcome, len(outs))}
	for i := range outs {
		res.Results[i] = a.outcome(&outs[i], j.PassesOnly)
	}
	if kept.passes != nil {
		res.Passes = kept.passes.meta()
		for i := range res.Passes {
			if outs[i].Output != nil {
				res.Passes[i].Connector = connectorOf(outs[i].Output.Config)
				res.Passes[i].Stopped = outs[i].Output.Stopped
				markWarmup(&res.Passes[i], recs[i], outs[i].Output.Summary.Agentic)
			}
		}
		res.Indexing = !kept.passes.done
		if res.Indexing && !j.fanned {
			// A fanned-out job's index waits for the page's first index
			// request, sent once the runs' results are in: on a machine
			// with as many cores as runs it would take CPU from them.
			a.next = id
		}
	}
	a.reply.Result = res
	return a
}

// outcome is one variant's part of a run's answer; a job for the pass
// view alone (passesOnly) answers no results.
func (a *answer) outcome(o *runOut, passesOnly bool) proto.Outcome {
	out := proto.Outcome{Label: o.Label, RecordNote: o.RecordNote}
	if o.Err != nil {
		out.Error = o.Err.proto()
		out.RecordNote = ""
		return out
	}
	if o.Part != nil {
		out.Part = a.bin(o.Part)
		return out
	}
	if passesOnly {
		return out
	}
	v := o.View
	out.View = &v
	out.Rows = a.bin(proto.EncodeRows(o.View.Rows))
	out.Prediction = a.text(string(o.Prediction))
	if o.RequestsJS != nil {
		out.Requests = a.text(string(o.RequestsJS))
	}
	return out
}

// serveMerge makes a run's results from the parts its Part runs
// answered (replay.Merge): the reply a whole run of it would give.
func serveMerge(id int, m *proto.MergeJob, in texts) *answer {
	j, jerr := runJob(id, &m.Spec, in)
	if jerr != nil {
		return failed(proto.MsgResult, id, jerr)
	}
	if len(j.Variants) > 1 || j.Part != nil {
		return failed(proto.MsgResult, id, internalError("a merge is of one run, not of a part or a compare"))
	}
	v := proto.Variant{}
	if len(j.Variants) == 1 {
		v = j.Variants[0]
	}
	parts := make([][]byte, len(m.Parts))
	for i, ref := range m.Parts {
		b, err := in.Bin(int(ref))
		if err != nil {
			return failed(proto.MsgResult, id, internalError("part %d: %v", i, err))
		}
		parts[i] = b
	}
	start := time.Now()
	o, err := replay.Merge(j.replayJob(v), parts)
	if errors.Is(err, replay.ErrHeldBack) {
		return failed(proto.MsgResult, id, &jobError{Kind: proto.ErrKindHeldBack, Msg: err.Error(), Variant: v.Label})
	}
	if err != nil {
		e := asJobError(err)
		e.Variant = v.Label
		return failed(proto.MsgResult, id, e)
	}
	out := j.finish(v, o, time.Since(start))
	a := &answer{reply: proto.Reply{Type: proto.MsgResult, ID: id}}
	a.reply.Result = &proto.RunResult{Results: []proto.Outcome{a.outcome(&out, false)}}
	return a
}

// serveCheck reads an uploaded trace.
func serveCheck(id int, c *proto.CheckJob, in texts) *answer {
	text, err := in.Text(int(c.Text))
	if err != nil {
		return failed(proto.MsgChecked, id, internalError("%v", err))
	}
	j := &job{ID: id, Op: proto.OpCheck, Name: c.Name, Text: text, Format: c.Format, BlockSize: c.BlockSize}
	info, jerr := j.check()
	if jerr != nil {
		return failed(proto.MsgChecked, id, jerr)
	}
	return &answer{reply: proto.Reply{Type: proto.MsgChecked, ID: id, Checked: &info}}
}

// serveFile answers a report file of an earlier run: from the kept run,
// or replayed from its spec when this worker no longer holds it.
func serveFile(id int, f *proto.FileJob, in texts) *answer {
	var o runOut
	switch {
	case kept.id == f.Run && f.Run != 0 && f.Variant >= 0 && f.Variant < len(kept.outs):
		o = kept.outs[f.Variant]
	case f.Spec != nil:
		j, jerr := runJob(f.Run, f.Spec, in)
		if jerr != nil {
			return failed(proto.MsgFile, id, jerr)
		}
		o = j.rerun(f.Variant)
	default:
		return failed(proto.MsgFile, id, internalError("the run is gone; run it again"))
	}
	if o.Err != nil {
		return failed(proto.MsgFile, id, o.Err)
	}
	b, jerr := o.file(f.Kind)
	if jerr != nil {
		return failed(proto.MsgFile, id, jerr)
	}
	a := &answer{reply: proto.Reply{Type: proto.MsgFile, ID: id}}
	a.reply.File = &proto.FileReply{Kind: f.Kind, Text: a.text(string(b))}
	return a
}

// serveReady answers the worker's start with the connector policies.
func serveReady(id int) *answer {
	a := &answer{reply: proto.Reply{Type: proto.MsgReady, ID: id}}
	r := &proto.ReadyReply{}
	for _, p := range replay.Policies() {
		r.Policies = append(r.Policies, proto.Policy{Connector: p.Connector, Evicts: p.Evicts, Touches: p.Touches, Stores: p.Stores, Line: p.Line})
	}
	a.reply.Ready = r
	return a
}

// serveIndex advances the timeline index of the kept run by one step
// (sim-worker.js sends it from a loop that yields between steps, so seeks
// interleave) and reports progress; the last step carries the timelines.
func serveIndex(id int) *answer {
	a := &answer{reply: proto.Reply{Type: proto.MsgIndex, ID: id}}
	p := kept.passes
	if p == nil || kept.id != id {
		a.reply.Index = &proto.IndexReply{Done: true, Stale: true}
		return a
	}
	if p.done && kept.warm != nil {
		return serveWarm(a, p)
	}
	done := p.step(stepTime)
	ir := &proto.IndexReply{Done: done, Indexed: p.indexed, Total: p.total}
	if done && kept.warm != nil {
		a.next = id // the warm-up follows
	}
	if done {
		ir.Ms = float64(p.spent.Microseconds()) / 1000
		for v := range p.tl {
			var ranks []proto.BinRef
			for _, t := range p.tl[v] {
				ranks = append(ranks, a.bin(proto.EncodeTimeline(t)))
			}
			ir.Timelines = append(ir.Timelines, ranks)
		}
		ir.Divergences = p.divergences()
	} else {
		a.next = id
	}
	a.reply.Index = ir
	return a
}

// stepTime is the work of one index or warm-up step, between which
// sim-worker.js yields so that seeks are answered (tests shorten it to
// take many steps from a short run).
var stepTime = 15 * time.Millisecond

// Warm-up steps wait while the user scrubs: a step runs WarmAfterSeek
// after the page last asked for a frame at the earliest, and the loop
// looks again WarmWaitMs later. A step copies the engine now and then
// (120-250 ms in Chromium on the Mooncake trace), and a frame asked for
// meanwhile waits for it: scrubbing during the warm-up took up to 371 ms
// a pass instead of about 100.
const (
	WarmAfterSeek = 500 * time.Millisecond
	WarmWaitMs    = 100
)

// serveWarm runs one step of the kept run's checkpoint warm-up, about as
// long as an index step, and says how it goes: only its last reply
// reaches the page (the others are quiet).
func serveWarm(a *answer, p *passes) *answer {
	a.next, a.quiet = a.reply.ID, true
	if time.Since(kept.seekAt) < WarmAfterSeek {
		a.wait = WarmWaitMs
		return a
	}
	deadline, n := time.Now().Add(stepTime), 0
	done, cps, err := kept.warm(func() bool {
		n++ // asked after every instant: read the clock every 64
		return n%64 != 0 || time.Now().Before(deadline)
	})
	w := &proto.WarmReply{Done: done || err != nil, Checkpoints: cps}
	if err != nil {
		w.Error = err.Error()
	}
	if w.Done {
		kept.warm, a.next, a.quiet = nil, 0, false
	}
	a.reply.Index = &proto.IndexReply{Done: true, Indexed: p.indexed, Total: p.total, Warm: w}
	return a
}

// serveSeek answers one frame per variant of the kept run.
func serveSeek(id int, s *proto.SeekJob) *answer {
	kept.seekAt = time.Now()
	p := kept.passes
	if p == nil || kept.id != s.Run {
		return failed(proto.MsgFrame, id, internalError("the run's record is gone; run it again"))
	}
	a := &answer{reply: proto.Reply{Type: proto.MsgFrame, ID: id}}
	fr := &proto.FrameReply{Rank: s.Rank, Frames: make([]*proto.FrameOut, len(p.recs))}
	for v := range p.recs {
		if p.recs[v] == nil || v >= len(s.Passes) || s.Passes[v] <= 0 {
			continue
		}
		bin, meta, err := p.frame(v, s.Rank, s.Passes[v])
		if err != nil {
			fr.Frames[v] = &proto.FrameOut{Error: err.Error()}
			continue
		}
		fr.Frames[v] = &proto.FrameOut{Bin: a.bin(bin), Meta: meta}
	}
	a.reply.Frame = fr
	return a
}

// sweepOf is the bridge's sweep for a spec.
func sweepOf(s *proto.SweepSpec, in texts) (*sweepJob, *jobError) {
	tr, err := traceTexts(s.Traces, in)
	if err != nil {
		return nil, err
	}
	return &sweepJob{Config: s.Config, Name: s.Name, Sets: s.Sets, Vary: s.Vary, Traces: tr}, nil
}

// serveSweepPlan validates a sweep and describes its plan.
func serveSweepPlan(id int, spec *proto.SweepSpec, in texts) *answer {
	s, jerr := sweepOf(spec, in)
	if jerr == nil {
		var info proto.SweepPlan
		if info, jerr = s.info(); jerr == nil {
			return &answer{reply: proto.Reply{Type: proto.OpSweepPlan, ID: id, SweepPlan: &info}}
		}
	}
	return failed(proto.OpSweepPlan, id, jerr)
}

// serveSweepPoint evaluates one point; a failed point's reply names it.
func serveSweepPoint(id int, p *proto.SweepPointJob, in texts) *answer {
	s, jerr := sweepOf(&p.Spec, in)
	if jerr == nil {
		var summary []byte
		var pt proto.SweepPoint
		if summary, pt, jerr = s.point(p.Index); jerr == nil {
			a := &answer{reply: proto.Reply{Type: proto.OpSweepPoint, ID: id}}
			a.reply.SweepPoint = &proto.PointReply{Index: p.Index, Summary: a.text(string(summary)), Point: pt}
			return a
		}
	}
	a := failed(proto.OpSweepPoint, id, jerr)
	a.reply.SweepPoint = &proto.PointReply{Index: p.Index}
	return a
}

// serveSweepCollect gathers the points' summaries into the sweep's files.
func serveSweepCollect(id int, c *proto.SweepCollectJob, in texts) *answer {
	s, jerr := sweepOf(&c.Spec, in)
	if jerr != nil {
		return failed(proto.OpSweepCollect, id, jerr)
	}
	summaries := make([][]byte, len(c.Summaries))
	for i, ref := range c.Summaries {
		t, err := in.Text(int(ref))
		if err != nil {
			return failed(proto.OpSweepCollect, id, internalError("summary of point %d: %v", i, err))
		}
		summaries[i] = []byte(t)
	}
	csv, js, curves, jerr := s.collect(summaries)
	if jerr != nil {
		return failed(proto.OpSweepCollect, id, jerr)
	}
	a := &answer{reply: proto.Reply{Type: proto.OpSweepCollect, ID: id}}
	a.reply.SweepFiles = &proto.SweepFiles{CSV: a.text(string(csv)), JSON: a.text(string(js)), Curves: curves}
	return a
}

// connectorOf is the G2 connector profile of a config's first role with a
// host tier ("" without one).
func connectorOf(cfg *config.Config) string {
	if cfg == nil {
		return ""
	}
	for _, r := range cfg.Roles() {
		if r != nil && r.KVCache.HostOffload != nil {
			return r.KVCache.HostOffload.Connector
		}
	}
	return ""
}

// limitMemory sets the Go runtime's soft memory limit for a worker that
// holds the pass view's windows of a long run and a single run's
// checkpoints (true), all bounded, or anything else (false); main_js.go
// sets it. Natively it does nothing: the tests share one process.
var limitMemory = func(windows bool) {}

// debugAllowed tells whether test-only debug jobs are accepted: never
// natively; in the worker when a test set self.kvsimDebug (main_js.go).
var debugAllowed = func() bool { return false }

// debugHog keeps a debug job's blocks alive.
var debugHog [][]byte

// serveDebug runs a DebugJob: a progress reply on its run, then
// allocations until the runtime's "fatal error: out of memory" ends the
// program (it does not return then).
func serveDebug(id int, r *proto.RunJob, progress func(*answer)) *answer {
	if !debugAllowed() {
		return failed(proto.MsgResult, id, &jobError{Kind: "internal", Msg: "debug jobs are for tests only"})
	}
	d := r.Debug
	if progress != nil {
		progress(&answer{reply: proto.Reply{Type: proto.MsgProgress, ID: id,
			Progress: &proto.Progress{Variant: d.Variant, Variants: max(1, len(r.Variants)), Done: 0, Total: 1}}})
	}
	block := max(1, d.AllocMiB) << 20
	for {
		b := make([]byte, block)
		b[len(b)-1] = 1
		debugHog = append(debugHog, b)
	}
}
