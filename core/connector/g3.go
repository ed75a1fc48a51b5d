package connector

import (
	"github.com/kvsim/kvsim/core/g2"
	"github.com/kvsim/kvsim/core/g3"
	"github.com/kvsim/kvsim/core/identity"
	"github.com/kvsim/kvsim/core/request"
	"github.com/kvsim/kvsim/core/vtime"
)

// G3 behind G2 (docs/model/g3.md). Every block that becomes resident in
// G2 is written to G3 in the background (its G2 entry stays pinned while
// the write moves it); a G2 lookup that misses blocks G3 holds first
// promotes them G3 → G2 (the G2 entries wait as pending) and defers; once
// they are resident the ordinary G2 hit loads them into G1.
//
// Decision: G3 completions take effect on G2 at their physical time (like a
// shared pool's), and wake the waiters of the domain's ranks.

// bypassRounds is how many consecutive restore rounds a request makes while
// its rank does no work before it stops restoring from G3
// (docs/model/g3.md ("Bypass after stalled restores")). As in aisimulate: a
// round is a lookup that submits new promotions (waiting for promotions in
// flight is not one); the count restarts when the rank schedules work or emits
// output (RankWorked) and when the request is admitted or preempted, which
// also ends a bypass. Counting any G3 completion as progress instead let a
// prefix larger than G2 thrash forever (its own promotions evicting each other
// complete every round).
const bypassRounds = 1024

type g3Side struct {
	store    *g3.Store
	worker   int
	link     g3.Link
	worked   int64 // passes in which the rank scheduled work or emitted output
	triedAt  vtime.Time
	tried    map[[2]int64]bool // (request, key) promoted at triedAt
	scratch  []identity.ID
	promoted []identity.ID
}

// SetG3 puts store behind this rank's G2, for worker.
func (a *Adapter) SetG3(store *g3.Store, worker int, link g3.Link) {
	a.g3 = &g3Side{store: store, worker: worker, link: link, tried: map[[2]int64]bool{}}
}

// G3 returns the rank's G3 store, or nil.
func (a *Adapter) G3() *g3.Store {
	if a.g3 == nil {
		return nil
	}
	return a.g3.store
}

// g3Write writes blocks that just became resident in G2.
func (a *Adapter) g3Write(keys []identity.ID, now vtime.Time) {
	if j := a.g3.store.SubmitWrite(a.g3.worker, keys, now, a.g3.link, a); j != nil {
		a.dom.Tier.Pin(j.Keys)
	}
}

// G3Completed applies a finished G3 job this adapter submitted.
func (a *Adapter) G3Completed(j *g3.Job) {
	switch j.Dir {
	case g3.Write:
		a.dom.Tier.Unpin(j.Keys)
	case g3.Read:
		a.dom.Tier.CompleteStore(j.Keys)
	}
	for _, x := range a.dom.adapters {
		x.wake = true
	}
}

// g3Stage promotes the G3 blocks the request's G2 prefix lacks. It reports
// whether the request must wait (a promotion started, or a block it needs
// is still pending in G2 or G3).
func (a *Adapter) g3Stage(r *request.Request, keys []identity.ID, now vtime.Time) bool {
	s := a.g3
	h := &r.Host
	if h.G3Bypass {
		return false
	}
	// A new instant (the clock only moves forward, and now and triedAt
	// are copies of the engine's instants: vtime's exact-comparison rule).
	if now > s.triedAt {
		s.triedAt = now
		clear(s.tried)
	}
	tier := a.dom.Tier
	deferred := false
	s.promoted = s.promoted[:0]
scan:
	for _, k := range keys {
		switch tier.Lookup(k) {
		case g2.Resident:
			continue
		case g2.Pending:
			deferred = true
			continue
		}
		switch s.store.Probe(k) {
		case g3.Pending:
			deferred = true
		case g3.Resident:
			// A zero-time promotion can be evicted again at this same
			// instant; promote each block at most once per request and
			// instant so the lookup cannot loop.
			key := [2]int64{int64(r.Index), int64(k)}
			if s.tried[key] {
				break scan
			}
			one := append(s.scratch[:0], k)
			if _, res := tier.PrepareProtected(one, nil); res != g2.Prepared {
				break scan
			}
			s.tried[key] = true
			s.promoted = append(s.promoted, k)
		default:
			break scan
		}
	}
	if len(s.promoted) == 0 {
		return deferred
	}
	s.store.SubmitRead(s.worker, s.promoted, now, s.link, a)
	if h.G3Epoch != s.worked {
		h.G3Epoch, h.G3Rounds = s.worked, 0
	}
	h.G3Rounds++
	if h.G3Rounds > bypassRounds {
		h.G3Bypass = true
		s.store.Stats.BypassedRestores++
		return false
	}
	return true
}

// RankWorked tells G3 staging that the rank scheduled work or emitted
// output in a pass: its requests' restore rounds start again (bypassRounds).
func (a *Adapter) RankWorked() {
	if a.g3 != nil {
		a.g3.worked++
	}
}

// resetG3Rounds restarts r's restore rounds and ends its bypass (at
// admission and preemption, bypassRounds).
func resetG3Rounds(r *request.Request) {
	r.Host.G3Rounds, r.Host.G3Bypass = 0, false
}
