package connector_test

import (
	"testing"

	"github.com/kvsim/kvsim/core/connector"
)

// TestRegistry_DeliveredStoreIsRetired: once its owner rank has seen a store
// complete, the record is gone from the registry (Get answers nil, which
// InFlight reads as "not in flight") and the next store reuses it under a
// new ID, with lists of its own length.
func TestRegistry_DeliveredStoreIsRetired(t *testing.T) {
	for _, name := range []string{v024, v032, simple} {
		t.Run(name, func(t *testing.T) {
			g := newRig(profile(t, name), 16, 16)
			a := g.request(0, 13, 1)
			g.compute(a, 13)
			g.a.ObserveCompletedBlocks(a, 0, 13, 0)
			g.a.Finish(a, 0)
			first := a.Host.LatestStore
			tr := g.reg.Get(first)
			if first == 0 || !tr.InFlight() || len(tr.Keys) != 3 {
				t.Fatalf("store %d not in flight with 3 keys: %+v", first, tr)
			}
			g.a.Boundary(1)
			g.a.Tick(100)
			if got := g.reg.Get(first); got != nil || got.InFlight() {
				t.Fatalf("delivered store %d still registered: %+v", first, got)
			}
			if err := g.pool.Check(); err != nil {
				t.Fatal(err)
			}
			b := g.request(1, 9, 1)
			g.compute(b, 9)
			g.a.ObserveCompletedBlocks(b, 0, 9, 100)
			g.a.Finish(b, 100)
			second := g.reg.Get(b.Host.LatestStore)
			if second != tr || second.ID == first || len(second.Keys) != 2 || len(second.Slots) != 2 || second.Req != b {
				t.Fatalf("second store: %+v; want the retired record reused with 2 keys for b", second)
			}
			for i, s := range second.Slots {
				if g.pool.Inspect(s).ID != b.Seq.IDs[second.Indices[i]] {
					t.Fatalf("slot %d does not hold key %d", s, i)
				}
			}
		})
	}
}

// TestRegistry_PagesOfRetiredRecordsAreDropped: IDs stay unique and Get
// answers for every live record while thousands are retired around them.
func TestRegistry_PagesOfRetiredRecordsAreDropped(t *testing.T) {
	var reg connector.Registry
	var live []*connector.Transfer
	for i := 0; i < 20000; i++ {
		tr := reg.NewStoreForTest(1)
		if tr.ID != int32(i+1) {
			t.Fatalf("record %d got ID %d", i, tr.ID)
		}
		if i%997 == 0 {
			live = append(live, tr) // kept, like a load or a store in flight
		} else {
			reg.RetireForTest(tr)
		}
		if got := reg.Get(tr.ID); (got == tr) != (i%997 == 0) {
			t.Fatalf("Get(%d) = %v after retiring=%v", tr.ID, got, i%997 != 0)
		}
	}
	for _, tr := range live {
		if reg.Get(tr.ID) != tr {
			t.Fatalf("live record %d lost", tr.ID)
		}
	}
	if n := reg.PagesForTest(); n > len(live)+1 {
		t.Fatalf("%d pages kept for %d live records", n, len(live))
	}
}
