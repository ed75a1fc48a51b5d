package replay

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/internal/harness"
	"github.com/kvsim/kvsim/core/report"
	"github.com/kvsim/kvsim/traces"
)

// TestRoutingCaseC: the §C agentic example on two workers
// (docs/model/cases.md ("Case C: agentic workers with private G2"))
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

// routedPolicies are the engine.routing values the routed random worlds
// cycle through: every policy but round robin, the KV router also with a
// temperature, the G2 extension and a weight of 0 (pure load).
var routedPolicies = []string{
	"least_loaded",
	"session_affinity",
	"kv_router",
	"{policy: kv_router, temperature: 0.8, seed: 11, host_overlap_weight: 0.5}",
	"{policy: kv_router, overlap_score_weight: 0}",
}

// TestRandomWorldsRouted replays the random worlds of
// TestRandomWorldsRunClean (the first 200, 50 under wasm) with a routing policy other
// than round robin, the invariant checker on after every pass: none may
// panic, trip an invariant, stall or leave a request unaccounted for, and
// a second run gives byte-identical reports and records.
func TestRandomWorldsRouted(t *testing.T) {
	n := 200
	if runtime.GOARCH == "wasm" {
		n = 50 // the same code, five times slower
	}
	ran := 0
	for seed := uint64(1); seed <= uint64(n); seed++ {
		kind, yaml, rows := routedWorldOf(seed)
		cfg, err := config.Parse("world.yaml", ".", []byte(yaml), nil)
		if err != nil {
			continue
		}
		if cfg.Engine.Routing.Default() {
			t.Fatalf("world %d: routing not set:\n%s", seed, yaml)
		}
		ran++
		t.Run(fmt.Sprintf("%d-%s", seed, kind), func(t *testing.T) {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("panic: %v\n%s", p, yaml)
				}
			}()
			first, second := runClean(t, cfg, rows), runClean(t, cfg, rows)
			for k, name := range []string{"prediction.json", "requests.jsonl", "passes.jsonl"} {
				if !bytes.Equal(first[k], second[k]) {
					t.Errorf("%s differs between two runs of the same world\n%s", name, yaml)
				}
			}
			if t.Failed() {
				t.Logf("world:\n%s", yaml)
			}
		})
	}
	if ran < n*3/4 {
		t.Errorf("only %d of %d routed worlds ran", ran, n)
	}
}

// routedWorldOf is random world seed with the routing policy
// routedPolicies[seed mod 5].
func routedWorldOf(seed uint64) (kind, yaml string, rows []harness.Row) {
	kind, yaml, rows = randomWorldOf(seed)
	policy := routedPolicies[seed%uint64(len(routedPolicies))]
	return kind, strings.Replace(yaml, "\nengine:\n", "\nengine:\n  routing: "+policy+"\n", 1), rows
}

var routedDigestsGolden = filepath.Join("testdata", "routed-world-digests.golden")

// TestRoutedWorldDigests pins the reports of the first 40 routed worlds by
// their SHA-256, as TestWorldDigests does for round robin: written by a
// native run (go test -run TestRoutedWorldDigests -update), checked
// natively and under GOOS=js GOARCH=wasm, so a routing decision (a softmax
// draw included) is the same in the browser as on the command line.
func TestRoutedWorldDigests(t *testing.T) {
	var b strings.Builder
	for seed := uint64(1); seed <= 40; seed++ {
		kind, yaml, rows := routedWorldOf(seed)
		cfg, err := config.Parse("world.yaml", ".", []byte(yaml), nil)
		if err != nil {
			fmt.Fprintf(&b, "%d %s refused: %s\n", seed, kind, strings.SplitN(err.Error(), "\n", 2)[0])
			continue
		}
		var out [3][]byte
		t.Run(fmt.Sprint(seed), func(t *testing.T) { out = runClean(t, cfg, rows) })
		fmt.Fprintf(&b, "%d %s", seed, kind)
		for _, o := range out {
			fmt.Fprintf(&b, " %x", sha256.Sum256(o))
		}
		b.WriteByte('\n')
	}
	got := b.String()
	if *update {
		if runtime.GOOS == "js" {
			t.Fatal("-update must run natively")
		}
		if err := os.WriteFile(routedDigestsGolden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	data, err := os.ReadFile(routedDigestsGolden)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != got {
		t.Errorf("routed world digests differ:\n got\n%s want\n%s", got, data)
	}
}
