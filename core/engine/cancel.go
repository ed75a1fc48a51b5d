package engine

import (
	"github.com/kvsim/kvsim/core/report"
	"github.com/kvsim/kvsim/core/request"
	"github.com/kvsim/kvsim/core/vtime"
)

// Client cancellation (docs/model/agentic.md ("Cancellation")): a
// dispatched request that has not ended is canceled by the client at once
// (its record ends then, its play moves on as after a rejection) and
// aborted on its rank (scheduler.Rank.Cancel: out of its queue or the
// running list, its G2 load dropped with every pin and reservation, its G1
// blocks released). A rank whose pass is in flight is not touched: the
// abort waits for the pass to end, whose output for the request is then
// ignored (if the request finished in it, there is nothing left to abort).

// Cancel cancels request i (its global index) now. It reports whether the
// request was outstanding: dispatched and not ended. Only aggregated
// workers and P/D are supported.
func (e *Engine) Cancel(i int) bool {
	rec := &e.Records[i]
	if !rec.DispatchedMs.IsSet() || rec.Status != "" {
		return false
	}
	rec.Status = report.StatusCanceled
	rec.TerminalMs = e.now
	e.canceled++
	e.cancels = append(e.cancels, int32(i))
	e.applyCancels(e.now)
	r := &e.reqs[i]
	known := r.Known
	e.turnDone(r, e.now, false)
	if len(e.cancels) > 0 && e.cancels[len(e.cancels)-1] == int32(i) {
		r.Known = known // the pass in flight still works on them until its end
	}
	return true
}

// applyCancels aborts the canceled requests whose rank is not in a pass;
// it reports whether it changed anything.
func (e *Engine) applyCancels(now vtime.Time) bool {
	changed := false
	kept := e.cancels[:0]
	for _, i := range e.cancels {
		r := &e.reqs[i]
		rec := &e.Records[i]
		if e.pd {
			if !e.cancelPD(i, now) {
				kept = append(kept, i)
			} else {
				changed = true
			}
			continue
		}
		rk := e.ranks[rec.Routing[len(rec.Routing)-1].Schedule]
		w := e.workers[rk.Worker]
		switch {
		case r.Status == request.Finished || r.Status == request.Rejected:
			changed = true // it ended in the pass the abort waited for
			r.Known = 0
		case w.busy:
			kept = append(kept, i)
		case rk.Rank.Cancel(r, now):
			changed = true
			w.poked = true
			r.Known = 0
			if e.opts.Check && e.checkErr == nil {
				e.checkErr = e.check(rk)
			}
		default:
			changed = true // not on the rank any more
		}
	}
	e.cancels = kept
	return changed
}

// cancelPD aborts a canceled P/D request where it is (docs/model/agentic.md
// ("Cancellation")): on its prefill rank; waiting for a decode reservation
// (the reservation request is dropped and the source released); in a KV
// transfer (the transfer completes and the decode side then drops the
// request: completeHandoff); or on its decode rank. It reports whether the
// cancel is done (false: a rank's pass is in flight, retry at its end).
func (e *Engine) cancelPD(i int32, now vtime.Time) bool {
	rec := &e.Records[i]
	src, d := &e.reqs[i], &e.reqsD[i]
	switch {
	case !rec.SourceHeldMs.IsSet(): // still on its prefill rank
		rk := e.ranks[rec.Routing[0].Schedule]
		if src.Status == request.Finished || src.Status == request.Rejected {
			return true // commit handles a prefill that finished in the pass
		}
		return e.abortOn(rk, src, now)
	case !rec.DestinationActivatedMs.IsSet():
		dr := e.ranks[rec.Routing[len(rec.Routing)-1].Schedule]
		for k, x := range e.pending[dr.Index] {
			if x == d {
				e.pending[dr.Index] = append(e.pending[dr.Index][:k], e.pending[dr.Index][k+1:]...)
				sr := e.srcRank[i]
				sr.ReleaseSource(src, now)
				e.srcRank[i] = nil
				e.workers[sr.Worker].poked = true
				return true
			}
		}
		return true // its KV transfer is in flight: completeHandoff drops it
	default:
		if d.Status == request.Finished || d.Status == request.Rejected {
			return true
		}
		return e.abortOn(e.ranks[rec.Routing[len(rec.Routing)-1].Schedule], d, now)
	}
}

// abortOn cancels r on rk unless rk's pass is in flight.
func (e *Engine) abortOn(rk *Rank, r *request.Request, now vtime.Time) bool {
	w := e.workers[rk.Worker]
	if w.busy {
		return false
	}
	if rk.Rank.Cancel(r, now) {
		w.poked = true
		if e.opts.Check && e.checkErr == nil {
			e.checkErr = e.check(rk)
		}
	}
	return true
}
