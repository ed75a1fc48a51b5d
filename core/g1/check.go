package g1

import "fmt"

// Check verifies the pool's own invariants (docs/invariants.md, G1-1 to
// G1-4) and returns the first violation.
func (p *Pool) Check() error {
	var free, private, cached int
	for i := range p.slots {
		sl := &p.slots[i]
		if sl.ref < 0 || sl.pin < 0 || sl.hold < 0 {
			return fmt.Errorf("G1-2: slot %d has a negative use count (ref %d pin %d hold %d)", i, sl.ref, sl.pin, sl.hold)
		}
		switch sl.state {
		case Free:
			free++
		case Private:
			private++
		case Cached:
			cached++
			if p.firstCopy(sl.id) == nilSlot {
				return fmt.Errorf("G1-4: cached slot %d (identity %d) is not indexed", i, sl.id)
			}
		}
	}
	if free+private+cached != len(p.slots) || free != len(p.free) {
		return fmt.Errorf("G1-1: free %d (list %d) + private %d + cached %d != capacity %d", free, len(p.free), private, cached, len(p.slots))
	}
	listed := make([]bool, len(p.slots))
	for _, s := range p.free {
		if s < 0 || int(s) >= len(p.slots) || listed[s] || p.slots[s].state != Free {
			return fmt.Errorf("G1-1: the free list holds slot %d, which is not a free slot listed once", s)
		}
		listed[s] = true
	}
	n, holes := 0, 0
	for i, e := range p.q[p.qHead:] {
		s := e.slot
		id, dup := e.ident()
		switch {
		case s == nilSlot:
			holes++
			continue
		case s < 0 || int(s) >= len(p.slots) || listed[s]:
			return fmt.Errorf("G1-3: the eviction queue holds slot %d, which is not a slot listed once", s)
		case !p.unused(s):
			return fmt.Errorf("G1-3: slot %d is in the eviction queue but not idle", s)
		case p.slots[s].qpos != p.qBase+uint32(p.qHead+i) || p.slots[s].id != id || p.slots[s].dup != dup:
			return fmt.Errorf("G1-3: the eviction queue's entry for slot %d (identity %d, links %v) is not where the slot says, or names another identity, or not its links", s, id, dup)
		}
		listed[s] = true
		n++
	}
	if holes != p.qHoles {
		return fmt.Errorf("G1-3: the eviction queue has %d holes but counts %d", holes, p.qHoles)
	}
	idle := 0
	for i := range p.slots {
		unused := p.unused(int32(i))
		if unused {
			idle++
		}
		if p.slots[i].queued != unused { // idle() answers from the flag
			return fmt.Errorf("G1-3: slot %d is marked queued %v but idle %v", i, p.slots[i].queued, unused)
		}
	}
	if n != p.qLen || idle != n {
		return fmt.Errorf("G1-3: eviction queue holds %d copies (length %d) but %d are idle", n, p.qLen, idle)
	}
	var err error
	p.copies.Range(func(id int32, r copyRange) {
		for c := r.first; c != nilSlot && err == nil; c = p.dupOf(c).next {
			if p.slots[c].state != Cached || int32(p.slots[c].id) != id {
				err = fmt.Errorf("G1-4: identity %d indexes slot %d holding %d", id, c, p.slots[c].id)
			}
		}
	})
	return err
}
