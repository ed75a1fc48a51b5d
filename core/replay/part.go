package replay

import (
	"errors"
	"fmt"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/engine"
	"github.com/kvsim/kvsim/core/report"
	"github.com/kvsim/kvsim/core/trace"
)

// A Part is one of the engines a run is split across when a front end
// runs them in processes of its own (the page's Web Workers, which have
// one processor each): the engine simulates the workers w with
// w % Of == Index (engine.Shard; docs/model/engine.md ("Sharded runs")).
// Merge turns the parts' Output.Part into the whole run's Output, byte for
// byte the one a single engine gives.
type Part struct{ Of, Index int }

func (p Part) on() bool { return p.Of > 1 }

// ErrHeldBack is Merge's error when a part saw a worker held back by the
// no-op rule (engine.Engine.HeldBack): its merged report could differ from
// the whole run's, so the front end runs the job whole instead.
var ErrHeldBack = errors.New("a part of the split run saw a worker held back: run the job whole")

// Parts is how many parts a run of job may be split into: the workers
// nothing couples (engine.Shardable), or 1 when it cannot be split or the
// job needs one engine (a per-pass record, a pass bound). It builds the
// workload as Run would (share job.Workloads with the runs that follow)
// and runs nothing; a job Run would refuse gets its error.
func Parts(job Job) (n int, err error) {
	defer func() {
		if v := recover(); v != nil {
			n, err = 0, internalError(v)
		}
	}()
	cfg, wl, _, e := prepare(&job, true)
	if e != nil {
		return 0, e
	}
	if job.Capture.Passes || job.Limits.MaxPasses > 0 {
		return 1, nil
	}
	return max(1, engine.Shardable(cfg, wl)), nil
}

// runPart runs job.Part of the run: Output.Part is what Merge needs of it;
// the other fields describe the part alone.
func (job *Job) runPart(cfg *config.Config, wl *trace.Workload, size Size) (*Output, *Error) {
	p := job.Part
	if job.Capture.Passes || job.Limits.MaxPasses > 0 {
		return nil, &Error{Kind: KindInternal, Msg: "a part of a split run keeps no per-pass record and has no pass bound"}
	}
	opts := engine.Options{Check: job.Check, Progress: job.Progress, NoFastForward: job.NoFastForward,
		Shard: engine.Shard{Of: p.Of, Index: p.Index}}
	e, err := engine.New(cfg, wl, opts)
	if err != nil {
		return nil, AsError(err)
	}
	if err := e.Run(); err != nil {
		return nil, AsError(err)
	}
	var keep func(*report.Request) bool
	if p.Index > 0 {
		// part 0 keeps every record: a request no part dispatched has
		// the same record in each
		keep = func(r *report.Request) bool { return len(r.Routing) > 0 }
	}
	rp := report.Part{Of: p.Of, Index: p.Index, HeldBack: e.HeldBack(), Dispatched: e.Dispatched(),
		RankPasses: e.MostRankPasses(), Stats: e.RunStats(), Records: e.Records}
	return &Output{Config: cfg, Stats: rp.Stats, Size: size, Engines: 1, RankPasses: rp.RankPasses, Part: rp.Encode(keep)}, nil
}

// Merge makes the Output of job from the Output.Part of each of its
// parts (any order): the report a single engine gives, byte for byte. Its
// error is an *Error, or ErrHeldBack.
func Merge(job Job, parts [][]byte) (out *Output, err error) {
	defer func() {
		if v := recover(); v != nil {
			out, err = nil, internalError(v)
		}
	}()
	cfg, _, perr := Parse(&job)
	if perr != nil {
		return nil, AsError(perr)
	}
	ws := make([]*report.Part, len(parts))
	for _, b := range parts {
		w, err := report.DecodePart(b)
		if err != nil {
			return nil, &Error{Kind: KindInternal, Msg: fmt.Sprintf("a part of the split run does not decode (%v)", err)}
		}
		if w.Of != len(parts) || w.Index < 0 || w.Index >= len(parts) || ws[w.Index] != nil {
			return nil, &Error{Kind: KindInternal, Msg: fmt.Sprintf("part %d of %d given for a run of %d parts", w.Index, w.Of, len(parts))}
		}
		if w.HeldBack {
			return nil, ErrHeldBack
		}
		ws[w.Index] = w
	}
	if len(ws) == 0 {
		return nil, &Error{Kind: KindInternal, Msg: "no part to merge"}
	}
	recs, e := mergeParts(ws)
	if e != nil {
		return nil, e
	}
	stats := ws[0].Stats
	rankPasses := ws[0].RankPasses
	for _, w := range ws[1:] {
		stats = addRun(stats, w.Stats)
		rankPasses = max(rankPasses, w.RankPasses)
	}
	res := &Result{Config: cfg, Records: recs, Stats: stats, RankPasses: rankPasses}
	res.Summary = report.Summarize(recs, ws[0].Dispatched, stats)
	out = &Output{Config: cfg, Summary: res.Summary, Prediction: res.PredictionJSON(), Records: recs, Stats: stats,
		Engines: len(ws), RankPasses: rankPasses}
	if job.Capture.Requests {
		out.Requests = res.RequestsJSONL()
	}
	return out, nil
}

// mergeParts takes each request's record from the part that routed it
// (mergeRecords across processes).
func mergeParts(ws []*report.Part) ([]report.Request, *Error) {
	recs := ws[0].Records
	for _, w := range ws[1:] {
		for _, r := range w.Records {
			if r.Index < 0 || r.Index >= len(recs) {
				return nil, &Error{Kind: KindInternal, Msg: fmt.Sprintf("part %d has a record of request %d (the run has %d)", w.Index, r.Index, len(recs))}
			}
			recs[r.Index] = r
		}
	}
	return recs, nil
}
