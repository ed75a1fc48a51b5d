package timing

import (
	"fmt"
	"math"

	"github.com/kvsim/kvsim/core/vtime"
)

// The step models time one pass as one forward step of the whole batch,
// as BLIS does (docs/model/timing.md ("Roofline") and ("Trained physics")):
// a step time in whole microseconds (truncated, at least 1).

// stepWork is one request's prefill work in a pass: progress is the tokens
// with KV before the pass, n the tokens it computes, input its prompt length.
type stepWork struct {
	progress, n, input int
}

// stepBatch is a pass's per-request work: the prefill work and the decode
// steps' tokens before the pass, each in the order the scheduler added
// them; its slices are reused. Both models sum the prefill work before the
// decode steps (roofline) or each kind on its own (trained_physics), so
// two lists give them every sum in the order one list did.
type stepBatch struct {
	pf []stepWork
	dc []int
}

func (s *stepBatch) reset() { s.pf, s.dc = s.pf[:0], s.dc[:0] }

func (s *stepBatch) prefill(before, n, promptLen int) {
	// A recompute of generated tokens (after a preemption) attends over
	// what it recomputes, as a prompt would.
	s.pf = append(s.pf, stepWork{progress: before, n: n, input: max(promptLen, before+n)})
}

func (s *stepBatch) decode(before int) { s.dc = append(s.dc, before) }

// DefaultBeta is BLIS's bundled trained_physics coefficients
// (defaults.yaml, trained_physics_coefficients.beta_coeffs): β₁ₐ, β₂ₐ, β₃,
// β₄, β₅ (µs/layer), β₆ (µs/request), β₇ (µs/step), β₈ (µs/MoE layer),
// β₁ᵦ, β₂ᵦ, β_EP.
var DefaultBeta = []float64{0.152128, 0.0, 1.36252915, 0.752037, 32.09546717, 4.41684444,
	126.024825, 481.8613888, 0.0, 1.94710771, 0.752037}

// A Step is a roofline or trained_physics model of one role: an
// architecture on TP GPUs of one kind.
type Step struct {
	Kind Kind
	Arch Arch
	GPU  GPU
	TP   int
	Beta []float64 // trained_physics: 11 coefficients
	rc   *rooflineConsts
}

// NewStep checks and returns a step model.
func NewStep(kind Kind, a Arch, g GPU, tp int, beta []float64) (*Step, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	if tp <= 0 {
		return nil, fmt.Errorf("tensor parallelism must be positive, got %d", tp)
	}
	if kind == TrainedPhysics {
		if a.Heads%tp != 0 || a.kvHeads()%tp != 0 {
			return nil, fmt.Errorf("trained_physics needs num_attention_heads (%d) and num_key_value_heads (%d) divisible by tensor parallelism (%d)", a.Heads, a.kvHeads(), tp)
		}
		if beta == nil {
			beta = DefaultBeta
		}
		if len(beta) != 11 {
			return nil, fmt.Errorf("trained_physics takes 11 beta coefficients, got %d", len(beta))
		}
		for i, b := range beta {
			if !(b >= 0) || math.IsInf(b, 0) {
				return nil, fmt.Errorf("beta[%d] must be finite and non-negative, got %v", i, b)
			}
		}
	}
	st := &Step{Kind: kind, Arch: a, GPU: g, TP: tp, Beta: beta}
	if kind == Roofline {
		st.rc = newRooflineConsts(&st.Arch)
	}
	return st, nil
}

// Time returns the pass's step time in milliseconds and what bounds it;
// prefill and decode select which work the role charges. A pass with no
// such work takes none. tab is the caller's table of roofline decode terms
// (nil: none).
func (s *Step) Time(b *stepBatch, prefill, decode bool, tab *decodeTable) (vtime.Time, Bound) {
	var us int64
	var bound Bound
	if s.Kind == Roofline {
		us, bound = s.rooflineUs(b, prefill, decode, tab)
	} else {
		us, bound = s.physicsUs(b, prefill, decode)
	}
	return vtime.Time(float64(us) / 1000), bound
}

// boundOf names the larger of a step's compute and memory times.
func boundOf(compute, memory float64) Bound {
	if compute >= memory {
		return ComputeBound
	}
	return MemoryBound
}

// clampUs truncates a step time to whole microseconds, at least 1.
func clampUs(v float64) int64 {
	if math.IsNaN(v) || v >= math.MaxInt64 {
		return math.MaxInt64
	}
	return max(1, int64(v))
}

// layerSplit returns the MoE and dense layer counts (uniform MoE: all
// layers are MoE).
func (a *Arch) layerSplit() (moe, dense int) {
	if a.IsMoE() {
		return a.Layers, 0
	}
	return 0, a.Layers
}
