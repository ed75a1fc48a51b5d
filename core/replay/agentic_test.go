package replay

import (
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/traces"
)

// TestAgenticG2TwoWorkers is
// docs/model/cases.md ("Case C: agentic workers with private G2"): the
// agentic G2 example with replicas 2 completes its four requests on both
// workers; the same with a cluster_shared pool is rejected with the reference
// message.
func TestAgenticG2TwoWorkers(t *testing.T) {
	res := runExample(t, "agentic-g2.yaml", nil, traces.Open)
	if got := res.Summary.CompletedRequests; got != 4 {
		t.Fatalf("completed %d; want 4", got)
	}
	used := map[int]bool{}
	for _, r := range res.Records {
		used[r.PrefillWorker] = true
	}
	if !used[0] || !used[1] {
		t.Errorf("workers used %v; want both", used)
	}
	// The play's chain: each request starts 98 ms after the previous ends.
	for i := 1; i < len(res.Records); i++ {
		if got, want := res.Records[i].ArrivalMs, res.Records[i-1].TerminalMs+98; got != want {
			t.Errorf("%s arrives at %v; want %v", res.Records[i].RequestID, got, want)
		}
	}

	data, _ := traces.Read("agentic-g2.yaml")
	_, err := config.Parse("agentic-g2.yaml", ".", data,
		[]string{"engine.workers.aggregated.kv_cache.host_offload.scope=cluster_shared"})
	const want = "agentic host offload requires one aggregated worker or one prefill and one decode worker"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("cluster_shared on two workers: %v; want an error containing %q", err, want)
	}
}
