package engine

import (
	"github.com/kvsim/kvsim/core/report"
	"github.com/kvsim/kvsim/core/vtime"
)

// Client cancellation (docs/model/agentic.md ("Cancellation")): a
// dispatched request that has not ended is aborted on its rank
// (scheduler.Rank.Cancel: out of its queue or the running list, its G2
// load dropped with every pin and reservation, its G1 blocks released),
// recorded as canceled at that instant, and its play moves on as after a
// rejection. A rank whose pass is in flight is not touched: the cancel
// waits for the pass to end (the request may complete in it instead).

// Cancel aborts request i (its global index) now, or at the end of its
// rank's pass in flight. It reports whether the request was outstanding:
// dispatched and not ended. Only aggregated workers are supported.
func (e *Engine) Cancel(i int) bool {
	rec := &e.Records[i]
	if !rec.DispatchedMs.IsSet() || rec.Status != "" || e.pd {
		return false
	}
	e.cancels = append(e.cancels, int32(i))
	e.applyCancels(e.now)
	return true
}

// applyCancels applies the pending cancels whose rank is not in a pass; it
// reports whether it changed anything.
func (e *Engine) applyCancels(now vtime.Time) bool {
	changed := false
	kept := e.cancels[:0]
	for _, i := range e.cancels {
		rec := &e.Records[i]
		if rec.Status != "" { // ended in the pass it waited for
			changed = true
			continue
		}
		rk := e.ranks[rec.Routing[len(rec.Routing)-1].Schedule]
		w := e.workers[rk.Worker]
		if w.busy {
			kept = append(kept, i)
			continue
		}
		r := &e.reqs[i]
		if !rk.Rank.Cancel(r, now) {
			kept = append(kept, i)
			continue
		}
		changed = true
		w.poked = true
		rec.Status = report.StatusCanceled
		rec.TerminalMs = now
		if e.opts.Check && e.checkErr == nil {
			e.checkErr = e.check(rk)
		}
		e.turnDone(r, now, false)
	}
	e.cancels = kept
	return changed
}
