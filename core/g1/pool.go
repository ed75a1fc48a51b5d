// Package g1 owns the GPU block pool of one DP rank (docs/model/g1.md): free
// capacity, private and cached copies, the identity index used by prefix
// lookups, and the eviction queue.
//
// The pool knows nothing about requests or transfers. Callers keep each
// request's block table (a list of slot numbers) and tell the pool when a
// copy gains or loses a user. Three kinds of user keep a cached copy out of
// the eviction queue: references (a request uses the block), pins (a load
// reservation will use it) and holds (a store is still copying it to G2).
//
// Rules that differ from vLLM on purpose (docs/model/g1.md ("Allocation") and
// docs/model/g2.md ("Differences from vLLM")): free capacity is always used
// before an idle cached copy is evicted.
package g1

import (
	"slices"

	"github.com/kvsim/kvsim/core/identity"
	"github.com/kvsim/kvsim/core/internal/index"
	"github.com/kvsim/kvsim/core/internal/inplace"
)

// Slot states.
const (
	Free    uint8 = iota // unoccupied
	Private              // owned by one request, no identity yet (or a load reservation)
	Cached               // has an identity
)

const nilSlot = index.None

type slot struct {
	state    uint8
	reserved bool // a private slot reserved as a load destination
	queued   bool // in the eviction queue: exactly the idle copies (G1-3)
	// told is the slot's use as of its last change (changed) while an
	// observer is installed.
	told Use
	// dup says the slot may have links to other copies of its identity
	// (Pool.dups): set when a second copy is indexed, cleared when the
	// slot leaves the index.
	dup  bool
	id   identity.ID // identity when cached
	ref  int32       // requests using the copy
	pin  int32       // load reservations that will use the copy
	hold int32       // stores still copying the copy (SimpleCPU / shared pools)
	// qpos is, while the copy is idle (queued), the position of its entry
	// in the eviction queue (Pool.q).
	qpos uint32
	_    [4]byte // 32 bytes: a slot never straddles two cache lines
}

// qent is an entry of the eviction queue: an idle copy's slot and identity
// (nilSlot: a hole, left by a copy used again before it was evicted). The
// identity is stored complemented (^id, negative) while the slot may have
// links to other copies (slot.dup), so an eviction reads the slot only
// then.
type qent struct {
	slot int32
	id   identity.ID
}

// ident is the entry's identity, and whether the slot may have other
// copies' links.
func (e qent) ident() (id identity.ID, dup bool) {
	if e.id < 0 {
		return ^e.id, true
	}
	return e.id, false
}

// dupLinks link the copies of one identity, oldest first.
type dupLinks struct{ prev, next int32 }

// seen is what the pool keeps of a slot for its observer.
type seen struct {
	// owner is the request that last allocated, referenced, pinned or
	// released the slot (-1 when none).
	owner int32
	// since is the observer's clock (SetClock) when told began.
	since int32
}

// Observer is told about every slot state change; the per-pass record
// implements it. A nil observer costs one branch per change.
type Observer interface {
	// SlotChanged reports that slot's state, identity, users or queue
	// membership changed: its use is now now, and was was when the
	// observer was last told of it (UseFree the first time). A slot's
	// identity changes only with its use, so the two say whether anything
	// but its users did.
	SlotChanged(slot int32, was, now Use)
	// Evicted reports that the idle copy of id in slot left the pool to make
	// room; SlotChanged follows for the slot's new use.
	Evicted(slot int32, id identity.ID)
}

// A Pool is the G1 cache of one DP rank.
//
// A slot keeps in 32 bytes what allocation, eviction, lookups and
// releases read; what only some runs need sits in arrays beside it,
// allocated when first needed (docs/performance.md ("Slots in 32 bytes")).
// Every eviction and release touches a slot nobody has touched for a
// while, so a smaller slot keeps more of the pool in cache.
type Pool struct {
	slots []slot
	free  []int32 // stack of unoccupied slots
	// The eviction queue, oldest idle copy first: q[qHead:] in order, with
	// holes; qBase is the position of q[0], qHoles the holes in q[qHead:],
	// qLen the copies (see pushTail).
	q      []qent
	qHead  int
	qBase  uint32
	qHoles int
	qLen   int
	// copies maps an identity with a cached copy to its oldest (first) and
	// newest (last) copy; its size follows the pool's cached copies, not the
	// run's identities.
	copies index.Map[copyRange]
	// newIDs and newCopies are FinalizeRun's first copies (scratch).
	newIDs    []identity.ID
	newCopies []copyRange
	// dups links the copies of identities with more than one (slot.dup);
	// nil until the first second copy.
	dups []dupLinks
	// deps[s] is a pending store (transfer number) that still reads slot
	// s's capacity: whoever gets the slot next must not write it before
	// that store completes (fence reuse, docs/model/g2.md ("Source
	// protection")). 0 = none; nil until the first SetDep.
	deps []int32
	// seen[s] is what the record shows of slot s beyond its use: kept
	// only once an observer is installed (own, changed), so an unrecorded
	// run writes none of it (writing the owner for every release cost an
	// unrecorded §E (docs/model/cases.md) run about 2 M cache misses).
	seen []seen
	obs  Observer
	// While an observer is installed the pool keeps, itself, each slot's
	// use and since (changed) and counts the changes; a quiet observer
	// (SetQuiet) is not called, so a record can follow a run it stores
	// nothing of for the price of a few writes, not a call per change.
	quiet   bool
	clock   int32
	changes int
	// user is the request the caller is acting for (see For).
	user int32
}

// New returns an empty pool of capacity slots.
func New(capacity int) *Pool {
	p := &Pool{slots: make([]slot, capacity), free: make([]int32, capacity), user: -1}
	for i := range p.slots {
		p.slots[i] = slot{id: identity.None}
		// Pop order hands out slot 0 first, which makes maps easy to read.
		p.free[i] = int32(capacity - 1 - i)
	}
	return p
}

// SetObserver installs o (nil removes it). The owners and ages the pool
// keeps for an observer start when the first is installed: slots changed
// before have no owner (-1) and age 0.
func (p *Pool) SetObserver(o Observer) {
	p.obs = o
	if o != nil && p.seen == nil {
		p.seen = make([]seen, len(p.slots))
		for i := range p.seen {
			p.seen[i].owner = -1
		}
	}
}

// SetQuiet stops (true) or resumes (false) the observer's calls; the pool
// goes on keeping each slot's use, since and the change count.
func (p *Pool) SetQuiet(q bool) { p.quiet = q }

// SetClock sets what a slot whose use changes from now on records as its
// since (the observer's clock: the record's pass line).
func (p *Pool) SetClock(c int32) { p.clock = c }

// Changes is how many slot changes there were while an observer was
// installed, told or not.
func (p *Pool) Changes() int { return p.changes }

// Since is the clock (SetClock) when slot s's use last changed.
func (p *Pool) Since(s int32) int32 {
	if p.seen == nil {
		return 0
	}
	return p.seen[s].since
}

// copyRange is the oldest and newest cached copy of one identity.
type copyRange struct{ first, last int32 }

// SizeIndex makes room in the identity index for about n identities, at
// most a quarter of the pool's slots: the index holds pages only for the
// identities the pool caches, and a pool that holds more grows it.
func (p *Pool) SizeIndex(n int) {
	p.copies.Reserve(min(n, len(p.slots)/4))
}

// For says which request (global index) the following allocations,
// references, pins and releases act for, so the record can name a slot's
// owner; it returns p for chaining. Results never depend on it.
func (p *Pool) For(request int32) *Pool {
	p.user = request
	return p
}

// own records that the current user (For) allocated, used or released slot
// s. Only the record reads owners, so they are kept only while an observer
// is installed (the record attaches one before the first allocation), in
// an array beside the slots (Pool.seen).
func (p *Pool) own(s int32) {
	if p.obs != nil {
		p.seen[s].owner = p.user
	}
}

// changed tells the observer that slot s changed, and what its use was
// (the slot is in cache here; an observer that kept its own copy of every
// slot's use would miss the cache on every change).
//
// It is one branch without an observer, inlined at every change; the rest
// is observe.
func (p *Pool) changed(s int32) {
	if p.obs != nil {
		p.observe(s)
	}
}

// observe is changed's part with an observer: the slot's use, its age when
// the use changed, the change count, and the call unless quiet.
func (p *Pool) observe(s int32) {
	sl := &p.slots[s]
	was := sl.told
	sl.told = sl.use()
	if sl.told != was {
		p.seen[s].since = p.clock
	}
	p.changes++
	if !p.quiet {
		p.obs.SlotChanged(s, was, sl.told)
	}
}

// Capacity is the number of slots.
func (p *Pool) Capacity() int { return len(p.slots) }

// NumFree is the number of unoccupied slots.
func (p *Pool) NumFree() int { return len(p.free) }

// NumIdle is the number of idle cached copies (the eviction queue's length).
func (p *Pool) NumIdle() int { return p.qLen }

// NumInUse is every occupied slot that is not idle: private slots, load
// reservations and cached copies with a reference, pin or hold.
func (p *Pool) NumInUse() int { return len(p.slots) - len(p.free) - p.qLen }

// CanAlloc reports whether n fresh slots can be had (free + idle).
func (p *Pool) CanAlloc(n int) bool { return n <= len(p.free)+p.qLen }

func (p *Pool) firstCopy(id identity.ID) int32 {
	if c, ok := p.copies.Get(int32(id)); ok {
		return c.first
	}
	return nilSlot
}

// Has reports whether id has a cached copy.
func (p *Pool) Has(id identity.ID) bool { return p.firstCopy(id) != nilSlot }

// Lookup counts the leading identities of ids that have a cached copy
// (docs/model/g1.md ("Prefix lookup and the recompute cap")) and how many of
// those copies are in use (not idle).
func (p *Pool) Lookup(ids []identity.ID) (hits, active int) {
	for _, id := range ids {
		s := p.firstCopy(id)
		if s == nilSlot {
			break
		}
		hits++
		if !p.idle(s) {
			active++
		}
	}
	return hits, active
}

// Copy returns the slot of id's oldest cached copy, or -1.
func (p *Pool) Copy(id identity.ID) int32 { return p.firstCopy(id) }

// IsIdle reports whether slot s holds an idle cached copy (in the queue).
func (p *Pool) IsIdle(s int32) bool { return p.idle(s) }

// idle answers from queue membership, which G1-3 ties to the use counts:
// one byte of the slot instead of four fields.
func (p *Pool) idle(s int32) bool { return p.slots[s].queued }

// unused reports whether slot s holds a cached copy that nothing uses: the
// condition for joining the queue (Check compares it with queued).
func (p *Pool) unused(s int32) bool {
	sl := &p.slots[s]
	return sl.state == Cached && sl.ref == 0 && sl.pin == 0 && sl.hold == 0
}

// Reference adds a user to id's oldest copy and returns its slot; id must be
// cached.
func (p *Pool) Reference(id identity.ID) int32 {
	s := p.firstCopy(id)
	p.addUse(s, &p.slots[s].ref)
	return s
}

// Ref adds a reference to the cached copy in slot s.
func (p *Pool) Ref(s int32) { p.addUse(s, &p.slots[s].ref) }

// Pin adds a reservation pin to the cached copy in s.
func (p *Pool) Pin(s int32) { p.addUse(s, &p.slots[s].pin) }

// HoldAll adds a copy hold to each cached copy in slots (a store's
// sources). A hold does not change the slot's owner. The slots and the
// observer's presence are locals: a write to a slot could be a write to
// the pool as far as the compiler knows, so it would read both again for
// every block.
func (p *Pool) HoldAll(slots []int32) {
	ss, obs := p.slots, p.obs != nil
	for _, s := range slots {
		sl := &ss[s]
		if sl.queued {
			p.unlink(s)
		}
		sl.hold++
		if obs {
			p.observe(s)
		}
	}
}

// UnholdAll drops a copy hold from each slot in slots: dropUse for each,
// written out because dropUse does not inline and this loop runs once per
// stored block (26 M instructions per §E run under simple_cpu_v0_32), with
// HoldAll's locals.
func (p *Pool) UnholdAll(slots []int32) {
	ss, obs := p.slots, p.obs != nil
	for _, s := range slots {
		sl := &ss[s]
		if sl.hold--; sl.hold < 0 {
			panic("g1: use count below zero")
		}
		if sl.state == Cached && sl.ref == 0 && sl.pin == 0 && sl.hold == 0 { // unused
			p.pushTail(s)
		}
		if obs {
			p.observe(s)
		}
	}
}

func (p *Pool) addUse(s int32, counter *int32) {
	if p.idle(s) {
		p.unlink(s)
	}
	p.own(s)
	*counter++
	p.changed(s)
}

// Unpin drops a reservation pin.
func (p *Pool) Unpin(s int32) { p.dropUse(s, &p.slots[s].pin) }

// Release drops one request's use of slot s: a private slot returns to the
// free capacity; a cached copy loses a reference and joins the queue tail
// when nothing else uses it (docs/model/g1.md ("Release order")). Callers
// release a request's blocks last block first (ReleaseAll).
func (p *Pool) Release(s int32) { p.ReleaseAll([]int32{s}) }

// ReleaseAll releases a request's block table, last block first: Release
// for each slot, in one call that keeps the queue in a local between them
// (a call per slot cost the Mooncake run 7 % more instructions: a finished
// request releases some 750 blocks). Release is ReleaseAll of one slot.
func (p *Pool) ReleaseAll(slots []int32) {
	q := p.q
	if cap(q)-len(q) < len(slots) {
		q = p.roomForAll(q, len(slots))
	}
	for j := len(slots) - 1; j >= 0; j-- {
		s := slots[j]
		sl := &p.slots[s]
		p.own(s)
		if sl.state != Cached {
			p.freeSlot(s)
			continue
		}
		if sl.ref--; sl.ref < 0 {
			panic("g1: use count below zero")
		}
		if sl.ref == 0 && sl.pin == 0 && sl.hold == 0 {
			q = p.push(q, s)
		}
		if p.obs != nil { // an observer sees the pool as it is at every change
			p.q = q
			p.observe(s)
		}
	}
	p.q = q
}

func (p *Pool) dropUse(s int32, counter *int32) {
	*counter--
	if *counter < 0 {
		panic("g1: use count below zero")
	}
	if p.unused(s) {
		p.pushTail(s)
	}
	p.changed(s)
}

func (p *Pool) freeSlot(s int32) {
	sl := &p.slots[s]
	if sl.state == Cached {
		p.unindex(s)
	}
	sl.state = Free
	sl.reserved = false
	sl.id = identity.None
	sl.ref, sl.pin, sl.hold = 0, 0, 0
	p.free = append(p.free, s)
	p.changed(s)
}

// Alloc takes n fresh private slots, appending them to out: free capacity
// first, then idle copies from the queue head
// (docs/model/g1.md ("Allocation")). It fails with no side effect when fewer
// than n can be had.
func (p *Pool) Alloc(n int, out []int32) ([]int32, bool) {
	if !p.CanAlloc(n) {
		return out, false
	}
	for ; n > 0 && len(p.free) > 0; n-- {
		s := p.free[len(p.free)-1]
		p.free = p.free[:len(p.free)-1]
		p.slots[s].state = Private
		p.own(s)
		p.becamePrivate(s)
		out = append(out, s)
	}
	for ; n > 0; n-- {
		e := p.q[p.qHead]
		for e.slot == nilSlot {
			p.qHead++
			p.qHoles--
			e = p.q[p.qHead]
		}
		p.qHead++
		p.qLen--
		s := e.slot
		id, dup := e.ident()
		if dup {
			p.unindex(s)
		} else {
			p.copies.Delete(int32(id)) // the identity's only copy
		}
		sl := &p.slots[s]
		sl.state, sl.queued, sl.dup = Private, false, false
		sl.id = identity.None
		p.own(s)
		if p.obs != nil && !p.quiet {
			p.obs.Evicted(s, id)
		}
		p.becamePrivate(s)
		out = append(out, s)
	}
	return out, true
}

// becamePrivate is changed for a slot Alloc has just made private (it was
// free or idle, so its use changed). A quiet observer's bookkeeping then
// only writes the slot's told and since, without reading told first: the
// slot is cold (the free list and the eviction queue hand out slots
// released long ago), and its writes wait in the store buffer where a read
// waits for the line: without the read the recorded Mooncake run took
// 0.92 of its time (docs/performance.md, "Scrubs and moves in the page").
func (p *Pool) becamePrivate(s int32) {
	switch {
	case p.obs == nil:
	case !p.quiet:
		p.observe(s)
	default:
		p.slots[s].told = UsePrivate
		p.seen[s].since = p.clock
		p.changes++
	}
}

// AllocAvoiding is Alloc that never evicts a copy for which avoid is true
// (a P/D destination must not take capacity a store still reads,
// docs/model/pd.md ("Decode ranks with G2")). It fails with no side effect.
func (p *Pool) AllocAvoiding(n int, out []int32, avoid func(slot int32) bool) ([]int32, bool) {
	ok := len(p.free)
	for i := p.qHead; i < len(p.q) && ok < n; i++ {
		if s := p.q[i].slot; s != nilSlot && !avoid(s) {
			ok++
		}
	}
	if ok < n {
		return out, false
	}
	for ; n > 0 && len(p.free) > 0; n-- {
		s := p.free[len(p.free)-1]
		p.free = p.free[:len(p.free)-1]
		p.slots[s].state = Private
		p.own(s)
		p.changed(s)
		out = append(out, s)
	}
	for i := p.qHead; n > 0; i++ {
		if s := p.q[i].slot; s != nilSlot && !avoid(s) {
			id, _ := p.q[i].ident()
			p.unlink(s)
			p.unindex(s)
			sl := &p.slots[s]
			sl.state, sl.id = Private, identity.None
			p.own(s)
			if p.obs != nil && !p.quiet {
				p.obs.Evicted(s, id)
			}
			p.changed(s)
			out = append(out, s)
			n--
		}
	}
	return out, true
}

// Reserve takes n fresh slots like Alloc and marks them as load
// destinations.
func (p *Pool) Reserve(n int, out []int32) ([]int32, bool) {
	start := len(out)
	out, ok := p.Alloc(n, out)
	if ok {
		for _, s := range out[start:] {
			p.slots[s].reserved = true
			p.changed(s)
		}
	}
	return out, ok
}

// MarkReserved flags private slots as reserved destinations (the record
// draws them as such).
func (p *Pool) MarkReserved(slots []int32) {
	for _, s := range slots {
		p.slots[s].reserved = true
		p.changed(s)
	}
}

// Claim turns a reserved private slot into an ordinary private one.
func (p *Pool) Claim(s int32) {
	p.slots[s].reserved = false
	p.changed(s)
}

// Finalize gives the private slot s identity id and makes it a cached copy
// with one reference (its owner's). A second copy of an identity is kept as
// a duplicate; lookups use the oldest
// (docs/model/g1.md ("Slots and their users")).
func (p *Pool) Finalize(s int32, id identity.ID) {
	sl := &p.slots[s]
	sl.state = Cached
	sl.reserved = false
	sl.id = id
	sl.ref = 1
	p.index(s)
	p.changed(s)
}

// FinalizeRun is Finalize for each slot of slots that is not cached yet,
// with the identity at the same index of ids: the blocks one scheduling
// completed (docs/model/g1.md ("Becoming cached")), in one call.
func (p *Pool) FinalizeRun(slots []int32, ids []identity.ID) {
	ids = ids[:len(slots)]
	if p.obs != nil { // one by one: the observer sees every change
		for j, s := range slots {
			if sl := &p.slots[s]; sl.state != Cached {
				sl.state, sl.reserved, sl.id, sl.ref = Cached, false, ids[j], 1
				p.index(s)
				p.observe(s)
			}
		}
		return
	}
	// A run's identities are distinct, so the first copies can enter the
	// index together at the end (index.SetAll), with no call a block.
	newIDs, newCopies := p.newIDs[:0], p.newCopies[:0]
	for j, s := range slots {
		sl := &p.slots[s]
		if sl.state == Cached {
			continue
		}
		id := ids[j]
		sl.state, sl.reserved, sl.id, sl.ref = Cached, false, id, 1
		if c := p.copies.Ptr(int32(id)); c != nil {
			p.linkCopy(s, c)
		} else {
			newIDs, newCopies = append(newIDs, id), append(newCopies, copyRange{s, s})
		}
	}
	index.SetAll(&p.copies, newIDs, newCopies)
	inplace.Store(&p.newIDs, newIDs)
	inplace.Store(&p.newCopies, newCopies)
}

// Dep returns the pending store that still reads slot s (0 = none).
func (p *Pool) Dep(s int32) int32 {
	if p.deps == nil {
		return 0
	}
	return p.deps[s]
}

// SetDep records that store transfer t reads slot s.
func (p *Pool) SetDep(s int32, t int32) {
	if p.deps == nil {
		p.deps = make([]int32, len(p.slots))
	}
	p.deps[s] = t
}

// ClearDep ends transfer t's dependency on s (a later store's dependency is
// left alone).
func (p *Pool) ClearDep(s int32, t int32) {
	if p.deps != nil && p.deps[s] == t {
		p.deps[s] = 0
	}
}

// owner is slot s's last owner (-1 when none or not kept).
func (p *Pool) owner(s int32) int32 {
	if p.seen == nil {
		return -1
	}
	return p.seen[s].owner
}

// Slot describes one slot for checkers and the record.
type Slot struct {
	State          uint8
	Reserved       bool
	ID             identity.ID
	Ref, Pin, Hold int32
	Dep            int32
	Idle           bool
	Owner          int32 // request that last allocated, used or released it (kept while an observer is installed)
}

// IsCached reports whether slot s holds a cached copy (Inspect's State,
// without building the rest).
func (p *Pool) IsCached(s int32) bool { return p.slots[s].state == Cached }

// Inspect returns slot s's state.
func (p *Pool) Inspect(s int32) Slot {
	sl := &p.slots[s]
	return Slot{State: sl.state, Reserved: sl.reserved, ID: sl.id, Ref: sl.ref, Pin: sl.pin,
		Hold: sl.hold, Dep: p.Dep(s), Idle: p.idle(s), Owner: p.owner(s)}
}

// Use is what an occupied slot is for, by precedence: the first that
// applies of a private reservation, a private block, a reference, a pin, a
// hold; an unused cached copy is idle.
type Use uint8

const (
	UseFree Use = iota
	UseReservation
	UsePrivate
	UseRef
	UsePin
	UseHold
	UseIdle
)

// Classify returns slot s's use, identity and last owner: what the per-pass
// record keeps of a slot after every change (Inspect gives more and costs
// more).
func (p *Pool) Classify(s int32) (u Use, id identity.ID, owner int32) {
	return p.slots[s].use(), p.slots[s].id, p.owner(s)
}

// use is the slot's Use.
func (sl *slot) use() Use {
	switch {
	case sl.state == Free:
		return UseFree
	case sl.state == Private && sl.reserved:
		return UseReservation
	case sl.state == Private:
		return UsePrivate
	case sl.ref > 0:
		return UseRef
	case sl.pin > 0:
		return UsePin
	case sl.hold > 0:
		return UseHold
	}
	return UseIdle
}

// Holder returns slot s's identity and last owner (Classify without the
// use).
func (p *Pool) Holder(s int32) (id identity.ID, owner int32) {
	return p.slots[s].id, p.owner(s)
}

// IdleOrder appends the eviction queue, head (next victim) first, to out.
func (p *Pool) IdleOrder(out []int32) []int32 {
	for _, e := range p.q[p.qHead:] {
		if e.slot != nilSlot {
			out = append(out, e.slot)
		}
	}
	return out
}

// The eviction queue is a slice of entries in queue order, each with its
// slot and identity, not a list linked through the slots: taking victims
// reads the slice in order and writes the victims' slots, but reads none
// of them, where following links read each victim's slot, the pool's
// coldest memory, to find the next (docs/performance.md ("The eviction
// queue in a slice")). A copy leaving from the middle (used again, or held)
// leaves a hole, which the head skips.

// pushTail makes cached copy s the queue's newest.
func (p *Pool) pushTail(s int32) { p.q = p.enqueue(p.q, s) }

// enqueue is pushTail on q, the caller's copy of p.q: it returns q with s's
// entry appended.
func (p *Pool) enqueue(q []qent, s int32) []qent {
	if len(q) == cap(q) {
		q = p.roomFor(q)
	}
	return p.push(q, s)
}

// push is enqueue on a q with room for the entry: small enough to inline,
// so a loop that made room for all its pushes first (ReleaseAll) makes no
// call a block.
func (p *Pool) push(q []qent, s int32) []qent {
	sl := &p.slots[s]
	id := sl.id
	if sl.dup {
		id = ^id
	}
	sl.qpos, sl.queued = p.qBase+uint32(len(q)), true
	p.qLen++
	return append(q, qent{s, id})
}

// unlink takes the idle copy s out of the queue, leaving a hole.
func (p *Pool) unlink(s int32) {
	sl := &p.slots[s]
	p.q[sl.qpos-p.qBase].slot = nilSlot
	p.qHoles++
	p.qLen--
	sl.queued = false
}

// roomFor is roomInQueue for q, the caller's copy of p.q, which it returns
// with room for one more entry.
func (p *Pool) roomFor(q []qent) []qent {
	p.q = q
	p.roomInQueue()
	return p.q
}

// roomForAll is roomFor for n more entries (ReleaseAll's, before its
// loop): roomInQueue's squeeze or shift when due (each resets what made it
// due, so asking before the array is full adds no work), then as much
// growth as the n need: at most a request's blocks beyond roomInQueue's
// bound on the capacity.
func (p *Pool) roomForAll(q []qent, n int) []qent {
	p.q = q
	p.roomInQueue()
	return slices.Grow(p.q, n)
}

// roomInQueue is enqueue's, when the queue's array is full: it drops the
// entries the head has passed (positions stay, qBase moves) and, when the
// holes are more than half the copies, squeezes them out (positions
// change: each copy's slot learns its new one); then append grows the
// array only when the copies need it. The two thresholds are what keeps
// the work amortized: a squeeze renumbers the qLen copies after more than
// qLen/2 unlinks made holes (at most two renumberings an unlink), and a
// shift moves at most 3/4 of the array after the head passed a quarter of
// it (at most three moves a pop); and append doubles the array only when
// it holds fewer than two entries a copy (a quarter passed, holes at most
// half the copies), so its capacity stays under four entries a copy.
func (p *Pool) roomInQueue() {
	if p.qHoles > p.qLen/2 {
		n := 0
		for _, e := range p.q[p.qHead:] {
			if e.slot != nilSlot {
				p.q[n] = e
				p.slots[e.slot].qpos = p.qBase + uint32(n)
				n++
			}
		}
		clear(p.q[n:])
		p.q, p.qHead, p.qHoles = p.q[:n], 0, 0
		return
	}
	if p.qHead >= len(p.q)/4 {
		n := copy(p.q, p.q[p.qHead:])
		clear(p.q[n:])
		p.q = p.q[:n]
		p.qBase += uint32(p.qHead)
		p.qHead = 0
	}
}

func (p *Pool) index(s int32) {
	c, ok := p.copies.Upsert(int32(p.slots[s].id))
	if ok {
		p.linkCopy(s, c)
		return
	}
	c.first, c.last = s, s
}

// linkCopy links slot s, another copy of an identity whose copies are c,
// after the newest.
func (p *Pool) linkCopy(s int32, c *copyRange) {
	if p.dups == nil {
		p.dups = make([]dupLinks, len(p.slots)) // a slot's entry is written when it is linked
	}
	last := &p.slots[c.last]
	if !last.dup {
		last.dup = true
		p.dups[c.last] = dupLinks{nilSlot, nilSlot}
		if last.queued { // its queue entry says so too
			e := &p.q[last.qpos-p.qBase]
			e.id = ^e.id
		}
	}
	p.dups[c.last].next = s
	p.dups[s] = dupLinks{c.last, nilSlot}
	p.slots[s].dup = true
	c.last = s
}

// dupOf returns slot s's links to the other copies of its identity (none
// when it has not been linked since it was last indexed).
func (p *Pool) dupOf(s int32) dupLinks {
	if !p.slots[s].dup {
		return dupLinks{nilSlot, nilSlot}
	}
	return p.dups[s]
}

func (p *Pool) unindex(s int32) {
	sl := &p.slots[s]
	id := int32(sl.id)
	d := p.dupOf(s)
	sl.dup = false
	if d.prev == nilSlot && d.next == nilSlot {
		p.copies.Delete(id) // the identity's only copy
		return
	}
	c, _ := p.copies.Upsert(id) // held: it has another copy
	if d.prev != nilSlot {
		p.dups[d.prev].next = d.next
	} else {
		c.first = d.next
	}
	if d.next != nilSlot {
		p.dups[d.next].prev = d.prev
	} else {
		c.last = d.prev
	}
}
