package g1

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/kvsim/kvsim/core/identity"
)

// cached allocates one slot per id and makes it a cached copy with one
// reference, in order.
func cached(t *testing.T, p *Pool, ids ...identity.ID) []int32 {
	t.Helper()
	slots, ok := p.Alloc(len(ids), nil)
	if !ok {
		t.Fatalf("alloc %d failed", len(ids))
	}
	for i, s := range slots {
		p.Finalize(s, ids[i])
	}
	return slots
}

// releaseTailFirst drops one reference from each slot, last first, as the
// scheduler releases a request's block table.
func releaseTailFirst(p *Pool, slots []int32) {
	for j := len(slots) - 1; j >= 0; j-- {
		p.Release(slots[j])
	}
}

func mustCheck(t *testing.T, p *Pool) {
	t.Helper()
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestPool_FreeCapacityBeforeEviction is docs/model/g1.md ("Allocation"): free
// slots are handed out before any idle cached copy is evicted, so idle copies
// stay prefix hits while free capacity lasts.
func TestPool_FreeCapacityBeforeEviction(t *testing.T) {
	p := New(4)
	a := cached(t, p, 10, 11)
	releaseTailFirst(p, a)
	if p.NumFree() != 2 || p.NumIdle() != 2 {
		t.Fatalf("free %d idle %d; want 2, 2", p.NumFree(), p.NumIdle())
	}
	got, ok := p.Alloc(2, nil)
	if !ok {
		t.Fatal("alloc 2 failed")
	}
	for _, s := range got {
		if slices.Contains(a, s) {
			t.Errorf("alloc took idle copy in slot %d while free capacity remained", s)
		}
	}
	if hits, _ := p.Lookup([]identity.ID{10, 11}); hits != 2 {
		t.Errorf("after using free capacity: %d prefix hits; want 2", hits)
	}
	// Now the queue head goes: 11 (released first, tail first).
	if _, ok := p.Alloc(1, nil); !ok {
		t.Fatal("alloc 1 failed")
	}
	if p.Has(11) || !p.Has(10) {
		t.Errorf("after one eviction Has(10)=%v Has(11)=%v; want true, false", p.Has(10), p.Has(11))
	}
	mustCheck(t, p)
}

// TestPool_FreedPrivateReusedBeforeCached: a released private (partial)
// block returns to the free capacity and is reused before an older idle
// cached copy (the rule that gives
// docs/model/cases.md ("Case A: connector comparison") row 1 its 20,320).
func TestPool_FreedPrivateReusedBeforeCached(t *testing.T) {
	p := New(3)
	slots := cached(t, p, 1, 2)
	part, _ := p.Alloc(1, nil) // a partial block: stays private
	table := append(slots, part...)
	releaseTailFirst(p, table)
	got, _ := p.Alloc(1, nil)
	if got[0] != part[0] {
		t.Errorf("alloc took slot %d; want the freed partial slot %d", got[0], part[0])
	}
	if !p.Has(1) || !p.Has(2) {
		t.Error("a cached copy was evicted although a freed slot was available")
	}
}

// TestPool_TailFirstReleaseOrder is docs/model/g1.md ("Release order"):
// released last block first, a request's tail is evicted before its head, and
// copies released later are evicted later.
func TestPool_TailFirstReleaseOrder(t *testing.T) {
	p := New(5)
	a := cached(t, p, 1, 2, 3)
	releaseTailFirst(p, a)
	b := cached(t, p, 4, 5)
	releaseTailFirst(p, b)
	want := []int32{a[2], a[1], a[0], b[1], b[0]}
	if got := p.IdleOrder(nil); !slices.Equal(got, want) {
		t.Fatalf("idle order %v; want %v", got, want)
	}
	var evicted []identity.ID
	for range 5 {
		before := map[identity.ID]bool{}
		for id := identity.ID(1); id <= 5; id++ {
			before[id] = p.Has(id)
		}
		if _, ok := p.Alloc(1, nil); !ok {
			t.Fatal("alloc failed")
		}
		for id := identity.ID(1); id <= 5; id++ {
			if before[id] && !p.Has(id) {
				evicted = append(evicted, id)
			}
		}
	}
	if want := []identity.ID{3, 2, 1, 5, 4}; !slices.Equal(evicted, want) {
		t.Errorf("eviction order %v; want %v", evicted, want)
	}
	mustCheck(t, p)
}

// TestPool_Duplicates is docs/model/g1.md ("Slots and their users"): two
// copies of one identity both occupy capacity; lookups and references use the
// oldest; when the oldest is evicted the next takes its place.
func TestPool_Duplicates(t *testing.T) {
	p := New(4)
	first := cached(t, p, 7)
	second := cached(t, p, 7)
	if p.NumFree() != 2 {
		t.Fatalf("free %d; want 2 (duplicates occupy capacity)", p.NumFree())
	}
	if got := p.Copy(7); got != first[0] {
		t.Errorf("Copy(7) = %d; want the oldest %d", got, first[0])
	}
	if hits, active := p.Lookup([]identity.ID{7}); hits != 1 || active != 1 {
		t.Errorf("Lookup = %d, %d; want 1, 1", hits, active)
	}
	// Make the oldest idle and the only victim.
	p.Release(first[0])
	if hits, active := p.Lookup([]identity.ID{7}); hits != 1 || active != 0 {
		t.Errorf("oldest idle: Lookup = %d, %d; want 1, 0 (the oldest copy decides)", hits, active)
	}
	if s := p.Reference(7); s != first[0] {
		t.Errorf("Reference(7) = %d; want the oldest %d", s, first[0])
	}
	p.Release(first[0])
	p.Alloc(2, nil) // free capacity
	if _, ok := p.Alloc(1, nil); !ok {
		t.Fatal("alloc failed")
	}
	if got := p.Copy(7); got != second[0] {
		t.Errorf("after evicting the oldest, Copy(7) = %d; want %d", got, second[0])
	}
	if !p.Has(7) {
		t.Error("identity 7 lost although a second copy is cached")
	}
	mustCheck(t, p)
}

// TestPool_AllocFailureHasNoSideEffect is docs/model/g1.md ("Allocation").
func TestPool_AllocFailureHasNoSideEffect(t *testing.T) {
	p := New(4)
	used := cached(t, p, 1, 2)
	p.Release(used[1]) // idle
	before := p.IdleOrder(nil)
	free, idle, inUse := p.NumFree(), p.NumIdle(), p.NumInUse()
	out := []int32{99}
	got, ok := p.Alloc(4, out)
	if ok {
		t.Fatal("alloc of 4 with 3 available succeeded")
	}
	if !slices.Equal(got, []int32{99}) {
		t.Errorf("failed alloc returned %v; want the input %v", got, out)
	}
	if p.NumFree() != free || p.NumIdle() != idle || p.NumInUse() != inUse || !slices.Equal(p.IdleOrder(nil), before) {
		t.Errorf("failed alloc changed the pool: free %d idle %d in use %d order %v; want %d %d %d %v",
			p.NumFree(), p.NumIdle(), p.NumInUse(), p.IdleOrder(nil), free, idle, inUse, before)
	}
	if !p.Has(2) {
		t.Error("failed alloc evicted identity 2")
	}
	if _, ok := p.Reserve(4, nil); ok {
		t.Error("reserve of 4 with 3 available succeeded")
	}
	mustCheck(t, p)
}

// TestPool_UsesKeepCopiesOutOfTheQueue: a pin (load reservation) or a hold
// (store copying) keeps a cached copy out of the eviction queue like a
// reference; when the last use goes it rejoins at the tail.
func TestPool_UsesKeepCopiesOutOfTheQueue(t *testing.T) {
	for _, c := range []struct {
		name     string
		add, del func(p *Pool, s int32)
	}{
		{"pin", (*Pool).Pin, (*Pool).Unpin},
		{"hold", func(p *Pool, s int32) { p.HoldAll([]int32{s}) }, func(p *Pool, s int32) { p.UnholdAll([]int32{s}) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := New(3)
			s := cached(t, p, 1, 2, 3)
			releaseTailFirst(p, s) // queue: 3, 2, 1
			c.add(p, s[2])         // identity 3 leaves the head
			if got, want := p.IdleOrder(nil), []int32{s[1], s[0]}; !slices.Equal(got, want) {
				t.Fatalf("idle order %v; want %v", got, want)
			}
			if p.CanAlloc(3) {
				t.Error("CanAlloc(3) with a used copy")
			}
			p.Alloc(2, nil)
			if !p.Has(3) {
				t.Errorf("the %s did not protect identity 3 from eviction", c.name)
			}
			if hits, active := p.Lookup([]identity.ID{3}); hits != 1 || active != 1 {
				t.Errorf("Lookup = %d, %d; want 1, 1 (a %sed copy is an active hit)", hits, active, c.name)
			}
			// Two uses: a reference and the pin/hold; idle only when both go.
			p.Ref(s[2])
			c.del(p, s[2])
			if p.IsIdle(s[2]) {
				t.Error("copy idle while still referenced")
			}
			p.Release(s[2])
			if got := p.IdleOrder(nil); !slices.Equal(got, []int32{s[2]}) {
				t.Errorf("idle order %v; want [%d]", got, s[2])
			}
			mustCheck(t, p)
		})
	}
}

// TestPool_UseBelowZeroPanics: a double release is a bug the pool refuses.
func TestPool_UseBelowZeroPanics(t *testing.T) {
	p := New(1)
	s := cached(t, p, 1)
	p.Release(s[0])
	defer func() {
		if recover() == nil {
			t.Error("second release did not panic")
		}
	}()
	p.Release(s[0])
}

// TestPool_ReserveMarksLoadDestinations: reserved slots are private load
// destinations until Finalize turns them into cached copies.
func TestPool_ReserveMarksLoadDestinations(t *testing.T) {
	p := New(2)
	s, ok := p.Reserve(2, nil)
	if !ok {
		t.Fatal("reserve failed")
	}
	for _, x := range s {
		if sl := p.Inspect(x); sl.State != Private || !sl.Reserved {
			t.Errorf("slot %d: %+v; want a reserved private slot", x, sl)
		}
	}
	p.Finalize(s[0], 5)
	if sl := p.Inspect(s[0]); sl.State != Cached || sl.Reserved || sl.Ref != 1 || sl.ID != 5 {
		t.Errorf("finalized slot: %+v; want cached identity 5 with one reference", sl)
	}
	mustCheck(t, p)
}

// TestPool_Deps: a store's dependency on a slot survives reuse of the slot
// and only that store can clear it.
func TestPool_Deps(t *testing.T) {
	p := New(1)
	s := cached(t, p, 1)
	p.SetDep(s[0], 7)
	p.Release(s[0])
	got, _ := p.Alloc(1, nil)
	if p.Dep(got[0]) != 7 {
		t.Fatalf("dep after reuse %d; want 7", p.Dep(got[0]))
	}
	p.ClearDep(got[0], 8)
	if p.Dep(got[0]) != 7 {
		t.Error("another store cleared the dependency")
	}
	p.ClearDep(got[0], 7)
	if p.Dep(got[0]) != 0 {
		t.Error("the store did not clear its dependency")
	}
}

// TestPool_CheckCatchesCorruption breaks each invariant of
// docs/invariants.md G1-1 to G1-4 and expects Check to name it.
func TestPool_CheckCatchesCorruption(t *testing.T) {
	// base: capacity 5; slots 0,1 cached identities 1,2 (1 idle, 2 used),
	// slot 2 private, slots 3,4 free.
	base := func(t *testing.T) *Pool {
		p := New(5)
		s := cached(t, p, 1, 2)
		p.Alloc(1, nil)
		p.Release(s[0])
		mustCheck(t, p)
		return p
	}
	for _, c := range []struct {
		name    string
		corrupt func(p *Pool)
		want    string
	}{
		{"negative reference", func(p *Pool) { p.slots[1].ref = -1 }, "G1-2"},
		{"negative pin", func(p *Pool) { p.slots[1].pin = -1 }, "G1-2"},
		{"free list misses a free slot", func(p *Pool) { p.free = p.free[:1] }, "G1-1"},
		{"private slot marked free", func(p *Pool) { p.slots[2].state = Free }, "G1-1"},
		{"used copy left in the queue", func(p *Pool) { p.slots[0].ref = 1 }, "G1-3"},
		{"idle copy missing from the queue", func(p *Pool) { p.slots[1].ref = 0 }, "G1-3"},
		{"queue length wrong", func(p *Pool) { p.qLen++ }, "G1-3"},
		{"queue entry not where its slot says", func(p *Pool) {
			p.slots[1].ref = 0
			p.pushTail(1)
			p.slots[1].qpos++
		}, "G1-3"},
		{"queue entry with another identity", func(p *Pool) {
			p.slots[1].ref = 0
			p.pushTail(1)
			p.q[len(p.q)-1].id++
		}, "G1-3"},
		{"queue holes miscounted", func(p *Pool) { p.qHoles++ }, "G1-3"},
		{"cached slot not indexed", func(p *Pool) { p.copies.Delete(2) }, "G1-4"},
		{"index points at a private slot", func(p *Pool) {
			c, _ := p.copies.Get(2)
			c.first = 2
			p.copies.Set(2, c)
		}, "G1-4"},
		{"index names the wrong identity", func(p *Pool) { p.slots[1].id = 1 }, "G1-4"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := base(t)
			c.corrupt(p)
			err := p.Check()
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("Check() = %v; want a %s error", err, c.want)
			}
		})
	}
}

// TestPool_CheckCatchesADuplicatedFreeSlot: invariant G1-1 says "the free
// list holds exactly the free slots". A free list naming one free slot twice
// (and omitting another) has the right length, so a count-only check lets it
// through, and the next two allocations would hand out one slot twice.
func TestPool_CheckCatchesADuplicatedFreeSlot(t *testing.T) {
	p := New(3)
	p.free = []int32{1, 1, 0}
	if err := p.Check(); err == nil {
		t.Fatal("bug: g1.Pool.Check (core/g1/check.go:26) only compares the free list's length with the number of free slots; a free list [1 1 0] (slot 2 missing, slot 1 twice) passes; want a G1-1 error")
	}
}

// TestPool_CheckCatchesAStaleQueuedFlag: idle answers from the queued flag,
// so Check must fail when the flag and the use counts disagree either way.
func TestPool_CheckCatchesAStaleQueuedFlag(t *testing.T) {
	for _, c := range []struct {
		name    string
		corrupt func(p *Pool, idle, used int32)
	}{
		{"idle copy not marked", func(p *Pool, idle, _ int32) { p.slots[idle].queued = false }},
		{"used copy marked", func(p *Pool, _, used int32) { p.slots[used].queued = true }},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := New(2)
			s := cached(t, p, 1, 2)
			p.Release(s[0]) // idle, queued
			mustCheck(t, p)
			c.corrupt(p, s[0], s[1])
			if err := p.Check(); err == nil || !strings.Contains(err.Error(), "G1-3") {
				t.Fatalf("Check = %v; want a G1-3 violation", err)
			}
		})
	}
}

// TestPool_OwnerKeptOnlyWithAnObserver: the record is the owner's only
// reader, so an unobserved pool leaves it unset and an observed one names
// the request of the last allocation and release.
func TestPool_OwnerKeptOnlyWithAnObserver(t *testing.T) {
	for _, observed := range []bool{false, true} {
		p := New(1)
		if observed {
			p.SetObserver(nopObserver{})
		}
		out, _ := p.For(7).Alloc(1, nil)
		want := int32(-1)
		if observed {
			want = 7
		}
		if got := p.Inspect(out[0]).Owner; got != want {
			t.Errorf("observed %v: owner %d; want %d", observed, got, want)
		}
	}
}

type nopObserver struct{}

func (nopObserver) SlotChanged(int32, Use, Use) {}
func (nopObserver) Evicted(int32, identity.ID)  {}

// TestPool_QueueOrderMatchesAModel drives a small pool through 30,000
// random allocations (evicting from the queue head), finalizations,
// references of idle copies (which leave the queue from anywhere),
// releases (one by one or ReleaseAll) and avoiding allocations, and compares the eviction queue
// after each step with a plain list kept in the order copies became idle.
func TestPool_QueueOrderMatchesAModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	p := New(48)
	var model []int32      // idle copies, head first
	var held [][]int32     // block tables in use
	next := identity.ID(0) // next fresh identity
	ids := map[int32]identity.ID{}
	drop := func(s int32) { model = slices.DeleteFunc(model, func(x int32) bool { return x == s }) }
	for step := range 30000 {
		switch k := rng.IntN(10); {
		case k < 4: // a request takes 1-6 new blocks
			n := 1 + rng.IntN(6)
			var slots []int32
			var ok bool
			if rng.IntN(5) == 0 {
				avoid := func(s int32) bool { return s%3 == 0 }
				free, usable := p.NumFree(), 0
				for _, s := range model {
					if !avoid(s) {
						usable++
					}
				}
				slots, ok = p.AllocAvoiding(n, nil, avoid)
				if ok != (free+usable >= n) {
					t.Fatalf("step %d: AllocAvoiding(%d) = %v with %d free and %d usable idle", step, n, ok, free, usable)
				}
				if ok {
					for i, taken := 0, n-min(free, n); taken > 0; {
						if s := model[i]; !avoid(s) {
							drop(s)
							taken--
							continue
						}
						i++
					}
				}
			} else {
				free := p.NumFree()
				slots, ok = p.Alloc(n, nil)
				if ok != (n <= free+len(model)) {
					t.Fatalf("step %d: Alloc(%d) = %v with %d free and %d idle", step, n, ok, free, len(model))
				}
				if ok && n > free {
					model = model[n-free:]
				}
			}
			if !ok {
				continue
			}
			for _, s := range slots {
				p.Finalize(s, next)
				ids[s] = next
				next++
			}
			held = append(held, slots)
		case k < 6 && len(model) > 0: // a prefix hit on an idle copy
			s := model[rng.IntN(len(model))]
			if got := p.Reference(ids[s]); got != s {
				continue // an older copy of the same identity: not this one
			}
			drop(s)
			held = append(held, []int32{s})
		case len(held) > 0: // a request finishes, releasing tail first
			i := rng.IntN(len(held))
			slots := held[i]
			held = slices.Delete(held, i, i+1)
			if rng.IntN(2) == 0 {
				p.ReleaseAll(slots)
			} else {
				for j := len(slots) - 1; j >= 0; j-- {
					p.Release(slots[j])
				}
			}
			for j := len(slots) - 1; j >= 0; j-- {
				if s := slots[j]; p.IsIdle(s) && !slices.Contains(model, s) {
					model = append(model, s)
				}
			}
		}
		if got := p.IdleOrder(nil); !slices.Equal(got, model) {
			t.Fatalf("step %d: queue %v, want %v", step, got, model)
		}
		if err := p.Check(); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
	}
}

// countingObserver counts the calls it gets and keeps the last change.
type countingObserver struct {
	calls    int
	was, now Use
}

func (o *countingObserver) SlotChanged(_ int32, was, now Use) {
	o.calls, o.was, o.now = o.calls+1, was, now
}
func (o *countingObserver) Evicted(int32, identity.ID) { o.calls++ }

// TestPool_KeepsAgesAndCountsQuietly: with an observer installed the pool
// keeps each slot's since (the clock when its use last changed) and
// counts the changes, told or not; a quiet observer is not called, and
// a loud one is told the use before and after.
func TestPool_KeepsAgesAndCountsQuietly(t *testing.T) {
	p := New(2)
	o := &countingObserver{}
	p.SetObserver(o)
	p.SetQuiet(true)
	p.SetClock(3)
	s := cached(t, p, 7)[0] // Free → Private → Ref: two changes
	if o.calls != 0 || p.Changes() != 2 || p.Since(s) != 3 {
		t.Fatalf("quiet: %d calls, %d changes, since %d; want 0, 2, 3", o.calls, p.Changes(), p.Since(s))
	}
	p.SetClock(5)
	p.Ref(s) // a second user: the use (and so the age) stays
	if p.Since(s) != 3 || p.Changes() != 3 {
		t.Errorf("a second reference: since %d, %d changes; want 3, 3", p.Since(s), p.Changes())
	}
	p.SetQuiet(false)
	p.SetClock(6)
	p.Release(s)
	p.Release(s) // the last user leaves: Ref → Idle
	if o.calls != 2 || o.was != UseRef || o.now != UseIdle || p.Since(s) != 6 || p.Changes() != 5 {
		t.Errorf("loud: %d calls, %v → %v, since %d, %d changes; want 2, Ref → Idle, 6, 5", o.calls, o.was, o.now, p.Since(s), p.Changes())
	}
}

// TestPool_CopiesMatchAModel drives a small pool with few identities, so
// that most have two or more copies at once, through random allocations
// (which evict from anywhere in a chain of copies), finalizations and
// releases, and compares each identity's oldest copy (Copy, the one
// lookups and references use) with a plain list of its copies in the
// order they were indexed (docs/model/g1.md ("Slots and their users")).
func TestPool_CopiesMatchAModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	p := New(40)
	const nIDs = 6
	copies := make([][]int32, nIDs) // per identity, its copies oldest first
	var held [][]int32
	for step := range 20000 {
		if rng.IntN(2) == 0 || len(held) == 0 {
			n := 1 + rng.IntN(4)
			slots, ok := p.Alloc(n, nil)
			if !ok {
				continue
			}
			for _, s := range slots {
				for id := range copies { // an evicted copy leaves its chain
					copies[id] = slices.DeleteFunc(copies[id], func(x int32) bool { return x == s })
				}
				id := rng.IntN(nIDs)
				p.Finalize(s, identity.ID(id))
				copies[id] = append(copies[id], s)
			}
			held = append(held, slots)
		} else {
			i := rng.IntN(len(held))
			releaseTailFirst(p, held[i])
			held = slices.Delete(held, i, i+1)
		}
		for id, cs := range copies {
			want := int32(nilSlot)
			if len(cs) > 0 {
				want = cs[0]
			}
			if got := p.Copy(identity.ID(id)); got != want {
				t.Fatalf("step %d: Copy(%d) = %d; want %d (copies %v)", step, id, got, want, cs)
			}
		}
		if err := p.Check(); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
	}
}

// TestPool_SlotIs32Bytes: every eviction and release reads a slot that
// has not been touched for a while, so the slot keeps only what those
// paths read (docs/performance.md ("Slots in 32 bytes")).
func TestPool_SlotIs32Bytes(t *testing.T) {
	if n := unsafe.Sizeof(slot{}); n != 32 {
		t.Errorf("a slot takes %d bytes; want 32", n)
	}
}
