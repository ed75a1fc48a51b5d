package config

import (
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/kvsim/kvsim/core/timing"
)

// modelConfigKeys are the HuggingFace config.json fields engine.model_config
// takes (docs/config.md); other fields of a config.json are rejected so a
// field the models would ignore is not silently dropped.
var modelConfigKeys = []string{"num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads",
	"head_dim", "intermediate_size", "vocab_size", "torch_dtype", "num_local_experts", "num_experts_per_tok",
	"tie_word_embeddings", "hidden_act", "max_position_embeddings"}

// modelAndGPU reads engine.model_config; engine.model and engine.hardware
// are looked up in the catalog of core/timing only where a model needs
// them (archAndGPU), so they stay names only for fixed timing.
func (d *decoder) modelAndGPU(m *mapping, e *Engine) {
	if m.has("model_config") {
		e.Arch = d.modelConfig(m.sub("model_config", modelConfigKeys...), e.Model)
	}
}

// modelConfig reads an inline config.json.
func (d *decoder) modelConfig(m *mapping, name string) *timing.Arch {
	a := &timing.Arch{Name: name}
	for _, k := range []string{"num_hidden_layers", "hidden_size", "num_attention_heads", "intermediate_size", "vocab_size", "torch_dtype"} {
		m.require(k)
	}
	a.Layers = m.int("num_hidden_layers", 0, positiveInt)
	a.Hidden = m.int("hidden_size", 0, positiveInt)
	a.Heads = m.int("num_attention_heads", 0, positiveInt)
	a.KVHeads = m.int("num_key_value_heads", a.Heads, positiveInt)
	a.HeadDim = m.int("head_dim", 0, positiveInt)
	a.Intermediate = m.int("intermediate_size", 0, positiveInt)
	a.Vocab = m.int("vocab_size", 0, positiveInt)
	dtype := m.str("torch_dtype", "")
	if a.BytesPerParam = timing.DtypeBytes(dtype); a.BytesPerParam == 0 {
		m.fail("torch_dtype", "expected one of float32, float16, bfloat16, float8, got %q", dtype)
	}
	a.Experts = m.int("num_local_experts", 0, nonNegInt)
	a.ExpertsPerToken = m.int("num_experts_per_tok", 0, nonNegInt)
	a.TieEmbeddings = m.boolean("tie_word_embeddings", false)
	a.HiddenAct = m.str("hidden_act", "silu")
	a.MaxPositionEmbed = m.int("max_position_embeddings", 0, nonNegInt)
	if err := a.Validate(); err != nil {
		d.fail(m.path, "%v", err)
	}
	return a
}

// archAndGPU returns the engine's model and GPU for a model that needs them
// (named by what, a field path), failing at engine.model or engine.hardware
// with the catalog's names when one is unknown.
func (d *decoder) archAndGPU(e *Engine, what string) (*timing.Arch, *timing.GPU) {
	if a, ok := timing.LookupModel(e.Model); ok && e.Arch == nil {
		e.Arch = &a
	}
	if g, ok := timing.LookupGPU(e.Hardware); ok && e.GPU == nil {
		e.GPU = &g
	}
	if e.Arch == nil {
		d.fail("engine.model", "%s needs a model architecture: %q is not in the catalog (%s); describe it in engine.model_config (config.json fields)",
			what, e.Model, strings.Join(timing.ModelNames(), ", "))
	}
	if e.GPU == nil {
		d.fail("engine.hardware", "%s needs a GPU: %q is not in the catalog (%s)", what, e.Hardware, strings.Join(timing.GPUNames(), ", "))
	}
	return e.Arch, e.GPU
}

// floats reads a list of non-negative numbers.
func (d *decoder) floats(m *mapping, key string) []float64 {
	v, _ := m.get(key)
	seq, ok := v.(*ast.SequenceNode)
	if !ok {
		d.failNode(v, m.field(key), "expected a list of numbers, got %s", describe(v))
	}
	out := make([]float64, 0, len(seq.Values))
	for i, n := range seq.Values {
		var x float64
		switch t := n.(type) {
		case *ast.IntegerNode:
			i, _ := integer(t)
			x = float64(i)
		case *ast.FloatNode:
			x = t.Value
		default:
			d.failNode(n, m.field(key), "item %d: expected a number ≥ 0, got %s", i, describe(n))
		}
		if !(x >= 0) || x > 1e300 {
			d.failNode(n, m.field(key), "item %d: expected a finite number ≥ 0", i)
		}
		out = append(out, x)
	}
	return out
}

// knownArch is the engine's model architecture when engine.model_config
// gives it or the catalog knows engine.model, else nil.
func (d *decoder) knownArch(e *Engine) *timing.Arch {
	if e.Arch != nil {
		return e.Arch
	}
	if a, ok := timing.LookupModel(e.Model); ok {
		return &a
	}
	return nil
}

// memoryCapacity reads capacity {type: default, memory_fraction} and
// returns the G1 blocks per DP rank that the GPUs' memory leaves
// (docs/model/timing.md ("KV bytes and G1 capacity")).
func (d *decoder) memoryCapacity(m *mapping, kv *KVCache, r *Role, e *Engine) int {
	for _, k := range []string{"blocks", "bytes"} {
		if m.has(k) {
			m.fail(k, "default KV capacity rejects %s", k)
		}
	}
	f := m.float("memory_fraction", 0.9, floatRule{"a number in (0, 1]", func(x float64) bool { return x > 0 && x <= 1 }})
	kv.MemoryFraction = f
	a, g := d.archAndGPU(e, m.field("type"))
	blocks, err := timing.KVBlocks(a, g, r.Parallelism.Tensor, kv.BlockSize, f)
	if err != nil {
		m.fail("type", "default KV capacity: %v", err)
	}
	return blocks
}
