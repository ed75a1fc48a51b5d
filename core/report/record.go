// Package report owns what a run reports (replay-model.md §14): the
// per-request records (requests.jsonl), the summary of prediction.json and
// their exact JSON encoding. It computes statistics from records the engine
// fills; it never looks at engine state.
package report

import "math"

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
	AtMs        float64
	Reused      int
	G1, Host    int
	HasHost     bool
	Readmission bool
}

// Routing is one entry of a request's routing_history.
type Routing struct {
	Pool     string
	Outcome  string
	Worker   int
	Schedule int // scheduler id: worker × DP ranks + rank
	DPRank   int
}

// A Request is one request's record. Times are virtual ms; NaN means "did
// not happen".
type Request struct {
	Index     int
	RequestID string
	SessionID string
	Turn      int

	ArrivalMs    float64
	DispatchedMs float64
	FirstAdmitMs float64
	TerminalMs   float64
	FirstTokenMs float64
	// SecondTokenMs and LastTokenMs complete the token timeline.
	SecondTokenMs float64
	LastTokenMs   float64
	Tokens        int // output tokens emitted

	InputLength     int
	RequestedOutput int

	Reused int // at the most recent admission on the aggregated/prefill pool
	// FirstReused is the reused tokens at the first admission.
	FirstReused int
	// First-admission tier attribution (HasHost: G2 enabled on that rank).
	FirstG1, FirstHost int
	HasHost            bool

	PrefillWorker, DecodeWorker int // -1 when not applicable
	// P/D timeline (NaN when not applicable).
	PrefillAdmitMs, SourceHeldMs, DestinationReservedMs     float64
	DestinationActivatedMs, DecodeAdmitMs, SourceReleasedMs float64
	DecodeReused                                            int
	Routing                                                 []Routing
	Admissions                                              []Admission
	Readmissions                                            int
	Status                                                  string // "" while in flight

	// Gaps is the request's inter-token gaps as (value, count) runs in the
	// order first seen; most requests have one or two distinct values.
	Gaps []Gap
}

// A Gap is a run of identical inter-token gaps.
type Gap struct {
	Ms    float64
	Count int
}

// NewRequest returns a record with every time unset.
func NewRequest() Request {
	n := math.NaN()
	return Request{ArrivalMs: n, DispatchedMs: n, FirstAdmitMs: n, TerminalMs: n,
		FirstTokenMs: n, SecondTokenMs: n, LastTokenMs: n, PrefillWorker: -1, DecodeWorker: -1,
		PrefillAdmitMs: n, SourceHeldMs: n, DestinationReservedMs: n, DestinationActivatedMs: n,
		DecodeAdmitMs: n, SourceReleasedMs: n}
}

// Token records an output token emitted at t.
func (r *Request) Token(t float64) {
	switch r.Tokens {
	case 0:
		r.FirstTokenMs = t
	case 1:
		r.SecondTokenMs = t
	}
	if r.Tokens > 0 {
		g := t - r.LastTokenMs
		if n := len(r.Gaps); n > 0 && r.Gaps[n-1].Ms == g {
			r.Gaps[n-1].Count++
		} else {
			found := false
			for i := range r.Gaps {
				if r.Gaps[i].Ms == g {
					r.Gaps[i].Count++
					found = true
					break
				}
			}
			if !found {
				r.Gaps = append(r.Gaps, Gap{Ms: g, Count: 1})
			}
		}
	}
	r.LastTokenMs = t
	r.Tokens++
}

// Completed reports whether the request completed (and was admitted).
func (r *Request) Completed() bool { return r.Status == StatusCompleted }
