// Package g2 owns the host (CPU) tier's contents: which block identities it
// holds, whether each is still being stored (pending) or resident, the pins
// that loads and lookups put on entries, and the three eviction policies of
// docs/model/g2.md ("Eviction policies"). It does not know about time:
// transfers and their lanes live in package transfer, and the connector
// profiles that decide when to store, load and touch live in package
// connector.
package g2

import (
	"fmt"
	"slices"

	"github.com/kvsim/kvsim/core/identity"
	"github.com/kvsim/kvsim/core/internal/index"
	"github.com/kvsim/kvsim/core/internal/inplace"
)

// Policy selects the eviction order (docs/model/g2.md ("Eviction policies")).
type Policy uint8

const (
	// CohortLRU is vLLM 0.24's LRU: one recency stamp per completion cohort,
	// one per touched key, ties broken by identity order
	// (docs/model/g2.md ("CohortLRU (offloading_v0_24)")).
	CohortLRU Policy = iota
	// Ranked is vLLM 0.32's order: keys ranked when their store is prepared,
	// moved only by explicit touches
	// (docs/model/g2.md ("Ranked (offloading_v0_32)")).
	Ranked
	// FreeQueue is SimpleCPU's queue of entries in the order they became
	// free (docs/model/g2.md ("FreeQueue (simple_cpu_v0_32)")).
	FreeQueue
)

func (p Policy) String() string {
	switch p {
	case CohortLRU:
		return "cohort_lru"
	case Ranked:
		return "ranked"
	case FreeQueue:
		return "free_queue"
	}
	return fmt.Sprintf("policy(%d)", p)
}

// State of one identity in the tier.
type State uint8

const (
	Absent   State = iota
	Pending        // a store is in flight: occupies capacity, unreadable, unevictable
	Resident       // readable
)

const nilEntry = index.None

type entry struct {
	id   identity.ID
	pins int32
	// prev/next link the policy list. For CohortLRU and FreeQueue the list
	// holds exactly the evictable entries; for Ranked it holds every entry.
	prev, next int32
	mark       uint32 // protection epoch of the store being admitted
	pending    bool
	inList     bool
	added      uint64 // creation order (fields ordered to pack in 32 bytes)
}

// Observer is told about every change of the tier (the per-pass record).
// Replaying the calls rebuilds the tier's contents and eviction order.
type Observer interface {
	// EntryChanged reports that id was added (pending), became resident or
	// changed pins.
	EntryChanged(id identity.ID)
	// Listed reports that id joined the policy list at its most-recent end
	// (in true) or left it (in false).
	Listed(id identity.ID, in bool)
	// Evicted reports that id left the tier to make room (after Listed
	// false when it was in the list).
	Evicted(id identity.ID)
}

// A Tier is one G2 domain: a DP rank's private host cache, or a pool shared
// by several ranks.
type Tier struct {
	capacity int
	policy   Policy
	entries  []entry
	freeEnt  []int32
	index    index.Map[int32] // identity -> entry, sized to the entries held
	n        int              // entries (pending included)
	resident int
	head     int32
	tail     int32
	epoch    uint32
	nEvict   int // resident, unpinned entries
	version  uint64
	addSeq   uint64
	// blockings counts the changes that take an entry out of the
	// evictable-or-absent set: an entry created pending, a resident entry's
	// first pin (see Demand).
	blockings uint64
	demand    int
	absent    identity.ID
	missPos   []int32 // positions in keys of the last PrepareProtected's missing keys
	prepared  []int32 // the entries the last Prepare* created, in key order
	obs       Observer
	scratch   []int32
	byKey     []int32 // CompleteStore's entries
	// Evictions counts entries evicted to make room.
	Evictions int64
}

// NewTier returns an empty tier of capacity entries.
func NewTier(capacity int, policy Policy) *Tier {
	return &Tier{capacity: capacity, policy: policy, head: nilEntry, tail: nilEntry}
}

// SizeIndex makes room in the identity index for about n identities, so a
// run that knows its workload never regrows it.
func (t *Tier) SizeIndex(n int) {
	n = min(n, t.capacity)
	t.index.Reserve(n)
	if cap(t.entries) < n {
		// Entries are appended one at a time up to the tier's size: growing
		// in 1.25× steps copied 126 MB per Mooncake run with four 200,000-entry
		// tiers, garbage a browser's worker keeps as memory for good (no
		// faster natively). Reserved pages the run never reaches are never
		// touched.
		t.entries = append(make([]entry, 0, n), t.entries...)
	}
}

// SetObserver installs o (nil removes it).
func (t *Tier) SetObserver(o Observer) { t.obs = o }

// Version changes whenever the tier's contents, states or pins change (not
// when touches only reorder it): a store that had to retry cannot succeed
// before it does.
func (t *Tier) Version() uint64 { return t.version }

// Policy returns the tier's eviction policy.
func (t *Tier) Policy() Policy { return t.policy }

// Capacity is the number of entries the tier can hold.
func (t *Tier) Capacity() int { return t.capacity }

// Used is the number of entries, pending included.
func (t *Tier) Used() int { return t.n }

// NumResident is the number of entries whose store completed.
func (t *Tier) NumResident() int { return t.resident }

// NumFree is capacity minus entries.
func (t *Tier) NumFree() int { return t.capacity - t.n }

func (t *Tier) find(id identity.ID) int32 {
	return t.index.GetOr(int32(id), nilEntry) // identity.None is absent too
}

// Lookup returns id's state.
func (t *Tier) Lookup(id identity.ID) State {
	e := t.find(id)
	switch {
	case e == nilEntry:
		return Absent
	case t.entries[e].pending:
		return Pending
	}
	return Resident
}

// ScanAbsent scans keys for a room-limited store: it takes the absent
// keys in order, up to room of them, and returns the index past the last
// key it scanned (every key before it is present or taken), the index of
// the first key taken (-1: none) and whether a present key lies after it
// among those scanned (the keys taken are then not consecutive). One call
// a store: a call a key cost more than the lookup where calls are dear
// (sim.wasm, whose build inlines no Lookup).
func (t *Tier) ScanAbsent(keys []identity.ID, room int) (end, first int, gap bool) {
	first = -1
	for i, id := range keys {
		if _, ok := t.index.Get(int32(id)); ok { // identity.None is absent too
			gap = gap || first >= 0
			continue
		}
		if room == 0 {
			return i, first, gap
		}
		room--
		if first < 0 {
			first = i
		}
	}
	return len(keys), first, gap
}

// Pins returns the pin count of id (0 when absent).
func (t *Tier) Pins(id identity.ID) int32 {
	if e := t.find(id); e != nilEntry {
		return t.entries[e].pins
	}
	return 0
}

func (t *Tier) evictable(e int32) bool {
	en := &t.entries[e]
	return !en.pending && en.pins == 0
}

// NumEvictable counts resident, unpinned entries.
func (t *Tier) NumEvictable() int { return t.nEvict }

func (t *Tier) changed(id identity.ID) {
	if t.obs != nil {
		t.obs.EntryChanged(id)
	}
}

// Touch refreshes the recency of the given keys in order: each present key
// the policy lets move goes to the most-recent end. CohortLRU ignores
// pending and pinned keys (they are outside its evictable set); Ranked moves
// any present key, a pending one included
// (docs/model/g2.md ("Ranked (offloading_v0_32)"), a Decision); FreeQueue has
// no touches.
func (t *Tier) Touch(ids []identity.ID, reverse bool) {
	if t.policy == FreeQueue {
		return
	}
	// The record replays list moves one by one and must see the moves a
	// touch in place does not make (touchIsNoop).
	if t.obs != nil && t.touchIsNoop(ids, reverse) {
		return
	}
	// Moving each key to the tail in turn is the same as moving each run
	// of keys that are neighbours in the list as one piece: a run that
	// follows next links keeps its order at the tail, one that follows
	// prev links (a prompt touched last block first after being listed
	// in block order) arrives reversed. A touch is a few long runs.
	i, step := 0, 1
	if reverse {
		i, step = len(ids)-1, -1
	}
	var run touchRun
	run.first, run.last = nilEntry, nilEntry
	for ; uint(i) < uint(len(ids)); i += step { // i = -1 ends a reverse walk
		id := ids[i]
		if run.last != nilEntry {
			// The key continues the run when it is the run's neighbour in
			// the list: a listed entry's neighbours are listed, and an
			// identity has one entry, so comparing the neighbour's identity
			// answers without a lookup in the index.
			l := &t.entries[run.last]
			single := run.first == run.last
			if n := l.next; n != nilEntry && (!run.back || single) && t.entries[n].id == id {
				run.last, run.back = n, false
				continue
			}
			if p := l.prev; p != nilEntry && (run.back || single) && t.entries[p].id == id {
				run.last, run.back = p, true
				continue
			}
		}
		e := t.find(id)
		if e == nilEntry || !t.entries[e].inList {
			continue
		}
		t.runToTail(run)
		run = touchRun{first: e, last: e}
	}
	t.runToTail(run)
}

// touchRun is a run of touched keys that are neighbours in the list, first
// touched first; back says each next key is the previous one's prev.
type touchRun struct {
	first, last int32
	back        bool
}

// runToTail moves a run (first = nilEntry for none) to the most-recent
// end, as that many single moves in touch order would.
func (t *Tier) runToTail(run touchRun) {
	first, last := run.first, run.last
	if first == nilEntry {
		return
	}
	if !run.back {
		if first == t.tail {
			return // a single key already at the tail does not move
		}
		t.observeRun(first, last, false)
		if last == t.tail {
			return
		}
		prev, next := t.entries[first].prev, t.entries[last].next
		t.detach(prev, next)
		t.entries[first].prev = t.tail
		t.entries[t.tail].next = first
		t.entries[last].next = nilEntry
		t.tail = last
		return
	}
	// The run lies last..first in list order; each key moves after the
	// one touched before it, first (when not already the tail) included.
	t.observeRun(first, last, true)
	t.detach(t.entries[last].prev, t.entries[first].next)
	for e := first; ; {
		prev := t.entries[e].prev
		t.link(e)
		if e == last {
			break
		}
		e = prev
	}
}

// detach links prev and next to each other (either may be nilEntry), cutting
// out whatever lay between them.
func (t *Tier) detach(prev, next int32) {
	if prev != nilEntry {
		t.entries[prev].next = next
	} else {
		t.head = next
	}
	if next != nilEntry {
		t.entries[next].prev = prev
	} else {
		t.tail = prev
	}
}

// observeRun reports each key of a run that moves as leaving and rejoining
// the list, in touch order: all of them but a first key that is already
// the tail (which only a backward run can have with more keys).
func (t *Tier) observeRun(first, last int32, back bool) {
	if t.obs == nil {
		return
	}
	for e := first; ; {
		if e != t.tail || e != first {
			t.obs.Listed(t.entries[e].id, false)
			t.obs.Listed(t.entries[e].id, true)
		}
		if e == last {
			return
		}
		if back {
			e = t.entries[e].prev
		} else {
			e = t.entries[e].next
		}
	}
}

// touchIsNoop reports whether the listed keys among ids already end the
// list in touch order, so touching them would leave it as it is. The
// offloading_v0_24 profile touches a request's whole prompt after every
// store and lookup, mostly in exactly this state.
func (t *Tier) touchIsNoop(ids []identity.ID, reverse bool) bool {
	n := len(ids)
	at := t.tail
	for i := n - 1; i >= 0; i-- { // the last touched key ends at the tail
		id := ids[i]
		if reverse {
			id = ids[n-1-i]
		}
		e := t.find(id)
		if e == nilEntry || !t.entries[e].inList {
			continue
		}
		if e != at {
			return false
		}
		at = t.entries[e].prev
	}
	return true
}

// StoreResult is the outcome of admitting a store
// (docs/model/g2.md ("Store admission")).
type StoreResult uint8

const (
	Prepared       StoreResult = iota // pending entries were created
	AlreadyPresent                    // every key already had an entry
	Retry                             // not enough evictable room; nothing changed
)

// PrepareProtected admits a whole-range store of keys (the offloading
// profiles' mode). Keys without an entry become pending; room is made by
// evicting, in policy order, resident unpinned entries that are not among
// keys. The missing keys are appended to missing in key order.
func (t *Tier) PrepareProtected(keys []identity.ID, missing []identity.ID) ([]identity.ID, StoreResult) {
	// need − NumFree victims must come from the evictable entries outside
	// keys: the store fits exactly when its demand (keys absent or
	// evictable) fits in Room. Under a small tier most calls retry, and a
	// stuck store repeats this every pass, so a first pass only counts:
	// last key first (the newest blocks are the likely absent ones), it
	// stops as soon as the demand exceeds Room. A demand above Room implies
	// a missing key (an all-present range's demand is at most
	// NumEvictable), so stopping early cannot hide AlreadyPresent. The same
	// pass marks the evictable keys, which the victim walk must skip. Only
	// a store that goes ahead collects its missing keys, in a second pass.
	start := len(missing)
	room := t.Room()
	t.newEpoch()
	t.demand, t.absent = 0, identity.None
	need := 0
	pos := t.missPos[:0] // the absent keys' positions, last first; a local while it grows
	for i := len(keys) - 1; i >= 0; i-- {
		if e := t.find(keys[i]); e == nilEntry {
			if need == 0 {
				t.absent = keys[i]
			}
			need++
			pos = append(pos, int32(i))
		} else if t.evictable(e) {
			t.entries[e].mark = t.epoch
		} else {
			continue
		}
		if t.demand++; t.demand > room {
			t.missPos = pos[:0]
			return missing, Retry // demand is now a lower bound
		}
	}
	if need == 0 {
		t.missPos = pos[:0]
		return missing, AlreadyPresent
	}
	slices.Reverse(pos)
	for _, i := range pos {
		missing = append(missing, keys[i])
	}
	inplace.Store(&t.missPos, pos)
	for victims, e := need-t.NumFree(), t.head; victims > 0; victims-- {
		for !t.evictable(e) || t.entries[e].mark == t.epoch {
			if e = t.entries[e].next; e == nilEntry {
				panic("g2: protected store without room") // Room counted enough victims
			}
		}
		next := t.entries[e].next
		t.evict(e)
		t.freeEnt = append(t.freeEnt, e)
		e = next
	}
	prep := t.prepared[:0]
	if t.policy == Ranked || t.obs != nil { // each joins the list, or is observed, at once
		for _, id := range missing[start:] {
			e := t.newEntry()
			t.addPending(e, id)
			prep = append(prep, e)
		}
	} else {
		for _, id := range missing[start:] {
			e := t.newEntry()
			t.fill(e, id)
			prep = append(prep, e)
		}
		index.SetAll(&t.index, missing[start:], prep) // distinct keys, all absent
	}
	inplace.Store(&t.prepared, prep)
	return missing, Prepared
}

// newEpoch starts a protection epoch; on wrap-around it clears every mark
// so that no stale mark can equal the new epoch.
func (t *Tier) newEpoch() {
	t.epoch++
	if t.epoch == 0 {
		for i := range t.entries {
			t.entries[i].mark = 0
		}
		t.epoch = 1
	}
}

// MissingPositions returns, for the last PrepareProtected call that
// prepared a store, the position in its keys of each missing key (parallel
// to the keys it appended); valid until the next call.
func (t *Tier) MissingPositions() []int32 { return t.missPos }

// LastScan describes the last PrepareProtected call: its demand (the keys
// that were absent or evictable; for a call that retried, the count that
// already exceeded Room, a lower bound) and the last of its keys that was
// absent (identity.None when none was seen). A caller about to retry a superset of those keys can bound
// the new demand from below without scanning: only a blocking change
// (Blockings) lowers a key set's demand, by one each, and a key still
// absent keeps it at least one. While the bound exceeds Room, the answer is
// Retry again.
func (t *Tier) LastScan() (demand int, absent identity.ID) { return t.demand, t.absent }

// Blockings counts the entries created pending plus the first pins of
// resident entries, over the tier's life.
func (t *Tier) Blockings() uint64 { return t.blockings }

// Room returns how many new entries a room-limited store could create now:
// free capacity plus every evictable entry.
func (t *Tier) Room() int { return t.NumFree() + t.NumEvictable() }

// PrepareUnprotected creates pending entries for keys (none may be present),
// evicting in policy order from all evictable entries as needed. The caller
// sized keys with Room, so room always suffices (SimpleCPU's mode). A
// victim's entry is refilled in place (freeing it and taking the most
// recently freed entry would give back the same one): under a full tier
// every stored block takes this path.
func (t *Tier) PrepareUnprotected(keys []identity.ID) {
	prep := t.prepared[:0] // a local while it grows
	if t.policy == FreeQueue && t.obs == nil {
		inplace.Store(&t.prepared, t.prepareQueued(keys, prep))
		return
	}
	for _, id := range keys {
		var e int32
		if t.NumFree() > 0 {
			e = t.newEntry()
		} else {
			e = t.head
			if t.policy != FreeQueue { // FreeQueue lists only evictable entries
				for e != nilEntry && !t.evictable(e) {
					e = t.entries[e].next
				}
			}
			if e == nilEntry {
				panic("g2: room-limited store without room")
			}
			t.evict(e)
		}
		t.addPending(e, id)
		prep = append(prep, e)
	}
	inplace.Store(&t.prepared, prep)
}

// prepareQueued is PrepareUnprotected for FreeQueue without an observer,
// the path of every block SimpleCPU stores: evict and addPending written
// out for a queue whose head is always evictable, and the index's inserts
// made together at the end (the keys are absent and distinct, so none is
// one the loop evicts), so a block costs no call
// (TestComplete_PreparedEntriesMatchKeys compares it, counters included,
// with the general path an observer takes).
func (t *Tier) prepareQueued(keys []identity.ID, prep []int32) []int32 {
	for _, id := range keys {
		var e int32
		if t.n < t.capacity {
			e = t.newEntry()
		} else {
			e = t.head // evict: FreeQueue lists only evictable entries
			if e == nilEntry {
				panic("g2: room-limited store without room")
			}
			old := &t.entries[e]
			if t.head = old.next; old.next != nilEntry {
				t.entries[old.next].prev = nilEntry
			} else {
				t.tail = nilEntry
			}
			t.index.Delete(int32(old.id))
			t.n--
			t.resident--
			t.nEvict--
			t.Evictions++
			t.version++
		}
		t.fill(e, id)
		prep = append(prep, e)
	}
	index.SetAll(&t.index, keys, prep)
	return prep
}

// fill makes free entry e id's pending entry: addPending but the index
// and the list (small enough to inline in the loops that fill many).
func (t *Tier) fill(e int32, id identity.ID) {
	en := &t.entries[e]
	en.id, en.pins, en.prev, en.next, en.mark = id, 0, nilEntry, nilEntry, 0
	en.pending, en.inList, en.added = true, false, t.addSeq
	t.addSeq++
	t.n++
	t.version++
	t.blockings++
}

// Prepared is the entries the last PrepareProtected (when it answered
// Prepared) or PrepareUnprotected created, one per key it made pending, in
// key order: a store keeps them for Complete. A pending entry is never
// evicted, so each stays its key's until the store completes.
func (t *Tier) Prepared() []int32 { return t.prepared }

// newEntry returns a free entry: the most recently freed one, or a new one.
func (t *Tier) newEntry() int32 {
	if k := len(t.freeEnt); k > 0 {
		e := t.freeEnt[k-1]
		t.freeEnt = t.freeEnt[:k-1]
		return e
	}
	t.entries = append(t.entries, entry{})
	return int32(len(t.entries) - 1)
}

// addPending makes entry e, which is free, id's pending entry (the caller
// notes it in Prepared).
func (t *Tier) addPending(e int32, id identity.ID) {
	t.fill(e, id)
	t.index.Set(int32(id), e)
	if t.policy == Ranked {
		// Rank at store: the new key takes the most-recent place now.
		t.pushTail(e)
	}
	t.changed(id)
}

// evict removes entry e to make room. The entry is left to the caller, who
// frees it (PrepareProtected) or refills it (PrepareUnprotected).
func (t *Tier) evict(e int32) {
	t.version++
	en := &t.entries[e]
	id := en.id
	if en.inList { // unlink, without resetting links the entry's reuse sets
		if t.obs != nil {
			t.obs.Listed(id, false)
		}
		t.detach(en.prev, en.next)
		en.inList = false
	}
	t.index.Delete(int32(id))
	t.n--
	t.resident--
	t.nEvict--
	t.Evictions++
	if t.obs != nil {
		t.obs.Evicted(id)
	}
}

// CompleteStore makes the pending keys of one finished store resident (see
// Complete), finding each key's entry.
func (t *Tier) CompleteStore(keys []identity.ID) {
	es := t.byKey[:0]
	for _, id := range keys {
		e := t.find(id)
		if e == nilEntry {
			panic("g2: completing a store that is not pending")
		}
		es = append(es, e)
	}
	t.byKey = es
	t.Complete(es)
}

// Complete makes the pending entries of one finished store resident, given
// as Prepared returned them (which spares a lookup per stored block). The
// entries of one completion enter the eviction order together: as one
// cohort ordered by identity for CohortLRU, in block order for FreeQueue;
// Ranked keeps the place they got at preparation.
func (t *Tier) Complete(es []int32) {
	t.version++
	if t.policy == FreeQueue && t.obs == nil {
		t.completeQueued(es)
		return
	}
	t.scratch = t.scratch[:0]
	// FreeQueue lists the entries in block order as they complete; the
	// other policies gather the cohort first (enterCohort).
	queue := t.policy == FreeQueue
	for _, e := range es {
		en := &t.entries[e]
		if !en.pending {
			panic("g2: completing a store that is not pending")
		}
		en.pending = false
		t.resident++
		t.nEvict++
		if queue {
			if en.pins == 0 && !en.inList {
				if t.obs != nil { // pushTail, inlined: this loop lists every stored block
					t.obs.Listed(en.id, true)
				}
				t.link(e)
			}
		} else {
			t.scratch = append(t.scratch, e)
		}
	}
	t.enterCohort()
	if t.obs != nil {
		for _, e := range es {
			t.obs.EntryChanged(t.entries[e].id)
		}
	}
}

// completeQueued is Complete for FreeQueue without an observer, the path
// of every block SimpleCPU stores: the list's tail and the entries are
// locals, so a block costs its entry's writes and its predecessor's link.
func (t *Tier) completeQueued(es []int32) {
	entries, tail := t.entries, t.tail
	for _, e := range es {
		en := &entries[e]
		if !en.pending {
			panic("g2: completing a store that is not pending")
		}
		en.pending = false
		if en.pins == 0 && !en.inList { // link, inlined
			en.prev, en.next, en.inList = tail, nilEntry, true
			if tail != nilEntry {
				entries[tail].next = e
			} else {
				t.head = e
			}
			tail = e
		}
	}
	t.tail = tail
	t.resident += len(es)
	t.nEvict += len(es)
}

// enterCohort appends to the eviction order the entries in t.scratch (in
// key order) that just became evictable.
func (t *Tier) enterCohort() {
	if t.policy == Ranked {
		return
	}
	k := 0
	for _, e := range t.scratch {
		if t.evictable(e) && !t.entries[e].inList {
			t.scratch[k] = e
			k++
		}
	}
	t.scratch = t.scratch[:k]
	if t.policy == CohortLRU {
		// One shared stamp: the cohort goes to the tail in identity order,
		// the deterministic tie-break of
		// docs/model/g2.md ("CohortLRU (offloading_v0_24)").
		sortByID(t.scratch, t.entries)
	}
	for _, e := range t.scratch {
		if t.obs != nil { // pushTail, inlined as in CompleteStore
			t.obs.Listed(t.entries[e].id, true)
		}
		t.link(e)
	}
}

func sortByID(es []int32, entries []entry) {
	for i := 1; i < len(es); i++ {
		for j := i; j > 0 && entries[es[j]].id < entries[es[j-1]].id; j-- {
			es[j], es[j-1] = es[j-1], es[j]
		}
	}
}

// Pin adds a pin to each resident key (a load or a SimpleCPU lookup). A
// pinned entry cannot be evicted and leaves the CohortLRU and FreeQueue
// lists.
func (t *Tier) Pin(keys []identity.ID) {
	t.version++
	for _, id := range keys {
		e := t.find(id)
		if e == nilEntry || t.entries[e].pending {
			panic("g2: pinning a key that is not resident")
		}
		if t.entries[e].pins == 0 {
			t.blockings++
			t.nEvict--
			if t.policy != Ranked && t.entries[e].inList {
				t.unlink(e)
			}
		}
		t.entries[e].pins++
		t.changed(id)
	}
}

// Unpin drops one pin from each key; the keys whose last pin went re-enter
// the eviction order together as one cohort (CohortLRU), in block order
// (FreeQueue), or keep their rank (Ranked).
func (t *Tier) Unpin(keys []identity.ID) {
	t.version++
	t.scratch = t.scratch[:0]
	for _, id := range keys {
		e := t.find(id)
		if e == nilEntry || t.entries[e].pins == 0 {
			panic("g2: unpinning a key without a pin")
		}
		t.entries[e].pins--
		if t.entries[e].pins == 0 {
			t.nEvict++
		}
		t.scratch = append(t.scratch, e)
	}
	t.enterCohort()
	for _, id := range keys {
		t.changed(id)
	}
}

// Order appends the identities in eviction order (next victim first) to
// out, skipping entries that cannot be evicted now.
func (t *Tier) Order(out []identity.ID) []identity.ID {
	for e := t.head; e != nilEntry; e = t.entries[e].next {
		if t.evictable(e) {
			out = append(out, t.entries[e].id)
		}
	}
	return out
}

// Entries appends every identity held (pending included) to out, in
// policy-list order first and then the entries outside the list.
func (t *Tier) Entries(out []identity.ID) []identity.ID {
	for e := t.head; e != nilEntry; e = t.entries[e].next {
		out = append(out, t.entries[e].id)
	}
	for i := range t.entries {
		en := &t.entries[i]
		if !en.inList && t.find(en.id) == int32(i) {
			out = append(out, en.id)
		}
	}
	return out
}

func (t *Tier) pushTail(e int32) {
	if t.obs != nil {
		t.obs.Listed(t.entries[e].id, true)
	}
	t.link(e)
}

// link appends e to the list's most-recent end, unobserved (small enough
// to inline into the loops that list many keys).
func (t *Tier) link(e int32) {
	en := &t.entries[e]
	en.prev, en.next, en.inList = t.tail, nilEntry, true
	if t.tail != nilEntry {
		t.entries[t.tail].next = e
	} else {
		t.head = e
	}
	t.tail = e
}

func (t *Tier) unlink(e int32) {
	if t.obs != nil {
		t.obs.Listed(t.entries[e].id, false)
	}
	en := &t.entries[e]
	t.detach(en.prev, en.next)
	en.prev, en.next, en.inList = nilEntry, nilEntry, false
}

// Check verifies the tier's invariants: entry counts, and that the policy
// list holds exactly what the policy says (so pinned and pending entries
// can never be chosen as victims by a list walk that skips nothing).
func (t *Tier) Check() error {
	n, res, ev, listed := 0, 0, 0, 0
	for i := range t.entries {
		en := &t.entries[i]
		if t.find(en.id) != int32(i) {
			continue
		}
		n++
		if !en.pending {
			res++
		}
		if en.pins < 0 {
			return fmt.Errorf("G2-2: entry %d has %d pins", en.id, en.pins)
		}
		if t.evictable(int32(i)) {
			ev++
		}
		want := t.policy == Ranked || t.evictable(int32(i))
		if en.inList != want {
			return fmt.Errorf("G2-2: entry %d (pending %v, pins %d) list membership %v under %s", en.id, en.pending, en.pins, en.inList, t.policy)
		}
		if en.inList {
			listed++
		}
	}
	// The list is walked both ways (runs are spliced in Touch), so its
	// links must agree: each entry's prev is the one before it.
	prev, walked := nilEntry, 0
	for e := t.head; e != nilEntry && walked <= listed; e = t.entries[e].next {
		if t.entries[e].prev != prev || !t.entries[e].inList {
			return fmt.Errorf("G2-2: list entry %d: prev link %d, in list %v; walked from %d", t.entries[e].id, t.entries[e].prev, t.entries[e].inList, prev)
		}
		prev, walked = e, walked+1
	}
	if prev != t.tail || walked != listed {
		return fmt.Errorf("G2-2: the list walks %d entries to %d; %d are listed, tail %d", walked, prev, listed, t.tail)
	}
	if n != t.n || res != t.resident || ev != t.nEvict {
		return fmt.Errorf("G2-1: counted %d entries (%d resident, %d evictable), tier says %d (%d, %d)", n, res, ev, t.n, t.resident, t.nEvict)
	}
	return nil
}

// EntryState is one entry as Walk reports it.
type EntryState struct {
	ID      identity.ID
	Pending bool
	Pinned  bool
	Listed  bool
	Added   uint64 // creation order
}

// Walk calls fn for every entry: the policy list in order first, then the
// entries outside it. AddSeq is the next creation number.
func (t *Tier) Walk(fn func(EntryState)) (addSeq uint64) {
	for e := t.head; e != nilEntry; e = t.entries[e].next {
		en := &t.entries[e]
		fn(EntryState{ID: en.id, Pending: en.pending, Pinned: en.pins > 0, Listed: true, Added: en.added})
	}
	for i := range t.entries {
		en := &t.entries[i]
		if !en.inList && t.find(en.id) == int32(i) {
			fn(EntryState{ID: en.id, Pending: en.pending, Pinned: en.pins > 0, Added: en.added})
		}
	}
	return t.addSeq
}
