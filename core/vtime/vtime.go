// Package vtime owns virtual time: the replay's clock and every instant and
// duration measured on it. A Time is a number of virtual milliseconds,
// counted from the replay's start for an instant; the same type holds a
// duration (a pass time, a copy's transfer time, a trace delay), so that
// arithmetic on the clock stays plain: start + duration is an instant, the
// difference of two instants a duration.
//
// Time is a float64, not an integer count of some smaller unit: a copy
// lasts bytes / bandwidth, which no integer unit holds exactly, and the
// reports are defined on the float values.
//
// # Exact comparison
//
// The engine decides some things by asking whether two instants are the
// same (a worker does not start again at the instant of its last no-op
// pass; events at one instant go in a fixed order; runs of identical
// inter-token gaps are merged). Comparing floats exactly is sound here by
// one rule: every instant is produced by one sequence of additions on its
// clock (a pass ends at its start plus the pass time, a copy at its first
// byte plus its duration, a turn arrives at the previous completion plus
// its delay) and is then only copied, into heaps, records and events; it is
// never computed again along another path. Two happenings meant to be at one
// instant therefore hold bit-identical values, and IEEE arithmetic is the
// same natively and under wasm (the order of effects at one instant is in
// docs/model/engine.md). Code that compares instants for equality says so
// with Same or a comment naming this rule. Where a time is recomputed along
// another path (a fair-shared pool replays its jobs' remaining bytes at each
// rate change), the code does not rely on equality and snaps tiny
// remainders instead.
//
// Time has no String, Format or MarshalJSON method on purpose: fmt and
// encoding/json print it as the float64 it is, so every report, record and
// error message keeps its bytes.
package vtime

import "math"

// A Time is virtual milliseconds: an instant since the replay's start, or a
// duration.
type Time float64

// Never is later than every instant (+Inf): the time of an event that will
// not happen, and of a limit that is not set.
var Never = Time(math.Inf(1))

// Unset returns the "did not happen" value (NaN) that records hold for a
// time not reached yet. Test it with IsSet: NaN equals nothing, itself
// included.
func Unset() Time { return Time(math.NaN()) }

// IsSet reports whether t holds a time, not Unset.
func (t Time) IsSet() bool { return t == t }

// Same reports whether t and u are the same instant, compared exactly (see
// "Exact comparison" in the package comment). An Unset time is the same as
// nothing.
func (t Time) Same(u Time) bool { return t == u }
