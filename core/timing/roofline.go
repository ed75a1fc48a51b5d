package timing

import "math"

// Roofline is BLIS's analytical step time (docs/model/timing.md
// ("Roofline")): every request's FLOPs at the GPU's peak times the phase's
// utilisation, against the weights (loaded once per step) plus every
// request's KV and activation bytes at peak bandwidth; the step takes the
// larger of the two. The arithmetic is BLIS's, operation for operation (so
// the step times are its to the microsecond); what depends on the
// architecture alone is computed once, in the order BLIS computes it.

// rooflineConsts are the per-architecture factors of BLIS's per-request
// FLOPs and bytes.
type rooflineConsts struct {
	L, d, dHead          float64
	qkv                  float64 // d·d + 2·d·dKV
	attn4h, vec5h        float64 // 4·heads; 5·heads
	mlp                  float64 // 2 (matrices) · d · intermediate
	moe, dense           float64 // MoE and dense layers
	k                    float64 // experts per token
	denseWeights         float64 // weight bytes of a dense model (MoE: per step)
	attnWeights          float64 // attention weights of all layers
	kvPerToken, actPerTk float64 // KV bytes per token; activation bytes per token
}

func newRooflineConsts(a *Arch) *rooflineConsts {
	d := float64(a.Hidden)
	L := float64(a.Layers)
	h := float64(a.Heads)
	dHead := d / h
	kvh := float64(a.kvHeads())
	dKV := kvh * dHead
	dFF := float64(a.Intermediate)
	moe, dense := a.layerSplit()
	c := &rooflineConsts{L: L, d: d, dHead: dHead, qkv: d*d + 2*d*dKV,
		attn4h: 4 * h, vec5h: 5 * h, mlp: 2 * d * dFF, moe: float64(moe), dense: float64(dense),
		k: float64(a.ExpertsPerToken)}
	c.attnWeights = (d*(d+2*dKV) + (d * d)) * L
	if dense > 0 {
		c.denseWeights = (c.attnWeights + (0 + c.mlp*c.dense)) * a.BytesPerParam
	}
	c.kvPerToken = 2 * L * kvh * dHead * a.BytesPerParam
	c.actPerTk = L * d * a.BytesPerParam
	return c
}

// flops is one request's FLOPs (BLIS's calculateTransformerFlops):
// attention GEMMs (projections and scores), vector work, and the MLP (MoE:
// the routed experts' share).
func (c *rooflineConsts) flops(seq, newT float64) float64 {
	gemm := (2*newT*c.qkv + 2*newT*c.d*c.d) * c.L
	ctx := seq
	if newT > 1 {
		ctx = seq + (newT-1)/2.0
	}
	attn := c.attn4h * newT * ctx * c.dHead
	vector := (c.vec5h * newT * ctx) + 2*newT*c.d
	gemm += attn * c.L
	sram := vector * c.L
	if c.moe > 0 {
		gemm += 2 * newT * c.mlp * c.k * c.moe
	}
	if c.dense > 0 {
		gemm += 2 * newT * c.mlp * c.dense
	}
	return gemm + sram
}

// weights is the weight bytes of a step of newT tokens (BLIS's
// calculateMemoryAccessBytes): MoE loads the expected distinct experts.
func (c *rooflineConsts) weights(a *Arch, newT float64) float64 {
	if c.moe == 0 {
		return c.denseWeights
	}
	n := float64(a.Experts)
	nEff := n * (1.0 - math.Pow((n-c.k)/n, newT))
	var dense float64
	if c.dense > 0 {
		dense = c.mlp * c.dense
	}
	return (c.attnWeights + (c.mlp*nEff*c.moe + dense)) * a.BytesPerParam
}

// dynamic is one request's bytes beyond the weights: KV written and read,
// activations (BLIS subtracts the weights from the total, and so do we).
func (c *rooflineConsts) dynamic(a *Arch, seq, newT float64) float64 {
	w := c.weights(a, newT)
	total := w + c.kvPerToken*newT + c.kvPerToken*seq + c.actPerTk*newT
	return total - w
}

// rooflineUs is BLIS's rooflineStepTime in microseconds, and whether its
// compute or its memory time was the larger.
func (s *Step) rooflineUs(b *stepBatch, prefill, decode bool, tab *decodeTable) (int64, Bound) {
	compute, mem, ok := s.rooflineTimes(b, prefill, decode, tab)
	if !ok {
		return 0, NoBound
	}
	return clampUs(math.Max(compute, mem) * 1e6), boundOf(compute, mem)
}

// rooflineTimes is the step's compute and memory times in seconds (ok:
// the step has work). Each request's terms are added in BLIS's order, the
// prefill work first, then the decode steps, one request at a time.
func (s *Step) rooflineTimes(b *stepBatch, prefill, decode bool, tab *decodeTable) (compute, mem float64, ok bool) {
	a, c := &s.Arch, s.rc
	tp := float64(s.TP)
	pfRate, dcRate, bw := s.rooflineRates()
	var dynamic float64
	var tokens int64
	if prefill {
		for i := range b.pf {
			w := &b.pf[i]
			p, n := float64(w.progress), float64(w.n)
			compute += c.flops(p, n) / tp / pfRate
			dynamic += c.dynamic(a, p, n) / tp
			tokens += int64(w.n)
			ok = true
		}
	}
	if decode && len(b.dc) > 0 {
		terms := tab.of(s)
		for _, p := range b.dc {
			var t decodeTerm
			if uint(p) < uint(len(terms)) {
				t = terms[p]
			} else {
				t, terms = tab.miss(s, p, dcRate)
			}
			compute += t.compute
			dynamic += t.dynamic
		}
		tokens += int64(len(b.dc))
		ok = true
	}
	if !ok {
		return 0, 0, false
	}
	weights := c.weights(a, float64(tokens)) / tp
	mem = (weights + dynamic) / bw
	return compute, mem, true
}

// rooflineRates are the GPU's FLOP rates for prefill and decode work (peak
// × the phase's utilisation) and its bandwidth, per second.
func (s *Step) rooflineRates() (pfRate, dcRate, bw float64) {
	peak := s.GPU.TFlops * 1e12
	if s.Arch.BytesPerParam == 1.0 && s.GPU.TFlopsFP8 > 0 {
		peak = s.GPU.TFlopsFP8 * 1e12
	}
	return peak * s.GPU.MfuPrefill, peak * s.GPU.MfuDecode, s.GPU.BwTBs * 1e12
}

// A decodeTerm is one decode step's share of a roofline step: its compute
// time (FLOPs / TP / decode rate) and its bytes beyond the weights / TP.
type decodeTerm struct{ compute, dynamic float64 }

// decodeStep is the decode term of a step with p tokens of context,
// computed as BLIS computes it.
func (s *Step) decodeStep(p int, dcRate float64) decodeTerm {
	tp := float64(s.TP)
	q := float64(p)
	return decodeTerm{compute: s.rc.flops(q, 1) / tp / dcRate, dynamic: s.rc.dynamic(&s.Arch, q, 1) / tp}
}

// A decodeTable keeps the decode terms by tokens of context. A decode step's
// terms depend on its context alone, and a pass of 64 decodes computed
// them 64 times (a third of a §E (docs/model/cases.md) roofline run's extra instructions over
// fixed timing, docs/timing.md ("The cost of a modelled pass")); the table
// computes each once per run, with the same operations, so the step times
// keep every bit. It grows to the largest context seen, up to
// maxDecodeTable entries (2 MiB); longer contexts are computed each time.
type decodeTable struct {
	terms []decodeTerm
	step  *Step
}

const maxDecodeTable = 1 << 17

// of returns the table's terms for s (t nil: none), emptied if they were
// another step's.
func (t *decodeTable) of(s *Step) []decodeTerm {
	if t == nil {
		return nil
	}
	if t.step != s {
		t.terms, t.step = t.terms[:0], s
	}
	return t.terms
}

// miss returns the decode term of context p, which the table does not hold,
// and the table's terms: grown to hold p when it may, computed otherwise.
func (t *decodeTable) miss(s *Step, p int, dcRate float64) (decodeTerm, []decodeTerm) {
	if t == nil || p < 0 || p >= maxDecodeTable {
		return s.decodeStep(p, dcRate), t.of(s)
	}
	n := min(max(2*len(t.terms), p+1, 1024), maxDecodeTable)
	for q := len(t.terms); q < n; q++ {
		t.terms = append(t.terms, s.decodeStep(q, dcRate))
	}
	return t.terms[p], t.terms
}
