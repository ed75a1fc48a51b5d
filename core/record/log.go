package record

import (
	"slices"
	"sort"
)

// Slot state codes in the delta log; stateChars maps them to the
// characters of passes.jsonl.
const (
	codeFree uint8 = iota
	codePrivate
	codeActive
	codeIdle
	codeHeld
	codeReserved
	numCodes
)

var stateChars = [numCodes]byte{SlotFree, SlotPrivate, SlotActive, SlotIdle, SlotHeld, SlotReserved}

func codeOf(c byte) (uint8, bool) {
	for i, x := range stateChars {
		if x == c {
			return uint8(i), true
		}
	}
	return 0, false
}

// g1Delta is one G1 slot change: 12 bytes (slot and state packed).
type g1Delta struct {
	slotState uint32 // slot<<3 | state code
	block     int32
	owner     int32
}

func (d g1Delta) slot() int32 { return int32(d.slotState >> 3) }
func (d g1Delta) code() uint8 { return uint8(d.slotState & 7) }

func mkDelta(slot int32, code uint8, block, owner int32) g1Delta {
	return g1Delta{slotState: uint32(slot)<<3 | uint32(code), block: block, owner: owner}
}

// G2 operations in the delta log.
const (
	opPending  uint8 = iota // entry added or back to pending
	opResident              // resident, unpinned
	opPinned                // resident, pinned
	opListIn                // joined the policy list at its most-recent end
	opListOut               // left the policy list
	opEvict                 // left the tier
)

var opNames = [...]string{"pending", "resident", "pinned", "in", "out", "evict"}

// g2Op is one G2 change: 8 bytes.
type g2Op struct {
	block int32
	op    uint8
}

// checkpointEvery is how many changes a log accumulates, in units of its
// capacity, before the next checkpoint. Five capacities keep compact
// checkpoints (about 15 bytes per slot) near 3 bytes per change amortised
// and a seek under a millisecond for a 16,384-slot G1.
const checkpointEvery = 5

// g1State is a G1 pool rebuilt from the log.
type g1State struct {
	code         []uint8
	block, owner []int32
	since        []int32
	links        // the eviction queue, over slots
	idle         int
}

func newG1State(capacity int) *g1State {
	s := &g1State{code: make([]uint8, capacity), block: make([]int32, capacity), owner: make([]int32, capacity),
		since: make([]int32, capacity), links: newLinks(capacity)}
	for i := range s.block {
		s.block[i], s.owner[i] = -1, -1
	}
	return s
}

// g1Compact is a checkpoint of a g1State: the slot arrays and the eviction
// queue as a list (the links are rebuilt on restore).
type g1Compact struct {
	code                []uint8
	block, owner, since []int32
	queue               []int32
}

func (s *g1State) compact() g1Compact {
	c := g1Compact{code: slices.Clone(s.code), block: slices.Clone(s.block), owner: slices.Clone(s.owner),
		since: slices.Clone(s.since), queue: make([]int32, 0, s.idle)}
	for q := s.head; q >= 0; q = s.next[q] {
		c.queue = append(c.queue, q)
	}
	return c
}

// restore makes s a copy of checkpoint c, reusing s's storage.
func (s *g1State) restore(c *g1Compact) {
	copy(s.code, c.code)
	copy(s.block, c.block)
	copy(s.owner, c.owner)
	copy(s.since, c.since)
	s.links.reset()
	s.idle = 0
	for _, q := range c.queue {
		s.push(q)
	}
}

func (s *g1State) clone() *g1State {
	c := *s
	c.code = slices.Clone(s.code)
	c.block = slices.Clone(s.block)
	c.owner = slices.Clone(s.owner)
	c.since = slices.Clone(s.since)
	c.links = s.links.clone()
	return &c
}

func (s *g1State) apply(d g1Delta, pass int32) {
	slot, code := d.slot(), d.code()
	old := s.code[slot]
	if old == codeIdle && code != codeIdle {
		s.unlink(slot)
	}
	if code == codeIdle && old != codeIdle {
		s.push(slot)
	}
	if old != code || s.block[slot] != d.block {
		s.since[slot] = pass
	}
	s.code[slot], s.block[slot], s.owner[slot] = code, d.block, d.owner
}

func (s *g1State) push(slot int32) {
	s.links.pushBack(slot)
	s.idle++
}

func (s *g1State) unlink(slot int32) {
	s.links.unlink(slot)
	s.idle--
}

// slots renders the state as Slots with queue positions, reusing out.
func (s *g1State) slots(out []Slot) []Slot {
	if cap(out) < len(s.code) {
		out = make([]Slot, len(s.code))
	}
	out = out[:len(s.code)]
	for i := range out {
		out[i] = Slot{State: stateChars[s.code[i]], Block: s.block[i], Owner: s.owner[i], QueuePos: -1, Since: s.since[i]}
	}
	pos := int32(0)
	for q := s.head; q >= 0; q = s.next[q] {
		out[q].QueuePos = pos
		pos++
	}
	return out
}

// blockIndex maps block → entry with open addressing (linear probing,
// backward-shift deletion): cloning it is a copy of two arrays, which keeps
// seeks cheap.
type blockIndex struct {
	keys, vals []int32 // keys -1 when empty
	n          int
}

func (x *blockIndex) get(k int32) (int32, bool) {
	if len(x.keys) == 0 {
		return 0, false
	}
	m := len(x.keys) - 1
	for i := int(uint32(k)*2654435761) & m; ; i = (i + 1) & m {
		switch x.keys[i] {
		case k:
			return x.vals[i], true
		case -1:
			return 0, false
		}
	}
}

func (x *blockIndex) put(k, v int32) {
	if 2*(x.n+1) > len(x.keys) {
		old, oldv := x.keys, x.vals
		size := max(16, 2*len(old))
		x.keys, x.vals, x.n = make([]int32, size), make([]int32, size), 0
		for i := range x.keys {
			x.keys[i] = -1
		}
		for i, ok := range old {
			if ok >= 0 {
				x.put(ok, oldv[i])
			}
		}
	}
	m := len(x.keys) - 1
	for i := int(uint32(k)*2654435761) & m; ; i = (i + 1) & m {
		if x.keys[i] == k {
			x.vals[i] = v
			return
		}
		if x.keys[i] == -1 {
			x.keys[i], x.vals[i] = k, v
			x.n++
			return
		}
	}
}

func (x *blockIndex) del(k int32) {
	m := len(x.keys) - 1
	i := int(uint32(k)*2654435761) & m
	for x.keys[i] != k {
		if x.keys[i] == -1 {
			return
		}
		i = (i + 1) & m
	}
	x.n--
	// Shift later members of the probe run back so lookups never stop early.
	for j := (i + 1) & m; x.keys[j] != -1; j = (j + 1) & m {
		h := int(uint32(x.keys[j])*2654435761) & m
		if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
			x.keys[i], x.vals[i] = x.keys[j], x.vals[j]
			i = j
		}
	}
	x.keys[i] = -1
}

func (x *blockIndex) clone() blockIndex {
	return blockIndex{keys: slices.Clone(x.keys), vals: slices.Clone(x.vals), n: x.n}
}

// g2State is a G2 domain rebuilt from the log.
type g2State struct {
	byBlock blockIndex
	blocks  []int32
	state   []uint8 // opPending, opResident or opPinned
	links           // the eviction list, over entries
	inList  []bool
	added   []int64 // creation order, for listing entries outside the list
	nextAdd int64
	freeEnt []int32
}

func newG2State() *g2State { return &g2State{links: newLinks(0)} }

func (s *g2State) clone() *g2State {
	c := *s
	c.byBlock = s.byBlock.clone()
	c.blocks = slices.Clone(s.blocks)
	c.state = slices.Clone(s.state)
	c.links = s.links.clone()
	c.inList = slices.Clone(s.inList)
	c.added = slices.Clone(s.added)
	c.freeEnt = slices.Clone(s.freeEnt)
	return &c
}

func (s *g2State) entry(block int32) int32 {
	if e, ok := s.byBlock.get(block); ok {
		return e
	}
	var e int32
	if n := len(s.freeEnt); n > 0 {
		e = s.freeEnt[n-1]
		s.freeEnt = s.freeEnt[:n-1]
		s.blocks[e], s.state[e], s.prev[e], s.next[e], s.inList[e] = block, opPending, -1, -1, false
		s.added[e] = s.nextAdd
	} else {
		e = int32(len(s.blocks))
		s.blocks = append(s.blocks, block)
		s.state = append(s.state, opPending)
		s.links.grow()
		s.inList = append(s.inList, false)
		s.added = append(s.added, s.nextAdd)
	}
	s.nextAdd++
	s.byBlock.put(block, e)
	return e
}

func (s *g2State) apply(o g2Op) {
	switch o.op {
	case opEvict:
		if e, ok := s.byBlock.get(o.block); ok {
			if s.inList[e] {
				s.unlink(e)
			}
			s.byBlock.del(o.block)
			s.freeEnt = append(s.freeEnt, e)
		}
	case opListIn:
		e := s.entry(o.block)
		if s.inList[e] {
			s.unlink(e)
		}
		s.push(e)
	case opListOut:
		if e, ok := s.byBlock.get(o.block); ok && s.inList[e] {
			s.unlink(e)
		}
	default:
		s.state[s.entry(o.block)] = o.op
	}
}

func (s *g2State) push(e int32) {
	s.links.pushBack(e)
	s.inList[e] = true
}

func (s *g2State) unlink(e int32) {
	s.links.unlink(e)
	s.inList[e] = false
}

// entries renders the domain: listed entries in eviction order, then the
// others in the order they were added.
func (s *g2State) entries() []Entry {
	out := make([]Entry, 0, s.byBlock.n)
	order := int32(0)
	for e := s.head; e >= 0; e = s.next[e] {
		en := Entry{Block: s.blocks[e], State: entryChar(s.state[e]), Order: -1}
		if s.state[e] == opResident {
			en.Order = order
			order++
		}
		out = append(out, en)
	}
	var rest []int32
	for i, k := range s.byBlock.keys {
		if e := s.byBlock.vals[i]; k >= 0 && !s.inList[e] {
			rest = append(rest, e)
		}
	}
	sort.Slice(rest, func(i, j int) bool { return s.added[rest[i]] < s.added[rest[j]] })
	for _, e := range rest {
		out = append(out, Entry{Block: s.blocks[e], State: entryChar(s.state[e]), Order: -1})
	}
	return out
}

func entryChar(op uint8) byte {
	switch op {
	case opPending:
		return EntryPending
	case opPinned:
		return EntryPinned
	}
	return EntryResident
}
