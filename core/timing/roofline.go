package timing

import "math"

// Roofline is BLIS's analytical step time (docs/model/timing.md
// ("Roofline")): every request's FLOPs at the GPU's peak times the phase's
// utilisation, against the weights (loaded once per step) plus every
// request's KV and activation bytes at peak bandwidth; the step takes the
// larger of the two.

type rooflineMem struct {
	weights, dynamic float64
}

// rooflineFlops is one request's FLOPs: attention GEMMs (projections and
// scores), vector work, and the MLP (MoE: the routed experts' share).
func (a *Arch) rooflineFlops(seq, newT float64) float64 {
	d := float64(a.Hidden)
	L := float64(a.Layers)
	h := float64(a.Heads)
	dHead := d / h
	dKV := float64(a.kvHeads()) * dHead
	dFF := float64(a.Intermediate)

	qkv := 2 * newT * (d*d + 2*d*dKV)
	proj := 2 * newT * d * d
	gemm := (qkv + proj) * L
	ctx := seq
	if newT > 1 {
		ctx = seq + (newT-1)/2.0
	}
	attn := 4 * h * newT * ctx * dHead
	rope := 2 * newT * d
	vector := (5 * h * newT * ctx) + rope
	gemm += attn * L
	sram := vector * L

	moe, dense := a.layerSplit()
	if moe > 0 {
		gemm += 2 * newT * (2 * d * dFF) * float64(a.ExpertsPerToken) * float64(moe)
	}
	if dense > 0 {
		gemm += 2 * newT * (2 * d * dFF) * float64(dense)
	}
	return gemm + sram
}

// rooflineBytes is one request's memory traffic: weights (MoE: the expected
// distinct experts for newT tokens), KV written and read, activations.
func (a *Arch) rooflineBytes(seq, newT float64, kv bool) rooflineMem {
	d := float64(a.Hidden)
	L := float64(a.Layers)
	kvh := float64(a.kvHeads())
	dHead := d / float64(a.Heads)
	dFF := float64(a.Intermediate)
	dKV := kvh * dHead
	attnW := d*(d+2*dKV) + (d * d)

	moe, dense := a.layerSplit()
	var moeW, denseW float64
	if moe > 0 {
		n := float64(a.Experts)
		k := float64(a.ExpertsPerToken)
		nEff := n * (1.0 - math.Pow((n-k)/n, newT))
		moeW = 2 * d * dFF * nEff * float64(moe)
	}
	if dense > 0 {
		denseW = 2 * d * dFF * float64(dense)
	}
	var m rooflineMem
	m.weights = ((attnW * L) + (moeW + denseW)) * a.BytesPerParam
	var growth, access float64
	if kv {
		perTok := 2 * L * kvh * dHead * a.BytesPerParam
		growth = perTok * newT
		access = perTok * seq
	}
	act := L * d * a.BytesPerParam * newT
	total := m.weights + growth + access + act
	m.dynamic = total - m.weights
	return m
}

// rooflineUs is BLIS's rooflineStepTime in microseconds.
func (s *Step) rooflineUs(work []stepWork, prefill, decode bool) int64 {
	a := &s.Arch
	tp := float64(s.TP)
	peak := s.GPU.TFlops * 1e12
	if a.BytesPerParam == 1.0 && s.GPU.TFlopsFP8 > 0 {
		peak = s.GPU.TFlopsFP8 * 1e12
	}
	bw := s.GPU.BwTBs * 1e12
	var compute, dynamic float64
	var tokens int64
	any := false
	for i := range work {
		w := &work[i]
		if w.prefill && prefill {
			f := a.rooflineFlops(float64(w.progress), float64(w.n))
			compute += f / tp / (peak * s.GPU.MfuPrefill)
			dynamic += a.rooflineBytes(float64(w.progress), float64(w.n), true).dynamic / tp
			tokens += int64(w.n)
			any = true
		}
	}
	for i := range work {
		w := &work[i]
		if !w.prefill && decode {
			f := a.rooflineFlops(float64(w.progress), 1)
			compute += f / tp / (peak * s.GPU.MfuDecode)
			dynamic += a.rooflineBytes(float64(w.progress), 1, true).dynamic / tp
			tokens++
			any = true
		}
	}
	if !any {
		return 0
	}
	weights := a.rooflineBytes(0, float64(tokens), false).weights / tp
	mem := (weights + dynamic) / bw
	return clampUs(math.Max(compute, mem) * 1e6)
}
