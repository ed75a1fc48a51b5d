package engine

import (
	"fmt"

	"github.com/kvsim/kvsim/core/g1"
	"github.com/kvsim/kvsim/core/request"
)

// check runs the invariant checker of docs/invariants.md on one rank: the
// pool's own invariants, then that every use count on a G1 copy is
// accounted for by a request's block table, a load reservation or a store
// hold.
func (e *Engine) check(rk *Rank) error {
	p := rk.Pool
	if err := p.Check(); err != nil {
		return err
	}
	refs := make([]int32, p.Capacity())
	pins := make([]int32, p.Capacity())
	holds := make([]int32, p.Capacity())
	owned := make([]int32, p.Capacity())
	count := func(r *request.Request) {
		for _, s := range r.Slots {
			owned[s]++
			if p.Inspect(s).State == g1.Cached {
				refs[s]++
			}
		}
		if ld := r.Host.Load; ld != nil {
			for _, s := range ld.PrefixSlots {
				pins[s]++
			}
			for _, s := range ld.DestSlots {
				owned[s]++
				if ld.Done {
					refs[s]++
				}
			}
		}
	}
	for _, r := range rk.Running() {
		count(r)
		if need := (r.Computed + e.bs - 1) / e.bs; len(r.Slots) < need {
			return fmt.Errorf("S-1: running request %d computed %d tokens with only %d blocks", r.Index, r.Computed, len(r.Slots))
		}
	}
	// P/D: prefill requests holding their source blocks, and decode
	// reservations whose transfer is in flight (hit blocks pinned, fresh
	// slots private).
	for idx, src := range e.srcRank {
		if src == rk && src != nil {
			for _, s := range e.reqs[idx].Slots {
				owned[s]++
				if p.Inspect(s).State == g1.Cached {
					refs[s]++
				}
			}
		}
	}
	for _, h := range e.handoffs {
		if h.dr == rk {
			for j, s := range h.dst.Slots {
				if j < h.hit {
					pins[s]++
				} else {
					owned[s]++
				}
			}
		}
	}
	rk.EachWaiting(func(r *request.Request) {
		if len(r.Slots) > 0 {
			count(r)
		} else if r.Host.Load != nil {
			count(r)
		}
	})
	if rk.Host != nil {
		for _, h := range rk.Host.Holds() {
			holds[h]++
		}
	}
	for s := int32(0); s < int32(p.Capacity()); s++ {
		sl := p.Inspect(s)
		switch sl.State {
		case g1.Private:
			if owned[s] != 1 {
				return fmt.Errorf("G1-5: private slot %d is owned %d times", s, owned[s])
			}
		case g1.Cached:
			if sl.Ref != refs[s] || sl.Pin != pins[s] || sl.Hold != holds[s] {
				return fmt.Errorf("G1-5: cached slot %d has ref %d pin %d hold %d; requests account for %d, %d, %d",
					s, sl.Ref, sl.Pin, sl.Hold, refs[s], pins[s], holds[s])
			}
		}
	}
	if rk.Host != nil {
		if err := rk.Host.Check(); err != nil {
			return err
		}
	}
	return nil
}
