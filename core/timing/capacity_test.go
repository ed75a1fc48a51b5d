package timing

import "testing"

// blisKVBlocks are BLIS's CalculateKVBlocks at TP 1 and memory utilisation
// 0.9, printed by BLIS's own code (tools/blis/crosscheck.sh DIR kvblocks, at
// inference-sim/inference-sim f90a1e3a6787da17c2cd463dab6fb2660b1b1760).
// BLIS refuses Mixtral-8x7B on one 80 GB GPU (95.14 GiB of overhead), and so
// does kvsim (core/config's TestParseErrors).
var blisKVBlocks = []struct {
	model, gpu string
	block      int
	blocks     int
}{
	{"Llama-3.1-8B", "H100", 16, 26312},
	{"Llama-3.1-8B", "H100", 64, 6578},
	{"Llama-3.1-8B", "A100", 16, 26312},
	{"Llama-3.1-8B", "A100", 64, 6578},
	{"Qwen3-14B", "H100", 16, 15909},
	{"Qwen3-14B", "H100", 64, 3977},
	{"Qwen3-14B", "A100", 16, 15909},
	{"Qwen3-14B", "A100", 64, 3977},
}

func TestKVBlocksAreBLISs(t *testing.T) {
	for _, c := range blisKVBlocks {
		a, _ := LookupModel(c.model)
		g, _ := LookupGPU(c.gpu)
		got, err := KVBlocks(&a, &g, 1, c.block, 0.9)
		if err != nil || got != c.blocks {
			t.Errorf("%s on %s, block %d: %d blocks (%v); BLIS %d", c.model, c.gpu, c.block, got, err, c.blocks)
		}
	}
	a, _ := LookupModel("Mixtral-8x7B")
	g, _ := LookupGPU("H100")
	if _, err := KVBlocks(&a, &g, 1, 16, 0.9); err == nil {
		t.Error("Mixtral-8x7B fits one H100; BLIS says it needs 95.14 GiB")
	}
}

// TestKVBytesPerToken: K and V of every layer and KV head at the model's
// dtype, with head_dim where config.json gives it (Qwen3-32B: 128, not
// 5120 / 64).
func TestKVBytesPerToken(t *testing.T) {
	for _, c := range []struct {
		model string
		want  int64
	}{{"Llama-3.1-8B", 32 * 2 * 128 * 8 * 2}, {"Llama-3.1-70B", 80 * 2 * 128 * 8 * 2},
		{"Qwen3-14B", 40 * 2 * 128 * 8 * 2}, {"Qwen3-32B", 64 * 2 * 128 * 8 * 2}, {"Mixtral-8x7B", 32 * 2 * 128 * 8 * 2}} {
		a, _ := LookupModel(c.model)
		if got := a.KVBytesPerToken(); got != c.want {
			t.Errorf("%s: %d bytes per token; want %d", c.model, got, c.want)
		}
	}
}

// TestCatalogNames: names as configs write them reach the catalog.
func TestCatalogNames(t *testing.T) {
	for _, n := range []string{"llama-3.1-8b", "meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen3-32B", "mistralai/Mixtral-8x7B-v0.1"} {
		if _, ok := LookupModel(n); !ok {
			t.Errorf("model %q not found", n)
		}
	}
	for _, n := range []string{"h200_sxm", "H100", "a100-80", "B200", "A100-SXM"} {
		if _, ok := LookupGPU(n); !ok {
			t.Errorf("GPU %q not found", n)
		}
	}
}
