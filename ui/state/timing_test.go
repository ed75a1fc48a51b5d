package state

import (
	"strings"
	"testing"
)

// TestTimingControls: the timing controls edit the YAML like the others,
// and the form never carries fixed pass times for a modelled type.
func TestTimingControls(t *testing.T) {
	text := ExampleByID("A192").YAML()
	cfg := mustParse(t, text)
	f := FormOf(cfg)
	if f.Timing != "fixed" || f.PrefillMs <= 0 {
		t.Fatalf("§A form: timing %q, prefill %v", f.Timing, f.PrefillMs)
	}

	// roofline: no fixed values, and a model and GPU the catalog knows
	// ("tiny" is not in it; h200_sxm is).
	next, err := Edit(text, cfg, f, FTiming, "roofline")
	if err != nil {
		t.Fatal(err)
	}
	cfg2 := mustParse(t, next)
	f2 := FormOf(cfg2)
	if !IsGPU(f2.Hardware, "H200") || IsGPU(f2.Hardware, "H100") || !IsModel("meta-llama/Llama-3.1-8B-Instruct", "Llama-3.1-8B") {
		t.Errorf("catalog names: %q is not H200", f2.Hardware)
	}
	if f2.Timing != "roofline" || f2.PrefillMs != 0 || f2.DecodeMs != 0 || f2.Model != ModelNames[0] || f2.Hardware != "h200_sxm" {
		t.Errorf("after roofline: %+v", f2)
	}

	// the GPU, then the model
	next, err = Edit(next, cfg2, f2, FHardware, "B200")
	if err != nil {
		t.Fatal(err)
	}
	next, err = Edit(next, mustParse(t, next), f2, FModel, "Qwen3-14B")
	if err != nil {
		t.Fatal(err)
	}
	if f3 := FormOf(mustParse(t, next)); f3.Hardware != "B200" || f3.Model != "Qwen3-14B" {
		t.Errorf("after B200 and Qwen3-14B: %+v", f3)
	}
	if _, err := Edit(next, mustParse(t, next), f2, FModel, "gpt-5"); err == nil || !strings.Contains(err.Error(), "Llama-3.1-8B") {
		t.Errorf("unknown model: %v", err)
	}

	// G1 from memory, and back to a number of blocks
	next, err = Edit(next, mustParse(t, next), f2, FMemFraction, "0.8")
	if err != nil {
		t.Fatal(err)
	}
	c4 := mustParse(t, next)
	if f4 := FormOf(c4); f4.MemFraction != 0.8 || f4.G1 <= 0 {
		t.Errorf("after memory fraction 0.8: fraction %v, G1 %d", f4.MemFraction, f4.G1)
	}
	next, err = Edit(next, c4, f2, FG1, "4096")
	if err != nil {
		t.Fatal(err)
	}
	if f5 := FormOf(mustParse(t, next)); f5.MemFraction != 0 || f5.G1 != 4096 {
		t.Errorf("after G1 4096: fraction %v, G1 %d", f5.MemFraction, f5.G1)
	}

	// polynomial takes a speedup; fixed comes back with the §A (docs/model/cases.md) values
	cfg6 := mustParse(t, next)
	next, err = Edit(next, cfg6, FormOf(cfg6), FTiming, "polynomial")
	if err != nil {
		t.Fatal(err)
	}
	next, err = Edit(next, mustParse(t, next), f2, FSpeedup, "2")
	if err != nil {
		t.Fatal(err)
	}
	if f7 := FormOf(mustParse(t, next)); f7.Timing != "polynomial" || f7.Speedup != 2 {
		t.Errorf("after polynomial at speedup 2: %+v", f7)
	}
	next, err = Edit(next, mustParse(t, next), f, FTiming, "fixed")
	if err != nil {
		t.Fatal(err)
	}
	if f8 := FormOf(mustParse(t, next)); f8.Timing != "fixed" || f8.PrefillMs != DefaultPrefillMs || f8.DecodeMs != DefaultDecodeMs {
		t.Errorf("back to fixed: %+v", f8)
	}
}
