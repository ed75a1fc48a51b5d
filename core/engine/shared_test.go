package engine_test

// A cluster_shared G2 pool through the engine: one worker with four DP
// ranks in lockstep, each rank's link at 32 GB/s under an 80 GB/s pool
// (docs/model/cases.md ("Case D: smaller checks"),
// docs/model/transfers.md ("Fair-shared pools")).

import (
	"math"
	"testing"

	"github.com/kvsim/kvsim/core/vtime"
)

// TestSharedPool_FairShareThroughTheEngine: every rank prefills one request
// in the group pass [0,2] and submits its store of n 1 MB blocks at the
// group end. The store completion times follow the fair-share rule.
func TestSharedPool_FairShareThroughTheEngine(t *testing.T) {
	for _, c := range []struct {
		name    string
		blocks  []int // store size per rank (one request per rank)
		latency vtime.Time
		want    []vtime.Time
	}{
		// 4 × 20 GB/s: 20 MB take 1 ms.
		{"four ranks at 20 GB/s", []int{20, 20, 20, 20}, 0, []vtime.Time{3, 3, 3, 3}},
		// 3 × 26.67 GB/s: 20 MB take 0.75 ms.
		{"three ranks at 26.67 GB/s", []int{20, 20, 20}, 0, []vtime.Time{2.75, 2.75, 2.75}},
		// Latency to first byte: nothing moves before 2.5.
		{"latency", []int{20, 20, 20, 20}, 0.5, []vtime.Time{3.5, 3.5, 3.5, 3.5}},
		// The 10 MB store ends at 2.5; the others then share 80 three ways
		// and move their last 10 MB at 26.67 GB/s: 2.875.
		{"a completion raises the others' rates", []int{20, 10, 20, 20}, 0, []vtime.Time{2.875, 2.5, 2.875, 2.875}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := world{G1: 32, G2: 256, Budget: 128, DP: 4, Scope: "cluster_shared",
				D2H: 32, H2D: 32, PoolD2H: 80, PoolH2D: 80, Latency: c.latency}
			var rows []row
			ids := []string{"r0", "r1", "r2", "r3"}
			next := 1
			for i, n := range c.blocks {
				h := make([]int, n+1)
				for j := range h {
					h[j] = next
					next++
				}
				rows = append(rows, row{ID: ids[i], At: 0, Hash: h, In: 4*n + 1, Out: 1})
			}
			o := runWorld(t, w, rows, nil)
			o.AllCompleted()
			for i := range c.blocks {
				id := ids[i]
				if r := o.Rec(id); int(r.Routing[0].DPRank) != i {
					t.Fatalf("%s on DP rank %d; want %d", id, r.Routing[0].DPRank, i)
				}
				sub := o.Transfers("d2h", id)
				if len(sub) != 1 || sub[0].At != 2 || len(sub[0].Keys) != c.blocks[i] {
					t.Fatalf("%s's stores %+v; want one of %d blocks submitted at 2", id, sub, c.blocks[i])
				}
				var done []vtime.Time
				for _, x := range o.Events("complete", id) {
					done = append(done, x.At)
				}
				if len(done) != 1 || math.Abs(float64(done[0]-c.want[i])) > 1e-9 {
					t.Errorf("%s's store completed at %v; want %v", id, done, c.want[i])
				}
			}
			if d := o.E.SharedDomains(); len(d) != 1 || d[0].Tier.NumResident() != sum(c.blocks) {
				t.Errorf("shared domains %d, resident %d; want 1, %d", len(d), d[0].Tier.NumResident(), sum(c.blocks))
			}
		})
	}
}

func sum(v []int) int {
	s := 0
	for _, x := range v {
		s += x
	}
	return s
}
