package connector_test

import "testing"

func TestScratch(t *testing.T) {
	w := world{Connector: v024, G1: 7, G2: 16, D2H: 0.1, H2D: 1}
	rows := []row{
		{ID: "A", At: 0, Hash: []int{1, 2, 3}, In: 9, Out: 1},
		{ID: "Z", At: 10, Hash: []int{11, 12, 13, 14}, In: 13, Out: 1}, // idle copies behind A's
		{ID: "B", At: 15, Hash: []int{21, 22, 23, 24}, In: 13, Out: 1}, // evicts a1, a0 from G1
		{ID: "R", At: 15, Hash: []int{1, 2, 3}, In: 9, Out: 1},
	}
	o := runWorld(t, w, rows, nil)
	o.dump()
}
