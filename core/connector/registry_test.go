package connector_test

import (
	"testing"
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
