// Package timing owns the pass-time models of a scheduler pass
// (docs/model/timing.md): fixed (a constant per prefill and per decode),
// polynomial (aisimulate's native default), and, from a model architecture and
// a GPU, roofline and trained_physics (BLIS's analytical and physics-informed
// step times). The scheduler describes a pass's work to a Batch and asks the
// Model for its duration; fixed timing never reaches this package's
// arithmetic, so its pass times are the constants they always were.
package timing

import (
	"fmt"

	"github.com/kvsim/kvsim/core/vtime"
)

// Kind names a pass-time model.
type Kind uint8

const (
	Fixed Kind = iota
	Polynomial
	Roofline
	TrainedPhysics
)

// Type names, as written in timing.type.
const (
	TypeFixed          = "fixed"
	TypePolynomial     = "polynomial"
	TypeRoofline       = "roofline"
	TypeTrainedPhysics = "trained_physics"
)

// Types lists the timing types in the order the config and the page offer
// them.
var Types = []string{TypeFixed, TypePolynomial, TypeRoofline, TypeTrainedPhysics}

// KindOf returns the Kind of a timing type name.
func KindOf(name string) (Kind, bool) {
	switch name {
	case TypeFixed:
		return Fixed, true
	case TypePolynomial:
		return Polynomial, true
	case TypeRoofline:
		return Roofline, true
	case TypeTrainedPhysics:
		return TrainedPhysics, true
	}
	return Fixed, false
}

// String returns the type name of k.
func (k Kind) String() string { return Types[k] }

// A Model is one role's pass-time model.
type Model struct {
	Kind Kind
	// Polynomial: aisimulate's speedup_ratio (all pass time) and
	// decode_speedup_ratio (decode time, on top of speedup_ratio); 0 means
	// unscaled.
	Speedup, DecodeSpeedup float64
	// KVTokens is the rank's G1 capacity in tokens (blocks × block size), the
	// denominator of the polynomial's decode utilisation.
	KVTokens int64
	// Step is the roofline or trained_physics step model (nil otherwise).
	Step *Step
	// dcTab is the roofline's decode terms by context, filled as passes
	// need them (decodeTable): per Model, so runs never share one.
	dcTab decodeTable
}

// Validate reports a model that cannot time a pass.
func (m *Model) Validate() error {
	for _, r := range []float64{m.Speedup, m.DecodeSpeedup} {
		if !(r >= 0) || r > 1e300 {
			return fmt.Errorf("modeled speedup ratio must be finite and non-negative, got %v", r)
		}
	}
	if (m.Kind == Roofline || m.Kind == TrainedPhysics) && m.Step == nil {
		return fmt.Errorf("%s timing needs a model architecture and a GPU", m.Kind)
	}
	return nil
}

// A Batch is the work of one pass as the timing models see it. The
// scheduler resets it, adds each scheduled request's work, and asks the
// Model for the pass's duration.
type Batch struct {
	// Polynomial prefill aggregates, as aisimulate's vLLM scheduler forms
	// them: requests that compute prompt tokens, the sum of their prompt
	// lengths reached (prefix + new) and of their prefixes.
	PrefillCount        int
	TotalISL, TotalPref int64
	// Emitters and EmitLen: the requests that emit a token at the pass end
	// and the sum of their lengths (the polynomial's decode batch).
	Emitters int
	EmitLen  int64
	// Decode is set when some request makes a pure decode step.
	Decode bool
	// steps holds the per-request work for the step models; only they
	// need it (Steps).
	steps stepBatch
	Steps bool
}

// Reset empties b for a new pass; steps says whether it keeps each
// request's work (the step models need it, the polynomial does not).
func (b *Batch) Reset(steps bool) {
	// Field by field: copying a whole Batch would copy its slices' pointers
	// through the GC's write barrier while a collection is marking.
	b.PrefillCount, b.TotalISL, b.TotalPref = 0, 0, 0
	b.Emitters, b.EmitLen, b.Decode = 0, 0, false
	b.steps.reset()
	b.Steps = steps
}

// NeedsSteps tells whether the model reads each request's work.
func (m *Model) NeedsSteps() bool { return m.Kind == Roofline || m.Kind == TrainedPhysics }

// Prefill adds a request that computes n tokens after before, with a prompt
// of promptLen tokens (prefill work: docs/model/pass.md ("Pass timing")).
func (b *Batch) Prefill(before, n, promptLen int) {
	pb := min(before, promptLen)
	if pt := min(before+n, promptLen) - pb; pt > 0 {
		b.PrefillCount++
		b.TotalISL += int64(pb + pt)
		b.TotalPref += int64(pb)
	}
	if b.Steps {
		b.steps.prefill(before, n, promptLen)
	}
}

// DecodeStep adds a request that makes a pure decode step with before
// tokens of context.
func (b *Batch) DecodeStep(before int) {
	b.Decode = true
	if b.Steps {
		b.steps.decode(before)
	}
}

// Emit adds a request of length n that emits a token at the pass end.
func (b *Batch) Emit(n int) {
	b.Emitters++
	b.EmitLen += int64(n)
}

// A Bound says what limits a pass's step time in the step models
// (docs/model/timing.md ("What bounds a pass")).
type Bound uint8

const (
	NoBound Bound = iota // fixed and polynomial timing, or no work
	ComputeBound
	MemoryBound
)

// String is the bound's name in passes.jsonl ("" for NoBound).
func (b Bound) String() string {
	switch b {
	case ComputeBound:
		return "compute"
	case MemoryBound:
		return "memory"
	}
	return ""
}

// BoundOf is the Bound named s (NoBound for "" and unknown names).
func BoundOf(s string) Bound {
	switch s {
	case "compute":
		return ComputeBound
	case "memory":
		return MemoryBound
	}
	return NoBound
}

// Durations are a pass's prefill and decode times (the step models give
// the whole step as Prefill) and what bounds it.
type Durations struct {
	Prefill, Decode vtime.Time
	Bound           Bound
}

// Pass returns the duration of the pass b describes. prefill and decode say
// whether the role charges prefill and decode time (a decode role charges no
// prefill time, a prefill role no decode time).
func (m *Model) Pass(b *Batch, prefill, decode bool) Durations {
	switch m.Kind {
	case Polynomial:
		return m.polynomialPass(b, prefill, decode)
	case Roofline, TrainedPhysics:
		t, bound := m.Step.Time(&b.steps, prefill, decode && b.Decode, &m.dcTab)
		return Durations{Prefill: t, Bound: bound}
	}
	return Durations{}
}
