package connector

import (
	"math"

	"github.com/kvsim/kvsim/core/g1"
	"github.com/kvsim/kvsim/core/g2"
	"github.com/kvsim/kvsim/core/identity"
	"github.com/kvsim/kvsim/core/request"
	"github.com/kvsim/kvsim/core/transfer"
	"github.com/kvsim/kvsim/core/vtime"
)

// Link is one rank's connection to its G2 domain.
type Link struct {
	D2HGBps, H2DGBps     float64 // 0 = unlimited
	LatencyToFirstByteMs vtime.Time
}

// Stats counts a rank's G2 traffic.
type Stats struct {
	Lookups, LookupHits, LookupDefers int64
	StoresPrepared, StoreBlocks       int64
	StoreBytes                        int64
	LoadsQueued, LoadBlocks           int64
	LoadBytes                         int64
}

// An Adapter is one DP rank's side of the G2 connector: the hooks the
// scheduler calls, the copies the rank prepared and not yet submitted, and
// the compute fence.
type Adapter struct {
	Rules
	Rank       int
	pool       *g1.Pool
	dom        *Domain
	bs         int
	blockBytes int64
	link       Link
	d2h, h2d   transfer.Lane

	fence    vtime.Time
	prepared []*Transfer // stores waiting for the next engine boundary
	queued   []*Transfer // loads waiting for the next engine boundary
	arrived  []*Transfer // physically complete, G1 effects pending
	wake     bool
	obs      Observer
	scratch  []identity.ID
	scratchJ []int32 // block indices of scratch's keys (room-limited stores)
	g3       *g3Side // nil without G3
	Stats    Stats
	// FullStoreHook turns off the store hook's shortcuts (the answers it
	// gives without scanning: a retry against an unchanged tier, the
	// demand bound, a room-limited store without room). They change
	// nothing; tests run both ways and compare reports and records.
	FullStoreHook bool
}

// NewAdapter joins a rank to dom. bytesPerToken sizes a block's copy.
func NewAdapter(rules Rules, rank int, pool *g1.Pool, dom *Domain, blockSize int, bytesPerToken int64, link Link) *Adapter {
	a := &Adapter{Rules: rules, Rank: rank, pool: pool, dom: dom, bs: blockSize,
		blockBytes: int64(blockSize) * bytesPerToken, link: link}
	if dom.Shared != nil {
		// In a shared pool copied G1 blocks are held, not fenced
		// (docs/model/transfers.md ("Shared pools and held G1 blocks")): the
		// pool decides completion times later.
		a.G1Sources = HoldUntilCopied
	}
	a.d2h.BandwidthGBps = link.D2HGBps
	a.h2d.BandwidthGBps = link.H2DGBps
	dom.adapters = append(dom.adapters, a)
	return a
}

// SetObserver installs o (nil removes it).
func (a *Adapter) SetObserver(o Observer) { a.obs = o }

// Domain returns the adapter's G2 domain.
func (a *Adapter) Domain() *Domain { return a.dom }

// Tier returns the adapter's G2 tier.
func (a *Adapter) Tier() *g2.Tier { return a.dom.Tier }

func (a *Adapter) emit(ev Event) {
	if a.obs != nil {
		a.obs.ConnectorEvent(ev)
	}
}

// LookupResult is the outcome of the lookup hook.
type LookupResult uint8

const (
	Miss LookupResult = iota
	Hit
	Defer
)

func (r LookupResult) String() string {
	return [...]string{"miss", "hit", "defer"}[r]
}

// Lookup is the G2 lookup at waiting admission
// (docs/model/g2.md ("Lookup hook")). g1Hits is the request's G1 prefix hit in
// blocks before the recompute cap. On a hit it returns the keys to load (a
// view of the request's prompt keys).
func (a *Adapter) Lookup(r *request.Request, g1Hits int, now vtime.Time) (LookupResult, []identity.ID) {
	loaded := r.Host.Load != nil && r.Host.Load.Done
	res, hit := a.lookup(r, g1Hits, now)
	a.Stats.Lookups++
	switch res {
	case Hit:
		a.Stats.LookupHits++
	case Defer:
		a.Stats.LookupDefers++
	}
	a.emit(Event{Kind: EvLookup, Req: r, At: now, Result: res, G1Hits: g1Hits, Keys: hit, Loaded: loaded})
	return res, hit
}

func (a *Adapter) lookup(r *request.Request, g1Hits int, now vtime.Time) (LookupResult, []identity.ID) {
	h := &r.Host
	if h.Load != nil {
		if h.Load.Done {
			return Miss, nil
		}
		return Defer, nil
	}
	if a.DeferOnOwnStore && h.LatestStore != 0 {
		if a.dom.reg.Get(h.LatestStore).InFlight() {
			return Defer, nil
		}
		h.LatestStore = 0
	}
	if a.LookupPin {
		a.releaseLookupPins(r)
	}
	keys := r.PromptKeys(a.bs)
	if a.TouchOnLookup {
		a.dom.Tier.Touch(keys, true)
	}
	limit := len(keys)
	if a.LastBlockRule {
		limit = min(limit, (r.PromptLen-1)/a.bs)
	}
	if g1Hits >= limit {
		return Miss, nil
	}
	if a.g3 != nil && a.g3Stage(r, keys[g1Hits:limit], now) {
		return Defer, nil
	}
	n, deferred := 0, false
scan:
	for _, id := range keys[g1Hits:limit] {
		switch a.dom.Tier.Lookup(id) {
		case g2.Resident:
			n++
			if a.DeferOnLoading && a.dom.isLoading(id) {
				deferred = true
			}
		case g2.Pending:
			if !a.PendingHitDefers {
				break scan
			}
			n++
			deferred = true
		default:
			break scan
		}
	}
	if n == 0 {
		return Miss, nil
	}
	if deferred {
		return Defer, nil
	}
	hit := keys[g1Hits : g1Hits+n]
	if a.LookupPin {
		a.dom.Tier.Pin(hit)
		h.LookupPins = append(h.LookupPins[:0], hit...)
	}
	return Hit, hit
}

func (a *Adapter) releaseLookupPins(r *request.Request) {
	if len(r.Host.LookupPins) > 0 {
		a.dom.Tier.Unpin(r.Host.LookupPins)
		r.Host.LookupPins = r.Host.LookupPins[:0]
	}
}

// StartResult is the outcome of the start_load hook.
type StartResult uint8

const (
	Queued          StartResult = iota // the H2D is queued; the request sleeps
	Deferred                           // a hit block is being loaded; sleep
	CapacityBlocked                    // G1 cannot take the load; stop admitting
)

func (r StartResult) String() string {
	return [...]string{"queued", "deferred", "blocked"}[r]
}

// Why a load did not start, and why compute is fenced, as the record says
// it.
const (
	ReasonLoading    = "a hit block is already being loaded"
	ReasonG1Blocks   = "G1 cannot reserve the load's blocks"
	FencePreempt     = "preempt"
	FenceStoreSource = "store_source"
)

// StartLoad reserves G1 for a hit and queues its H2D, which the next engine
// boundary submits (docs/model/g2.md ("Start-load hook"),
// docs/model/transfers.md ("When copies are submitted"), a Decision). base is
// the G1 prefix in blocks (the hit follows it).
func (a *Adapter) StartLoad(r *request.Request, hit []identity.ID, base int, now vtime.Time) StartResult {
	res, t := a.startLoad(r, hit, base, now)
	ev := Event{Kind: EvStartLoad, Req: r, At: now, Start: res, Keys: hit, Transfer: t}
	switch res {
	case Deferred:
		ev.Reason = ReasonLoading
	case CapacityBlocked:
		ev.Reason = ReasonG1Blocks
	}
	a.emit(ev)
	return res
}

func (a *Adapter) startLoad(r *request.Request, hit []identity.ID, base int, now vtime.Time) (StartResult, *Transfer) {
	if a.DeferOnLoading {
		for _, id := range hit {
			if a.dom.isLoading(id) {
				return Deferred, nil
			}
		}
	}
	ld := &request.Load{Base: base, G1Tokens: base * a.bs, Footprint: r.KnownBlocks(a.bs)}
	ids := r.Seq.IDs
	a.pool.For(r.Index)
	// Pin the G1 prefix first so that reserving fresh slots cannot evict it.
	for j := 0; j < base; j++ {
		s := a.pool.Copy(ids[j])
		a.pool.Pin(s)
		ld.PrefixSlots = append(ld.PrefixSlots, s)
	}
	var ok bool
	ld.DestSlots, ok = a.pool.Reserve(len(hit), nil)
	if !ok {
		for _, s := range ld.PrefixSlots {
			a.pool.Unpin(s)
		}
		return CapacityBlocked, nil
	}
	ld.Keys = a.dom.reg.idList(len(hit))
	copy(ld.Keys, hit)
	if a.LookupPin && len(r.Host.LookupPins) > 0 {
		// The lookup's pins become the load's pins.
		r.Host.LookupPins = r.Host.LookupPins[:0]
	} else {
		a.dom.Tier.Pin(ld.Keys)
	}
	a.dom.markLoading(ld.Keys, 1)
	t := a.dom.reg.newTransfer()
	*t = Transfer{Kind: Load, Owner: a, Req: r, Keys: ld.Keys, Slots: ld.DestSlots,
		Bytes: int64(len(hit)) * a.blockBytes, PreparedAt: now, Indices: a.dom.reg.i32List(len(hit))}
	for j := range hit {
		t.Indices = append(t.Indices, int32(base+j))
	}
	a.dom.reg.add(t)
	ld.Transfer = t.ID
	r.Host.Load = ld
	a.queued = append(a.queued, t)
	a.Stats.LoadsQueued++
	a.Stats.LoadBlocks += int64(len(hit))
	a.Stats.LoadBytes += t.Bytes
	return Queued, t
}

// Admitted is the on_admitted hook (docs/model/g2.md ("Admission hook")): it
// moves the store cursor and returns the admission's G1/G2 attribution, with
// first set only for the request's first admission.
func (a *Adapter) Admitted(r *request.Request, reused int) (g1Tokens, hostTokens int, first bool) {
	h := &r.Host
	resetG3Rounds(r)
	g1Tokens = reused
	if ld := h.Load; ld != nil && ld.Done {
		g1Tokens = min(ld.G1Tokens, reused)
		hostTokens = reused - g1Tokens
		a.setCursor(r, reused/a.bs)
		h.Load = nil
	}
	if a.CursorRescan {
		a.setCursor(r, 0)
	}
	first = !h.FirstAdmissionSeen
	h.FirstAdmissionSeen = true
	return g1Tokens, hostTokens, first
}

// ObserveCompletedBlocks is the per-pass store hook
// (docs/model/g2.md ("Store hook")). before and after are the request's
// computed tokens before and after this pass scheduled it (for a request
// admitted in this pass, before is its reused prefix).
func (a *Adapter) ObserveCompletedBlocks(r *request.Request, before, after int, now vtime.Time) {
	computed := a.storeTokens(before, after)
	if computed < r.StoreFrom {
		return
	}
	// Under a small tier most calls cannot change anything; they are
	// answered here without scanning (unless FullStoreHook): a whole-range
	// store that retries against a tier that has not changed since its
	// last retry (the same test opens store), and a room-limited store
	// without room whose cursor key is absent (its scan would stop at that
	// key, its first).
	if h, tier := &r.Host, a.dom.Tier; !a.FullStoreHook {
		if a.RoomLimited {
			if tier.Room() == 0 && h.Cursor < a.storeEnd(r, computed) {
				// A key becomes present only by an entry created for it,
				// and every creation counts in Blockings: when none has
				// happened since this cursor key was last seen absent, it
				// still is, and the request's own key list and the tier's
				// index need not be read again (under a 192-block tier
				// almost every decode step of every request lands here).
				if int32(h.Cursor) == h.RetryStart && tier.Blockings() == h.RetryBlockings {
					return
				}
				if tier.Lookup(r.Seq.IDs[h.Cursor]) == g2.Absent {
					h.RetryStart, h.RetryBlockings = int32(h.Cursor), tier.Blockings()
					return
				}
			}
		} else if a.retriesAgain(r, computed) {
			return
		}
	}
	a.store(r, computed, now, false)
}

// StoreDue reports whether the store hook has anything to look at for a
// request a pass took from before to after computed tokens. Most passes
// (a decoding request) have not; the scheduler asks as it schedules, so
// the hook visits only the requests that have.
func (a *Adapter) StoreDue(r *request.Request, before, after int) bool {
	return a.storeTokens(before, after) >= r.StoreFrom
}

// storeTokens is how many of a request's tokens a pass's store may cover
// (docs/model/g2.md ("Store hook"): the previous passes' work only, or this
// pass's too).
func (a *Adapter) storeTokens(before, after int) int {
	if a.StoreTiming == PreviousPasses {
		return before
	}
	return after
}

// noteRetry remembers that r's whole-range store ending at block end
// retried against the tier as it is now: the tokens whose store ends at
// the same block are [end·bs, (end+1)·bs), or from end·bs on when the
// prompt caps the range there.
func (a *Adapter) noteRetry(r *request.Request, end int) {
	r.StoreRetryVersion = a.dom.Tier.Version()
	r.StoreRetryFrom, r.StoreRetryBelow = int32(end*a.bs), int32((end+1)*a.bs)
	if a.StoreScope == PromptBlocks && (end+1)*a.bs > r.PromptLen {
		r.StoreRetryBelow = math.MaxInt32
	}
}

// retriesAgain reports whether a store of computed tokens is the one that
// last retried (noteRetry), against a tier that has not changed since: its
// answer would be Retry again.
func (a *Adapter) retriesAgain(r *request.Request, computed int) bool {
	return r.StoreRetryVersion == a.dom.Tier.Version() &&
		computed >= int(r.StoreRetryFrom) && computed < int(r.StoreRetryBelow)
}

// storeEnd is the block that a store with computed tokens would end at (its
// scope's full blocks).
func (a *Adapter) storeEnd(r *request.Request, computed int) int {
	if a.StoreScope == PromptBlocks {
		computed = min(computed, r.PromptLen)
	}
	return int(uint(computed) / uint(a.bs)) // both ≥ 0; unsigned division is cheaper
}

func (a *Adapter) store(r *request.Request, computed int, now vtime.Time, atFinish bool) {
	h := &r.Host
	start := h.Cursor
	end := a.storeEnd(r, computed)
	if end <= start {
		return // no full block past the cursor
	}
	tier := a.dom.Tier
	var keys []identity.ID
	if !a.RoomLimited && !a.FullStoreHook {
		if a.retriesAgain(r, computed) {
			return
		}
		if start == int(h.RetryStart) && end >= int(h.RetryScanEnd) && int(h.RetryScanEnd) > start {
			// A superset of the keys last scanned retries while a lower
			// bound of its demand exceeds the room (g2.Tier.LastScan).
			demand := int(h.RetryDemand) - int(tier.Blockings()-h.RetryBlockings)
			if tier.Lookup(h.RetryAbsent) == g2.Absent {
				demand = max(demand, 1)
			}
			if demand > tier.Room() {
				a.retried(r, start, end, now)
				a.noteRetry(r, end)
				return
			}
		}
	}
	ids := r.Seq.IDs
	// A room-limited store's keys are ids[first:first+n] unless gap, when
	// at holds their block indices.
	first, gap, at := -1, false, []int32(nil)
	if !a.RoomLimited {
		var res g2.StoreResult
		blockings := tier.Blockings()
		keys, res = tier.PrepareProtected(ids[start:end], a.scratch[:0])
		a.scratch = keys[:0]
		switch res {
		case g2.Retry:
			demand, absent := tier.LastScan()
			if !a.retriesAgain(r, computed) {
				a.retried(r, start, end, now)
			}
			a.noteRetry(r, end)
			h.RetryStart, h.RetryScanEnd, h.RetryBlockings = int32(start), int32(end), blockings
			h.RetryDemand, h.RetryAbsent = int32(demand), absent
			return
		case g2.AlreadyPresent:
			a.moveCursor(r, end, now)
			return
		}
	} else {
		// The absent keys up to the room: nearly always consecutive, so
		// the scan only counts them, and a second pass gathers them when
		// a present key lies among them (nothing changed the tier since).
		n, f, g := tier.ScanAbsent(ids[start:end], tier.Room())
		cur := start + n
		a.moveCursor(r, cur, now)
		if f < 0 {
			return
		}
		first, gap = start+f, g
		keys = ids[first:cur]
		if gap {
			keys, at = a.scratch[:0], a.scratchJ[:0] // locals while they grow
			for j := first; j < cur; j++ {
				if tier.Lookup(ids[j]) == g2.Absent {
					keys = append(keys, ids[j])
					at = append(at, int32(j))
				}
			}
			a.scratch, a.scratchJ = keys[:0], at
		}
		tier.PrepareUnprotected(keys)
	}
	t := a.dom.reg.newStore(len(keys))
	t.Owner, t.Req = a, r
	t.Bytes, t.AtFinish, t.PreparedAt = int64(len(keys))*a.blockBytes, atFinish, now
	copy(t.Keys, keys)
	// newStore sized both lists for the keys: fill them in place.
	n := len(keys)
	t.Indices, t.Slots = t.Indices[:n], t.Slots[:n]
	t.Entries = append(t.Entries, tier.Prepared()...)
	switch {
	case !a.RoomLimited:
		for i, p := range tier.MissingPositions()[:n] {
			t.Indices[i] = int32(start) + p
		}
	case gap:
		copy(t.Indices, at)
	default:
		for i := range t.Indices {
			t.Indices[i] = int32(first + i)
		}
	}
	if k := int(t.Indices[0]); int(t.Indices[n-1])-k == n-1 {
		copy(t.Slots, r.Slots[k:k+n]) // the usual case: consecutive blocks
	} else {
		for i, j := range t.Indices {
			t.Slots[i] = r.Slots[j]
		}
	}
	a.dom.reg.add(t)
	if a.G1Sources == HoldUntilCopied {
		a.pool.HoldAll(t.Slots)
	} else {
		for _, s := range t.Slots {
			a.pool.SetDep(s, t.ID)
		}
	}
	h.LatestStore = t.ID
	a.prepared = append(a.prepared, t)
	a.Stats.StoresPrepared++
	a.Stats.StoreBlocks += int64(len(t.Keys))
	a.Stats.StoreBytes += t.Bytes
	a.emit(Event{Kind: EvStorePrepared, Req: r, Transfer: t, At: now})
	if !a.RoomLimited {
		a.moveCursor(r, end, now)
		if a.TouchAfterStore {
			tier.Touch(r.PromptKeys(a.bs), true)
		}
	}
}

// retried records that a whole-range store of blocks [start, end) did not
// fit. A retry that only repeats the last one (the same range against an
// unchanged tier, which the hook's shortcuts answer without scanning) is
// not recorded again, so the record is the same with and without them.
func (a *Adapter) retried(r *request.Request, start, end int, now vtime.Time) {
	if a.obs == nil {
		return
	}
	tier, missing := a.dom.Tier, 0
	for _, id := range r.Seq.IDs[start:end] {
		if tier.Lookup(id) == g2.Absent {
			missing++
		}
	}
	a.emit(Event{Kind: EvStoreRetry, Req: r, At: now, Before: start, After: end, Missing: missing, Room: tier.Room()})
}

func (a *Adapter) moveCursor(r *request.Request, to int, now vtime.Time) {
	if r.Host.Cursor != to {
		a.emit(Event{Kind: EvStoreCursor, Req: r, At: now, Before: r.Host.Cursor, After: to})
		a.setCursor(r, to)
	}
}

// setCursor moves the store cursor and the computed-token count below which
// a store has nothing to do: a full block past the cursor, within the prompt
// for the prompt-only profiles.
func (a *Adapter) setCursor(r *request.Request, to int) {
	r.Host.Cursor = to
	r.StoreFrom = (to + 1) * a.bs
	if a.StoreScope == PromptBlocks && r.StoreFrom > r.PromptLen {
		r.StoreFrom = math.MaxInt
	}
}

// Finish is the finish_request hook (docs/model/g2.md ("Finish hook")); the
// caller releases the request's G1 blocks right after it.
func (a *Adapter) Finish(r *request.Request, now vtime.Time) {
	if a.StoreAtFinish {
		a.store(r, r.Computed, now, true)
	}
	if a.RerankOnFinish {
		a.dom.Tier.Touch(r.PromptKeys(a.bs), true)
	}
	if a.LookupPin {
		a.releaseLookupPins(r)
	}
}

// Preempt is the preempt_request hook (docs/model/g2.md ("Preemption hook")):
// it raises the compute fence before the victim's blocks are freed.
func (a *Adapter) Preempt(r *request.Request, now vtime.Time) {
	resetG3Rounds(r)
	before := a.fence
	switch a.PreemptWait {
	case OwnLatestStore:
		if t := a.dom.reg.Get(r.Host.LatestStore); t.InFlight() {
			a.fence = max(a.fence, a.deadline(t))
		}
	case EveryTransfer:
		a.dom.eachInflight(func(t *Transfer) {
			if t.Owner == a {
				a.fence = max(a.fence, a.deadline(t))
			}
		})
		for _, t := range a.arrived {
			a.fence = max(a.fence, t.Deadline)
		}
	}
	if a.fence > before {
		a.emit(Event{Kind: EvFence, Req: r, At: now, Reason: FencePreempt, Until: a.fence})
	}
}

// deadline is when t completes: known for private lanes, projected for a
// shared pool.
func (a *Adapter) deadline(t *Transfer) vtime.Time {
	if t.physical || a.dom.Shared == nil {
		return t.Deadline
	}
	if !t.submitted {
		return t.PreparedAt
	}
	return a.dom.Shared.Projected(int64(t.ID))
}

// FenceAllocation fences this pass's compute behind any pending store that
// still reads capacity just handed out to slots (fence reuse,
// docs/model/g2.md ("Source protection")).
func (a *Adapter) FenceAllocation(slots []int32, now vtime.Time) {
	for _, s := range slots {
		if dep := a.pool.Dep(s); dep != 0 {
			if t := a.dom.reg.Get(dep); t.InFlight() && a.deadline(t) > a.fence {
				a.fence = a.deadline(t)
				a.emit(Event{Kind: EvFence, At: now, Reason: FenceStoreSource, Until: a.fence})
			}
		}
	}
}

// ComputeStart is when a pass that starts at now may begin computing.
func (a *Adapter) ComputeStart(now vtime.Time) vtime.Time {
	if a.fence > now {
		return a.fence
	}
	return now
}

// Wake makes the rank's sleeping connector waiters wake at its next
// boundary or idle tick: something they may wait for changed outside the
// rank (a G3 store another worker wrote to).
func (a *Adapter) Wake() { a.wake = true }

// Boundary is the engine boundary at a pass end
// (docs/model/g2.md ("Engine boundary")): apply completions, submit prepared
// stores then queued loads, apply the completions that takes (zero-duration
// copies). It reports whether the rank's sleeping connector waiters must wake.
func (a *Adapter) Boundary(now vtime.Time) bool {
	a.tick(now)
	for _, t := range a.prepared {
		a.submit(t, now)
	}
	for _, t := range a.queued {
		a.submit(t, now)
	}
	// Not cleared: the registry and the requests hold every record these
	// lists name, so the spare capacity keeps nothing alive, and clearing
	// a list of pointers goes through the collector's write barrier while
	// it marks (docs/performance.md ("Pointer writes the collector sees")).
	a.prepared, a.queued = a.prepared[:0], a.queued[:0]
	a.tick(now)
	return a.takeWake()
}

// Tick applies, on an idle rank, the completions due by now and reports
// whether sleepers must wake.
func (a *Adapter) Tick(now vtime.Time) bool {
	if !a.wake && len(a.arrived) == 0 && a.dom.Shared == nil && a.dom.Next() > now {
		return false // nothing due: the common case, kept cheap
	}
	if a.dom.Shared == nil {
		// Completions the engine let wait while the rank held nothing
		// (Deferrable) are applied at their own times, in order, exactly
		// as if it had woken for each: the record sees the same events.
		for next := a.dom.Next(); next < now; next = a.dom.Next() {
			a.tick(next)
		}
	}
	a.tick(now)
	return a.takeWake()
}

func (a *Adapter) takeWake() bool {
	w := a.wake
	a.wake = false
	return w
}

// HasUnsubmitted reports whether stores or loads wait for a boundary.
func (a *Adapter) HasUnsubmitted() bool { return len(a.prepared)+len(a.queued) > 0 }

// HasWork reports whether the rank has copies not yet delivered.
func (a *Adapter) HasWork() bool {
	if a.HasUnsubmitted() || len(a.arrived) > 0 {
		return true
	}
	busy := false
	a.dom.eachInflight(func(t *Transfer) { busy = busy || t.Owner == a })
	return busy
}

// NextDeadline is the earliest completion of this rank's private copies, or
// +Inf (shared pools report through their Domain).
func (a *Adapter) NextDeadline() vtime.Time {
	if len(a.arrived) > 0 || a.wake {
		return vtime.Time(math.Inf(-1))
	}
	if a.dom.Shared != nil {
		return vtime.Never
	}
	return a.dom.Next()
}

// Deferrable reports whether this rank's pending completions may be applied
// late, at its next event, without changing anything: its tier is private
// (no other rank reads it), no G3 store takes writes from it, and nothing
// completed, woke or waits to be submitted. The engine also requires the
// rank to hold no request.
func (a *Adapter) Deferrable() bool {
	return a.dom.Shared == nil && a.g3 == nil && len(a.arrived) == 0 && !a.wake && !a.HasUnsubmitted()
}

func (a *Adapter) submit(t *Transfer, now vtime.Time) {
	t.submitted = true
	t.SubmitAt = now
	ready := now + a.link.LatencyToFirstByteMs
	if t.Kind == Load {
		// An H2D may not overwrite capacity a pending store still reads.
		for _, s := range t.Slots {
			if dep := a.pool.Dep(s); dep != 0 {
				if d := a.dom.reg.Get(dep); d.InFlight() {
					ready = max(ready, a.deadline(d))
				}
			}
		}
	}
	if a.dom.Shared != nil {
		dir, bw := transfer.D2H, a.link.D2HGBps
		if t.Kind == Load {
			dir, bw = transfer.H2D, a.link.H2DGBps
		}
		a.dom.Shared.Submit(int64(t.ID), a.Rank, dir, bw, t.Bytes, ready)
		t.Start, t.Deadline = vtime.Unset(), vtime.Never
	} else {
		lane := &a.d2h
		if t.Kind == Load {
			lane = &a.h2d
		}
		t.Start, t.Deadline = lane.Submit(t.Bytes, ready)
	}
	a.dom.enqueue(t)
	a.emit(Event{Kind: EvSubmit, Transfer: t, At: now})
}

func (a *Adapter) tick(now vtime.Time) {
	a.dom.Advance(now)
	for _, t := range a.arrived {
		a.deliver(t)
	}
	a.arrived = a.arrived[:0] // not cleared either (Boundary)
}

// deliver applies a completed copy's G1 effects on its owner rank.
func (a *Adapter) deliver(t *Transfer) {
	t.delivered = true
	switch t.Kind {
	case Store:
		if a.G1Sources == HoldUntilCopied {
			a.pool.UnholdAll(t.Slots)
			a.emit(Event{Kind: EvHoldRelease, Transfer: t, At: t.Deadline})
		} else {
			for _, s := range t.Slots {
				a.pool.ClearDep(s, t.ID)
			}
		}
		a.dom.reg.retire(t)
	case Load:
		for i, s := range t.Slots {
			a.pool.Finalize(s, t.Keys[i])
		}
		if ld := t.Req.Host.Load; ld != nil && ld.Transfer == t.ID {
			ld.Done = true
		}
	}
}

// Cancel drops a rejected request's load and its lookup pins
// (docs/model/g2.md ("Cancellation")); the caller releases the request's own
// G1 blocks. Decision: a rejection is not a finish, so neither the finish
// hook's store nor its re-rank runs: G2 order changes only as the profile's
// lookup rule says.
func (a *Adapter) Cancel(r *request.Request, now vtime.Time) {
	if ld := r.Host.Load; ld != nil {
		a.pool.For(r.Index)
		t := a.dom.reg.Get(ld.Transfer)
		if !ld.Done {
			a.queued = removeT(a.queued, t)
			if t.submitted && !t.physical {
				a.dom.dequeue(t)
				if a.dom.Shared != nil {
					a.dom.Shared.Cancel(int64(t.ID), now)
				}
				a.dom.Tier.Unpin(ld.Keys)
				a.dom.markLoading(ld.Keys, -1)
			} else if !t.submitted {
				a.dom.Tier.Unpin(ld.Keys)
				a.dom.markLoading(ld.Keys, -1)
			} else {
				a.arrived = removeT(a.arrived, t)
			}
			t.delivered = true
		}
		// A cancelled reservation gives its blocks back last block first,
		// like any release (docs/model/g1.md ("Release order")).
		for i := len(ld.DestSlots) - 1; i >= 0; i-- {
			a.pool.Release(ld.DestSlots[i])
		}
		for i := len(ld.PrefixSlots) - 1; i >= 0; i-- {
			a.pool.Unpin(ld.PrefixSlots[i])
		}
		r.Host.Load = nil
		a.wake = true
	}
	if a.LookupPin {
		a.releaseLookupPins(r)
	}
}

func removeT(ts []*Transfer, t *Transfer) []*Transfer {
	for i, x := range ts {
		if x == t {
			return append(ts[:i], ts[i+1:]...)
		}
	}
	return ts
}
