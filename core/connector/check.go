package connector

import (
	"fmt"
	"math"

	"github.com/kvsim/kvsim/core/vtime"
)

// Holds returns the G1 slots held by this rank's stores that have not been
// delivered (one entry per hold).
func (a *Adapter) Holds() []int32 {
	if a.G1Sources != HoldUntilCopied {
		return nil
	}
	var out []int32
	for _, t := range a.prepared {
		out = append(out, t.Slots...)
	}
	a.dom.eachInflight(func(t *Transfer) {
		if t.Owner == a && t.Kind == Store {
			out = append(out, t.Slots...)
		}
	})
	for _, t := range a.arrived {
		if t.Kind == Store {
			out = append(out, t.Slots...)
		}
	}
	return out
}

// Check verifies the G2 invariants of docs/invariants.md (G2-1 to G2-4).
func (a *Adapter) Check() error {
	t := a.dom.Tier
	if t.Used() > t.Capacity() {
		return fmt.Errorf("G2-1: %d entries exceed capacity %d", t.Used(), t.Capacity())
	}
	if err := t.Check(); err != nil {
		return err
	}
	if a.d2h.Tail < 0 || a.h2d.Tail < 0 || !a.d2h.Tail.IsSet() {
		return fmt.Errorf("G2-3: lane tail is not a time")
	}
	for k := range a.dom.lanes {
		prev := vtime.Time(math.Inf(-1))
		l := &a.dom.lanes[k]
		for _, tr := range l.q[l.head:] {
			if tr.Deadline < prev {
				return fmt.Errorf("G2-3: %s lane not monotone: transfer %d ends at %v before %v", Kind(k), tr.ID, tr.Deadline, prev)
			}
			prev = tr.Deadline
		}
	}
	return nil
}
