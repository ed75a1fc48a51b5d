package config

import "testing"

// TestModelDerivedKV: bytes_per_token auto and capacity {type: default}
// come from the model and GPU (docs/model/timing.md ("KV bytes and G1
// capacity")); an unknown model leaves auto unknown, as before.
func TestModelDerivedKV(t *testing.T) {
	doc := func(model string) string {
		return `engine:
  model: ` + model + `
  hardware: h100_sxm
  workers:
    aggregated:
      kv_cache:
        block_size: 16
        bytes_per_token: auto
        capacity: {type: default, memory_fraction: 0.9}
      timing: {type: roofline}
`
	}
	c, err := Parse("c.yaml", ".", []byte(doc("meta-llama/Llama-3.1-8B-Instruct")), nil)
	if err != nil {
		t.Fatal(err)
	}
	kv := c.Engine.Workers.Aggregated.KVCache
	if kv.BytesPerToken != 131072 || kv.CapacityBlocks != 26312 {
		t.Errorf("bytes_per_token %d, blocks %d; want 131072 and 26312 (BLIS's CalculateKVBlocks)", kv.BytesPerToken, kv.CapacityBlocks)
	}
	c, err = Parse("c.yaml", ".", []byte(`engine:
  model: tiny
  hardware: h
  workers:
    aggregated:
      kv_cache: {bytes_per_token: auto, capacity: {blocks: 8}}
      timing: {type: fixed, prefill_ms: 1, decode_ms: 1}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Engine.Workers.Aggregated.KVCache.BytesPerToken; got != 0 {
		t.Errorf("auto for an unknown model gave %d bytes per token; want 0 (not known)", got)
	}
}
