package index

import (
	"math/rand/v2"
	"slices"
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
	empty.Reserve(1000)
	if cap(empty.pages) != 1000/pageKeys+1 || empty.Len() != 0 {
		t.Errorf("Reserve(1000): room for %d pages, want %d", cap(empty.pages), 1000/pageKeys+1)
	}
}

// TestMapRangeOrderAndPages: Range visits keys in increasing order, a page
// holds pageKeys consecutive keys, and emptied pages are reused.
func TestMapRangeOrderAndPages(t *testing.T) {
	var m Map[int32]
	keys := []int32{500, 3, 64, 63, 0, 129}
	for _, k := range keys {
		m.Set(k, k*2)
	}
	if m.Pages() != 4 { // 0-63, 64-127, 128-191, 448-511
		t.Errorf("%d pages for %v, want 4", m.Pages(), keys)
	}
	var got []int32
	m.Range(func(k, v int32) {
		if v != 2*k {
			t.Errorf("Range: %d=%d", k, v)
		}
		got = append(got, k)
	})
	if want := []int32{0, 3, 63, 64, 129, 500}; !slices.Equal(got, want) {
		t.Errorf("Range order %v, want %v", got, want)
	}
	for _, k := range keys {
		m.Delete(k)
	}
	if m.Pages() != 0 || m.Len() != 0 {
		t.Errorf("after deleting every key: %d pages, %d keys", m.Pages(), m.Len())
	}
	m.Set(1000, 1)
	if len(m.pages) != 4 {
		t.Errorf("a new page was allocated (%d pages) where 4 were free", len(m.pages))
	}
	if v, ok := m.Get(1000); !ok || v != 1 {
		t.Errorf("Get(1000) = %d %v on a reused page", v, ok)
	}
	if _, ok := m.Get(1001); ok {
		t.Error("a reused page kept an old key")
	}
}

// TestMapUpsertEqualsGetSet applies the same random operations to two
// maps, one through Get then Set and one through Upsert: the found flags
// and the contents must agree.
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
			var ka, kb []int32
			a.Range(func(k, v int32) { ka = append(ka, k, v) })
			b.Range(func(k, v int32) { kb = append(kb, k, v) })
			if !slices.Equal(ka, kb) || a.Len() != b.Len() {
				t.Fatalf("step %d: the maps differ", step)
			}
		}
	}
}

// TestSetAll: SetAll leaves a map as Set key by key does, pages created
// and reused included.
func TestSetAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	var a, b Map[int32]
	for step := range 3000 {
		var keys []int32
		for range rng.IntN(6) {
			keys = append(keys, int32(rng.IntN(2000)))
		}
		vals := make([]int32, len(keys)+rng.IntN(2))
		for i := range vals {
			vals[i] = int32(rng.IntN(1000))
		}
		for i, k := range keys {
			a.Set(k, vals[i])
		}
		SetAll(&b, keys, vals)
		for range rng.IntN(8) {
			k := int32(rng.IntN(2000))
			a.Delete(k)
			b.Delete(k)
		}
		var ka, kb []int32
		var va, vb []int32
		a.Range(func(k, v int32) { ka, va = append(ka, k), append(va, v) })
		b.Range(func(k, v int32) { kb, vb = append(kb, k), append(vb, v) })
		if !slices.Equal(ka, kb) || !slices.Equal(va, vb) || a.Len() != b.Len() || a.Pages() != b.Pages() {
			t.Fatalf("step %d: Set gives %v=%v (%d pages), SetAll %v=%v (%d pages)", step, ka, va, a.Pages(), kb, vb, b.Pages())
		}
	}
}
