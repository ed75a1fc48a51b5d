package record

import (
	"fmt"
	"math"
)

// A recorder in an engine checkpoint (docs/model/engine.md ("Checkpoints")) is a
// pending one: a windowed recorder whose window is not known yet, so
// every rank is still before it. Such a recorder stores nothing: its
// ranks' G1 pools are quiet and keep the slots' ages and the change
// counts themselves, and it keeps the last pass's placeholder
// (rankLog.skipped), the same whatever window comes later, so an engine
// copy copies it whole. Window then gives it the window of the
// job the checkpoint serves.

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
		keep[i] = keepFor(win, ranges, i)
		if k := keep[i]; k.From <= k.To && r.log.lines()+1 > k.From {
			return fmt.Errorf("internal error: rank %d ran %d passes, past the window's first (%d)", i, r.log.lines(), k.From)
		}
	}
	rr.pending, rr.win, rr.ranges, rr.rec.window = false, win, ranges, win.Spec
	for i, r := range rr.ranks {
		r.keep = keep[i]
		if r.log.lines()+1 == r.keep.From && r.keep.From <= r.keep.To {
			r.startWindow()
		}
	}
	return nil
}
