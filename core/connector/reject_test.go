package connector_test

import (
	"slices"
	"testing"
)

// TestRejectionIsNotAFinish: R's prompt (five blocks) exceeds the 4-block
// G1, so R is rejected right after its G2 lookup has hit A's blocks. Under
// offloading_v0_32 a lookup does not touch (touchOnLookup no), so R's
// rejection leaves the G2 order as A and B's finishes made it and C's store
// evicts A's blocks, the least recent. Were the rejection a finish, its
// re-rank would make A's blocks the most recent and C would evict B's
// (docs/model/g2.md ("Cancellation"), a Decision).
func TestRejectionIsNotAFinish(t *testing.T) {
	w := world{Connector: v032, G1: 4, G2: 4, D2H: 1, H2D: 1}
	rows := []row{
		{ID: "A", At: 0, Hash: []int{1, 2, 3}, In: 9, Out: 1},
		{ID: "B", At: 100, Hash: []int{4, 5, 6}, In: 9, Out: 1},
		{ID: "R", At: 200, Hash: []int{1, 2, 7, 8, 9}, In: 20, Out: 1},
		{ID: "C", At: 300, Hash: []int{10, 11, 12}, In: 9, Out: 1},
	}
	o := runWorld(t, w, rows, nil)
	if got := o.Rec("R").Status; got != "rejected" {
		t.Fatalf("R: status %q; want rejected (scenario broken)", got)
	}
	if l := o.Events("lookup", "R"); len(l) != 1 || l[0].Kind != "hit" {
		t.Fatalf("R's lookups %+v; want one hit (scenario broken)", l)
	}
	if got := o.InG2("A", 2); !slices.Equal(got, []bool{false, false}) {
		t.Errorf("A's blocks in G2 %v; want both evicted by C's store", got)
	}
	if got := o.InG2("B", 2); !slices.Equal(got, []bool{true, true}) {
		t.Errorf("B's blocks in G2 %v; want both kept", got)
	}
}
