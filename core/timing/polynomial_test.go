package timing

import (
	"math"
	"testing"

	"github.com/kvsim/kvsim/core/vtime"
)

// poly is the polynomial's prefill formula written out
// (docs/model/timing.md ("Polynomial")).
func poly(t float64) float64 { return 4.209989e-7*t*t + 1.518344e-2*t + 16.50142 }

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestPolynomialPrefillFormula(t *testing.T) {
	for _, c := range []struct{ batch, per int64 }{{1, 1024}, {1, 1}, {4, 512}, {3, 8192}} {
		if got, want := PolynomialPrefillMs(c.batch, c.per), poly(float64(c.batch*c.per)); !near(got, want) {
			t.Errorf("prefill(%d×%d) = %v; want %v", c.batch, c.per, got, want)
		}
	}
	if got := PolynomialPrefillMs(1, 0); got != 0 {
		t.Errorf("prefill of no new tokens = %v; want 0", got)
	}
}

func TestPolynomialDecodeFormula(t *testing.T) {
	for _, u := range []float64{0, 0.1, 0.25, 0.5, 0.9, 1} {
		want := max(-25.74*u*u+54.01*u+5.74, 1)
		if got := PolynomialDecodeMs(int64(u*10000), 10000); !near(got, want) {
			t.Errorf("decode at %v = %v; want %v", u, got, want)
		}
	}
	// No capacity counts as full.
	if got, want := PolynomialDecodeMs(5, 0), PolynomialDecodeMs(1, 1); got != want {
		t.Errorf("decode with no capacity = %v; want %v", got, want)
	}
}

// The three tests below follow aisimulate's own: perf_model.rs
// (fully_cached_prompt_skips_prefill,
// polynomial_decode_utilization_is_clamped_to_capacity) and timing.rs
// (modeled_duration_applies_speedup_and_zero_means_unscaled).

func TestFullyCachedPromptSkipsPrefill(t *testing.T) {
	m := &Model{Kind: Polynomial, Speedup: 1, DecodeSpeedup: 1, KVTokens: 1024}
	b := Batch{Steps: true}
	b.Prefill(128, 0, 128) // nothing of the prompt left to compute
	if d := m.Pass(&b, true, true); d.Prefill != 0 {
		t.Errorf("prefill of a fully cached prompt = %v; want 0", d.Prefill)
	}
}

func TestPolynomialDecodeUtilizationIsClampedToCapacity(t *testing.T) {
	if a, b := PolynomialDecodeMs(2048, 1024), PolynomialDecodeMs(1024, 1024); a != b {
		t.Errorf("decode at 200 %% = %v; want %v (100 %%)", a, b)
	}
}

func TestModeledDurationAppliesSpeedupAndZeroMeansUnscaled(t *testing.T) {
	for _, c := range []struct{ raw, ratio, want float64 }{{12, 3, 4}, {12, 0, 12}, {0, 3, 0}} {
		if got := modeledMs(c.raw, c.ratio); got != vtime.Time(c.want) {
			t.Errorf("modeled(%v, %v) = %v; want %v", c.raw, c.ratio, got, c.want)
		}
	}
}

// TestMixedBatch: the prefill batch is formed as aisimulate's vLLM
// scheduler forms it, from integer means of the reached prompt lengths and
// prefixes; the decode batch is every emitter.
func TestMixedBatch(t *testing.T) {
	m := &Model{Kind: Polynomial, Speedup: 1, DecodeSpeedup: 1, KVTokens: 10000}
	b := Batch{Steps: true}
	b.Prefill(0, 1000, 1000)   // whole prompt: ISL 1000, prefix 0
	b.Prefill(500, 301, 2000)  // a chunk: ISL 801, prefix 500
	b.Prefill(100, 1900, 2000) // after a cached prefix: ISL 2000, prefix 100
	b.Emit(1000)
	b.Emit(2000)
	b.DecodeStep(3000)
	b.Emit(3001)
	d := m.Pass(&b, true, true)
	isl, pref := int64(1000+801+2000)/3, int64(0+500+100)/3
	if want := modeledMs(poly(float64(3*(isl-pref))), 1); d.Prefill != want {
		t.Errorf("prefill %v; want %v", d.Prefill, want)
	}
	if want := modeledMs(PolynomialDecodeMs(6001, 10000), 1); d.Decode != want {
		t.Errorf("decode %v; want %v", d.Decode, want)
	}
	// Without a pure decode step the emitters cost no decode time
	// (docs/model/pass.md ("Pass timing")).
	b.Reset(true)
	b.Prefill(0, 1000, 1000)
	b.Emit(1000)
	if d := m.Pass(&b, true, true); d.Decode != 0 {
		t.Errorf("decode %v in a prefill-only pass; want 0", d.Decode)
	}
	// Decode speedup scales decode time only, on top of the speedup.
	m2 := &Model{Kind: Polynomial, Speedup: 2, DecodeSpeedup: 4, KVTokens: 10000}
	b.Reset(true)
	b.Prefill(0, 1000, 1000)
	b.DecodeStep(5000)
	b.Emit(5001)
	d = m2.Pass(&b, true, true)
	if want := modeledMs(poly(1000), 2); d.Prefill != want {
		t.Errorf("prefill %v at speedup 2; want %v", d.Prefill, want)
	}
	if want := modeledMs(PolynomialDecodeMs(5001, 10000), 8); d.Decode != want {
		t.Errorf("decode %v at speedup 2 × 4; want %v", d.Decode, want)
	}
}

// TestDurationRounding: durations are whole nanoseconds, rounded to
// nearest on the exact value of the float64 seconds (2.5e-9 is stored as
// 2.50000000000000010e-9, 3.5e-9 as 3.49999999999999980e-9 and
// 1.0000000015 as 1.00000000149999996, so the products look like ties but
// are not); an exact tie goes to the even neighbour.
func TestDurationRounding(t *testing.T) {
	for _, c := range []struct {
		s    float64
		want int64
	}{{0.999e-9, 1}, {4.2e-7, 420}, {2.5e-9, 3}, {3.5e-9, 3}, {1.0000000015, 1000000001}, {0, 0},
		// exact ties: 2⁻¹⁰ s is 976,562.5 ns, 3·2⁻¹⁰ s is 2,929,687.5 ns
		{1.0 / 1024, 976562}, {3.0 / 1024, 2929688}} {
		if got := durationNs(c.s); got != c.want {
			t.Errorf("durationNs(%v) = %d; want %d", c.s, got, c.want)
		}
	}
}
