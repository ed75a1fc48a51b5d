// Package load owns when sessions start and when their next turns become
// ready (docs/model/traffic.md ("Load models")): closed-loop concurrency
// counted in sessions, open-loop trace timestamps with speedup, and synthetic
// Poisson or constant-rate arrivals.
package load

import (
	"math/rand/v2"

	"github.com/kvsim/kvsim/core/vtime"
)

// Mode of a driver.
type Mode uint8

const (
	// Closed keeps up to Concurrency sessions active; a finished session
	// hands its slot to the next at the same instant.
	Closed Mode = iota
	// Open starts every session at its own arrival time.
	Open
)

// A Driver decides session starts. It is deterministic for a given seed.
type Driver struct {
	mode        Mode
	concurrency int
	speedup     float64
	arrivals    []vtime.Time // open loop: first-turn arrival per session
	sessions    int
	active      int
	next        int
}

// NewClosed returns a closed-loop driver over n sessions.
func NewClosed(n, concurrency int) *Driver {
	return &Driver{mode: Closed, concurrency: concurrency, sessions: n, speedup: 1}
}

// NewClosedScaled is NewClosed whose delays are divided by speedup
// (agentic lanes under trace_timestamps).
func NewClosedScaled(n, concurrency int, speedup float64) *Driver {
	d := NewClosed(n, concurrency)
	if speedup > 0 {
		d.speedup = speedup
	}
	return d
}

// NewTimestamps returns an open-loop driver whose sessions arrive at the
// given (normalised) times divided by speedup.
func NewTimestamps(arrivals []vtime.Time, speedup float64) *Driver {
	a := make([]vtime.Time, len(arrivals))
	for i, t := range arrivals {
		a[i] = vtime.Time(float64(t) / speedup)
	}
	return &Driver{mode: Open, arrivals: a, sessions: len(a), speedup: speedup}
}

// NewPoisson returns an open-loop driver with n sessions arriving as a
// Poisson process of rate per second (exponential gaps from a PCG generator
// seeded with seed; the first session arrives after the first gap).
func NewPoisson(n int, rate float64, seed int64) *Driver {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6b7673696d))
	a := make([]vtime.Time, n)
	var t vtime.Time
	for i := range a {
		t += vtime.Time(rng.ExpFloat64() * 1000 / rate)
		a[i] = t
	}
	return &Driver{mode: Open, arrivals: a, sessions: n, speedup: 1}
}

// NewConstantRate returns an open-loop driver with n sessions arriving every
// 1000/rate ms, the first at 0.
func NewConstantRate(n int, rate float64) *Driver {
	a := make([]vtime.Time, n)
	for i := range a {
		a[i] = vtime.Time(float64(i) * 1000 / rate)
	}
	return &Driver{mode: Open, arrivals: a, sessions: n, speedup: 1}
}

// Start calls start for every session that begins at run start (closed
// loop) or at its arrival time (open loop), in session order.
func (d *Driver) Start(start func(session int, at vtime.Time)) { d.StartAt(0, start) }

// StartAt is Start for a closed loop that begins at at (agentic warmup's
// barrier); an open loop keeps its arrival times.
func (d *Driver) StartAt(at vtime.Time, start func(session int, at vtime.Time)) {
	if d.mode == Open {
		for i, t := range d.arrivals {
			start(i, t)
		}
		d.next = d.sessions
		return
	}
	for d.active < d.concurrency && d.next < d.sessions {
		d.active++
		d.next++
		start(d.next-1, at)
	}
}

// Pending is the number of sessions a closed loop has not started.
func (d *Driver) Pending() int { return d.sessions - d.next }

// Delay scales a trace delay for this driver (speedup under timestamps).
func (d *Driver) Delay(ms vtime.Time) vtime.Time { return vtime.Time(float64(ms) / d.speedup) }

// SessionDone tells the driver a session ended at t; a closed loop starts
// the next pending session at the same instant.
func (d *Driver) SessionDone(at vtime.Time, start func(session int, at vtime.Time)) {
	if d.mode != Closed {
		return
	}
	d.active--
	for d.active < d.concurrency && d.next < d.sessions {
		d.active++
		d.next++
		start(d.next-1, at)
	}
}

// Unbounded is +Inf, for stop times that are not set.
var Unbounded = vtime.Never
