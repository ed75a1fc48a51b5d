// Package report owns what a run reports (docs/model/report.md): the
// per-request records (requests.jsonl), the summary of prediction.json and
// their exact JSON encoding. It computes statistics from records the engine
// fills; it never looks at engine state.
package report

import "github.com/kvsim/kvsim/core/vtime"

// Terminal statuses.
const (
	StatusCompleted = "completed"
	StatusRejected  = "rejected"
	StatusCanceled  = "canceled"
	StatusFailed    = "failed"
)

// Admission is one entry of a request's admission_history.
type Admission struct {
	Ordinal     int // admission_ordinal, from 1 over all pools
	PoolOrdinal int // pool_admission_ordinal, from 1 within the pool
	Pool        string
	AtMs        vtime.Time
	Reused      int
	G1, Host    int
	HasHost     bool
	Readmission bool
}

// Routing is one entry of a request's routing_history. Its fields are
// 32-bit so that the routing fields fit the 56 bytes the entry had before
// them: the memory estimate of core/replay counts one per request.
type Routing struct {
	Pool     string
	Outcome  string
	Worker   int32
	Schedule int32 // scheduler id: worker × DP ranks + rank
	DPRank   int32
	// Overlap is the chosen rank's leading G1-cached blocks of the prompt
	// and HostOverlap the G2-resident blocks after them (HasHost: the rank
	// has G2). They are written only when Policy is not round robin.
	Overlap, HostOverlap int32
	// Policy indexes config.RoutingPolicies; 0, round robin, keeps the
	// entry's original fields.
	Policy  uint8
	HasHost bool
}

// A Request is one request's record. Times are virtual ms; vtime.Unset
// means "did not happen".
type Request struct {
	Index     int
	RequestID string
	SessionID string
	Turn      int

	ArrivalMs    vtime.Time
	DispatchedMs vtime.Time
	FirstAdmitMs vtime.Time
	TerminalMs   vtime.Time
	FirstTokenMs vtime.Time
	// SecondTokenMs and LastTokenMs complete the token timeline.
	SecondTokenMs vtime.Time
	LastTokenMs   vtime.Time
	Tokens        int // output tokens emitted
	// gapMs and gapRun are the run of identical inter-token gaps in
	// progress (gapRun 0: none yet); gaps holds the closed runs, merged by
	// value. Token runs once per output token (3.8 M times per §E (docs/model/cases.md) run):
	// counting the open run beside the token fields touches one part of
	// the record instead of also the gaps list. closedGaps is how many
	// gaps the closed runs hold (the summary checks its table's counts
	// with it).
	gapMs      vtime.Time
	gapRun     uint32
	closedGaps uint32

	InputLength     int
	RequestedOutput int

	Reused int // at the most recent admission on the aggregated/prefill pool
	// FirstReused is the reused tokens at the first admission.
	FirstReused int
	// First-admission tier attribution (HasHost: G2 enabled on that rank).
	FirstG1, FirstHost int
	HasHost            bool

	PrefillWorker, DecodeWorker int // -1 when not applicable
	// P/D timeline (Unset when not applicable).
	PrefillAdmitMs, SourceHeldMs, DestinationReservedMs     vtime.Time
	DestinationActivatedMs, DecodeAdmitMs, SourceReleasedMs vtime.Time
	DecodeReused                                            int
	// Prefill is the step time of the passes that did the request's
	// prefill work, by what bounded them; nil unless the run's timing
	// records bounds (roofline, trained_physics), so fixed and polynomial
	// records are unchanged.
	Prefill      *PrefillTime
	Routing      []Routing
	Admissions   []Admission
	Readmissions int
	Status       string // "" while in flight

	// gaps is the closed runs of inter-token gaps as (value id, count); a
	// run is merged into an earlier one of its value, when that is among
	// the first mergeScan runs, only when the list is full (a fixed pass
	// time makes one or two values; modelled pass times make a new value
	// nearly every pass, where a search of the whole list would be
	// quadratic). A value may so have more than one run. EachGap reads them with the open run; values is the
	// table of the ids (shared by a run's records).
	gaps   []Gap
	values *GapValues
}

// PrefillTime sums the step times (compute start to end, on the rank that
// ran it) of the aggregated or prefill passes that did a request's prefill
// work (its prompt, or tokens it recomputes after a preemption), split by
// what bounded each pass (docs/model/timing.md ("What bounds a pass")). A
// pass counts whole: its time is the batch's, not the request's share.
type PrefillTime struct {
	Passes         int
	ComputeBoundMs vtime.Time
	MemoryBoundMs  vtime.Time
}

// Add counts one prefill pass of step time ms bounded by compute (or by
// memory when compute is false).
func (p *PrefillTime) Add(ms vtime.Time, compute bool) {
	p.Passes++
	if compute {
		p.ComputeBoundMs += ms
	} else {
		p.MemoryBoundMs += ms
	}
}

// mergeScan is how many closed runs a new run is compared with.
const mergeScan = 4

// A Gap is a run of identical inter-token gaps: the id of its value in the
// record's GapValues and how many gaps it holds.
type Gap struct {
	ID    uint32
	Count uint32
}

// GapValues interns the inter-token gap values of a run, so that a record
// keeps a gap value as a small id and the summary counts gaps by id in an
// array instead of hashing every run (docs/performance.md: modelled pass
// times make millions of runs of some 100,000 values).
type GapValues struct {
	vals  []vtime.Time
	index map[float64]uint32
	last  uint32 // the id interned last: consecutive lookups repeat it
	// counts is the gaps of the records' closed runs by value id, closed
	// their sum: when the completed records' closed runs are all of them,
	// the summary reads the counts instead of every record's runs.
	counts []uint64
	closed uint64
}

// NewGapValues returns an empty table.
func NewGapValues() *GapValues { return &GapValues{index: map[float64]uint32{}} }

// id returns the id of ms, adding it when new. Values are equal when they
// are the same float64 (Time.Same), as the summary's histogram keys them.
func (v *GapValues) id(ms vtime.Time) uint32 {
	if len(v.vals) > 0 && v.vals[v.last].Same(ms) {
		return v.last
	}
	id, ok := v.index[float64(ms)]
	if !ok {
		id = uint32(len(v.vals))
		v.vals = append(v.vals, ms)
		v.counts = append(v.counts, 0)
		v.index[float64(ms)] = id
	}
	v.last = id
	return id
}

// Len is the number of distinct values.
func (v *GapValues) Len() int { return len(v.vals) }

// Value returns the value of id.
func (v *GapValues) Value(id uint32) vtime.Time { return v.vals[id] }

// NewRequest returns a record with every time unset.
func NewRequest() Request {
	n := vtime.Unset()
	return Request{ArrivalMs: n, DispatchedMs: n, FirstAdmitMs: n, TerminalMs: n,
		FirstTokenMs: n, SecondTokenMs: n, LastTokenMs: n, PrefillWorker: -1, DecodeWorker: -1,
		PrefillAdmitMs: n, SourceHeldMs: n, DestinationReservedMs: n, DestinationActivatedMs: n,
		DecodeAdmitMs: n, SourceReleasedMs: n}
}

// TokenAgain records an output token emitted at t when its gap is the
// gap before it, the common case, and reports whether it was; else nothing
// changed and Token records it. It inlines into the engine's commit loop.
func (r *Request) TokenAgain(t vtime.Time) bool {
	if r.gapRun == 0 || !(t - r.LastTokenMs).Same(r.gapMs) { // gapRun > 0: two tokens or more
		return false
	}
	r.gapRun++
	r.LastTokenMs = t
	r.Tokens++
	return true
}

// Token records an output token emitted at t.
func (r *Request) Token(t vtime.Time) {
	switch r.Tokens {
	case 0:
		r.FirstTokenMs = t
	case 1:
		r.SecondTokenMs = t
	}
	if r.Tokens > 0 {
		// Gaps are compared exactly (Same), as the summary's ITL histogram
		// keys them by value: merging equal ones only shortens the list,
		// and a gap that differs in its last bit is another value in both.
		if g := t - r.LastTokenMs; r.gapRun > 0 && g.Same(r.gapMs) {
			r.gapRun++
		} else {
			r.closeGapRun()
			r.gapMs, r.gapRun = g, 1
		}
	}
	r.LastTokenMs = t
	r.Tokens++
}

// closeGapRun adds the open run of gaps to gaps.
func (r *Request) closeGapRun() {
	if r.gapRun == 0 {
		return
	}
	if r.values == nil {
		r.values = NewGapValues()
	}
	v, run := r.values, r.gapRun
	id := v.id(r.gapMs)
	v.counts[id] += uint64(run)
	v.closed += uint64(run)
	r.closedGaps += run
	r.gapRun = 0
	g := r.gaps
	if len(g) == cap(g) {
		// Merge only when the list is full: a modelled timing's record
		// has room for a run per gap and makes a new value nearly every
		// gap, where the scan would almost never match (130 M of a §E
		// roofline run's instructions); a fixed timing's record has room
		// for two runs and merges as before.
		for i := range g[:min(len(g), mergeScan)] {
			if g[i].ID == id {
				g[i].Count += run
				return
			}
		}
	}
	r.gaps = append(g, Gap{ID: id, Count: run})
}

// SetGapBuffer gives the record the (empty) slice its gap runs are
// appended to, so that a run's records can share one allocation, and the
// table of gap values the run's records share.
func (r *Request) SetGapBuffer(buf []Gap, values *GapValues) { r.gaps, r.values = buf[:0], values }

// EachGap calls fn for each distinct inter-token gap and how many times it
// occurred; a value's count may come in more than one call.
func (r *Request) EachGap(fn func(ms vtime.Time, count int)) {
	for _, g := range r.gaps {
		fn(r.values.Value(g.ID), int(g.Count))
	}
	if r.gapRun > 0 {
		fn(r.gapMs, int(r.gapRun))
	}
}

// eachGapID is EachGap by value id in the record's table (the open run is
// interned).
func (r *Request) eachGapID(fn func(id uint32, count int)) {
	for _, g := range r.gaps {
		fn(g.ID, int(g.Count))
	}
	if r.gapRun > 0 {
		fn(r.values.id(r.gapMs), int(r.gapRun))
	}
}

// Completed reports whether the request completed (and was admitted).
func (r *Request) Completed() bool { return r.Status == StatusCompleted }

// Shift makes every time of the record relative to origin (agentic
// warmup's barrier); unset times stay unset.
func (r *Request) Shift(origin vtime.Time) {
	for _, t := range []*vtime.Time{&r.ArrivalMs, &r.DispatchedMs, &r.FirstAdmitMs, &r.TerminalMs, &r.FirstTokenMs,
		&r.SecondTokenMs, &r.LastTokenMs, &r.PrefillAdmitMs, &r.SourceHeldMs, &r.DestinationReservedMs,
		&r.DestinationActivatedMs, &r.DecodeAdmitMs, &r.SourceReleasedMs} {
		if t.IsSet() {
			*t -= origin
		}
	}
	for i := range r.Admissions {
		r.Admissions[i].AtMs -= origin
	}
}
