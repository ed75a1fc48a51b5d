// Package request owns the state of one request (one turn of a session) as
// the scheduler, the G1 pool's users and the connector profiles see it: its
// token count and block identities (no token array), how much of it has KV, its G1 block table and
// its connector bookkeeping. It holds data only; the rules live in package
// scheduler (the vLLM pass) and package connector (the G2 hooks).
package request

import "github.com/kvsim/kvsim/core/identity"

// Status of a request inside one rank's scheduler.
type Status uint8

const (
	Waiting   Status = iota // in the waiting queue, never admitted
	Running                 // in the running list
	Preempted               // back in the waiting queue after a preemption
	Sleeping                // a connector waiter (deferred lookup or load)
	Finished                // completed
	Rejected                // refused at admission
	Canceled                // aborted by the client (agentic profile)
)

// A Request is one turn.
type Request struct {
	Index   int32 // global request number (session-major trace order)
	Session int32
	Turn    int32

	// Known is the number of known tokens: prompt then generated ones. The
	// tokens themselves are not kept: Seq interns each full block's identity
	// as tokens are appended and holds the partial last block's tokens (for
	// accumulating sessions Seq is the session's, shared by its turns).
	Known int
	// Seq holds the identities of the known tokens' full blocks.
	Seq       *identity.Sequence
	PromptLen int
	MaxOutput int
	Output    int // tokens generated so far
	// OutputIDs are the planned output token ids, or nil for generated ones.
	OutputIDs []uint32

	// Computed is how many tokens of Tokens have KV on this rank.
	Computed int
	// StoreFrom belongs to the connector (see Host): the computed-token
	// count below which its per-pass store hook has nothing to do (0 until
	// the connector first sets its cursor). It sits next to Computed so that
	// the scheduler's loop over a pass's requests reads one cache line.
	StoreFrom int
	// StoreRetryVersion, StoreRetryFrom and StoreRetryBelow belong to the
	// connector too: a whole-range store that had to retry answers Retry
	// again while the tier's version is StoreRetryVersion and the request's
	// computed tokens stay in [StoreRetryFrom, StoreRetryBelow) (the same
	// range end). Most per-pass hook calls under a small tier stop here, so
	// they share StoreFrom's cache line.
	StoreRetryVersion uint64
	StoreRetryFrom    int32
	StoreRetryBelow   int32
	// Slots is the G1 block table: Slots[j] holds block j.
	Slots []int32

	// PassMark and PassSlot locate the request's entry in its rank's current
	// pass result (scheduler bookkeeping).
	PassMark uint32
	PassSlot int32

	Status Status
	// Asleep marks a connector waiter that waits for transfer progress.
	Asleep bool
	// Materialized marks a P/D decode request whose prompt KV arrived from
	// the prefill worker: it is admitted without prefill work.
	Materialized bool
	// Order is the request's place in its rank's waiting order (arrival
	// order); a materialized handoff rejoins the queue at this place.
	Order       int64
	Preemptions int
	Admissions  int

	Host Host
}

// Len is the number of known tokens.
func (r *Request) Len() int { return r.Known }

// Remaining is the number of known tokens without KV.
func (r *Request) Remaining() int { return r.Known - r.Computed }

// KnownBlocks is ceil(known tokens / block size).
func (r *Request) KnownBlocks(bs int) int { return (r.Known + bs - 1) / bs }

// PromptBlocks is the number of full prompt blocks: the request's G2 keys.
func (r *Request) PromptBlocks(bs int) int { return r.PromptLen / bs }

// PromptKeys returns the identities of the full prompt blocks.
func (r *Request) PromptKeys(bs int) []identity.ID { return r.Seq.IDs[:r.PromptLen/bs] }

// Host is a request's connector bookkeeping. Package connector owns every
// field; it lives here so that the scheduler can carry it without importing
// the connector.
type Host struct {
	// Cursor is the next prompt block the store logic will consider.
	Cursor int
	// The Retry fields remember the last range a whole-range store
	// actually scanned and had to retry, [RetryStart, RetryScanEnd), its
	// demand, one key of it that was absent and the tier's blocking count
	// then (g2.Tier.LastScan explains the bound they give); see also
	// Request.StoreRetryVersion. They follow Cursor so that a retrying
	// store reads one cache line. A room-limited (SimpleCPU) store uses
	// RetryStart and RetryBlockings alone: the cursor block last seen absent
	// and the tier's blocking count then (connector.Adapter's store hook).
	RetryBlockings uint64
	RetryStart     int32
	RetryScanEnd   int32
	RetryDemand    int32
	RetryAbsent    identity.ID
	// LatestStore is the request's most recent store transfer (0 = none).
	LatestStore int32
	// Load is the request's H2D, queued, in flight or completed and not yet
	// consumed by an admission; nil when none.
	Load *Load
	// LookupPins are the G2 keys a SimpleCPU lookup pinned.
	LookupPins []identity.ID
	// FirstAdmissionSeen is set once the first admission's tier attribution
	// has been reported.
	FirstAdmissionSeen bool
	// G3 staging: consecutive restore rounds while the rank did no work
	// (G3Rounds, against the adapter's count of working passes G3Epoch);
	// G3Bypass stops G3 restores for the request after 1,024, until it is
	// admitted or preempted.
	G3Rounds int
	G3Epoch  int64
	G3Bypass bool
}

// A Load is an H2D that restores a prefix from G2 into G1 slots the request
// reserved (docs/model/g2.md ("Start-load hook")).
type Load struct {
	Transfer int32
	Keys     []identity.ID
	// Base is the number of leading blocks already cached in G1 at the lookup
	// (their copies are pinned in PrefixSlots); Keys follow them.
	Base        int
	PrefixSlots []int32
	// DestSlots are the reserved fresh slots, one per key.
	DestSlots []int32
	// G1Tokens is the G1 hit tokens at the lookup that started the load.
	G1Tokens int
	// Footprint is the request's known blocks at the lookup.
	Footprint int
	Done      bool // the copy completed and DestSlots hold the blocks
}

// LoadedPrefix is Base + len(Keys): the prefix the load makes available.
func (l *Load) LoadedPrefix() int { return l.Base + len(l.Keys) }
