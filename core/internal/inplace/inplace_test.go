package inplace

import (
	"slices"
	"testing"
)

// TestStore: the field ends up equal to the slice stored, in place or not.
func TestStore(t *testing.T) {
	backing := make([]int, 0, 8)
	field := backing[:2]
	for _, s := range [][]int{
		append(backing[:0], 1, 2, 3),           // grown in place
		backing[:0],                            // emptied
		append(backing[:0], make([]int, 9)...), // grown elsewhere
		nil,
		{4, 5},
	} {
		Store(&field, s)
		if len(field) != len(s) || cap(field) != cap(s) || !slices.Equal(field, s) ||
			(cap(s) > 0 && &field[:1][0] != &s[:1][0]) {
			t.Fatalf("stored %v (len %d cap %d), field %v (len %d cap %d)", s, len(s), cap(s), field, len(field), cap(field))
		}
	}
}
