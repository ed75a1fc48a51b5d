package index

import (
	"math/rand/v2"
	"testing"
)

// TestMapAgainstGoMap applies random sets and deletes to a Map and a Go
// map and compares them after each step.
func TestMapAgainstGoMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var m Map[int32]
	ref := map[int32]int32{}
	for step := 0; step < 200000; step++ {
		k := int32(rng.IntN(3000))
		switch rng.IntN(3) {
		case 0, 1:
			v := int32(rng.IntN(1000))
			m.Set(k, v)
			ref[k] = v
		default:
			m.Delete(k)
			delete(ref, k)
		}
		if m.Len() != len(ref) {
			t.Fatalf("step %d: Len %d, want %d", step, m.Len(), len(ref))
		}
		q := int32(rng.IntN(3000))
		got, ok := m.Get(q)
		want, wok := ref[q]
		if ok != wok || got != want {
			t.Fatalf("step %d: Get(%d) = %d %v, want %d %v", step, q, got, ok, want, wok)
		}
	}
	n := 0
	m.Range(func(k, v int32) {
		if ref[k] != v {
			t.Errorf("Range: %d=%d, want %d", k, v, ref[k])
		}
		n++
	})
	if n != len(ref) {
		t.Errorf("Range saw %d keys, want %d", n, len(ref))
	}
	c := m.Clone()
	c.Set(5000, 1)
	if _, ok := m.Get(5000); ok {
		t.Error("Clone shares its table")
	}
	var empty Map[int32]
	if _, ok := empty.Get(3); ok || empty.Len() != 0 {
		t.Error("zero Map is not empty")
	}
	empty.Delete(3)
	empty.Reserve(100)
	if len(empty.slots) != 256 {
		t.Errorf("Reserve(100): %d slots, want 256", len(empty.slots))
	}
}

// TestMapUpsertEqualsGetSet applies the same random operations to two
// maps, one through Get then Set and one through Upsert: the found flags,
// the values and the slot layout (which fixes Range's order) must agree.
func TestMapUpsertEqualsGetSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var a, b Map[int32]
	for step := 0; step < 100000; step++ {
		k := int32(rng.IntN(2000))
		if rng.IntN(3) == 0 {
			a.Delete(k)
			b.Delete(k)
			continue
		}
		d := int32(rng.IntN(10))
		v, ok := a.Get(k)
		a.Set(k, v+d)
		p, found := b.Upsert(k)
		*p += d
		if found != ok {
			t.Fatalf("step %d: Upsert(%d) found %v, Get %v", step, k, found, ok)
		}
		if step%997 == 0 || step == 99999 {
			if len(a.slots) != len(b.slots) || a.n != b.n {
				t.Fatalf("step %d: %d/%d slots, %d/%d keys", step, len(a.slots), len(b.slots), a.n, b.n)
			}
			for i := range a.slots {
				if a.slots[i] != b.slots[i] {
					t.Fatalf("step %d: slot %d holds %d=%d and %d=%d", step, i, a.slots[i].key, a.slots[i].val, b.slots[i].key, b.slots[i].val)
				}
			}
		}
	}
}
