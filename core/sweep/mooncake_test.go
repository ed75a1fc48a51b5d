package sweep

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/replay"
)

// TestRoutingMooncake computes the table of docs/routing.md: the Mooncake
// FAST'25 conversation trace on 4 aggregated replicas, each DP rank with a
// private (dp_rank_local) 200,000-block G2 tier at 32 GB/s each way,
// swept over engine.routing, and checks that the KV router reuses
// strictly more than round robin. The trace is not in the repository:
// set KVSIM_MOONCAKE to its conversation.yaml (1.3 GiB of heap and about
// 20 s per point).
func TestRoutingMooncake(t *testing.T) {
	path := os.Getenv("KVSIM_MOONCAKE")
	if path == "" {
		t.Skip("set KVSIM_MOONCAKE to the Mooncake case's conversation.yaml")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(path)
	p := mustPlan(t, Spec{Name: path, Dir: dir, Data: data, Sets: []string{
		"engine.workers.aggregated.kv_cache.host_offload={num_host_blocks: 200000, scope: dp_rank_local, d2h_bandwidth_gbps: 32, h2d_bandwidth_gbps: 32}"},
		Vary: []string{"engine.routing=round_robin,least_loaded,session_affinity,kv_router," +
			"{policy: kv_router, host_overlap_weight: 0.5},{policy: kv_router, host_overlap_weight: 1}"}})
	files := func(name string) (io.ReadCloser, error) { return os.Open(filepath.Join(dir, name)) }
	r, err := p.Run(replay.Traces{Files: files}, Options{Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintln(&b, "| engine.routing | reuse ratio | G1 reused tokens | G2 restored tokens | G2 load blocks | TTFT mean ms | TTFT p50 ms | TTFT p99 ms |")
	fmt.Fprintln(&b, "|---|---:|---:|---:|---:|---:|---:|---:|")
	for i, row := range r.Rows {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s | %s | %s |\n", p.Values(i)[0], row["prefix_cache_reused_ratio"],
			row["first_admission_g1_reused_input_tokens"], row["first_admission_host_reused_input_tokens"],
			row["g2_load_blocks"], row["mean_ttft_ms"], row["median_ttft_ms"], row["p99_ttft_ms"])
	}
	t.Logf("\n%s", b.String())
	reuse := func(i int) float64 {
		x, _ := strconv.ParseFloat(r.Rows[i]["prefix_cache_reused_ratio"], 64)
		return x
	}
	if reuse(3) <= reuse(0) {
		t.Errorf("kv_router reuse %v is not above round robin's %v", reuse(3), reuse(0))
	}
}
