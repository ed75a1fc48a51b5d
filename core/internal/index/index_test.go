package index

import (
	"slices"
	"testing"
)

func TestGrow(t *testing.T) {
	a := []int32{3, 4}
	if got := Grow(a, 1); &got[0] != &a[0] || len(got) != 2 {
		t.Error("Grow shrank or copied a table already long enough")
	}
	if got := Grow(a, 5); !slices.Equal(got, []int32{3, 4, None, None, None}) {
		t.Errorf("Grow = %v", got)
	}
	if got := Grow(nil, 2); !slices.Equal(got, []int32{None, None}) {
		t.Errorf("Grow(nil) = %v", got)
	}
}
