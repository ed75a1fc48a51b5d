package connector_test

import (
	"slices"
	"testing"

	"github.com/kvsim/kvsim/core/connector"
	"github.com/kvsim/kvsim/core/identity"
	"github.com/kvsim/kvsim/core/request"
)

// loadScenario leaves request r with a G1 prefix of two idle copies (b0, b1;
// queue order b1, b0 from A's tail-first release) and a G2 hit of b2, and
// starts its load. It returns r and the slots of b0 and b1.
func loadScenario(t *testing.T) (*rig, *request.Request, int32, int32) {
	t.Helper()
	g := newRig(profile(t, v024), 5, 8)
	first := g.next
	a := g.request(0, 13, 1)
	g.compute(a, 13)
	g.a.ObserveCompletedBlocks(a, 0, 13, 0) // stores b0 b1 b2
	g.a.Boundary(2)
	g.a.Tick(5)
	g.release(a) // queue: b2, b1, b0; free 2
	busy, _ := g.pool.Alloc(3, nil)
	g.pool.Release(busy[0]) // one free slot for the reservation
	if g.pool.Has(a.Seq.IDs[2]) || !g.pool.Has(a.Seq.IDs[0]) || !g.pool.Has(a.Seq.IDs[1]) {
		t.Fatal("scenario broken: want b0, b1 in G1 and b2 evicted")
	}
	r := &request.Request{Index: 1, Known: a.Known, PromptLen: 13, MaxOutput: 1, Seq: &identity.Sequence{}}
	for k := range uint32(a.Known) { // a's tokens
		r.Seq.AppendToken(g.ids, first+k, 4, 1)
	}
	hits, _ := g.pool.Lookup(r.Seq.IDs[:3])
	res, hit := g.a.Lookup(r, hits, 10)
	if hits != 2 || res != connector.Hit || len(hit) != 1 {
		t.Fatalf("scenario broken: G1 hits %d, G2 %v %v", hits, res, hit)
	}
	s0, s1 := g.pool.Copy(r.Seq.IDs[0]), g.pool.Copy(r.Seq.IDs[1])
	if got := g.a.StartLoad(r, hit, hits, 10); got != connector.Queued {
		t.Fatalf("start load: %v", got)
	}
	return g, r, s0, s1
}

// TestCancel_ReleasesTheReservationTailFirst is
// docs/model/g1.md ("Release order"): "A cancelled reservation unpins its
// prefix copies in reverse order as well", so a cancelled request's tail
// becomes evictable before its head, as after a finish.
func TestCancel_ReleasesTheReservationTailFirst(t *testing.T) {
	t.Run("load queued", func(t *testing.T) {
		g, r, s0, s1 := loadScenario(t)
		g.a.Cancel(r, 10)
		if err := g.pool.Check(); err != nil {
			t.Fatal(err)
		}
		got := g.pool.IdleOrder(nil)
		if !slices.Equal(got, []int32{s1, s0}) {
			t.Fatalf("bug: Adapter.Cancel (core/connector/adapter.go:581-583) unpins the G1 prefix first block first: idle order %v; want [%d %d] (b1 then b0, tail first); unreachable through the engine today (no cancellation reaches a request holding a load)", got, s1, s0)
		}
	})
	t.Run("load completed", func(t *testing.T) {
		g, r, s0, s1 := loadScenario(t)
		g.a.Boundary(10)
		g.a.Tick(11)
		if r.Host.Load == nil || !r.Host.Load.Done {
			t.Fatal("load did not complete")
		}
		s2 := r.Host.Load.DestSlots[0]
		g.a.Cancel(r, 11)
		if err := g.pool.Check(); err != nil {
			t.Fatal(err)
		}
		got := g.pool.IdleOrder(nil)
		if !slices.Equal(got, []int32{s2, s1, s0}) {
			t.Fatalf("bug: Adapter.Cancel (core/connector/adapter.go:577-583) releases a completed reservation's loaded copies and then unpins its prefix, each first block first: idle order %v; want [%d %d %d] (b2, b1, b0: tail first)", got, s2, s1, s0)
		}
	})
}

// TestCancel_ReleasesPinsAndWakes is docs/model/g2.md ("Cancellation"):
// cancelling a waiting request's load drops its G2 pins and its G1 reservation
// and wakes the rank's sleepers.
func TestCancel_ReleasesPinsAndWakes(t *testing.T) {
	g, r, _, _ := loadScenario(t)
	b2 := r.Seq.IDs[2]
	if g.dom.Tier.Pins(b2) != 1 {
		t.Fatalf("b2 pins %d; want 1", g.dom.Tier.Pins(b2))
	}
	free := g.pool.NumFree()
	g.a.Cancel(r, 10)
	if g.dom.Tier.Pins(b2) != 0 || r.Host.Load != nil {
		t.Errorf("after cancel: b2 pins %d, load %+v; want 0, nil", g.dom.Tier.Pins(b2), r.Host.Load)
	}
	if g.pool.NumFree() != free+1 {
		t.Errorf("free %d; want %d (the reserved slot back)", g.pool.NumFree(), free+1)
	}
	if !g.a.Tick(10) {
		t.Error("cancel did not wake the sleepers")
	}
	if g.a.HasUnsubmitted() {
		t.Error("the cancelled load is still queued")
	}
	if err := g.a.Check(); err != nil {
		t.Error(err)
	}
}
