package replay

import (
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/traces"
)

// TestTopologyValidation is issue 6's validation matrix: each rejected
// topology gets its own message
// (docs/model/config.md ("KV cache settings", "Agentic restrictions")).
func TestTopologyValidation(t *testing.T) {
	const pd, agg = "agentic-g2-pd.yaml", "agentic-g2.yaml"
	for _, c := range []struct {
		example, set, want string
	}{
		{pd, "engine.workers.prefill.parallelism.replicas=2", "agentic host offload requires one aggregated worker or one prefill and one decode worker"},
		{pd, "engine.workers.decode.parallelism.replicas=2", "agentic host offload requires one aggregated worker or one prefill and one decode worker"},
		{agg, "engine.workers.aggregated.kv_cache.host_offload.scope=cluster_shared", "agentic host offload requires one aggregated worker or one prefill and one decode worker"},
		{pd, "engine.workers.decode.parallelism.attention_data=2", "agentic host offload requires attention DP=1 on every role"},
		{agg, "engine.workers.aggregated.parallelism.attention_data=2", "agentic host offload requires attention DP=1 on every role"},
		{pd, "engine.backend=sglang", `engine.backend: "sglang" is not modelled; only vllm is supported`},
		{agg, "engine.workers.aggregated.kv_cache.g3_offload={scope: worker_local, num_g3_blocks: 8}", "agentic replay does not support G3 offload"},
		// aisimulate's matrix rejects G3 on every role of an agentic run with this message.
		{pd, "engine.workers.prefill.kv_cache.g3_offload={scope: cluster_shared, num_g3_blocks: 8}", "g3_offload: agentic replay does not support G3 offload"},
		{agg, "engine.workers.aggregated.kv_cache.host_offload.scope=worker_local", "worker_local"},
		{pd, "engine.workers.prefill.kv_cache.host_offload.scope=weird", `expected one of dp_rank_local, cluster_shared, got "weird"`},
		{pd, "engine.workers.decode.kv_cache.block_size=8", "cluster_shared host_offload participants are incompatible: block_size differs"},
		{pd, "engine.workers.decode.parallelism.tensor=2", "cluster_shared host_offload participants are incompatible: parallelism.tensor differs"},
		{pd, "engine.workers.decode.kv_cache.host_offload.num_host_blocks=16", "cluster_shared host_offload participants are incompatible: num_host_blocks differs"},
		{pd, "engine.workers.decode.kv_cache.host_offload.shared_h2d_bandwidth_gbps=2", "cluster_shared host_offload participants are incompatible: shared_h2d_bandwidth_gbps differs"},
		{pd, "engine.workers.decode.kv_cache.bytes_per_token=500000", "cluster_shared host_offload participants are incompatible: bytes_per_token differs"},
		{pd, "engine.workers.prefill.kv_cache.host_offload.connector=offloading_v0_32", "offloading_v0_32"},
	} {
		data, err := traces.Read(c.example)
		if err != nil {
			t.Fatal(err)
		}
		_, err = config.Parse(c.example, ".", data, []string{c.set})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s --set %s: %v; want an error containing %q", c.example, c.set, err, c.want)
		}
	}
}

// TestAgenticPD: the agentic play on one prefill and one decode worker
// sharing one cluster_shared pool completes, with one G2 domain of 8 blocks.
func TestAgenticPD(t *testing.T) {
	res := runExample(t, "agentic-g2-pd.yaml", nil, traces.Open)
	if got := res.Summary.CompletedRequests; got != 4 {
		t.Fatalf("completed %d; want 4", got)
	}
	if d := res.Summary.Domains; len(d) != 1 || d[0].CapacityBlocks != 8 {
		t.Errorf("g2_domains %+v; want one pool of 8 blocks", d)
	}
}
