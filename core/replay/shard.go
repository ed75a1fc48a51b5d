package replay

import (
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/engine"
	"github.com/kvsim/kvsim/core/report"
	"github.com/kvsim/kvsim/core/trace"
)

// shards is how many engines a run of cfg over wl is split across on this
// machine: the engine's Shardable workers, at most one per processor the
// Go runtime may use; 1 when the run cannot be split, when the options
// need one engine (a per-pass record, a pass bound), or with one
// processor (a browser's Web Worker). The report does not depend on it.
func shards(cfg *config.Config, wl *trace.Workload, opts engine.Options) int {
	if opts.Observer != nil || opts.MaxPasses > 0 || opts.Stop != nil {
		return 1
	}
	return max(1, min(engine.Shardable(cfg, wl), runtime.GOMAXPROCS(0)))
}

// runSplit replays wl under cfg in n engines (runSharded), or in one when
// a shard saw the coupling it cannot follow (engine.Engine.HeldBack); it
// tells which it did.
func runSplit(cfg *config.Config, wl *trace.Workload, opts engine.Options, n int) (res *Result, split bool, err error) {
	res, err = runSharded(cfg, wl, opts, n)
	if err == nil && res == nil {
		res, err = RunWith(cfg, wl, opts)
		return res, false, err
	}
	return res, true, err
}

// runSharded replays wl under cfg as n engines run concurrently, each
// simulating every n-th worker (engine.Shard), and merges them into the
// run's Result: each request's record from the engine that simulated it,
// the counters summed (docs/model/engine.md ("Sharded runs")). Result.Engine
// is nil. It returns no Result and no error when a shard saw a worker held
// back by the no-op rule: the merged report could then differ from the
// whole run's.
func runSharded(cfg *config.Config, wl *trace.Workload, opts engine.Options, n int) (*Result, error) {
	engines := make([]*engine.Engine, n)
	errs := make([]error, n)
	progress := opts.Progress
	var mu sync.Mutex
	done := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		o := opts
		o.Shard = engine.Shard{Of: n, Index: i}
		if progress != nil {
			o.Progress = func(d, total int) {
				mu.Lock()
				defer mu.Unlock()
				// A shard counts the others' requests done at dispatch, so
				// the slowest shard says how far the run is.
				done[i] = d
				progress(slices.Min(done), total)
			}
		}
		e, err := engine.New(cfg, wl, o)
		if err != nil {
			return nil, err
		}
		engines[i] = e
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if v := recover(); v != nil {
					errs[i] = fmt.Errorf("internal error: %v", v)
				}
			}()
			errs[i] = e.Run()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	for _, e := range engines {
		if e.HeldBack() {
			return nil, nil
		}
	}
	recs := mergeRecords(engines)
	stats := engines[0].RunStats()
	for _, e := range engines[1:] {
		stats = addRun(stats, e.RunStats())
	}
	res := &Result{Config: cfg, Records: recs, Stats: stats}
	for _, e := range engines {
		res.RankPasses = max(res.RankPasses, e.MostRankPasses())
	}
	res.Summary = report.Summarize(recs, engines[0].Dispatched(), stats)
	return res, nil
}

// mergeRecords takes each request's record from the engine that simulated
// it (the one whose record routed it); a request no engine dispatched has
// the same untouched record in every engine.
func mergeRecords(engines []*engine.Engine) []report.Request {
	recs := engines[0].Records
	for _, e := range engines[1:] {
		for i := range e.Records {
			if len(e.Records[i].Routing) > 0 {
				recs[i] = e.Records[i]
			}
		}
	}
	return recs
}

// addRun adds b's counters to a's (the shards of one run: the same GPUs,
// round robin, so no per-worker loads, and no shared pools or G3).
func addRun(a, b report.Run) report.Run {
	a.CommittedPrefillTokens += b.CommittedPrefillTokens
	a.Preemptions += b.Preemptions
	a.Passes += b.Passes
	if a.G2 != nil && b.G2 != nil {
		g := *a.G2
		g.Add(*b.G2)
		a.G2 = &g
	}
	return a
}
