package report

import (
	"strconv"

	"github.com/kvsim/kvsim/core/vtime"
)

// Agentic is what an agentic run with load controls adds to
// prediction.json (docs/model/agentic.md ("Report")): the snapshot cuts,
// the warmup's preparation and the profile. Each part is nil when its
// control is off.
type Agentic struct {
	Seed      uint64
	Snapshots []Snapshot
	Phases    *Phases
	Profile   *Profile
}

// Snapshot is one lane's cut.
type Snapshot struct {
	Lane, Play                 int
	TStarMs, FirstMs, LastMs   vtime.Time
	History, Remaining, Primer int
}

// Phases is the warmup's preparation and barrier.
type Phases struct {
	ProfileStartMs, QuiescentMs vtime.Time
	Lanes                       []WarmupLane
}

// WarmupLane counts one lane's completed preparation requests.
type WarmupLane struct{ Primers, WarmupCompleted int }

// Profile is an agentic profile's lifecycle.
type Profile struct {
	StartMs, CutoffMs, GraceEndMs, FinishedAtMs vtime.Time
	PlaysStarted, Issued, Successful            int
	// PlaysCompleted: started plays whose every request completed before
	// the admission cutoff.
	PlaysCompleted                                   int
	Canceled, NeverIssued, ClientInFlight, IdleShift int
}

// appendAgentic writes the agentic sections as keys of o.
func appendAgentic(o *obj, a *Agentic) {
	if len(a.Snapshots) > 0 {
		b := []byte{'['}
		for i, s := range a.Snapshots {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = newObj(b).raw("seed", strconv.AppendUint(nil, a.Seed, 10)).int("lane_id", int64(s.Lane)).
				int("source_play", int64(s.Play)).opt("t_star_ms", s.TStarMs).opt("recorded_start_ms", s.FirstMs).
				opt("recorded_last_start_ms", s.LastMs).int("history_requests", int64(s.History)).
				int("remaining_requests", int64(s.Remaining)).int("primers", int64(s.Primer)).end()
		}
		o.raw("agentic_snapshots", append(b, ']'))
	}
	if p := a.Phases; p != nil {
		b := []byte{'['}
		for i, l := range p.Lanes {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = newObj(b).int("lane_id", int64(i)).int("primers_completed", int64(l.Primers)).
				int("warmup_completed", int64(l.WarmupCompleted)).end()
		}
		phase := "preparation"
		if p.ProfileStartMs.IsSet() {
			phase = "profile"
		}
		o.raw("agentic_phases", newObj(nil).str("phase", phase).opt("profile_start_ms", p.ProfileStartMs).
			opt("preparation_quiescent_ms", p.QuiescentMs).raw("lanes", append(b, ']')).end())
	}
	if p := a.Profile; p != nil {
		o.raw("agentic_profile", newObj(nil).opt("profile_start_ms", p.StartMs).
			opt("admission_cutoff_ms", p.CutoffMs).opt("response_grace_deadline_ms", p.GraceEndMs).
			bool("admission_closed", p.FinishedAtMs.IsSet()).opt("finished_at_ms", p.FinishedAtMs).
			int("plays_started", int64(p.PlaysStarted)).int("plays_completed", int64(p.PlaysCompleted)).int("issued_requests", int64(p.Issued)).
			int("successful_responses", int64(p.Successful)).int("canceled_requests", int64(p.Canceled)).
			int("never_issued_requests", int64(p.NeverIssued)).int("client_in_flight_requests", int64(p.ClientInFlight)).
			int("idle_shifts", int64(p.IdleShift)).end())
	}
}
