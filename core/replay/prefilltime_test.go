package replay

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/engine"
	"github.com/kvsim/kvsim/core/timing"
	"github.com/kvsim/kvsim/core/vtime"
)

// stepMs is the roofline step time of one pass that prefills prompts of
// the given lengths from scratch (no prefix, no decode work), Llama-3.1-8B
// on one H200 (TP 1): the timing model alone, no engine.
func stepMs(t *testing.T, prompts ...int) (vtime.Time, timing.Bound) {
	t.Helper()
	a, ok := timing.LookupModel("llama-3.1-8b")
	g, ok2 := timing.LookupGPU("h200_sxm")
	if !ok || !ok2 {
		t.Fatal("catalog lacks llama-3.1-8b or h200_sxm")
	}
	s, err := timing.NewStep(timing.Roofline, a, g, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := timing.Model{Kind: timing.Roofline, Step: s}
	var b timing.Batch
	b.Reset(true)
	for _, n := range prompts {
		b.Prefill(0, n, n)
	}
	d := m.Pass(&b, true, false)
	return d.Prefill, d.Bound
}

// handComputeMs is the roofline compute time of prefilling n tokens with
// no prefix on Llama-3.1-8B (L 32, d 4,096, 32 heads of 128, 8 KV heads,
// MLP 14,336) on one H200 (989.5 TFLOPS × prefill MFU 0.45), written out
// from BLIS's FLOPs (docs/model/timing.md ("Roofline")): per layer the
// projections 2n·(d² + 2·d·dKV) + 2n·d², attention 4h·n·ctx·dHead, the
// MLP 2n·(2·d·dFF), and vector work 5h·n·ctx + 2n·d, with ctx = (n−1)/2.
// For n = 4,096: 46,222,427,553,792 FLOPs, 103.806 ms; the memory side is
// 10,200,547,328 weight bytes + 1,610,612,736 KV and activation bytes at
// 4.8 TB/s, 2.461 ms, so the pass is compute-bound.
func handComputeMs(n float64) float64 {
	const L, d, h, dHead, dKV, dFF = 32.0, 4096.0, 32.0, 128.0, 1024.0, 14336.0
	ctx := (n - 1) / 2
	flops := L * (2*n*(d*d+2*d*dKV) + 2*n*d*d + 4*h*n*ctx*dHead + 2*n*(2*d*dFF) + 5*h*n*ctx + 2*n*d)
	return flops / (989.5e12 * 0.45) * 1000
}

// TestPrefillTimePDAndDP is requests.jsonl's per-request prefill time
// (docs/model/timing.md ("Per request")) where a pass's time is not the
// whole run's: A (4,096 prompt tokens) and B (2,048), both arriving at
// 0 ms with 2 output tokens, Llama-3.1-8B on H200s with roofline timing.
// The expected figures come from the roofline model alone (stepMs), and
// agree to the microsecond the step time is truncated to with the FLOPs
// written out by hand (handComputeMs): A alone 103.806 ms, B alone
// 49.409 ms, A and B in one pass 153.216 ms (the sum of the two compute
// times, truncated once), all compute-bound.
//   - aggregated, attention DP 2: A and B go to different DP ranks and are
//     prefilled in the same step of the group; each counts its own rank's
//     step time (A 103.806, B 49.409 ms), not the group's (A's), 1 pass.
//   - P/D, prefill DP 2: the same on the prefill worker; the decode
//     worker's passes never count (1 pass each).
//   - P/D, prefill DP 1: A and B share one prefill pass of 6,144 tokens
//     and each counts it whole (153.216 ms, 1 pass).
func TestPrefillTimePDAndDP(t *testing.T) {
	trace := `{"timestamp":0,"input_length":4096,"output_length":2,"hash_ids":[` + hashIDs(1, 256) + "]}\n" +
		`{"timestamp":0,"input_length":2048,"output_length":2,"hash_ids":[` + hashIDs(1001, 128) + "]}\n"
	role := func(dp int) string {
		return fmt.Sprintf(`{parallelism: {replicas: 1, tensor: 1, attention_data: %d}, scheduler: {max_batched_tokens: 8192, max_sequences: 8},
        kv_cache: {block_size: 16, capacity: {blocks: 1000}}, timing: {type: roofline}}`, dp)
	}
	head := `traffic:
  source: {type: trace, format: mooncake, paths: [two.jsonl], block_size: 16}
  load: {type: trace_timestamps}
engine:
  model: llama-3.1-8b
  hardware: h200_sxm
`
	agg := head + "  workers:\n    aggregated: " + role(2) + "\n"
	pd := func(dp int) string {
		return head + "  mode: disaggregated\n  kv_transfer: {bytes_per_token: 131072, bandwidth_gb_per_second: 50}\n  workers:\n    prefill: " + role(dp) +
			"\n    decode: " + role(1) + "\n"
	}
	aMs, aBound := stepMs(t, 4096)
	bMs, bBound := stepMs(t, 2048)
	abMs, abBound := stepMs(t, 4096, 2048)
	if aBound != timing.ComputeBound || bBound != timing.ComputeBound || abBound != timing.ComputeBound {
		t.Fatalf("bounds %v %v %v; want compute-bound prefills", aBound, bBound, abBound)
	}
	if !(bMs < aMs && aMs < abMs) {
		t.Fatalf("step times A %v, B %v, A+B %v", aMs, bMs, abMs)
	}
	for _, h := range []struct {
		step vtime.Time
		hand float64
	}{{aMs, handComputeMs(4096)}, {bMs, handComputeMs(2048)}, {abMs, handComputeMs(4096) + handComputeMs(2048)}} {
		if d := h.hand - float64(h.step); d < 0 || d >= 0.001 {
			t.Errorf("step %v ms; by hand %.6f ms (the step truncates to whole µs)", h.step, h.hand)
		}
	}
	t.Logf("by hand: A %.6f, B %.6f ms", handComputeMs(4096), handComputeMs(2048))
	t.Logf("roofline steps: A alone %.3f ms, B alone %.3f ms, A+B %.3f ms", float64(aMs), float64(bMs), float64(abMs))
	for _, c := range []struct {
		name, yaml     string
		wantA, wantB   vtime.Time
		sameRankWanted bool
	}{
		{"aggregated DP 2", agg, aMs, bMs, false},
		{"P/D prefill DP 2", pd(2), aMs, bMs, false},
		{"P/D prefill DP 1", pd(1), abMs, abMs, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := config.Parse("t.yaml", ".", []byte(c.yaml), nil)
			if err != nil {
				t.Fatal(err)
			}
			wl, err := Workload(cfg, func(string) (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(trace)), nil })
			if err != nil {
				t.Fatal(err)
			}
			res, err := RunWith(cfg, wl, engine.Options{Check: true})
			if err != nil {
				t.Fatal(err)
			}
			if n := res.Summary.CompletedRequests; n != 2 {
				t.Fatalf("%d completed, want 2", n)
			}
			a, b := res.Records[0], res.Records[1]
			if a.Prefill == nil || b.Prefill == nil {
				t.Fatal("roofline records carry no prefill time")
			}
			ra, rb := a.Routing[0].DPRank, b.Routing[0].DPRank
			if (ra == rb) != c.sameRankWanted {
				t.Errorf("A on DP rank %d, B on %d", ra, rb)
			}
			if p := a.Prefill; p.Passes != 1 || p.ComputeBoundMs != c.wantA || p.MemoryBoundMs != 0 {
				t.Errorf("A: %+v; want 1 pass, %v ms compute-bound", *p, c.wantA)
			}
			if p := b.Prefill; p.Passes != 1 || p.ComputeBoundMs != c.wantB || p.MemoryBoundMs != 0 {
				t.Errorf("B: %+v; want 1 pass, %v ms compute-bound", *p, c.wantB)
			}
			t.Logf("A: rank %d, %+v; B: rank %d, %+v", ra, *a.Prefill, rb, *b.Prefill)
		})
	}
}
