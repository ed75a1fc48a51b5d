package timing

import (
	"fmt"
	"strings"
)

// An Arch is a model architecture: the fields of a HuggingFace config.json
// that the step models and the KV sizes read (docs/model/timing.md
// ("Models and GPUs")).
type Arch struct {
	Name             string
	Layers           int     // num_hidden_layers
	Hidden           int     // hidden_size
	Heads            int     // num_attention_heads
	KVHeads          int     // num_key_value_heads (0: = heads)
	HeadDim          int     // head_dim (0: hidden / heads); KV sizes only
	Intermediate     int     // intermediate_size
	Vocab            int     // vocab_size
	BytesPerParam    float64 // from torch_dtype
	Experts          int     // num_local_experts (0 or 1: dense)
	ExpertsPerToken  int     // num_experts_per_tok
	TieEmbeddings    bool    // tie_word_embeddings
	HiddenAct        string  // hidden_act
	MaxPositionEmbed int     // max_position_embeddings
}

// IsMoE reports a mixture-of-experts model (two experts or more, as BLIS).
func (a *Arch) IsMoE() bool { return a.Experts >= 2 }

func (a *Arch) kvHeads() int {
	if a.KVHeads > 0 {
		return a.KVHeads
	}
	return a.Heads
}

// effectiveHeadDim is head_dim when given, else hidden / heads (BLIS's
// EffectiveHeadDim, used for KV and weight sizes only).
func (a *Arch) effectiveHeadDim() int {
	if a.HeadDim > 0 {
		return a.HeadDim
	}
	return a.Hidden / a.Heads
}

// Validate reports an architecture the models cannot use.
func (a *Arch) Validate() error {
	switch {
	case a.Layers <= 0:
		return fmt.Errorf("num_hidden_layers must be a positive integer")
	case a.Hidden <= 0:
		return fmt.Errorf("hidden_size must be a positive integer")
	case a.Heads <= 0:
		return fmt.Errorf("num_attention_heads must be a positive integer")
	case a.Hidden%a.Heads != 0:
		return fmt.Errorf("hidden_size (%d) must be a multiple of num_attention_heads (%d)", a.Hidden, a.Heads)
	case a.KVHeads < 0 || a.HeadDim < 0 || a.Experts < 0 || a.ExpertsPerToken < 0:
		return fmt.Errorf("num_key_value_heads, head_dim, num_local_experts and num_experts_per_tok must not be negative")
	case a.Intermediate <= 0:
		return fmt.Errorf("intermediate_size must be a positive integer")
	case a.Vocab <= 0:
		return fmt.Errorf("vocab_size must be a positive integer")
	case !(a.BytesPerParam > 0):
		return fmt.Errorf("torch_dtype must be one of float32, bfloat16, float16, float8")
	case a.Experts > 1 && a.ExpertsPerToken <= 0:
		return fmt.Errorf("num_experts_per_tok must be positive with num_local_experts %d", a.Experts)
	}
	return nil
}

// DtypeBytes maps a config.json torch_dtype to bytes per parameter (BLIS's
// table); 0 for an unknown dtype.
func DtypeBytes(dtype string) float64 {
	switch dtype {
	case "float32":
		return 4
	case "float16", "bfloat16", "half":
		return 2
	case "float8", "float8_e4m3fn", "fp8", "int8":
		return 1
	}
	return 0
}

// models is the built-in catalog: the config.json fields of each model as
// published on HuggingFace (BLIS bundles the same files in model_configs/).
var models = []Arch{
	{Name: "Llama-3.1-8B", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, Intermediate: 14336, Vocab: 128256,
		BytesPerParam: 2, HiddenAct: "silu", MaxPositionEmbed: 131072},
	{Name: "Llama-3.1-70B", Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, Intermediate: 28672, Vocab: 128256,
		BytesPerParam: 2, HiddenAct: "silu", MaxPositionEmbed: 131072},
	{Name: "Qwen3-14B", Layers: 40, Hidden: 5120, Heads: 40, KVHeads: 8, HeadDim: 128, Intermediate: 17408, Vocab: 151936,
		BytesPerParam: 2, HiddenAct: "silu", MaxPositionEmbed: 40960},
	{Name: "Qwen3-32B", Layers: 64, Hidden: 5120, Heads: 64, KVHeads: 8, HeadDim: 128, Intermediate: 25600, Vocab: 151936,
		BytesPerParam: 2, HiddenAct: "silu", MaxPositionEmbed: 40960},
	{Name: "Mixtral-8x7B", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, Intermediate: 14336, Vocab: 32000,
		BytesPerParam: 2, Experts: 8, ExpertsPerToken: 2, HiddenAct: "silu", MaxPositionEmbed: 32768},
}

// A GPU is one accelerator's peak figures and BLIS's calibration.
type GPU struct {
	Name       string
	TFlops     float64 // peak dense BF16 TFLOPS
	TFlopsFP8  float64 // peak dense FP8 TFLOPS (0: none)
	BwTBs      float64 // HBM bandwidth, TB/s
	MfuPrefill float64 // roofline model FLOPs utilisation in prefill
	MfuDecode  float64 // and in decode
	MemoryGiB  float64
}

// gpus: H100 and A100 are BLIS's hardware_config.json entries; H200 and B200
// are NVIDIA's datasheet figures with H100's utilisation (Decision in
// docs/model/timing.md ("Models and GPUs")).
var gpus = []GPU{
	{Name: "A100", TFlops: 312, TFlopsFP8: 0, BwTBs: 2.039, MfuPrefill: 0.38, MfuDecode: 0.18, MemoryGiB: 80},
	{Name: "B200", TFlops: 2250, TFlopsFP8: 4500, BwTBs: 8, MfuPrefill: 0.45, MfuDecode: 0.30, MemoryGiB: 180},
	{Name: "H100", TFlops: 989.5, TFlopsFP8: 1979, BwTBs: 3.35, MfuPrefill: 0.45, MfuDecode: 0.30, MemoryGiB: 80},
	{Name: "H200", TFlops: 989.5, TFlopsFP8: 1979, BwTBs: 4.8, MfuPrefill: 0.45, MfuDecode: 0.30, MemoryGiB: 141},
}

// ModelNames lists the catalog's models.
func ModelNames() []string {
	names := make([]string, len(models))
	for i, m := range models {
		names[i] = m.Name
	}
	return names
}

// GPUNames lists the catalog's GPUs.
func GPUNames() []string {
	names := make([]string, len(gpus))
	for i, g := range gpus {
		names[i] = g.Name
	}
	return names
}

// normalize folds a model or GPU name as people write it: case, "_" for
// "-", an organisation prefix ("meta-llama/") and the suffixes that name a
// variant of the same architecture ("-Instruct", "-v0.1", "_sxm", "-80").
func normalize(name string) string {
	s := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(name), "_", "-"))
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	for _, suf := range []string{"-instruct", "-v0.1", "-sxm5", "-sxm", "-80gb", "-80", "-141gb"} {
		s = strings.TrimSuffix(s, suf)
	}
	return s
}

// LookupModel returns the catalog's architecture named name.
func LookupModel(name string) (Arch, bool) {
	n := normalize(name)
	for _, m := range models {
		if normalize(m.Name) == n {
			return m, true
		}
	}
	return Arch{}, false
}

// LookupGPU returns the catalog's GPU named name.
func LookupGPU(name string) (GPU, bool) {
	n := normalize(name)
	for _, g := range gpus {
		if normalize(g.Name) == n {
			return g, true
		}
	}
	return GPU{}, false
}
