package index

// Map is an open-addressing hash table (linear probing, backward-shift
// deletion) from a nonnegative identity to a value. Its size follows the
// keys it holds, not the identities a run can create: a G1 pool or G2 tier
// holds at most its capacity of identities out of the millions a real trace
// names (docs/performance.md ("Real traces (Mooncake conversation)")).
// The zero Map is empty and ready to use; iteration (Range) is in slot
// order, a function of the operations applied, so it is deterministic.
//
// A key and its value share a slot, so a lookup reads one cache line where
// separate key and value arrays took two (the tables of a large G2 tier
// are megabytes, and nearly every probe misses the cache).
type Map[V any] struct {
	slots []slot[V]
	n     int
	shift uint // 64 - log2(len(slots))
}

type slot[V any] struct {
	key int32 // None where the slot is empty
	val V
}

// minSlots is the smallest table a Map allocates.
const minSlots = 16

// Reserve sizes m so it holds n keys without growing.
func (m *Map[V]) Reserve(n int) {
	want := minSlots
	for want < 2*n {
		want *= 2
	}
	if want > len(m.slots) {
		m.rehash(want)
	}
}

// Len is the number of keys m holds.
func (m *Map[V]) Len() int { return m.n }

// home is k's first slot. Eight consecutive identities (a request's
// blocks usually have consecutive ones) share a group of eight slots, so a
// walk over a request's blocks touches few cache lines; the groups are
// spread by Fibonacci hashing.
func (m *Map[V]) home(k int32) int {
	return int(uint64(uint32(k)>>3)*0x9e3779b97f4a7c15>>(m.shift+3))<<3 | int(k&7)
}

// Get returns k's value and whether m holds k (never for a negative k).
func (m *Map[V]) Get(k int32) (V, bool) {
	if m.n > 0 && k >= 0 {
		mask := len(m.slots) - 1
		for i := m.home(k); ; i = (i + 1) & mask {
			switch sl := &m.slots[i]; sl.key {
			case k:
				return sl.val, true
			case None:
				var zero V
				return zero, false
			}
		}
	}
	var zero V
	return zero, false
}

// Set gives k (nonnegative) the value v.
func (m *Map[V]) Set(k int32, v V) {
	if 2*(m.n+1) > len(m.slots) {
		m.rehash(max(minSlots, 2*len(m.slots)))
	}
	mask := len(m.slots) - 1
	for i := m.home(k); ; i = (i + 1) & mask {
		switch sl := &m.slots[i]; sl.key {
		case k:
			sl.val = v
			return
		case None:
			sl.key, sl.val = k, v
			m.n++
			return
		}
	}
}

// Upsert returns a pointer to k's value (nonnegative k), inserting the
// zero value when m does not hold k, and whether m held it: one probe where
// Get then Set take two. It grows the table exactly when Set would, so a
// sequence of operations leaves the same slot order either way. The
// pointer is valid until m's next change.
func (m *Map[V]) Upsert(k int32) (v *V, found bool) {
	if 2*(m.n+1) > len(m.slots) {
		m.rehash(max(minSlots, 2*len(m.slots)))
	}
	mask := len(m.slots) - 1
	for i := m.home(k); ; i = (i + 1) & mask {
		switch sl := &m.slots[i]; sl.key {
		case k:
			return &sl.val, true
		case None:
			var zero V
			sl.key, sl.val = k, zero
			m.n++
			return &sl.val, false
		}
	}
}

// Delete removes k (nothing when m does not hold it).
func (m *Map[V]) Delete(k int32) {
	if m.n == 0 || k < 0 {
		return
	}
	mask := len(m.slots) - 1
	i := m.home(k)
	for ; m.slots[i].key != k; i = (i + 1) & mask {
		if m.slots[i].key == None {
			return
		}
	}
	// Backward shift: move each later key of the probe run whose home
	// does not lie cyclically in (i, j] into the hole.
	for j := (i + 1) & mask; m.slots[j].key != None; j = (j + 1) & mask {
		h := m.home(m.slots[j].key)
		if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
			m.slots[i] = m.slots[j]
			i = j
		}
	}
	m.slots[i] = slot[V]{key: None}
	m.n--
}

// Range calls f for every key and value, in slot order.
func (m *Map[V]) Range(f func(k int32, v V)) {
	for i := range m.slots {
		if sl := &m.slots[i]; sl.key != None {
			f(sl.key, sl.val)
		}
	}
}

// Clone returns an independent copy of m.
func (m *Map[V]) Clone() Map[V] {
	c := *m
	c.slots = append([]slot[V](nil), m.slots...)
	return c
}

func (m *Map[V]) rehash(slots int) {
	old := m.slots
	m.slots = make([]slot[V], slots)
	for i := range m.slots {
		m.slots[i].key = None
	}
	m.shift = 64
	for s := slots; s > 1; s >>= 1 {
		m.shift--
	}
	m.n = 0
	mask := slots - 1
	for _, sl := range old {
		if sl.key == None {
			continue
		}
		j := m.home(sl.key)
		for m.slots[j].key != None {
			j = (j + 1) & mask
		}
		m.slots[j] = sl
		m.n++
	}
}
