package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// progress draws a one-line bar on stderr, fed by engine.Options.Progress.
// It stays silent for the first second, so short runs print nothing, and
// redraws at most ten times a second. A nil *progress does nothing.
type progress struct {
	w            io.Writer
	now          func() time.Time
	start, drawn time.Time
	shown        bool
}

const (
	progressDelay = time.Second
	progressEvery = 100 * time.Millisecond
	progressWidth = 30
)

// newProgress returns a bar writing to w, or nil when w is not a terminal.
func newProgress(w io.Writer, tty bool) *progress {
	if !tty {
		return nil
	}
	return &progress{w: w, now: time.Now, start: time.Now()}
}

func (p *progress) update(done, total int) {
	t := p.now()
	if t.Sub(p.start) < progressDelay || (p.shown && t.Sub(p.drawn) < progressEvery && done < total) {
		return
	}
	p.shown, p.drawn = true, t
	frac := 1.0
	if total > 0 {
		frac = min(float64(done)/float64(total), 1)
	}
	n := int(frac * progressWidth)
	fmt.Fprintf(p.w, "\r[%s%s] %3.0f%%  %d/%d requests  %.1fs", strings.Repeat("#", n),
		strings.Repeat(".", progressWidth-n), frac*100, done, total, t.Sub(p.start).Seconds())
}

// finish erases the bar if one was drawn.
func (p *progress) finish() {
	if p != nil && p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
