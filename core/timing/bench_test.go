package timing

import "testing"

// BenchmarkPass64 times one pass of 64 decode steps (the §E (docs/model/cases.md) batch) per
// model kind.
func BenchmarkPass64(b *testing.B) {
	a, _ := LookupModel("Llama-3.1-8B")
	g, _ := LookupGPU("H100")
	for _, k := range []Kind{Polynomial, Roofline, TrainedPhysics} {
		b.Run(k.String(), func(b *testing.B) {
			m := &Model{Kind: k, Speedup: 1, DecodeSpeedup: 1, KVTokens: 8192 * 16}
			if k != Polynomial {
				m.Step, _ = NewStep(k, a, g, 1, nil)
			}
			var bt Batch
			for i := 0; i < b.N; i++ {
				bt.Reset(m.NeedsSteps())
				for j := range 64 {
					bt.DecodeStep(300 + j)
					bt.Emit(301 + j)
				}
				m.Pass(&bt, true, true)
			}
		})
	}
}
