package engine

import (
	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/request"
	"github.com/kvsim/kvsim/core/vtime"
)

// Agentic plays (docs/model/agentic.md): each session of an agentic workload
// is a play, a dependency graph of requests. A root request is ready at its
// arrival (relative to its play's start); any other request is ready when
// every request it waits for has completed, plus its delay and tool wait.
// agentic_lanes caps the plays in flight (a closed loop over plays).
//
// Decision: a rejected request's dependents are never issued; its play ends
// once nothing else of it can run.

type agenticState struct {
	dependents [][]int32    // per global request: global indices waiting for it
	waiting    []int32      // per global request: dependencies not yet completed
	readyAt    []vtime.Time // per global request: latest dependency completion
	open       []int32      // per play: requests neither terminal nor unreachable
}

// checkAgentic rejects the agentic controls kvsim does not model yet.
func checkAgentic(cfg *config.Config) error {
	l := cfg.Traffic.Load
	switch {
	case l.AgenticSnapshot != nil:
		return cfg.Refuse("traffic.load.agentic_snapshot", "not supported yet: seeded snapshots of agentic plays")
	case l.AgenticWarmup:
		return cfg.Refuse("traffic.load.agentic_warmup", "not supported yet: agentic warmup (it also needs agentic_snapshot)")
	case l.AgenticProfile != nil:
		return cfg.Refuse("traffic.load.agentic_profile", "not supported yet: continuous agentic profiles")
	}
	return nil
}

func (e *Engine) initAgentic() {
	n := len(e.reqs)
	a := &agenticState{dependents: make([][]int32, n), waiting: make([]int32, n), readyAt: make([]vtime.Time, n),
		open: make([]int32, len(e.wl.Sessions))}
	for s := range e.wl.Sessions {
		ws := &e.wl.Sessions[s]
		first := e.sessions[s].first
		a.open[s] = int32(len(ws.Turns))
		for t := range ws.Turns {
			i := first + t
			a.waiting[i] = int32(len(ws.Turns[t].Deps))
			for _, d := range ws.Turns[t].Deps {
				a.dependents[first+int(d)] = append(a.dependents[first+int(d)], int32(i))
			}
		}
	}
	e.agentic = a
}

// startPlay makes a play's roots ready, keeping their relative arrivals.
func (e *Engine) startPlay(s int, at vtime.Time) {
	ws := &e.wl.Sessions[s]
	for t := range ws.Turns {
		tu := &ws.Turns[t]
		if len(tu.Deps) == 0 {
			e.arrivals.push(arrival{at: at + e.driver.Delay(tu.ArrivalMs-ws.ArrivalMs), session: int32(s), turn: int32(t)})
		}
	}
}

// agenticDone moves a play on after one of its requests ended.
func (e *Engine) agenticDone(r *request.Request, at vtime.Time, completed bool) {
	a := e.agentic
	s := int(r.Session)
	first := e.sessions[s].first
	i := first + int(r.Turn)
	a.open[s]--
	if completed {
		for _, d := range a.dependents[i] {
			a.waiting[d]--
			a.readyAt[d] = max(a.readyAt[d], at)
			if a.waiting[d] == 0 {
				tu := &e.wl.Sessions[s].Turns[int(d)-first]
				e.arrivals.push(arrival{at: a.readyAt[d] + e.driver.Delay(tu.DelayMs+tu.ToolWaitMs),
					session: int32(s), turn: d - int32(first)})
			}
		}
	} else {
		e.unreachable(i, s)
	}
	if a.open[s] == 0 {
		e.driver.SessionDone(at, e.startSession)
	}
}

// unreachable marks the dependents of request i, transitively, as never
// issued.
func (e *Engine) unreachable(i, s int) {
	a := e.agentic
	for _, d := range a.dependents[i] {
		if a.waiting[d] >= 0 {
			a.waiting[d] = -1
			a.open[s]--
			e.unreachable(int(d), s)
		}
	}
}
