package timing

import (
	"fmt"
	"math"
)

// KV sizes and the G1 capacity a GPU's memory leaves
// (docs/model/timing.md ("KV bytes and G1 capacity")).

// KVBytesPerToken is the KV cache bytes of one token on one DP rank: K and
// V for every layer and KV head (all tensor-parallel shards together) at
// the model's dtype.
func (a *Arch) KVBytesPerToken() int64 { return int64(a.kvBytes()) }

func (a *Arch) kvBytes() float64 {
	return float64(a.Layers) * 2.0 * float64(a.effectiveHeadDim()) * float64(a.kvHeads()) * a.BytesPerParam
}

// weightBytes is BLIS's estimate of the model's weights (computeModelWeightBytes,
// after llm-d-benchmark's capacity planner): embeddings, attention, a
// three-matrix MLP (all experts and the router for MoE), norms and the LM
// head unless tied.
func (a *Arch) weightBytes() int64 {
	h, v, L, ff := int64(a.Hidden), int64(a.Vocab), int64(a.Layers), int64(a.Intermediate)
	kvDim := int64(a.kvHeads()) * int64(a.effectiveHeadDim())
	attn := h*(h+2*kvDim) + h*h
	mlp := L * (3 * h * ff)
	if a.IsMoE() {
		mlp = L * (3*h*ff*int64(a.Experts) + int64(a.Experts)*h)
	}
	var lmHead int64
	if !a.TieEmbeddings {
		lmHead = v * h
	}
	total := v*h + L*(attn+2*h) + mlp + lmHead + h
	return int64(float64(total) * a.BytesPerParam)
}

// BLIS's capacity-planner constants (sim/latency/kv_capacity.go).
const (
	activationDenseGiB = 5.5
	activationMoEGiB   = 8.0
	nonTorchTP1GiB     = 0.15
	nonTorchTPGiB      = 0.6
	gib                = 1 << 30
)

// KVBlocks is the G1 blocks of one DP rank of tp GPUs that use fraction of
// their memory: what is left of tp × memory × fraction after the weights,
// BLIS's activation budget and its per-GPU non-PyTorch overhead, in blocks
// of blockSize tokens. At tp 1 it is BLIS's CalculateKVBlocks; at tp > 1
// a block counts all its shards (Decision in docs/model/timing.md).
func KVBlocks(a *Arch, g *GPU, tp, blockSize int, fraction float64) (int, error) {
	if !(fraction > 0 && fraction <= 1) {
		return 0, fmt.Errorf("memory_fraction must be in (0, 1], got %v", fraction)
	}
	if a.HiddenAct != "" && a.HiddenAct != "silu" && a.HiddenAct != "swiglu" && a.HiddenAct != "geglu" {
		return 0, fmt.Errorf("the memory model covers SwiGLU-family activations (silu, swiglu, geglu), not %q", a.HiddenAct)
	}
	perBlock := int64(a.kvBytes() * float64(blockSize))
	if perBlock <= 0 {
		return 0, fmt.Errorf("a block of %d tokens holds no KV bytes", blockSize)
	}
	avail := g.MemoryGiB * fraction * float64(tp)
	act := activationDenseGiB
	if a.IsMoE() {
		act = activationMoEGiB
	}
	nonTorch := nonTorchTP1GiB
	if tp > 1 {
		nonTorch = nonTorchTPGiB
	}
	weights := float64(a.weightBytes()) / gib
	over := weights + act + nonTorch*float64(tp)
	if over >= avail {
		return 0, fmt.Errorf("%s needs %.2f GiB (%.2f weights + %.2f activations + %.2f other) but %d × %s at memory_fraction %v has %.2f GiB",
			a.Name, over, weights, act, nonTorch*float64(tp), tp, g.Name, fraction, avail)
	}
	blocks := int64((avail-over)*gib) / perBlock
	if blocks <= 0 || blocks > math.MaxInt32 {
		return 0, fmt.Errorf("memory leaves %d blocks", blocks)
	}
	return int(blocks), nil
}
