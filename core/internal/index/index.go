// Package index owns the identity-indexed tables of the G1 pools and G2
// tiers: a slice from block identity to a slot or entry number, -1 where
// the identity is absent.
package index

// None marks an identity a table does not hold.
const None int32 = -1

// Grow returns table extended to n entries, the new ones None, in one
// allocation (appending one at a time regrows a large slice by 1.25× each
// time: five times its final size allocated for a 2.4 MB table).
func Grow(table []int32, n int) []int32 {
	if n <= len(table) {
		return table
	}
	grown := make([]int32, n)
	copy(grown, table)
	for i := len(table); i < n; i++ {
		grown[i] = None
	}
	return grown
}
