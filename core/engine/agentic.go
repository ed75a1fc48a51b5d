package engine

import (
	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/request"
	"github.com/kvsim/kvsim/core/trace"
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
	dependents [][]agenticEdge // per global request: requests waiting for its completion
	onDispatch [][]agenticEdge // per global request: requests waiting for its dispatch (weka)
	waiting    []int32         // per global request: dependencies not yet met; released = -2
	readyAt    []vtime.Time    // per global request: latest dependency release
	open       []int32         // per play: requests neither terminal nor unreachable
	started    []bool          // per play: started (startPlay)
}

// An agenticEdge is one dependency seen from the request it releases:
// to (a global index) is ready delay (unscaled) after the trigger.
type agenticEdge struct {
	to    int32
	delay vtime.Time
}

// released marks a request whose dependencies are all met (it is, or
// was, in the arrivals heap): nothing can make it unreachable any more.
const released = -2

// snapshot replaces an agentic workload by its snapshot plays when
// agentic_snapshot is set (trace.Snapshot; docs/model/agentic.md
// ("Snapshot")).
func snapshot(cfg *config.Config, wl *trace.Workload) (*trace.Workload, []trace.Cut, error) {
	l := cfg.Traffic.Load
	if l.AgenticSnapshot == nil {
		return wl, nil, nil
	}
	snap, cuts, err := trace.Snapshot(wl, l.AgenticLanes, l.AgenticSnapshot.Seed)
	if err != nil {
		return nil, nil, cfg.Refuse("traffic.load.agentic_snapshot", err.Error())
	}
	return snap, cuts, nil
}

// Snapshots returns each lane's snapshot cut (nil without agentic_snapshot).
func (e *Engine) Snapshots() []trace.Cut { return e.cuts }

func (e *Engine) initAgentic() {
	n := len(e.reqs)
	a := &agenticState{dependents: make([][]agenticEdge, n), onDispatch: make([][]agenticEdge, n),
		waiting: make([]int32, n), readyAt: make([]vtime.Time, n), open: make([]int32, len(e.wl.Sessions)),
		started: make([]bool, len(e.wl.Sessions))}
	for s := range e.wl.Sessions {
		ws := &e.wl.Sessions[s]
		first := e.sessions[s].first
		a.open[s] = int32(len(ws.Turns))
		for t := range ws.Turns {
			i := first + t
			a.waiting[i] = int32(len(ws.Turns[t].Deps))
			tu := &ws.Turns[t]
			for j, d := range tu.Deps {
				ed, from := agenticEdge{to: int32(i)}, first+int(d)
				switch {
				case ws.Edges == nil:
					a.dependents[from] = append(a.dependents[from], ed)
				case ws.Edges[t][j].OnDispatch:
					ed.delay = ws.Edges[t][j].DelayMs
					a.onDispatch[from] = append(a.onDispatch[from], ed)
				default:
					ed.delay = ws.Edges[t][j].DelayMs
					a.dependents[from] = append(a.dependents[from], ed)
				}
			}
		}
	}
	e.agentic = a
}

// startPlay makes a play's roots ready, keeping their relative arrivals,
// and gates its other requests at their not-before offsets (weka).
func (e *Engine) startPlay(s int, at vtime.Time) {
	ws := &e.wl.Sessions[s]
	first := e.sessions[s].first
	e.agentic.started[s] = true
	if p := e.prof; p != nil && s < p.plays {
		p.playStarted(s, at)
	}
	for t := range ws.Turns {
		tu := &ws.Turns[t]
		switch {
		case len(tu.Deps) == 0:
			e.arrivals.push(arrival{at: at + e.driver.Delay(tu.ArrivalMs-ws.ArrivalMs), session: int32(s), turn: int32(t)})
		case tu.ArrivalMs > ws.ArrivalMs:
			e.agentic.readyAt[first+t] = at + e.driver.Delay(tu.ArrivalMs-ws.ArrivalMs)
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
	if e.preparation(s) {
		e.prepDone(s, int(r.Turn), completed)
	} else if e.prof != nil {
		e.profileEnded(s, at, completed)
	}
	if completed {
		e.release(a.dependents[i], s, at)
	} else {
		e.unreachable(i, s)
	}
	if a.open[s] == 0 {
		e.playEnded(s, at)
	}
}

// playEnded hands an ended play's lane on: a preparation play counts
// towards the barrier, a profile lane takes its next instance while
// admission is open, otherwise the driver starts the next play.
func (e *Engine) playEnded(s int, at vtime.Time) {
	switch {
	case e.preparation(s):
		e.prepPlayDone(at)
	case e.prof != nil:
		e.prof.playEnded(s)
		if err := e.profilePlayDone(at); err != nil && e.runErr == nil {
			e.runErr = err
		}
	default:
		e.driver.SessionDone(at, e.startSession)
	}
}

// release meets one dependency of each edge's request, triggered at at;
// a request whose dependencies are all met becomes an arrival at its
// latest release plus its own delay and tool wait (agentic_mooncake; weka
// edges carry their delays instead).
func (e *Engine) release(edges []agenticEdge, s int, at vtime.Time) {
	a := e.agentic
	first := e.sessions[s].first
	for _, ed := range edges {
		d := ed.to
		if a.waiting[d] < 0 {
			continue
		}
		a.waiting[d]--
		a.readyAt[d] = max(a.readyAt[d], at+e.driver.Delay(ed.delay))
		if a.waiting[d] == 0 {
			a.waiting[d] = released
			tu := &e.wl.Sessions[s].Turns[int(d)-first]
			e.arrivals.push(arrival{at: a.readyAt[d] + e.driver.Delay(tu.DelayMs+tu.ToolWaitMs),
				session: int32(s), turn: d - int32(first)})
		}
	}
}

// agenticDispatched releases the requests that wait for request i's
// dispatch (weka spawns and anchors).
func (e *Engine) agenticDispatched(i, s int, at vtime.Time) {
	if edges := e.agentic.onDispatch[i]; len(edges) > 0 {
		e.release(edges, s, at)
	}
}

// unreachable marks the dependents of request i, transitively, as never
// issued.
func (e *Engine) unreachable(i, s int) {
	a := e.agentic
	for _, list := range [2][]agenticEdge{a.dependents[i], a.onDispatch[i]} {
		for _, ed := range list {
			if d := ed.to; a.waiting[d] >= 0 {
				a.waiting[d] = -1
				a.open[s]--
				e.unreachable(int(d), s)
			}
		}
	}
}
