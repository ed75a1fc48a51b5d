package sweep

import (
	"strconv"
	"strings"
	"testing"
)

// TestVaryTiming: the timing type and the GPU are sweep dimensions (issue
// 20): on §A's (docs/model/cases.md) config (2,048 SimpleCPU blocks), fixed, polynomial and
// roofline on an H100 and a B200 are six points; the fixed points are §A's
// row (15,568 restored), roofline on the B200 has a shorter median TTFT
// than on the H100, and a GPU outside the catalog is refused naming the
// known ones.
func TestVaryTiming(t *testing.T) {
	p := mustPlan(t, example(t, "connectors.yaml", []string{"engine.model=llama-3.1-8b"},
		"timing={type: fixed, prefill_ms: 2, decode_ms: 1},{type: polynomial},{type: roofline}", "engine.hardware=H100,B200"))
	r := mustRun(t, p, Options{Parallel: 2})
	if len(r.Rows) != 6 {
		t.Fatalf("%d points; want 6", len(r.Rows))
	}
	num := func(i int, k string) float64 {
		x, err := strconv.ParseFloat(r.Rows[i][k], 64)
		if err != nil {
			t.Fatalf("point %d %s: %q", i, k, r.Rows[i][k])
		}
		return x
	}
	for i := range 2 {
		if got := r.Rows[i]["first_admission_host_reused_input_tokens"]; got != "15568" {
			t.Errorf("fixed point %d restored %s; want 15568", i, got)
		}
	}
	if h100, b200 := num(4, "median_ttft_ms"), num(5, "median_ttft_ms"); !(b200 < h100) {
		t.Errorf("roofline median TTFT %v ms on B200, %v on H100", b200, h100)
	}
	_, err := NewPlan(example(t, "connectors.yaml", []string{"engine.model=llama-3.1-8b"}, "timing={type: roofline}", "engine.hardware=H100,TPU"))
	if err == nil || !strings.Contains(err.Error(), `"TPU" is not in the catalog (A100, B200, H100, H200)`) {
		t.Errorf("a sweep over an unknown GPU: %v", err)
	}
}
