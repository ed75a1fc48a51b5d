package connector

import (
	"slices"

	"github.com/kvsim/kvsim/core/g2"
	"github.com/kvsim/kvsim/core/identity"
	"github.com/kvsim/kvsim/core/internal/index"
	"github.com/kvsim/kvsim/core/request"
	"github.com/kvsim/kvsim/core/transfer"
	"github.com/kvsim/kvsim/core/vtime"
)

// Kind of a G2 transfer.
type Kind uint8

const (
	Store Kind = iota // G1 → G2 (D2H)
	Load              // G2 → G1 (H2D)
)

func (k Kind) String() string {
	if k == Store {
		return "d2h"
	}
	return "h2d"
}

// A Transfer is one store or load between a rank's G1 and its G2 domain.
type Transfer struct {
	ID    int32
	Kind  Kind
	Owner *Adapter
	Req   *request.Request
	Keys  []identity.ID
	// Slots are the G1 copies a store reads (parallel to Keys), or the
	// reserved slots a load writes.
	Slots   []int32
	Indices []int32 // block indices of Keys inside the request
	// Entries are a store's G2 entries (parallel to Keys, g2.Tier.Prepared),
	// which its completion makes resident.
	Entries  []int32
	Bytes    int64
	AtFinish bool

	PreparedAt vtime.Time
	SubmitAt   vtime.Time
	Start      vtime.Time // first byte (private lanes)
	Deadline   vtime.Time // completion (private lanes: known at submission)

	submitted bool
	physical  bool // G2 effects applied
	delivered bool // G1 effects applied on the owner rank
}

// InFlight reports whether the transfer has been prepared and its owner
// rank has not yet seen it complete.
func (t *Transfer) InFlight() bool { return t != nil && !t.delivered }

// Registry numbers transfers across a whole run, so IDs are unique over
// every rank and domain, and owns the memory transfers are cut from. A store
// transfer is retired once its owner rank has seen it complete: nothing reads
// it after that (a G1 slot's dep, a request's LatestStore and a fair-share
// job only ask whether an ID is still in flight, and Get answers nil for a
// retired one, which InFlight reads as "no"). Retired records and their
// lists are reused by later stores, so a run's transfer memory is bounded by
// the copies in flight instead of growing with every store (issue 3's
// benchmark: 38 MB of records per §E (docs/model/cases.md) run before). Loads are not retired:
// their key and slot lists are shared with the request's Load, which
// outlives the copy.
type Registry struct {
	// pages map IDs to records, pageSize IDs a page; a page whose records
	// have all been retired is dropped, so the table stays as small as the
	// copies still referenced (appending to one flat slice instead cost a
	// 2 MB copy per doubling and a pointer per store ever made).
	pages [][]*Transfer
	live  []int32 // records not yet retired, per page
	next  int32   // the next ID
	free  []*Transfer
	trs   []Transfer
	ids   []identity.ID
	i32   []int32
}

const slabSize = 1 << 14

func (r *Registry) newTransfer() *Transfer {
	if len(r.trs) == 0 {
		r.trs = make([]Transfer, slabSize/16)
	}
	t := &r.trs[0]
	r.trs = r.trs[1:]
	return t
}

// newStore returns a store record with every field zero except Keys (length
// n) and Indices, Slots and Entries (empty, capacity n), reusing a retired
// record.
func (r *Registry) newStore(n int) *Transfer {
	var t *Transfer
	if k := len(r.free); k > 0 {
		t = r.free[k-1]
		r.free = r.free[:k-1]
	} else {
		t = r.newTransfer()
	}
	// Field by field, not *t = Transfer{…}: a reused record keeps its lists'
	// arrays, and a struct assignment rewrites every pointer in it, each
	// through the collector's write barrier while it marks
	// (docs/performance.md ("Pointer writes the collector sees")).
	if cap(t.Keys) < n {
		t.Keys, t.Indices, t.Slots, t.Entries = r.idList(n), r.i32List(n), r.i32List(n), r.i32List(n)
	}
	t.Keys = t.Keys[:n] // a reslice of itself writes no pointer
	t.Indices = t.Indices[:0]
	t.Slots = t.Slots[:0]
	t.Entries = t.Entries[:0]
	t.ID, t.Kind, t.Bytes, t.AtFinish = 0, Store, 0, false
	t.PreparedAt, t.SubmitAt, t.Start, t.Deadline = 0, 0, 0, 0
	t.submitted, t.physical, t.delivered = false, false, false
	return t
}

// retire gives a delivered store's record back for reuse.
func (r *Registry) retire(t *Transfer) {
	p := t.ID / pageSize
	r.pages[p][t.ID%pageSize] = nil
	if r.live[p]--; r.live[p] == 0 && p != r.next/pageSize {
		r.pages[p] = nil
	}
	t.Owner, t.Req = nil, nil
	r.free = append(r.free, t)
}

// idList returns a slice of n identities with capacity n.
func (r *Registry) idList(n int) []identity.ID {
	if n > len(r.ids) {
		r.ids = make([]identity.ID, max(n, slabSize))
	}
	s := r.ids[:n:n]
	r.ids = r.ids[n:]
	return s
}

// i32List returns an empty slice of capacity n.
func (r *Registry) i32List(n int) []int32 {
	if n > len(r.i32) {
		r.i32 = make([]int32, max(n, slabSize))
	}
	s := r.i32[:0:n]
	r.i32 = r.i32[n:]
	return s
}

const pageSize = 1 << 12

func (r *Registry) add(t *Transfer) {
	if r.next == 0 {
		r.next = 1 // ID 0 means "none"
	}
	t.ID = r.next
	r.next++
	p := int(t.ID / pageSize)
	if p == len(r.pages) {
		if p > 0 && r.live[p-1] == 0 {
			r.pages[p-1] = nil // emptied while it was still being filled
		}
		r.pages = append(r.pages, make([]*Transfer, pageSize))
		r.live = append(r.live, 0)
	}
	r.pages[p][t.ID%pageSize] = t
	r.live[p]++
}

// Get returns transfer id, or nil (none, or retired).
func (r *Registry) Get(id int32) *Transfer {
	if id <= 0 || id >= r.next {
		return nil
	}
	page := r.pages[id/pageSize]
	if page == nil {
		return nil
	}
	return page[id%pageSize]
}

// A Domain is one G2 tier and the timing of its copies.
type Domain struct {
	Tier *g2.Tier
	// Shared is the fair-share pool of a cluster_shared domain; nil for a
	// dp_rank_local one, whose ranks use private FIFO lanes.
	Shared   *transfer.FairShare
	adapters []*Adapter
	// loading[id] counts loads in flight that read id (deferOnLoading).
	loading index.Map[int32]
	// lanes hold a private domain's submitted copies per kind (stores,
	// loads). FIFO lanes complete in submission order, so each queue is
	// sorted by deadline and the next completion is at a queue's front.
	lanes [2]fifo
	// inflight holds a shared pool's submitted copies, in submission order.
	inflight []*Transfer
	reg      *Registry
	done     []*Transfer
}

// fifo is a queue of transfers.
type fifo struct {
	q    []*Transfer
	head int
}

func (f *fifo) push(t *Transfer) { f.q = append(f.q, t) }

func (f *fifo) front() *Transfer {
	if f.head < len(f.q) {
		return f.q[f.head]
	}
	return nil
}

func (f *fifo) pop() {
	f.q[f.head] = nil
	f.head++
	if f.head == len(f.q) {
		f.q, f.head = f.q[:0], 0
	} else if f.head >= 64 && 2*f.head > len(f.q) {
		n := copy(f.q, f.q[f.head:])
		clear(f.q[n:])
		f.q, f.head = f.q[:n], 0
	}
}

func (f *fifo) remove(t *Transfer) {
	for i := f.head; i < len(f.q); i++ {
		if f.q[i] == t {
			copy(f.q[i:], f.q[i+1:])
			f.q[len(f.q)-1] = nil
			f.q = f.q[:len(f.q)-1]
			return
		}
	}
}

// eachInflight calls fn for every submitted copy not yet physically done.
func (d *Domain) eachInflight(fn func(t *Transfer)) {
	for k := range d.lanes {
		for _, t := range d.lanes[k].q[d.lanes[k].head:] {
			fn(t)
		}
	}
	for _, t := range d.inflight {
		fn(t)
	}
}

// enqueue records a submitted copy.
func (d *Domain) enqueue(t *Transfer) {
	if d.Shared != nil {
		d.inflight = append(d.inflight, t)
		return
	}
	d.lanes[t.Kind].push(t)
}

// dequeue drops a cancelled copy.
func (d *Domain) dequeue(t *Transfer) {
	if d.Shared != nil {
		d.inflight = removeT(d.inflight, t)
		return
	}
	d.lanes[t.Kind].remove(t)
}

// NewDomain returns a G2 domain of capacity blocks with the given eviction
// policy. shared is nil for dp_rank_local.
func NewDomain(capacity int, policy g2.Policy, shared *transfer.FairShare, reg *Registry) *Domain {
	return &Domain{Tier: g2.NewTier(capacity, policy), Shared: shared, reg: reg}
}

func (d *Domain) isLoading(id identity.ID) bool {
	n, _ := d.loading.Get(int32(id))
	return n > 0
}

func (d *Domain) markLoading(keys []identity.ID, delta int32) {
	for _, id := range keys {
		n, _ := d.loading.Get(int32(id))
		if n += delta; n == 0 {
			d.loading.Delete(int32(id))
		} else {
			d.loading.Set(int32(id), n)
		}
	}
}

// Next returns the time of the domain's next physical transfer event, or
// +Inf. For a private domain this is the earliest deadline in flight.
func (d *Domain) Next() vtime.Time {
	if d.Shared != nil {
		return d.Shared.Next()
	}
	next := vtime.Never
	for k := range d.lanes {
		if t := d.lanes[k].front(); t != nil && t.Deadline < next {
			next = t.Deadline
		}
	}
	return next
}

// Advance applies the G2 effects of every copy that physically completes by
// now (a store's entries become resident, a load's pins go) and queues the
// G1 effects for the owning rank's next tick. Same-instant completions go
// stores first, then in transfer order. Every rank of the domain is asked
// to wake its sleeping connector waiters.
func (d *Domain) Advance(now vtime.Time) bool {
	d.done = d.done[:0]
	if d.Shared != nil {
		for _, f := range d.Shared.Advance(now) {
			t := d.reg.Get(int32(f.ID))
			t.Deadline = f.At
			d.done = append(d.done, t)
		}
		for _, t := range d.done {
			t.physical = true
		}
		d.inflight = slices.DeleteFunc(d.inflight, func(t *Transfer) bool { return t.physical })
	} else {
		for k := range d.lanes {
			for t := d.lanes[k].front(); t != nil && t.Deadline <= now; t = d.lanes[k].front() {
				d.done = append(d.done, t)
				d.lanes[k].pop()
			}
		}
		if len(d.done) > 1 {
			slices.SortStableFunc(d.done, func(a, b *Transfer) int {
				switch {
				case !a.Deadline.Same(b.Deadline):
					if a.Deadline < b.Deadline {
						return -1
					}
					return 1
				case a.Kind != b.Kind:
					return int(a.Kind) - int(b.Kind)
				}
				return int(a.ID - b.ID)
			})
		}
	}
	if len(d.done) == 0 {
		return false
	}
	for _, t := range d.done {
		t.physical = true
		switch t.Kind {
		case Store:
			d.Tier.Complete(t.Entries)
			if t.Owner.g3 != nil {
				t.Owner.g3Write(t.Keys, t.Deadline)
			}
		case Load:
			d.Tier.Unpin(t.Keys)
			d.markLoading(t.Keys, -1)
		}
		t.Owner.arrived = append(t.Owner.arrived, t)
		t.Owner.emit(Event{Kind: EvComplete, Transfer: t, At: t.Deadline})
	}
	for _, a := range d.adapters {
		a.wake = true
	}
	return true
}
