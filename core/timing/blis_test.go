package timing

import (
	"testing"
)

// blisBatches are the batches of tools/blis/crosscheck.go.txt, in kvsim's
// terms: Prefill(tokens before, new tokens, prompt length), DecodeStep(tokens
// before).
var blisBatches = map[string]func(b *Batch){
	"prefill": func(b *Batch) { b.Prefill(0, 2048, 2048) },
	"prefill-batch": func(b *Batch) {
		b.Prefill(0, 512, 512)
		b.Prefill(1024, 3072, 4096)
	},
	"decode": func(b *Batch) {
		for i := range 16 {
			b.DecodeStep(512 + 100*i)
		}
	},
	"mixed": func(b *Batch) {
		b.Prefill(0, 1024, 1024)
		b.Prefill(2048, 512, 8192)
		for i := range 8 {
			b.DecodeStep(1000 + 333*i)
		}
	},
}

// blisStepUs are BLIS's step times in µs, printed by BLIS's own code
// (sim/latency: RooflineLatencyModel and TrainedPhysicsModel StepTime, with
// BLIS's model_configs/*/config.json, hardware_config.json and bundled
// trained_physics coefficients) at inference-sim/inference-sim commit
// f90a1e3a6787da17c2cd463dab6fb2660b1b1760: tools/blis/crosscheck.sh
// reproduces this table. BLIS's A100-SXM is kvsim's A100.
var blisStepUs = []struct {
	backend, model, gpu string
	tp                  int
	batch               string
	us                  int64
}{
	{"roofline", "Llama-3.1-8B", "H100", 1, "prefill", 49409},
	{"roofline", "Llama-3.1-8B", "H100", 1, "prefill-batch", 91609},
	{"roofline", "Llama-3.1-8B", "H100", 1, "decode", 3836},
	{"roofline", "Llama-3.1-8B", "H100", 1, "mixed", 37519},
	{"roofline", "Llama-3.1-8B", "H100", 2, "prefill", 24704},
	{"roofline", "Llama-3.1-8B", "H100", 2, "prefill-batch", 45804},
	{"roofline", "Llama-3.1-8B", "H100", 2, "decode", 1918},
	{"roofline", "Llama-3.1-8B", "H100", 2, "mixed", 18759},
	{"roofline", "Llama-3.1-8B", "A100", 1, "prefill", 185568},
	{"roofline", "Llama-3.1-8B", "A100", 1, "prefill-batch", 344058},
	{"roofline", "Llama-3.1-8B", "A100", 1, "decode", 6303},
	{"roofline", "Llama-3.1-8B", "A100", 1, "mixed", 141377},
	{"roofline", "Llama-3.1-8B", "A100", 2, "prefill", 92784},
	{"roofline", "Llama-3.1-8B", "A100", 2, "prefill-batch", 172029},
	{"roofline", "Llama-3.1-8B", "A100", 2, "decode", 3151},
	{"roofline", "Llama-3.1-8B", "A100", 2, "mixed", 70688},
	{"roofline", "Qwen3-14B", "H100", 1, "prefill", 92635},
	{"roofline", "Qwen3-14B", "H100", 1, "prefill-batch", 170148},
	{"roofline", "Qwen3-14B", "H100", 1, "decode", 6749},
	{"roofline", "Qwen3-14B", "H100", 1, "mixed", 70288},
	{"roofline", "Qwen3-14B", "H100", 2, "prefill", 46317},
	{"roofline", "Qwen3-14B", "H100", 2, "prefill-batch", 85074},
	{"roofline", "Qwen3-14B", "H100", 2, "decode", 3374},
	{"roofline", "Qwen3-14B", "H100", 2, "mixed", 35144},
	{"roofline", "Qwen3-14B", "A100", 1, "prefill", 347912},
	{"roofline", "Qwen3-14B", "A100", 1, "prefill-batch", 639024},
	{"roofline", "Qwen3-14B", "A100", 1, "decode", 11089},
	{"roofline", "Qwen3-14B", "A100", 1, "mixed", 264852},
	{"roofline", "Qwen3-14B", "A100", 2, "prefill", 173956},
	{"roofline", "Qwen3-14B", "A100", 2, "prefill-batch", 319512},
	{"roofline", "Qwen3-14B", "A100", 2, "decode", 5544},
	{"roofline", "Qwen3-14B", "A100", 2, "mixed", 132426},
	{"roofline", "Mixtral-8x7B", "H100", 1, "prefill", 83979},
	{"roofline", "Mixtral-8x7B", "H100", 1, "prefill-batch", 152107},
	{"roofline", "Mixtral-8x7B", "H100", 1, "decode", 19362},
	{"roofline", "Mixtral-8x7B", "H100", 1, "mixed", 63649},
	{"roofline", "Mixtral-8x7B", "H100", 2, "prefill", 41989},
	{"roofline", "Mixtral-8x7B", "H100", 2, "prefill-batch", 76053},
	{"roofline", "Mixtral-8x7B", "H100", 2, "decode", 9681},
	{"roofline", "Mixtral-8x7B", "H100", 2, "mixed", 31824},
	{"roofline", "Mixtral-8x7B", "A100", 1, "prefill", 315402},
	{"roofline", "Mixtral-8x7B", "A100", 1, "prefill-batch", 571268},
	{"roofline", "Mixtral-8x7B", "A100", 1, "decode", 31811},
	{"roofline", "Mixtral-8x7B", "A100", 1, "mixed", 239824},
	{"roofline", "Mixtral-8x7B", "A100", 2, "prefill", 157701},
	{"roofline", "Mixtral-8x7B", "A100", 2, "prefill-batch", 285634},
	{"roofline", "Mixtral-8x7B", "A100", 2, "decode", 15905},
	{"roofline", "Mixtral-8x7B", "A100", 2, "mixed", 119912},
	{"trained-physics", "Llama-3.1-8B", "H100", 1, "prefill", 11737},
	{"trained-physics", "Llama-3.1-8B", "H100", 1, "prefill-batch", 15956},
	{"trained-physics", "Llama-3.1-8B", "H100", 1, "decode", 8440},
	{"trained-physics", "Llama-3.1-8B", "H100", 1, "mixed", 11966},
	{"trained-physics", "Llama-3.1-8B", "H100", 2, "prefill", 6688},
	{"trained-physics", "Llama-3.1-8B", "H100", 2, "prefill-batch", 8981},
	{"trained-physics", "Llama-3.1-8B", "H100", 2, "decode", 4834},
	{"trained-physics", "Llama-3.1-8B", "H100", 2, "mixed", 6763},
	{"trained-physics", "Llama-3.1-8B", "A100", 1, "prefill", 26032},
	{"trained-physics", "Llama-3.1-8B", "A100", 1, "prefill-batch", 39406},
	{"trained-physics", "Llama-3.1-8B", "A100", 1, "decode", 13080},
	{"trained-physics", "Llama-3.1-8B", "A100", 1, "mixed", 24656},
	{"trained-physics", "Llama-3.1-8B", "A100", 2, "prefill", 13990},
	{"trained-physics", "Llama-3.1-8B", "A100", 2, "prefill-batch", 20977},
	{"trained-physics", "Llama-3.1-8B", "A100", 2, "decode", 7155},
	{"trained-physics", "Llama-3.1-8B", "A100", 2, "mixed", 13225},
	{"trained-physics", "Qwen3-14B", "H100", 1, "prefill", 21274},
	{"trained-physics", "Qwen3-14B", "H100", 1, "prefill-batch", 28954},
	{"trained-physics", "Qwen3-14B", "H100", 1, "decode", 14152},
	{"trained-physics", "Qwen3-14B", "H100", 1, "mixed", 20834},
	{"trained-physics", "Qwen3-14B", "H100", 2, "prefill", 11720},
	{"trained-physics", "Qwen3-14B", "H100", 2, "prefill-batch", 15845},
	{"trained-physics", "Qwen3-14B", "H100", 2, "decode", 7819},
	{"trained-physics", "Qwen3-14B", "H100", 2, "mixed", 11428},
	{"trained-physics", "Qwen3-14B", "A100", 1, "prefill", 47971},
	{"trained-physics", "Qwen3-14B", "A100", 1, "prefill-batch", 72320},
	{"trained-physics", "Qwen3-14B", "A100", 1, "decode", 22299},
	{"trained-physics", "Qwen3-14B", "A100", 1, "mixed", 43969},
	{"trained-physics", "Qwen3-14B", "A100", 2, "prefill", 25311},
	{"trained-physics", "Qwen3-14B", "A100", 2, "prefill-batch", 37952},
	{"trained-physics", "Qwen3-14B", "A100", 2, "decode", 11894},
	{"trained-physics", "Qwen3-14B", "A100", 2, "mixed", 23178},
	{"trained-physics", "Mixtral-8x7B", "H100", 1, "prefill", 47385},
	{"trained-physics", "Mixtral-8x7B", "H100", 1, "prefill-batch", 54267},
	{"trained-physics", "Mixtral-8x7B", "H100", 1, "decode", 40539},
	{"trained-physics", "Mixtral-8x7B", "H100", 1, "mixed", 46727},
	{"trained-physics", "Mixtral-8x7B", "H100", 2, "prefill", 24512},
	{"trained-physics", "Mixtral-8x7B", "H100", 2, "prefill-batch", 28136},
	{"trained-physics", "Mixtral-8x7B", "H100", 2, "decode", 20883},
	{"trained-physics", "Mixtral-8x7B", "H100", 2, "mixed", 24144},
	{"trained-physics", "Mixtral-8x7B", "A100", 1, "prefill", 90027},
	{"trained-physics", "Mixtral-8x7B", "A100", 1, "prefill-batch", 111845},
	{"trained-physics", "Mixtral-8x7B", "A100", 1, "decode", 65817},
	{"trained-physics", "Mixtral-8x7B", "A100", 1, "mixed", 85837},
	{"trained-physics", "Mixtral-8x7B", "A100", 2, "prefill", 45988},
	{"trained-physics", "Mixtral-8x7B", "A100", 2, "prefill-batch", 57196},
	{"trained-physics", "Mixtral-8x7B", "A100", 2, "decode", 33523},
	{"trained-physics", "Mixtral-8x7B", "A100", 2, "mixed", 43815},
}

// TestStepTimesAreBLISs: kvsim's roofline and trained_physics step times
// equal BLIS's to the microsecond for three models, two GPUs, TP 1 and 2,
// and prefill-only, decode-only and mixed batches.
func TestStepTimesAreBLISs(t *testing.T) {
	for _, c := range blisStepUs {
		kind := Roofline
		if c.backend == "trained-physics" {
			kind = TrainedPhysics
		}
		a, ok := LookupModel(c.model)
		g, ok2 := LookupGPU(c.gpu)
		if !ok || !ok2 {
			t.Fatalf("%s or %s not in the catalog", c.model, c.gpu)
		}
		s, err := NewStep(kind, a, g, c.tp, nil)
		if err != nil {
			t.Fatal(err)
		}
		b := Batch{Steps: true}
		blisBatches[c.batch](&b)
		var got int64
		if kind == Roofline {
			got, _ = s.rooflineUs(&b.steps, true, true, nil)
		} else {
			got, _ = s.physicsUs(&b.steps, true, true)
		}
		if got != c.us {
			t.Errorf("%s %s on %d × %s, %s: %d µs; BLIS %d µs", c.backend, c.model, c.tp, c.gpu, c.batch, got, c.us)
		}
	}
}
