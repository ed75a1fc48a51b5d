package engine

import (
	"fmt"

	"github.com/kvsim/kvsim/core/connector"
	"github.com/kvsim/kvsim/core/trace"
	"github.com/kvsim/kvsim/core/vtime"
)

// Agentic warmup (docs/model/agentic.md ("Warmup")): with agentic_warmup,
// the workload is the N snapshot plays followed by N preparation plays
// (trace.Preparation: each lane's primers, then ten warmup requests, one
// after another). The preparation plays start at 0; the snapshot plays
// start when the barrier opens: every preparation request has completed
// and nothing is left in flight (no request on any rank, no G2 copy, no
// P/D handoff or source hold). Caches are kept. At the barrier the run's
// counters restart, and at the end the preparation records are dropped and
// the profile records' times are made relative to the barrier.

// Warmup is what a warmed run reports of its preparation.
type Warmup struct {
	// ProfileStartMs is the barrier's absolute time (Unset until it opens).
	ProfileStartMs vtime.Time
	// QuiescentMs is when the last preparation request ended.
	QuiescentMs vtime.Time
	Lanes       []WarmupLane
}

// WarmupLane counts one lane's completed preparation requests.
type WarmupLane struct {
	Primers, WarmupCompleted int
}

type warmupState struct {
	Warmup
	plays   int // profile plays (sessions 0 … plays-1); lane l prepares in plays+l
	reqs    int // their requests (global indices 0 … reqs-1)
	open    int // preparation plays not finished
	barrier bool
	failed  error
}

// withPreparation appends the preparation plays to a snapshot workload.
func withPreparation(snap, src *trace.Workload, cuts []trace.Cut) *trace.Workload {
	w := *snap
	w.Sessions = append(append([]trace.Session(nil), snap.Sessions...), trace.Preparation(src, cuts)...)
	w.Rows = 0
	for i := range w.Sessions {
		w.Rows += len(w.Sessions[i].Turns)
	}
	return &w
}

func (e *Engine) initWarmup(lanes, plays int) {
	w := &warmupState{plays: plays, Warmup: Warmup{ProfileStartMs: vtime.Unset(), QuiescentMs: vtime.Unset(),
		Lanes: make([]WarmupLane, lanes)}}
	w.reqs = e.sessions[plays-1].first + len(e.wl.Sessions[plays-1].Turns)
	e.warm = w
}

// startWarmup starts every lane's preparation play at 0 (a lane with
// nothing to prepare has an empty play).
func (e *Engine) startWarmup() {
	w := e.warm
	for l := range w.Lanes {
		if len(e.wl.Sessions[w.plays+l].Turns) > 0 {
			w.open++
			e.startPlay(w.plays+l, 0)
		}
	}
}

// preparation reports whether play s is a preparation play.
func (e *Engine) preparation(s int) bool { return e.warm != nil && s >= e.warm.plays }

// prepDone counts a finished preparation request of play s.
func (e *Engine) prepDone(s, turn int, completed bool) {
	w := e.warm
	lane := &w.Lanes[s-w.plays]
	switch {
	case !completed:
		if w.failed == nil {
			w.failed = fmt.Errorf("agentic warmup: preparation request %s was not completed; the barrier stays closed",
				e.wl.Sessions[s].Turns[turn].RequestID)
		}
	case turn < len(e.wl.Sessions[s].Turns)-trace.WarmupRequests:
		lane.Primers++
	default:
		lane.WarmupCompleted++
	}
}

// prepPlayDone is called when a preparation play has ended.
func (e *Engine) prepPlayDone(at vtime.Time) {
	e.warm.open--
	if e.warm.open == 0 {
		e.warm.QuiescentMs = at
	}
}

// maybeOpenBarrier opens the barrier once preparation is over and settled,
// starting the snapshot plays at this instant.
func (e *Engine) maybeOpenBarrier() error {
	w := e.warm
	if w == nil || w.barrier {
		return nil
	}
	if w.failed != nil {
		return w.failed
	}
	if w.open > 0 || !e.quiescent() {
		return nil
	}
	w.barrier = true
	w.ProfileStartMs = e.now
	e.CommittedPrefill, e.Preemptions, e.Passes = 0, 0, 0
	for _, rk := range e.ranks {
		if rk.Host != nil {
			rk.Host.Stats = connector.Stats{}
			rk.Host.Tier().Evictions = 0
		}
	}
	if e.prof != nil {
		e.startProfile(e.now)
	}
	e.driver.StartAt(e.now, e.startSession)
	return nil
}

// quiescent reports whether no request, pass, copy or handoff is in flight.
func (e *Engine) quiescent() bool {
	if len(e.arrivals) > 0 || len(e.handoffs) > 0 {
		return false
	}
	for _, w := range e.workers {
		if w.busy {
			return false
		}
		for _, rk := range w.ranks {
			if !rk.Idle() || rk.Host != nil && rk.Host.HasWork() {
				return false
			}
		}
	}
	for _, d := range e.shared {
		if d.Next() != vtime.Never {
			return false
		}
	}
	for _, r := range e.srcRank {
		if r != nil {
			return false
		}
	}
	return true
}

// Warmup returns the preparation's evidence (nil without agentic_warmup).
func (e *Engine) Warmup() *Warmup {
	if e.warm == nil {
		return nil
	}
	return &e.warm.Warmup
}

// finishWarmup keeps only the profile records, with times from the barrier.
func (e *Engine) finishWarmup() {
	w := e.warm
	if w == nil || !w.barrier {
		return
	}
	if e.keep < 0 || e.keep > w.reqs {
		e.keep = w.reqs
	}
	for i := range e.keep {
		e.Records[i].Shift(w.ProfileStartMs)
	}
}

// barrierNeverOpened is the error of a warmed run whose events ran out
// before its barrier opened.
func (e *Engine) barrierNeverOpened() error {
	if w := e.warm; w != nil && !w.barrier {
		return fmt.Errorf("agentic warmup: the run ended at %v ms before the barrier opened (%d preparation plays unfinished)", e.now, w.open)
	}
	return nil
}
