// Package scheduler owns the vLLM scheduler pass of one DP rank
// (docs/model/pass.md): the running list, the waiting and
// connector-waiting queues, chunked prefill, LIFO recompute preemption, the
// admission test, and pass timing (fixed, or a core/timing model). It calls
// the G2 connector only through the hooks of package connector, at the points
// docs/model/g2.md ("The hooks") names, so the connector profiles plug in
// without touching this code.
//
// A pass is computed entirely at its start time, as aisimulate does: the
// rank's state afterwards is the state "during" the pass, and nothing else
// touches the rank until the pass ends. The engine commits the pass's
// tokens, completions and admissions at PassResult.End.
package scheduler

import (
	"github.com/kvsim/kvsim/core/connector"
	"github.com/kvsim/kvsim/core/g1"
	"github.com/kvsim/kvsim/core/identity"
	"github.com/kvsim/kvsim/core/request"
	"github.com/kvsim/kvsim/core/timing"
	"github.com/kvsim/kvsim/core/vtime"
)

// Role of a rank's worker, for pass timing.
type Role uint8

const (
	Aggregated Role = iota
	Prefill
	Decode
)

// Config is one rank's fixed configuration.
type Config struct {
	Role             Role
	BlockSize        int
	Capacity         int // G1 blocks
	MaxBatchedTokens int
	MaxSequences     int
	ChunkedPrefill   bool
	PrefixCaching    bool
	ContextLength    int // 0 = no limit
	PrefillMs        vtime.Time
	DecodeMs         vtime.Time
	// Timing is a modelled pass time (docs/model/timing.md); nil for
	// fixed timing, which uses PrefillMs and DecodeMs.
	Timing *timing.Model
	// FIFOWaiters drops nextCandidate's completed-load-first order (tests).
	FIFOWaiters bool
}

// Generated hands out the ids of generated output tokens that the trace
// does not plan (a request's OutputIDs): fresh ids above every content id
// (trace.GeneratedTokenBase on), each handed out once, so generated content
// never collides with anything (identity.Sequence.AppendFresh). The ranks
// of a run share one, so ids are drawn in the order the ranks emit. A
// struct, not an interface: the draw is a field increment in the decode
// loop, not a call a token.
type Generated struct{ Next uint32 }

// A Rank is one DP rank's scheduler with its G1 pool and optional G2
// adapter.
type Rank struct {
	Cfg  Config
	Pool *g1.Pool
	// Host is the rank's G2 connector, nil without host offload.
	Host   *connector.Adapter
	ids    *identity.Table
	tokens *Generated

	running []*request.Request
	waiting deque
	// connWaiting is the connector-waiter FIFO (vLLM's skipped_waiting):
	// requests whose lookup deferred or whose load is queued or in flight.
	connWaiting []*request.Request
	awake       int // connector waiters not asleep

	res       PassResult
	obs       Observer
	nextOrder int64
	mark      uint32 // pass counter for Request.PassMark
	// What DecodeNext and DecodeStep keep about the running list until
	// runningChanged: pureKnown says pureLeft holds how many more decode
	// steps finish no running request; decodeRun says the pass result's
	// Scheduled and Emitted are the last decode step's.
	pureKnown, decodeRun bool
	pureLeft             int
	// storeDue lists, in scheduling order, this pass's requests with
	// something for the store hook (connector.Adapter.StoreDue).
	storeDue []Scheduled // Req and Before only
	// batch is the pass's work as a modelled timing sees it.
	batch timing.Batch
}

// Observer receives scheduler happenings for the per-pass record.
type Observer interface {
	SchedulerEvent(ev Event)
}

// EventKind names a scheduler happening.
type EventKind uint8

const (
	EvAdmit EventKind = iota
	EvPreempt
	EvFinish
	EvReject
	EvCancel
	// EvAdmissionWait: the waiting loop's candidate failed the admission
	// test and the loop stopped (docs/model/pass.md ("Admission test")).
	EvAdmissionWait
)

// Why a request is rejected at admission (docs/model/pass.md ("Rejections at
// admission")), as the record says it.
const (
	RejectContext   = "prompt reaches the context length"
	RejectBudget    = "prompt exceeds max_batched_tokens with chunked prefill off"
	RejectG1        = "prompt exceeds the G1 capacity"
	RejectOutgrewG1 = "preempted request outgrew the G1 capacity"
	// CancelClient is why a client cancellation (EvCancel) ends a request.
	CancelClient = "canceled"
)

// Event is one scheduler happening.
type Event struct {
	Kind        EventKind
	Req         *request.Request
	At          vtime.Time
	Reused      int
	G1, Host    int
	Readmission bool
	// Handoff marks the admission of a materialized P/D handoff: its
	// reused tokens came from the prefill worker.
	Handoff     bool
	FenceBefore vtime.Time
	FenceAfter  vtime.Time
	Reason      string
	// An admission wait's blocks: needed by the candidate, available to
	// it, and the headroom promised to others that a G2-hit candidate
	// must leave alone (already taken out of Available).
	Needed, Available, Headroom int
}

// New returns an idle rank.
func New(cfg Config, ids *identity.Table, tokens *Generated) *Rank {
	return &Rank{Cfg: cfg, Pool: g1.New(cfg.Capacity), ids: ids, tokens: tokens}
}

// SetObserver installs o (nil removes it).
func (k *Rank) SetObserver(o Observer) { k.obs = o }

func (k *Rank) emit(ev Event) {
	if k.obs != nil {
		k.obs.SchedulerEvent(ev)
	}
}

// Enqueue puts a newly dispatched request at the back of the waiting queue.
func (k *Rank) Enqueue(r *request.Request) {
	r.Status = request.Waiting
	k.nextOrder++
	r.Order = k.nextOrder
	k.waiting.pushBack(r)
}

// NextOrder hands out the rank's next waiting-order number (for a P/D
// destination, taken when its reservation is requested).
func (k *Rank) NextOrder() int64 {
	k.nextOrder++
	return k.nextOrder
}

// EnqueueMaterialized puts an activated P/D destination into the waiting
// queue at its arrival place: before the first queued request with a later
// order (aisimulate restores handoffs without changing arrival order).
func (k *Rank) EnqueueMaterialized(r *request.Request) {
	r.Status = request.Waiting
	r.Materialized = true
	k.waiting.insertBefore(func(x *request.Request) bool { return x.Order > r.Order }, r)
}

// ReleaseSource ends a P/D source hold: the prefill request's finish hook
// runs and its blocks are released, last block first, as at a normal finish.
func (k *Rank) ReleaseSource(r *request.Request, now vtime.Time) {
	if k.Host != nil {
		k.Host.Finish(r, now)
	}
	k.release(r)
}

// HeldBlocks is the number of G1 blocks a held P/D source still owns.
func HeldBlocks(r *request.Request) int { return len(r.Slots) }

// Runnable reports whether a pass would have something to consider: a
// running or waiting request, an awake connector waiter, or prepared copies
// that only a boundary submits (docs/model/g2.md ("Engine boundary")).
func (k *Rank) Runnable() bool {
	return len(k.running) > 0 || k.waiting.len() > 0 || k.awake > 0 ||
		(k.Host != nil && k.Host.HasUnsubmitted())
}

// Idle reports whether the rank holds no request at all.
func (k *Rank) Idle() bool {
	return len(k.running) == 0 && k.waiting.len() == 0 && len(k.connWaiting) == 0
}

// Running returns the running list (read only).
func (k *Rank) Running() []*request.Request { return k.running }

// NumWaiting is the number of queued requests, connector waiters included.
func (k *Rank) NumWaiting() int { return k.waiting.len() + len(k.connWaiting) }

// WakeSleepers wakes every sleeping connector waiter (any transfer
// completion on the rank does,
// docs/model/engine.md ("Runnable ranks and sleeping waiters")).
func (k *Rank) WakeSleepers() {
	for _, r := range k.connWaiting {
		r.Asleep = false
	}
	k.awake = len(k.connWaiting)
}

// Scheduled is one request's work in a pass.
type Scheduled struct {
	Req *request.Request
	// Before is the tokens already available before this pass (computed,
	// or the reused prefix of a request admitted in this pass).
	Before int
	// Tokens is how many tokens the pass computes for the request.
	Tokens   int
	Admitted bool
}

// Admission is a request entering the running list.
type Admission struct {
	Req         *request.Request
	At          vtime.Time
	Reused      int
	G1, Host    int  // tier attribution (Host only when G2 is on)
	HasHost     bool // G2 enabled on the rank
	First       bool // the request's first admission
	Readmission bool
}

// PassResult is what one pass did. Its slices are reused by the next pass.
type PassResult struct {
	Start, ComputeStart, End vtime.Time
	Scheduled                []Scheduled
	// PrefillTokens is the tokens computed as prefill work
	// (committed_prefill_tokens once the pass completes).
	PrefillTokens int64
	// Emitted lists the requests that produced one token at End.
	Emitted  []*request.Request
	Finished []*request.Request
	Rejected []*request.Request
	// Admissions happen at Start.
	Admissions []Admission
	Preempted  []*request.Request
	// Bound is what limits a step-model pass (timing.NoBound otherwise).
	Bound timing.Bound
	// Changed is false when the pass scheduled nothing and moved no state,
	// so running it again at the same instant would be pointless.
	Changed bool
}

type outcome uint8

const (
	scheduled outcome = iota
	blocked
	currentPreempted
)

// Result returns the last pass's result.
func (k *Rank) Result() *PassResult { return &k.res }

// EachWaiting calls f for every queued request, connector waiters included.
func (k *Rank) EachWaiting(f func(r *request.Request)) {
	for i := 0; i < k.waiting.len(); i++ {
		f(k.waiting.at(i))
	}
	for _, r := range k.connWaiting {
		f(r)
	}
}
