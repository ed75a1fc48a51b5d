package record_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kvsim/kvsim/core/internal/harness"
	"github.com/kvsim/kvsim/core/record"
	"github.com/kvsim/kvsim/core/vtime"
)

// TestDiffFollowsDuplicateCopies: Diff keeps each run's G1 holdings up to
// date change by change, counting the copies of a block held in several
// slots (requests that compute the same prefix in one pass); the
// package's tests check them against the slots at every pass Diff looks
// at (export_test.go). Bursts of requests over a few shared prefixes
// make such copies: the test fails unless some pass holds one.
func TestDiffFollowsDuplicateCopies(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			var rows []harness.Row
			for i := range 40 {
				at := vtime.Time(i / 5 * 30) // bursts of five
				hash := []int{1 + rng.IntN(3)}
				for range 1 + rng.IntN(4) {
					hash = append(hash, 10*hash[len(hash)-1]+rng.IntN(2))
				}
				rows = append(rows, harness.Row{ID: fmt.Sprint("r", i), At: at, Hash: hash, Out: 1 + rng.IntN(4)})
			}
			var recs []*record.Record
			for _, conn := range []string{"offloading_v0_24", "simple_cpu_v0_32"} {
				recs = append(recs, recordWorld(t, harness.World{Connector: conn, G1: 24, G2: 8, MaxSeq: 5}, rows))
			}
			if !holdsDuplicates(t, recs[0]) {
				t.Fatal("no pass holds two cached copies of a block")
			}
			for _, ab := range [][2]int{{0, 1}, {1, 0}, {0, 0}} {
				d, err := record.Diff(recs[ab[0]], recs[ab[1]], 0)
				if err != nil {
					t.Fatal(err)
				}
				if (ab[0] == ab[1]) != (d.FirstDivergent == 0) {
					t.Errorf("runs %v: first divergence at pass %d", ab, d.FirstDivergent)
				}
			}
		})
	}
}

// holdsDuplicates tells whether some pass of rank 0 holds two cached
// copies of one block.
func holdsDuplicates(t *testing.T, r *record.Record) bool {
	var snap record.Snapshot
	for p := 1; p <= r.NumLines(0); p++ {
		if err := r.SeekInto(0, p, &snap); err != nil {
			t.Fatal(err)
		}
		seen := map[int32]bool{}
		for _, s := range snap.G1 {
			if s.Block < 0 || s.State == record.SlotFree || s.State == record.SlotPrivate {
				continue
			}
			if seen[s.Block] {
				return true
			}
			seen[s.Block] = true
		}
	}
	return false
}
