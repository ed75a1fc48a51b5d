package timing

import (
	"math"

	"github.com/kvsim/kvsim/core/vtime"
)

// The polynomial model is aisimulate's native default
// (docs/model/timing.md ("Polynomial")).

// PolynomialPrefillMs is the polynomial's prefill time of a batch of
// batchSize requests that each compute newPerRequest tokens: a quadratic in
// their product. The products are kept apart (no fused multiply-add) so
// every platform rounds them alike.
func PolynomialPrefillMs(batchSize, newPerRequest int64) float64 {
	if batchSize == 0 || newPerRequest == 0 {
		return 0
	}
	t := float64(batchSize * newPerRequest)
	return float64(4.209989e-07*float64(t*t)) + float64(1.518344e-02*t) + 1.650142e+01
}

// PolynomialDecodeMs is the polynomial's decode time at active KV tokens out
// of total (utilisation clamped to 1; 1 when total is 0), floored at 1 ms.
func PolynomialDecodeMs(active, total int64) float64 {
	u := 1.0
	if total > 0 {
		u = min(float64(active)/float64(total), 1)
	}
	return max(float64(-25.74*float64(u*u))+float64(54.01*u)+5.74, 1)
}

// polynomialPass forms the model's inputs from a mixed batch as
// aisimulate's vLLM scheduler does: the prefill batch is the requests that
// compute prompt tokens, with the integer means of their reached prompt
// lengths and prefixes, so t = count × (mean ISL − mean prefix); the decode
// batch is every request that emits a token, its active KV tokens the sum of
// their lengths, out of the rank's G1 tokens.
func (m *Model) polynomialPass(b *Batch, prefill, decode bool) Durations {
	var d Durations
	if prefill && b.PrefillCount > 0 {
		n := int64(b.PrefillCount)
		per := max(b.TotalISL/n-b.TotalPref/n, 0)
		d.Prefill = modeledMs(PolynomialPrefillMs(n, per), m.Speedup)
	}
	if decode && b.Decode && b.Emitters > 0 {
		d.Decode = modeledMs(PolynomialDecodeMs(b.EmitLen, m.KVTokens), m.Speedup*m.DecodeSpeedup)
	}
	return d
}

// modeledMs is aisimulate's conversion of a modelled time to the engine's
// clock: the milliseconds become a duration of whole nanoseconds (rounded
// to nearest), which a positive ratio then divides (rounded again), and the
// result is read back as seconds × 1000 (docs/model/timing.md ("Rounding")).
func modeledMs(raw, ratio float64) vtime.Time {
	ns := durationNs(raw / 1000)
	if ratio > 0 && ns > 0 {
		ns = durationNs(secondsOf(ns) / ratio)
	}
	ms := secondsOf(ns) * 1000
	return vtime.Time(secondsOf(durationNs(ms/1000)) * 1000)
}

// secondsOf is a duration's as_secs_f64: whole seconds plus nanoseconds
// divided by 10⁹.
func secondsOf(ns int64) float64 {
	return float64(ns/1e9) + float64(ns%1e9)/1e9
}

// durationNs converts s seconds (finite, non-negative) to nanoseconds
// rounded to nearest, ties to even, on the exact value of s × 10⁹, as
// Rust's Duration::from_secs_f64 does. The product is exactly hi + lo (lo
// from a fused multiply-add), so the side of the half is decided exactly
// without big numbers (math/big would grow the web worker's wasm).
func durationNs(s float64) int64 {
	if !(s > 0) {
		return 0
	}
	hi := s * 1e9
	lo := math.FMA(s, 1e9, -hi)
	fl := math.Floor(hi)
	switch d := (hi - fl - 0.5) + lo; {
	case d > 0:
		return int64(fl) + 1
	case d < 0:
		return int64(fl)
	}
	n := int64(fl)
	return n + n&1 // a tie goes to the even neighbour
}
