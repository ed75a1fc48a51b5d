package replay

import (
	"testing"

	"github.com/kvsim/kvsim/core/report"
	"github.com/kvsim/kvsim/traces"
)

// TestRoutingCaseC: the §C agentic example on two workers
// (docs/model/acceptance.md ("Case C: agentic workers with private G2"))
// with session_affinity and kv_router: the later turn that repeats the
// play's first prompt ("restore") lands on the worker that holds that
// prefix, and that worker reuses all 8 of its full-block tokens — from G2
// under session_affinity (the play stays on its home, where the "pressure"
// turn pushed the prefix out of the 3-block G1), from G1 under kv_router
// (which sends "pressure" to the other worker and "restore" back to the
// prefix's). Round robin sends "restore" to the seed's worker only because
// the play alternates (w0, w1, w0, w1).
func TestRoutingCaseC(t *testing.T) {
	for _, c := range []struct {
		policy             string
		restoreG1, restore int // first-admission G1 and G2 tokens of "restore"
	}{
		{"session_affinity", 0, 8},
		{"kv_router", 8, 0},
	} {
		t.Run(c.policy, func(t *testing.T) {
			res := runExample(t, "agentic-g2.yaml", []string{"engine.routing=" + c.policy}, traces.Open)
			byID := map[string]*report.Request{}
			for i := range res.Records {
				byID[res.Records[i].RequestID] = &res.Records[i]
			}
			seed, restore := byID["seed"], byID["restore"]
			if restore.PrefillWorker != seed.PrefillWorker {
				t.Errorf("restore on w%d; the prefix is on w%d", restore.PrefillWorker, seed.PrefillWorker)
			}
			if restore.FirstG1 != c.restoreG1 || restore.FirstHost != c.restore {
				t.Errorf("restore reused %d from G1 and %d from G2; want %d and %d",
					restore.FirstG1, restore.FirstHost, c.restoreG1, c.restore)
			}
			if len(res.Summary.Workers) != 2 {
				t.Errorf("summary has %d per-worker entries; want 2", len(res.Summary.Workers))
			}
		})
	}
	if w := runExample(t, "agentic-g2.yaml", nil, traces.Open).Summary.Workers; w != nil {
		t.Errorf("round robin has per-worker entries %+v; want none (its summary is unchanged)", w)
	}
}
