package engine

import (
	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/vtime"
)

// Fast-forward of pure decode passes (docs/model/engine.md ("Fast-forward
// of pure decode passes"), a Decision). When the next instant is the end of
// one worker's group pass and nothing else can happen before the worker's
// following pass ends (no arrival, no other worker's pass end, no other
// worker able to start), the engine processes that worker's instants in a
// tight loop instead of settling each one: the pass in flight is committed
// by completePass as always (so the invariant checker still runs after
// every pass), and the next pass is computed by scheduler.Rank.DecodeStep,
// which is Pass for a pure decode step. The loop stops before the first
// instant where anything else could happen: a pass that finishes or
// rejects a request (its commit makes arrivals), a next pass that is not a
// pure decode step on every runnable rank (scheduler.Rank.DecodeNext: a
// block boundary, a completion, waiting requests), the horizon of every
// other event, the run's until or cutoff. Reports are byte-identical with
// it off (Options.NoFastForward; TestFastForwardChangesNothing).

// fastForwardable reports whether a run may fast-forward at all: nothing
// of the engine's that settle runs at an instant besides a worker's pass
// end and start may be in play (no shared G2 pool or G3, no P/D handoffs,
// no agentic plays, profiles, warmup or cancellations). A rank's private
// G2 tier is in play only at its own pass boundaries and passes, which
// completePass and DecodeStep run as settle would; an idle worker's copies
// are the exception fastForward checks for (quiet). An observer is told of
// each pass as settle tells it (decodePass, completePass); a pure decode
// step has no scheduler event to tell.
func (e *Engine) fastForwardable() bool {
	if e.opts.NoFastForward || e.pd || e.agentic != nil || e.prof != nil ||
		e.warm != nil || len(e.shared) > 0 || len(e.g3Stores) > 0 {
		return false
	}
	for _, rk := range e.ranks {
		if rk.Role != config.RoleAggregated {
			return false
		}
	}
	return true
}

// fastForward processes the instants from t on, while the rule above
// allows, and reports whether it processed any (e.now is then the last).
// An instant is the end of one or more workers' group passes (due); as
// settle does, it commits every due worker's pass in worker order, then
// starts the next pass of every worker that can start, in worker order
// (the order in which they draw generated token ids).
func (e *Engine) fastForward(t, until vtime.Time) bool {
	if len(e.cancels) > 0 || e.canceled > 0 {
		return false
	}
	horizon := vtime.Never
	if len(e.arrivals) > 0 {
		horizon = e.arrivals[0].at
	}
	for _, x := range e.workers {
		if !x.busy && (x.runnable() || !quiet(x)) {
			return false // it may start, or tick, at any instant
		}
	}
	due := false
	for _, x := range e.workers {
		due = due || (x.busy && x.end <= t)
	}
	if !due {
		return false // not a pass end: settle's (an idle rank's copy completes)
	}
	stop := min(until, e.cutoff)
	done := false
	for t < horizon && t <= stop {
		for _, x := range e.workers {
			if x.busy && x.end <= t && !e.pureInstant(x) {
				return done
			}
		}
		e.now = t
		for _, x := range e.workers {
			if x.busy && x.end <= t {
				e.completePass(x)
			}
		}
		if e.checkErr != nil {
			return true
		}
		started := false
		for _, x := range e.workers {
			if x.canStart(t) {
				// A pass end's engine boundary (completePass) can wake a
				// rank's connector waiters: then that worker's next pass
				// is not a pure decode step, and it starts as settle
				// would start it.
				if !e.hosted || e.pureStart(x) {
					e.decodePass(x, t)
				} else {
					e.startPass(x, t)
				}
				started = true
			}
		}
		done = true
		if e.opts.MaxPasses > 0 && e.Passes > e.opts.MaxPasses {
			return true
		}
		if e.opts.Stop != nil && e.opts.Stop() {
			return true // RunUntil stops after this instant, as after settle's
		}
		e.counted()
		if !started {
			return true
		}
		t = vtime.Never
		for _, x := range e.workers {
			if x.busy && x.end < t {
				t = x.end
			}
		}
		for _, x := range e.workers {
			if !x.busy && x.runnable() {
				return true // a due worker that could not start now starts at the next instant
			}
		}
	}
	return done
}

// quiet reports whether settle's idle ticks would leave idle worker w
// alone at every instant: none of its ranks' connectors has a copy in
// flight, one waiting to be submitted, a completion to deliver or a wake
// (connector.Adapter.Tick would answer false). A worker idle at the start
// of a fast-forward stays idle through it, and nothing else gives its
// ranks copies. (This may be stricter than needed: Tick applies late
// completions at their own times, and with fastForward's check that its
// first instant is a pass end, no test world tells the two apart. Without
// either, an idle rank's copy completing between pass ends made the engine
// ask fastForward for that instant forever.)
func quiet(w *worker) bool {
	for _, rk := range w.ranks {
		if h := rk.Host; h != nil && (h.HasWork() || !h.Deferrable()) {
			return false
		}
	}
	return true
}

// decodePass is startPass for a group pass whose every runnable rank has a
// pure decode step next (pureInstant).
func (e *Engine) decodePass(w *worker, now vtime.Time) {
	w.busy, w.poked = true, false
	end := now
	for i, rk := range w.ranks {
		w.planned[i] = rk.Runnable()
		if !w.planned[i] {
			continue
		}
		if e.opts.Observer != nil {
			e.opts.Observer.Focus(rk)
			e.opts.Observer.PassStart(rk, now)
		}
		rk.passes++
		res := rk.DecodeStep(now)
		if res.End > end {
			end = res.End
		}
	}
	w.end = end
	e.Passes++
	e.FastForwarded++
}

// pureStart reports whether every rank of w that is runnable now has a
// pure decode step next, after w's pass end was committed. pureInstant
// asked before the commit; only the commit's engine boundary can change
// the answer since, when it woke the ranks (w.poked), and then only for a
// rank that was not runnable (its connector waiters woke): on a runnable
// rank with a pure step next nothing waits to be woken, and finished
// copies only free G1 blocks.
func (e *Engine) pureStart(w *worker) bool {
	if !w.poked {
		return true
	}
	for i, rk := range w.ranks {
		if rk.Host != nil && !w.pure[i] && rk.Runnable() && !rk.DecodeNext() {
			return false
		}
	}
	return true
}

// pureInstant reports whether w's pass end is an instant fastForward
// computes exactly: its commit finishes and rejects nothing, and every rank
// that will be runnable after it has a pure decode step next.
func (e *Engine) pureInstant(w *worker) bool {
	some := false
	for i, rk := range w.ranks {
		if w.planned[i] {
			res := rk.Result()
			if len(res.Finished) > 0 || len(res.Rejected) > 0 {
				return false
			}
		}
		w.pure[i] = rk.Runnable()
		if w.pure[i] {
			if !rk.DecodeNext() {
				return false
			}
			some = true
		}
	}
	return some
}
