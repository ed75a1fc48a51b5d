package index

import "math/bits"

// Map is a table from a nonnegative identity to a value, held as pages of
// pageKeys consecutive identities: a page exists while it holds a key, and
// a directory by identity/pageKeys finds it. Its size follows the keys it
// holds, not the identities a run can create: a G1 pool or G2 tier holds
// at most its capacity of identities out of the millions a real trace
// names (docs/performance.md ("Real traces (Mooncake conversation)")).
//
// The identities a pool or tier holds come in runs (a request's new blocks
// are interned one after the other), so a request's blocks share a few
// pages and a lookup costs one memory access where a hash table's probe
// cost one cache miss per key (docs/performance.md ("Identity-paged
// indexes")). A page left empty returns to a free list, so a long run
// reuses pages instead of allocating them.
//
// The zero Map is empty and ready to use; Range visits keys in increasing
// order.
type Map[V any] struct {
	dir   []int32 // page number + 1 by key/pageKeys; 0: no page
	pages []page[V]
	free  []int32 // page numbers no key uses
}

// pageKeys is the number of consecutive identities one page holds.
const pageKeys = 64

type page[V any] struct {
	used uint64 // bit i: the page holds key base+i
	vals [pageKeys]V
}

// Reserve makes room for pages that hold about n keys without growing
// (consecutive keys share pages, so n/pageKeys pages, at least one).
func (m *Map[V]) Reserve(n int) {
	want := n/pageKeys + 1
	if want > cap(m.pages) {
		grown := make([]page[V], len(m.pages), want)
		copy(grown, m.pages)
		m.pages = grown
	}
}

// Len is the number of keys m holds, counted (tests and checks ask; a
// count kept up to date cost Delete and Upsert their inlining).
func (m *Map[V]) Len() int {
	n := 0
	for _, p := range m.dir {
		if p != 0 {
			n += bits.OnesCount64(m.pages[p-1].used)
		}
	}
	return n
}

// Pages is the number of pages in use (each pageKeys values and a word).
func (m *Map[V]) Pages() int { return len(m.pages) - len(m.free) }

// find returns k's page and bit, nil when k has no page.
//
// Keys are read as unsigned: a negative key is past every directory, and
// the page and bit need no sign corrections (this runs for every G1
// eviction, finalization and prefix lookup). It returns the bit, not k's
// place in the page: callers that shift by a place they are handed pay a
// test for shifts past 63 (3 % more instructions on the Mooncake run).
func (m *Map[V]) find(k int32) (*page[V], uint64) {
	u := uint32(k)
	if uint(u/pageKeys) >= uint(len(m.dir)) {
		return nil, 0
	}
	p := m.dir[u/pageKeys]
	if p == 0 {
		return nil, 0
	}
	return &m.pages[p-1], 1 << (u % pageKeys)
}

// Get returns k's value and whether m holds k (never for a negative k).
// Get and Delete stay within the compiler's inlining budget, so they
// inline without a profile too (sim.wasm, where a call costs most): each
// reads the page's number once, Delete's rare path is a call, and the map
// keeps no count of its keys (Len counts them). Get, GetOr and Ptr each
// spell the lookup out: written as calls of Ptr, they no longer inline
// into their callers (the offloading_v0_24 Mooncake run went from 10.905
// to 12.628 G instructions, docs/performance.md ("Calls a block taken
// out")).
func (m *Map[V]) Get(k int32) (v V, ok bool) {
	u := uint32(k)
	if d := uint(u / pageKeys); d < uint(len(m.dir)) {
		if p := m.dir[d]; p != 0 {
			if pg := &m.pages[p-1]; pg.used&(1<<(u%pageKeys)) != 0 {
				return pg.vals[u%pageKeys], true
			}
		}
	}
	return v, false
}

// GetOr returns k's value, or absent when m does not hold k: Get for a
// caller with a value that means absent (cheaper to inline than Get's
// pair, so that the caller inlines too).
func (m *Map[V]) GetOr(k int32, absent V) V {
	u := uint(uint32(k))
	if d := u / pageKeys; d < uint(len(m.dir)) {
		if p := m.dir[d]; p != 0 {
			if pg := &m.pages[p-1]; pg.used&(1<<(u%pageKeys)) != 0 {
				return pg.vals[u%pageKeys]
			}
		}
	}
	return absent
}

// Ptr returns a pointer to k's value, nil when m does not hold k; valid
// until m's next change. Like Get, it inlines.
func (m *Map[V]) Ptr(k int32) *V {
	u := uint(uint32(k))
	if d := u / pageKeys; d < uint(len(m.dir)) {
		if p := m.dir[d]; p != 0 {
			if pg := &m.pages[p-1]; pg.used&(1<<(u%pageKeys)) != 0 {
				return &pg.vals[u%pageKeys]
			}
		}
	}
	return nil
}

// Set gives k (nonnegative) the value v.
func (m *Map[V]) Set(k int32, v V) {
	p, _ := m.Upsert(k)
	*p = v
}

// Upsert returns a pointer to k's value (nonnegative k), inserting the
// zero value when m does not hold k, and whether m held it. The pointer is
// valid until m's next change.
func (m *Map[V]) Upsert(k int32) (v *V, found bool) {
	pg, bit := m.find(k)
	if pg == nil {
		pg, bit = m.newPage(k), 1<<(uint32(k)%pageKeys)
	}
	i := uint32(k) % pageKeys
	if pg.used&bit != 0 {
		return &pg.vals[i], true
	}
	pg.used |= bit
	var zero V
	pg.vals[i] = zero // Delete leaves a value behind
	return &pg.vals[i], false
}

// SetAll gives keys[i] the value vals[i] (nonnegative keys, vals at least
// as long): Set for each, with no call a key but for a page to create.
func SetAll[K ~int32, V any](m *Map[V], keys []K, vals []V) {
	vals = vals[:len(keys)]
	for i, k := range keys {
		u := uint(uint32(k))
		var pg *page[V]
		if d := u / pageKeys; d < uint(len(m.dir)) && m.dir[d] != 0 {
			pg = &m.pages[m.dir[d]-1]
		} else {
			pg = m.newPage(int32(k))
		}
		pg.used |= 1 << (u % pageKeys)
		pg.vals[u%pageKeys] = vals[i]
	}
}

// newPage gives k's page a page, reusing a free one, and returns it.
func (m *Map[V]) newPage(k int32) *page[V] {
	d := int(k / pageKeys)
	if d >= len(m.dir) {
		m.dir = append(m.dir, make([]int32, d+1-len(m.dir))...)
	}
	var p int32
	if f := len(m.free); f > 0 {
		p, m.free = m.free[f-1], m.free[:f-1]
	} else {
		m.pages = append(m.pages, page[V]{})
		p = int32(len(m.pages) - 1)
	}
	m.dir[d] = p + 1
	return &m.pages[p]
}

// Delete removes k (nothing when m does not hold it). The value stays
// (Upsert zeroes it when k returns): Delete writes only the page's word,
// not the value's cache line.
func (m *Map[V]) Delete(k int32) {
	u := uint(uint32(k))
	if d := u / pageKeys; d < uint(len(m.dir)) {
		if p := m.dir[d]; p != 0 {
			pg := &m.pages[p-1]
			if pg.used &^= 1 << (u % pageKeys); pg.used == 0 {
				m.freePage(d, p)
			}
		}
	}
}

// freePage gives back page p-1, directory entry d, which holds no key now.
func (m *Map[V]) freePage(d uint, p int32) {
	m.free = append(m.free, p-1)
	m.dir[d] = 0
}

// Range calls f for every key and value, in increasing key order.
func (m *Map[V]) Range(f func(k int32, v V)) {
	for d, p := range m.dir {
		if p == 0 {
			continue
		}
		pg := &m.pages[p-1]
		for u := pg.used; u != 0; u &= u - 1 {
			i := bits.TrailingZeros64(u)
			f(int32(d*pageKeys+i), pg.vals[i])
		}
	}
}

// Clone returns an independent copy of m.
func (m *Map[V]) Clone() Map[V] {
	return Map[V]{dir: append([]int32(nil), m.dir...), pages: append([]page[V](nil), m.pages...),
		free: append([]int32(nil), m.free...)}
}
