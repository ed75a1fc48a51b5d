package placement_test

import (
	"testing"

	"github.com/kvsim/kvsim/core/placement"
)

// TestAggregated_RoundRobin3x2 is
// docs/model/acceptance.md ("Case D: smaller checks") /
// docs/model/engine.md ("Placement"): 3 workers × 2 DP ranks go (w0,r0),
// (w1,r0), (w2,r0), (w0,r1), (w1,r1), (w2,r1), and then start over.
func TestAggregated_RoundRobin3x2(t *testing.T) {
	a := placement.NewAggregated(3, 2)
	want := []placement.Target{tg(0, 0), tg(1, 0), tg(2, 0), tg(0, 1), tg(1, 1), tg(2, 1), tg(0, 0), tg(1, 0)}
	for i, w := range want {
		if got := a.Next(); got != w {
			t.Fatalf("placement %d: (w%d,r%d); want (w%d,r%d)", i, got.Worker, got.Rank, w.Worker, w.Rank)
		}
	}
}

// TestAggregated_OneWorker: a single worker cycles its DP ranks.
func TestAggregated_OneWorker(t *testing.T) {
	a := placement.NewAggregated(1, 4)
	for i := range 9 {
		if got := a.Next(); got != (placement.Target{Worker: 0, Rank: i % 4}) {
			t.Fatalf("placement %d: %+v; want (w0,r%d)", i, got, i%4)
		}
	}
}

// TestFlat_WorkerMajor: a disaggregated pool's cursor walks the flattened
// (worker, rank) pairs in id order.
func TestFlat_WorkerMajor(t *testing.T) {
	f := placement.NewFlat(2, 2)
	want := []placement.Target{tg(0, 0), tg(0, 1), tg(1, 0), tg(1, 1), tg(0, 0)}
	for i, w := range want {
		if got := f.Next(); got != w {
			t.Fatalf("placement %d: %+v; want %+v", i, got, w)
		}
	}
}

func tg(w, r int) placement.Target { return placement.Target{Worker: w, Rank: r} }
