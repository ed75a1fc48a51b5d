package timing

import (
	"math"
	"math/rand/v2"
	"testing"
)

// refWork is one request's work in scheduler order, as the step models
// first kept it: one list of prefill work and decode steps.
type refWork struct {
	progress, n, input int
	prefill            bool
}

// refRoofline is rooflineUs as first written (one list, every request's
// terms computed where it is added): the reference the decode table and
// the split lists must match bit for bit.
func (s *Step) refRoofline(work []refWork, prefill, decode bool) (compute, mem float64, ok bool) {
	a, c := &s.Arch, s.rc
	tp := float64(s.TP)
	peak := s.GPU.TFlops * 1e12
	if a.BytesPerParam == 1.0 && s.GPU.TFlopsFP8 > 0 {
		peak = s.GPU.TFlopsFP8 * 1e12
	}
	bw := s.GPU.BwTBs * 1e12
	pfRate, dcRate := peak*s.GPU.MfuPrefill, peak*s.GPU.MfuDecode
	var dynamic float64
	var tokens int64
	if prefill {
		for i := range work {
			if w := &work[i]; w.prefill {
				p, n := float64(w.progress), float64(w.n)
				compute += c.flops(p, n) / tp / pfRate
				dynamic += c.dynamic(a, p, n) / tp
				tokens += int64(w.n)
				ok = true
			}
		}
	}
	if decode {
		for i := range work {
			if w := &work[i]; !w.prefill {
				p := float64(w.progress)
				compute += c.flops(p, 1) / tp / dcRate
				dynamic += c.dynamic(a, p, 1) / tp
				tokens++
				ok = true
			}
		}
	}
	if !ok {
		return 0, 0, false
	}
	weights := c.weights(a, float64(tokens)) / tp
	mem = (weights + dynamic) / bw
	return compute, mem, true
}

// refPhysicsSums is physicsUs's per-request sums as first written.
func (s *Step) refPhysicsSums(work []refWork, prefill, decode bool) (pfTokens, dcTokens, sumCtx, pfAttn, batch float64) {
	a := &s.Arch
	dH := float64(a.Hidden / a.Heads)
	hPerGPU := float64(a.Heads) / float64(s.TP)
	for i := range work {
		w := &work[i]
		switch {
		case w.prefill && prefill:
			ti, si := float64(w.n), float64(w.input)
			pfTokens += ti
			pfAttn += 4 * hPerGPU * ti * (si + ti/2) * dH
			batch++
		case !w.prefill && decode:
			dcTokens++
			sumCtx += float64(w.progress)
			batch++
		}
	}
	return
}

// TestStepMatchesReference: on random batches (prefill work and decode
// steps interleaved, contexts up to past the decode table's end) of every
// catalog model on every GPU at TP 1, 2 and 4, the roofline's compute and
// memory times and trained_physics's sums are the reference's bit for bit,
// with one decode table kept across the batches as a run keeps it.
func TestStepMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 26))
	batches := 300
	if testing.Short() {
		batches = 60
	}
	bits := math.Float64bits
	for _, a := range models {
		for _, g := range gpus {
			for _, tp := range []int{1, 2, 4} {
				rs, err := NewStep(Roofline, a, g, tp, nil)
				if err != nil {
					t.Fatal(err)
				}
				ps, err := NewStep(TrainedPhysics, a, g, tp, nil)
				if err != nil {
					t.Fatal(err)
				}
				var tab decodeTable
				for range batches {
					var b Batch
					b.Reset(true)
					var ref []refWork
					for range rng.IntN(80) {
						if rng.IntN(4) == 0 {
							before, n := rng.IntN(20000), 1+rng.IntN(4096)
							prompt := rng.IntN(before + n + 100)
							b.Prefill(before, n, prompt)
							ref = append(ref, refWork{progress: before, n: n, input: max(prompt, before+n), prefill: true})
						} else {
							ctx := rng.IntN(40000)
							if rng.IntN(50) == 0 {
								ctx = maxDecodeTable - 5 + rng.IntN(10)
							}
							b.DecodeStep(ctx)
							ref = append(ref, refWork{progress: ctx, n: 1})
						}
					}
					for _, pd := range [][2]bool{{true, true}, {true, false}, {false, true}} {
						c, m, ok := rs.rooflineTimes(&b.steps, pd[0], pd[1], &tab)
						rc, rm, rok := rs.refRoofline(ref, pd[0], pd[1])
						if ok != rok || bits(c) != bits(rc) || bits(m) != bits(rm) {
							t.Fatalf("%s on %d × %s: roofline (%v, %v, %v), reference (%v, %v, %v)", a.Name, tp, g.Name, c, m, ok, rc, rm, rok)
						}
						x := [5]float64{}
						y := [5]float64{}
						x[0], x[1], x[2], x[3], x[4] = ps.physicsSums(&b.steps, pd[0], pd[1])
						y[0], y[1], y[2], y[3], y[4] = ps.refPhysicsSums(ref, pd[0], pd[1])
						for i := range x {
							if bits(x[i]) != bits(y[i]) {
								t.Fatalf("%s on %d × %s: physics sums %v, reference %v", a.Name, tp, g.Name, x, y)
							}
						}
					}
				}
			}
		}
	}
}

// TestSumContexts: the integer sum of the contexts is the float sum, and
// contexts a float64 cannot sum exactly go the float way.
func TestSumContexts(t *testing.T) {
	for _, dc := range [][]int{nil, {0}, {1, 2, 3}, {1 << 31, 1<<32 - 1, 7}, {1 << 40, 3}, {-1, 5}} {
		if got, want := sumContexts(dc), floatSum(dc); math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("sumContexts(%v) = %v, float sum %v", dc, got, want)
		}
	}
}
