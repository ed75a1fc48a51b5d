package record

import (
	"math"

	"github.com/kvsim/kvsim/core/engine"
	"github.com/kvsim/kvsim/core/scheduler"
	"github.com/kvsim/kvsim/core/vtime"
)

// A Locator finds each rank's passes in a window (engine.Observer): run a
// job with it, then with NewWindowRecorder(win, loc.Ranges()) to store only
// those passes. It keeps two numbers per rank, so the first run costs what
// a run without a record does.
type Locator struct {
	win    Window
	passes []int
	ranges []PassRange
}

// NewLocator returns a Locator for win.
func NewLocator(win Window) *Locator { return &Locator{win: win} }

// Attach is part of engine.Observer.
func (l *Locator) Attach(rk *engine.Rank) {
	l.passes = append(l.passes, 0)
	l.ranges = append(l.ranges, none)
}

// Focus is part of engine.Observer.
func (l *Locator) Focus(rk *engine.Rank) {}

// PassStart is part of engine.Observer.
func (l *Locator) PassStart(rk *engine.Rank, start vtime.Time) {}

// PassEnd notes one pass of rk (engine.Observer).
func (l *Locator) PassEnd(rk *engine.Rank, res *scheduler.PassResult, groupEnd vtime.Time) {
	l.note(rk.Index, res.Start, groupEnd)
}

func (l *Locator) note(k int, start, end vtime.Time) {
	l.passes[k]++
	p := l.passes[k]
	if l.win.has(&passEntry{start: start, end: end}, p) {
		r := &l.ranges[k]
		if r.From > r.To {
			r.From = p
		}
		r.To = p
	}
}

// Finish is part of engine.Observer: a rank whose changes trail its last
// pass gets one more, final line at the run's end (Recorder.Finish); where
// the window holds that line, the rank's range is left open past its
// passes so that the recorder keeps it if it comes.
func (l *Locator) Finish(e *engine.Engine) {
	now := e.Now()
	for k := range l.ranges {
		p := l.passes[k] + 1
		if !l.win.has(&passEntry{start: now, end: now}, p) {
			continue
		}
		r := &l.ranges[k]
		if r.From > r.To {
			r.From = p
		}
		r.To = math.MaxInt
	}
}

// Ranges returns each rank's passes in the window, by rank index.
func (l *Locator) Ranges() []PassRange { return l.ranges }

// Kept is how many pass lines the window holds over all ranks (the final
// lines a run may add not counted).
func (l *Locator) Kept() int64 {
	n := int64(0)
	for k, r := range l.ranges {
		if r.From <= r.To {
			n += int64(min(r.To, l.passes[k]) - r.From + 1)
		}
	}
	return n
}

// Open reports whether a rank's range was left open for a final line the
// run may add at its end (Finish).
func (l *Locator) Open() bool {
	for _, r := range l.ranges {
		if r.To == math.MaxInt {
			return true
		}
	}
	return false
}
