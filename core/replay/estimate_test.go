package replay

import (
	"testing"

	"github.com/kvsim/kvsim/traces"
)

// TestEstimate: the cost is an integer that is the same on every platform
// (this test runs natively and in wasm), grows with the G2 tier, names the
// trace the job reads, and a job over a limit gets the limit's error.
func TestEstimate(t *testing.T) {
	data, err := traces.Read("connectors.yaml")
	if err != nil {
		t.Fatal(err)
	}
	job := func(sets ...string) Job {
		return Job{Name: "connectors.yaml", Dir: ".", Config: data, Sets: sets, Traces: Traces{Builtin: true}}
	}
	g2 := "engine.workers.aggregated.kv_cache.host_offload.num_host_blocks="
	small, err := Estimate(job(g2 + "64"))
	if err != nil {
		t.Fatal(err)
	}
	large, err := Estimate(job(g2 + "2048"))
	if err != nil {
		t.Fatal(err)
	}
	if small.Units != 5593 || large.Units != 5841 || small.Trace != "delta-sessions.jsonl" {
		t.Errorf("Estimate = %+v and %+v; want 5593 and 5841 units, trace delta-sessions.jsonl", small, large)
	}
	if _, err := Estimate(job(g2 + "99999999")); err == nil || AsError(err).Kind != KindLimit {
		t.Errorf("over the G2 limit: %v; want a limit error", err)
	}
}
