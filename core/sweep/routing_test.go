package sweep

import (
	"bytes"
	"testing"

	"github.com/kvsim/kvsim/core/config"
)

// TestVaryRouting: engine.routing is a sweep dimension
// (docs/model/engine.md ("Placement")): one point per policy on the §C (docs/model/cases.md)
// agentic example (two workers); the round_robin point's summary is a
// plain run's, byte for byte; the other points add the per-worker columns;
// an unknown policy is refused naming the value and the known policies.
func TestVaryRouting(t *testing.T) {
	p := mustPlan(t, example(t, "agentic-g2.yaml", nil, "engine.routing=round_robin,least_loaded,session_affinity,kv_router"))
	r := mustRun(t, p, Options{Parallel: 2})
	if len(r.Rows) != 4 {
		t.Fatalf("%d points; want 4", len(r.Rows))
	}
	plain := mustRun(t, mustPlan(t, example(t, "agentic-g2.yaml", nil, "engine.routing=round_robin")), Options{})
	if !bytes.Equal(r.Summaries[0], plain.Summaries[0]) {
		t.Errorf("round_robin point differs from a plain run:\n%s\n%s", r.Summaries[0], plain.Summaries[0])
	}
	for i, pol := range config.RoutingPolicies {
		_, has := r.Rows[i]["workers.1.routed_requests"]
		if has != (pol != config.RoutingRoundRobin) {
			t.Errorf("%s: per-worker columns present %v", pol, has)
		}
	}
	// kv_router sends "restore" to the seed's worker, which still holds its
	// prefix in G1: 8 reused tokens there, none restored from G2.
	if got := r.Rows[3]["first_admission_host_reused_input_tokens"]; got != "0" {
		t.Errorf("kv_router restored %s tokens; want 0", got)
	}
	_, err := NewPlan(example(t, "agentic-g2.yaml", nil, "engine.routing=round_robin,random"))
	want := `--vary engine.routing=round_robin,random: value "random": engine.routing: expected one of round_robin, least_loaded, session_affinity, kv_router, got "random"`
	if err == nil || err.Error() != want {
		t.Errorf("error\n  %v\nwant\n  %s", err, want)
	}
}
