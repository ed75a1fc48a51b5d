package timing

// Trained physics is BLIS's default step model (docs/model/timing.md
// ("Trained physics")): roofline basis functions for prefill compute and
// KV writes, decode compute and KV reads, weight loading and TP
// all-reduces, each scaled by a learned coefficient, plus per-layer,
// per-request and per-step overheads. kvsim runs one DP rank per scheduler,
// so BLIS's data-parallel terms (dp = 1) vanish.

const kvElementBytes = 2.0 // BLIS: the KV cache is FP16 whatever the weights

// physicsUs is BLIS's TrainedPhysicsModel.StepTime in microseconds, at
// dp = 1 with balanced expert placement and no shared experts, and whether
// its corrected compute terms or its corrected memory terms (KV traffic
// and weights) were the larger.
func (s *Step) physicsUs(b *stepBatch, prefill, decode bool) (int64, Bound) {
	a := &s.Arch
	pfTokens, dcTokens, sumCtx, pfAttn, batch := s.physicsSums(b, prefill, decode)
	if batch == 0 {
		return 0, NoBound
	}
	L := float64(a.Layers)
	d := float64(a.Hidden)
	dH := float64(a.Hidden / a.Heads)
	dKV := float64(a.kvHeads() * (a.Hidden / a.Heads))
	tp := float64(s.TP)
	kEff := float64(max(1, a.ExpertsPerToken))
	hPerGPU := float64(a.Heads) / tp
	const dpf = 1.0
	tpdp := tp * dpf
	moe, dense := a.layerSplit()
	group := tp // the MoE group is TP × DP, with DP = 1
	flopsPeakUs := s.GPU.TFlops * 1e6
	bpp := a.BytesPerParam
	if bpp == 1.0 && s.GPU.TFlopsFP8 > 0 {
		flopsPeakUs = s.GPU.TFlopsFP8 * 1e6
	}
	bwUs := s.GPU.BwTBs * 1e6
	ffn := func(tokens float64) float64 {
		var f float64
		if moe > 0 {
			f += float64(moe) * (tokens * kEff / group) * 6 * d * float64(a.Intermediate)
		}
		if dense > 0 {
			f += float64(dense) * tokens * 1 * 6 * d * float64(a.Intermediate) / tpdp
		}
		return f
	}

	var tPfCompute, tPfKv, tDcCompute, tDcKv float64
	if pfTokens > 0 {
		proj := L * 2 * pfTokens * d * (2*d + 2*dKV) / tpdp
		attn := L * pfAttn / dpf
		tPfCompute = (proj + attn + ffn(pfTokens)) / flopsPeakUs
		tPfKv = L * 2 * (dKV / tpdp) * pfTokens * kvElementBytes / bwUs
	}
	if dcTokens > 0 {
		proj := L * 2 * dcTokens * d * (2*d + 2*dKV) / tpdp
		attn := L * 4 * hPerGPU * sumCtx * dH / dpf
		tDcCompute = (proj + attn + ffn(dcTokens)) / flopsPeakUs
		tDcKv = L * 2 * (dKV / tpdp) * kvElementBytes * (sumCtx + dcTokens) / bwUs
	}

	bytesAttn := L * d * (2*d + 2*dKV) * bpp / tp
	var bytesFfn float64
	if moe > 0 {
		bytesFfn += float64(moe) * (float64(a.Experts) / group) * 3 * d * float64(a.Intermediate) * bpp
	}
	if dense > 0 {
		bytesFfn += float64(dense) * 1 * 3 * d * float64(a.Intermediate) * bpp / tp
	}
	tWeight := (bytesAttn + bytesFfn) / bwUs

	total := pfTokens + dcTokens
	var tTpAttn, tTpDense, tMoEReduce float64
	if s.TP > 1 {
		tTpAttn = s.allReduce(L, total) / dpf
		tTpDense = s.allReduce(float64(dense), total) / dpf
		if moe > 0 {
			tMoEReduce = s.allReduce(float64(moe), total)
		}
	}

	B := s.Beta
	step := B[0]*tPfCompute + B[8]*tPfKv
	step = step +
		(B[1]*tDcCompute + B[9]*tDcKv) +
		B[2]*tWeight +
		B[3]*(tTpAttn+tTpDense+tMoEReduce) +
		B[10]*0 +
		B[4]*L +
		B[5]*batch +
		B[6] +
		B[7]*0*float64(moe)
	bound := boundOf(B[0]*tPfCompute+B[1]*tDcCompute, B[8]*tPfKv+B[9]*tDcKv+B[2]*tWeight)
	return clampUs(step), bound
}

// allReduce is BLIS's ring all-reduce basis in µs: units × tokens × hidden
// × activation bytes × 2 phases × (tp−1)/tp at HBM bandwidth.
func (s *Step) allReduce(units, tokens float64) float64 {
	f := float64(s.TP-1) / float64(s.TP)
	return units * tokens * float64(s.Arch.Hidden) * s.Arch.BytesPerParam * 2.0 * f / (s.GPU.BwTBs * 1e6)
}

// physicsSums is the batch's sums over its requests: prefill tokens,
// decode steps, decode contexts, prefill attention work, requests. BLIS adds
// every request's terms one at a time. The prefill attention work is added
// so; the counts and the decode contexts are whole numbers, whose float
// sums are exact (and so equal to the integer sums) while they stay below
// 2^53.
func (s *Step) physicsSums(b *stepBatch, prefill, decode bool) (pfTokens, dcTokens, sumCtx, pfAttn, batch float64) {
	a := &s.Arch
	dH := float64(a.Hidden / a.Heads)
	hPerGPU := float64(a.Heads) / float64(s.TP)
	if prefill {
		for i := range b.pf {
			w := &b.pf[i]
			ti, si := float64(w.n), float64(w.input)
			pfTokens += ti
			pfAttn += 4 * hPerGPU * ti * (si + ti/2) * dH
			batch++
		}
	}
	if decode && len(b.dc) > 0 {
		dcTokens = float64(len(b.dc))
		batch += dcTokens
		sumCtx = sumContexts(b.dc)
	}
	return
}

// sumContexts is the float sum of the decode steps' contexts, in order: the
// integer sum when no partial sum can leave the integers a float64 holds
// exactly.
func sumContexts(dc []int) float64 {
	var sum int64
	for _, p := range dc {
		if p < 0 || p >= 1<<32 {
			return floatSum(dc)
		}
		sum += int64(p)
	}
	if sum >= 1<<53 {
		return floatSum(dc)
	}
	return float64(sum)
}

func floatSum(dc []int) float64 {
	var f float64
	for _, p := range dc {
		f += float64(p)
	}
	return f
}
