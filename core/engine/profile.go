package engine

import (
	"errors"
	"fmt"
	"slices"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/trace"
	"github.com/kvsim/kvsim/core/vtime"
)

// Continuous agentic profiles (docs/model/agentic.md ("Profile"), after
// aisimulate's continuous profiles): from the
// profile's start (the warmup barrier, or 0) until the admission deadline,
// a lane whose play has ended takes the next play instance (trace.Instances:
// the corpus in order, wrapping, each from its first request with its own
// identities). No request is issued at or after the deadline and no play
// starts then. Requests still outstanding when the response grace ends are
// canceled. Idle guards shorten client timers: when no request is
// outstanding (globally, or in one play) for the global (tree) idle cap,
// the pending timers (of that play) move earlier so that the first fires
// then, keeping their relative delays.

// ErrProfileBudget is returned when a profile needs more play instances
// than were built; replay.RunWith retries with a larger budget (the run is
// deterministic, so the retry replays the same events).
var ErrProfileBudget = errors.New("agentic profile: play instance budget exhausted")

// maxProfileRequests bounds the requests of the instances a profile builds.
const maxProfileRequests = 4 << 20

// Profile is what a profile run reports.
type Profile struct {
	StartMs, CutoffMs, GraceEndMs, FinishedAtMs vtime.Time
	PlaysStarted                                int
	// PlaysCompleted counts the started plays whose every request
	// completed before the admission cutoff (terminal time < CutoffMs;
	// docs/model/agentic.md ("Report")).
	PlaysCompleted                            int
	Issued, Successful, Canceled, NeverIssued int
	// ClientInFlight is the requests outstanding at the end (always 0:
	// cancellation is immediate).
	ClientInFlight int
	IdleShifts     []IdleShift
}

// IdleShift is one application of an idle guard.
type IdleShift struct {
	AtMs, ByMs vtime.Time
	Play       int // -1 for the global guard
	Timers     int
}

type profileState struct {
	Profile
	opt         config.AgenticProfile
	started     bool
	plays       int          // profile plays: snapshot lanes + instances
	outstanding int          // dispatched, not ended
	perPlay     []int32      // outstanding per play
	idleSince   vtime.Time   // when outstanding last became 0
	playSince   []vtime.Time // per play: when its outstanding last became 0
	canceled    bool         // the grace end has been applied
	active      []int        // plays started and not ended (at most one per lane)
	lastEnd     vtime.Time   // latest terminal time of a profile request
}

// DefaultProfileBudget is the first number of play instances a profile
// builds (replay.RunWith quadruples it while the run needs more).
func DefaultProfileBudget(lanes int) int { return 8 * lanes }

func (e *Engine) initProfile(opt config.AgenticProfile, plays int) {
	p := &profileState{opt: opt, plays: plays, perPlay: make([]int32, plays), playSince: make([]vtime.Time, plays)}
	p.StartMs, p.CutoffMs, p.GraceEndMs, p.FinishedAtMs = vtime.Unset(), vtime.Unset(), vtime.Unset(), vtime.Unset()
	e.prof = p
}

// startProfile sets the deadlines from start (the barrier or 0).
func (e *Engine) startProfile(start vtime.Time) {
	p := e.prof
	p.started = true
	p.StartMs = start
	p.CutoffMs = start + vtime.Time(p.opt.DurationSeconds*1000)
	p.GraceEndMs = p.CutoffMs + vtime.Time(p.opt.ResponseGraceSeconds*1000)
	p.idleSince = start
	for i := range p.playSince {
		p.playSince[i] = start
	}
}

// admits reports whether a request may be issued now.
func (p *profileState) admits(now vtime.Time) bool { return now < p.CutoffMs }

// profileDispatched counts an issued request of play s.
func (e *Engine) profileDispatched(s int) {
	p := e.prof
	p.Issued++
	p.outstanding++
	p.perPlay[s]++
}

// profileEnded counts a profile request of play s that ended at at.
func (e *Engine) profileEnded(s int, at vtime.Time, completed bool) {
	p := e.prof
	p.outstanding--
	p.perPlay[s]--
	p.lastEnd = max(p.lastEnd, at)
	if completed {
		p.Successful++
	}
	if p.outstanding == 0 {
		p.idleSince = at
	}
	if p.perPlay[s] == 0 {
		p.playSince[s] = at
	}
}

// profilePlayDone replaces an ended play while admission is open.
func (e *Engine) profilePlayDone(at vtime.Time) error {
	if !e.prof.admits(at) {
		return nil
	}
	if e.driver.Pending() == 0 {
		return ErrProfileBudget
	}
	e.driver.SessionDone(at, e.startSession)
	return nil
}

// profileNext is the profile's next own event: a due idle guard, or the
// grace end while requests are outstanding.
func (e *Engine) profileNext() vtime.Time {
	p := e.prof
	if p == nil || !p.started {
		return vtime.Never
	}
	t := vtime.Never
	if !p.canceled && p.outstanding > 0 {
		t = p.GraceEndMs
	}
	if g, _ := e.guard(); g < t {
		t = g
	}
	return t
}

// guard returns the earliest idle guard that would shorten a timer, and
// its play (-1: global).
func (e *Engine) guard() (vtime.Time, int) {
	p := e.prof
	if len(e.arrivals) == 0 {
		return vtime.Never, -1
	}
	best, play := vtime.Never, -1
	if p.outstanding == 0 {
		if g := p.idleSince + vtime.Time(p.opt.GlobalIdleCapSeconds*1000); g < e.arrivals[0].at && g < p.CutoffMs {
			best = g
		}
	}
	a := e.agentic
	for _, s := range p.active {
		if p.perPlay[s] != 0 || a.open[s] == 0 {
			continue
		}
		next := e.nextArrivalOf(s)
		if g := p.playSince[s] + vtime.Time(p.opt.TreeIdleCapSeconds*1000); g < next && g < best && g < p.CutoffMs {
			best, play = g, s
		}
	}
	return best, play
}

func (e *Engine) nextArrivalOf(s int) vtime.Time {
	t := vtime.Never
	for _, a := range e.arrivals {
		if int(a.session) == s && a.at < t {
			t = a.at
		}
	}
	return t
}

// applyProfile applies what is due now: idle guards, then the grace end's
// cancellations. It reports whether it changed anything.
func (e *Engine) applyProfile(now vtime.Time) bool {
	p := e.prof
	if p == nil || !p.started {
		return false
	}
	changed := false
	for {
		g, play := e.guard()
		if g > now {
			break
		}
		e.shiftTimers(play, now)
		changed = true
	}
	if !p.canceled && p.outstanding > 0 && now >= p.GraceEndMs {
		p.canceled = true
		for i := range e.Records {
			if s := int(e.reqs[i].Session); s < p.plays && e.Records[i].DispatchedMs.IsSet() && e.Records[i].Status == "" {
				if e.Cancel(i) {
					p.Canceled++
				}
			}
		}
		changed = true
	}
	return changed
}

// shiftTimers moves the pending timers of play (or of every play, -1)
// earlier so that the first fires now: queued arrivals and the readiness
// of requests still waiting for dependencies.
func (e *Engine) shiftTimers(play int, now vtime.Time) {
	first := vtime.Never
	for _, a := range e.arrivals {
		if play < 0 || int(a.session) == play {
			first = min(first, a.at)
		}
	}
	by := first - now
	if by <= 0 { // a timer is due now: the guard has nothing to shorten
		e.idleFrom(play, now)
		return
	}
	n := 0
	for i := range e.arrivals {
		if play < 0 || int(e.arrivals[i].session) == play {
			e.arrivals[i].at -= by
			n++
		}
	}
	e.arrivals.reheap()
	a := e.agentic
	for i := range a.readyAt {
		s := int(e.reqs[i].Session)
		if a.waiting[i] > 0 && (play < 0 || s == play) && a.readyAt[i] > now {
			a.readyAt[i] = max(a.readyAt[i]-by, now)
		}
	}
	e.prof.IdleShifts = append(e.prof.IdleShifts, IdleShift{AtMs: now, ByMs: by, Play: play, Timers: n})
	e.idleFrom(play, now)
}

// idleFrom restarts an idle guard's clock (play -1: the global one).
func (e *Engine) idleFrom(play int, now vtime.Time) {
	if play < 0 {
		e.prof.idleSince = now
	} else {
		e.prof.playSince[play] = now
	}
}

// Profile returns the profile's report (nil without agentic_profile).
func (e *Engine) Profile() *Profile {
	if e.prof == nil {
		return nil
	}
	return &e.prof.Profile
}

// finishProfile sets the end figures and keeps only the records of the
// plays that started.
func (e *Engine) finishProfile() {
	p := e.prof
	if p == nil || !p.started {
		return
	}
	p.FinishedAtMs = max(p.CutoffMs, p.lastEnd)
	p.PlaysStarted = 0
	keep := 0
	for s := range p.plays {
		if e.playStarted(s) {
			p.PlaysStarted++
			first := e.sessions[s].first
			keep = first + len(e.wl.Sessions[s].Turns)
			if e.playCompleted(first, keep, p.CutoffMs) {
				p.PlaysCompleted++
			}
		}
	}
	for i := range keep {
		if !e.Records[i].DispatchedMs.IsSet() {
			p.NeverIssued++
		}
	}
	p.ClientInFlight = p.outstanding
	e.keep = keep
}

// playCompleted reports whether every request of the records [from, to)
// (one play's) completed before cutoff. Times are absolute here:
// finishWarmup shifts the records to the barrier after finishProfile.
func (e *Engine) playCompleted(from, to int, cutoff vtime.Time) bool {
	for i := from; i < to; i++ {
		if r := &e.Records[i]; !r.Completed() || !(r.TerminalMs < cutoff) {
			return false
		}
	}
	return true
}

// playStarted reports whether play s was started.
func (e *Engine) playStarted(s int) bool { return e.agentic.started[s] }

// withInstances appends a profile's play instances to the snapshot plays.
func withInstances(cfg *config.Config, snap, src *trace.Workload, budget int) (*trace.Workload, error) {
	lanes := len(snap.Sessions)
	inst, err := trace.Instances(src, lanes, budget)
	if err != nil {
		return nil, cfg.Refuse("traffic.load.agentic_profile", err.Error())
	}
	w := *snap
	w.Sessions = append(append([]trace.Session(nil), snap.Sessions...), inst...)
	for i := range inst {
		w.Rows += len(inst[i].Turns)
	}
	if w.Rows > maxProfileRequests {
		return nil, cfg.Refuse("traffic.load.agentic_profile", fmt.Sprintf(
			"not supported yet: a profile needing more than %d play instances (%d requests)", budget, w.Rows))
	}
	w.NumContentIDs = uint32(lanes+budget) * src.NumContentIDs
	return &w, nil
}

// neverIssued drops a request released at or after the deadline: it and
// its dependents are never issued; its play ends once nothing else of it
// can run.
func (e *Engine) neverIssued(s, turn int, at vtime.Time) {
	a := e.agentic
	i := e.sessions[s].first + turn
	a.open[s]--
	e.unreachable(i, s)
	if a.open[s] == 0 {
		e.playEnded(s, at)
	}
}

// playStarted and playEnded keep the active plays, the only ones a tree
// guard looks at.
func (p *profileState) playStarted(s int, at vtime.Time) {
	p.playSince[s] = at // its tree guard counts from its start
	p.active = append(p.active, s)
}

func (p *profileState) playEnded(s int) {
	if i := slices.Index(p.active, s); i >= 0 {
		p.active = slices.Delete(p.active, i, i+1)
	}
}
