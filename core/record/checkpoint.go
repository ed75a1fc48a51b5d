package record

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"unsafe"

	"github.com/kvsim/kvsim/core/internal/deepcopy"
)

// A recorder in an engine checkpoint (docs/model/engine.md ("Checkpoints")) is a
// pending one: a windowed recorder whose window is not known yet, so
// every rank is still before it. Such a recorder stores nothing; it keeps
// the mirror of each pool, the change counts and one placeholder per pass,
// the same whatever window comes later. Window then gives it the
// window of the job the checkpoint serves.

// NewPendingRecorder returns a windowed recorder whose window is set later
// (Window), before any rank reaches it.
func NewPendingRecorder() *Recorder {
	rr := NewRecorder()
	rr.pending = true
	rr.win = Window{Spec: "pending"}
	return rr
}

// pendingRange keeps a rank before its window for the whole run.
var pendingRange = PassRange{From: math.MaxInt, To: math.MaxInt}

// Pending tells whether rr's window is still to be set.
func (rr *Recorder) Pending() bool { return rr.pending }

// Window sets a pending recorder's window, as NewWindowRecorder(win,
// ranges) would have; it fails when a rank already ran a pass the window
// holds.
func (rr *Recorder) Window(win Window, ranges []PassRange) error {
	if !rr.pending {
		return fmt.Errorf("internal error: the recorder's window is already set")
	}
	if win.Whole() || win.Time && ranges == nil {
		return fmt.Errorf("internal error: a checkpoint serves pass windows only")
	}
	keep := make([]PassRange, len(rr.ranks))
	for i, r := range rr.ranks {
		keep[i] = passRange(win)
		if ranges != nil {
			keep[i] = none
			if i < len(ranges) {
				keep[i] = ranges[i]
			}
		}
		if k := keep[i]; k.From <= k.To && len(r.log.passes)+1 > k.From {
			return fmt.Errorf("internal error: rank %d ran %d passes, past the window's first (%d)", i, len(r.log.passes), k.From)
		}
	}
	rr.pending, rr.win, rr.ranges, rr.rec.window = false, win, ranges, win.Spec
	for i, r := range rr.ranks {
		r.keep = keep[i]
		if len(r.log.passes)+1 == r.keep.From && r.keep.From <= r.keep.To {
			r.startWindow()
		}
	}
	return nil
}

// AddCopyRules tells c how to copy a pending recorder inside an engine
// checkpoint: each rank's placeholders so far are shared (they never
// change once appended; the copy's next append copies them), the rest is
// copied. A recorder that stores anything cannot be copied so.
func AddCopyRules(c *deepcopy.Copier) {
	c.Custom(reflect.TypeFor[rankLog](), func(p unsafe.Pointer) unsafe.Pointer {
		rl := *(*rankLog)(p)
		if rl.g1.n > 0 || rl.events.n > 0 {
			panic("internal error: a checkpoint of a recorder that stores changes")
		}
		rl.passes, rl.ckpts = slices.Clip(rl.passes), slices.Clip(rl.ckpts)
		return unsafe.Pointer(&rl)
	})
}
