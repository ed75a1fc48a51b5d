package replay

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/engine"
	"github.com/kvsim/kvsim/core/internal/harness"
	"github.com/kvsim/kvsim/core/record"
	"github.com/kvsim/kvsim/core/report"
)

var worlds = flag.Int("worlds", 0, "how many random worlds TestRandomWorldsRunClean replays (0: 500, or 100 under wasm)")

// TestRandomWorldsRunClean replays random small worlds that span the
// configuration space the page and the CLI accept (every connector and no
// tier, both scopes, several replicas and DP ranks, tiny and roomy G1 and
// G2, instant and slow copies, latency, multi-turn sessions sharing
// prefixes, prompts ending inside a block) with the invariant checker on
// after every pass. Each world either fails validation with a config error
// or runs to the end; none may panic, trip an invariant or finish with
// requests unaccounted for, and a second run gives byte-identical
// prediction.json, requests.jsonl and passes.jsonl.
func TestRandomWorldsRunClean(t *testing.T) {
	n := *worlds
	if n == 0 {
		n = 500
		if runtime.GOARCH == "wasm" {
			n = 100 // the same code, five times slower: enough to compare
		}
	}
	ran, refused := 0, 0
	for seed := uint64(1); seed <= uint64(n); seed++ {
		rng := rand.New(rand.NewPCG(seed, 29))
		w, rows := randomWorld(rng)
		cfg, err := config.Parse("world.yaml", ".", []byte(w.YAML()), nil)
		if err != nil {
			refused++
			continue
		}
		ran++
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("panic: %v\n%s\n%s", p, w.YAML(), harness.RowsJSONL(rows))
				}
			}()
			first := runClean(t, cfg, rows)
			second := runClean(t, cfg, rows)
			for k, name := range []string{"prediction.json", "requests.jsonl", "passes.jsonl"} {
				if !bytes.Equal(first[k], second[k]) {
					t.Errorf("%s differs between two runs of the same world\n%s", name, w.YAML())
				}
			}
		})
	}
	t.Logf("%d worlds ran, %d refused by validation", ran, refused)
	if ran < n*3/4 {
		t.Errorf("only %d of %d worlds ran: the generator makes mostly invalid configs", ran, n)
	}
}

// randomWorld draws one world and its rows.
func randomWorld(rng *rand.Rand) (harness.World, []harness.Row) {
	pick := func(xs ...float64) float64 { return xs[rng.IntN(len(xs))] }
	w := harness.World{
		Connector: []string{"offloading_v0_24", "offloading_v0_32", "simple_cpu_v0_32"}[rng.IntN(3)],
		G1:        6 + rng.IntN(60),
		Budget:    4 + rng.IntN(61),
		MaxSeq:    1 + rng.IntN(8),
		D2H:       pick(0, 0.1, 1, 10),
		H2D:       pick(0, 0.1, 1, 10),
		Latency:   pick(0, 0, 0.5, 3),
		Prefill:   pick(0.5, 2, 5),
		Decode:    pick(0.5, 1, 3),
		Replicas:  1 + rng.IntN(3),
		DP:        1 + rng.IntN(2),
	}
	if rng.IntN(5) > 0 {
		w.G2 = 1 + rng.IntN(24)
	}
	if rng.IntN(4) == 0 {
		// The shared pool is offloading_v0_24's (connectors.md §2).
		w.Connector, w.Scope = "offloading_v0_24", "cluster_shared"
		w.PoolD2H, w.PoolH2D = pick(0, 2, 20), pick(0, 2, 20)
	}
	var prefixes [3][]int
	next := 1
	for i := range prefixes {
		for range rng.IntN(6) {
			prefixes[i] = append(prefixes[i], next)
			next++
		}
	}
	var rows []harness.Row
	for s := range 3 + rng.IntN(10) {
		session := fmt.Sprintf("s%d", s)
		hash := append([]int{}, prefixes[rng.IntN(3)]...)
		at := float64(rng.IntN(40))
		for turn := range 1 + rng.IntN(3) {
			for range 1 + rng.IntN(4) {
				hash = append(hash, next)
				next++
			}
			r := harness.Row{ID: fmt.Sprintf("%s-%d", session, turn), Session: session, At: at,
				Hash: append([]int{}, hash...), Out: 1 + rng.IntN(10)}
			if rng.IntN(3) == 0 {
				// A prompt that ends inside its last block.
				r.In = 4*len(hash) - 1 - rng.IntN(3)
			}
			if turn > 0 {
				r.Later, r.Delay = true, pick(0, 1, 20)
			}
			rows = append(rows, r)
		}
	}
	return w, rows
}

// runClean replays cfg over rows with the invariant checker and the
// recorder on and returns prediction.json, requests.jsonl and passes.jsonl.
func runClean(t *testing.T, cfg *config.Config, rows []harness.Row) [3][]byte {
	t.Helper()
	open := func(string) (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(harness.RowsJSONL(rows))), nil
	}
	wl, err := Workload(cfg, open)
	if err != nil {
		t.Fatalf("workload: %v", err)
	}
	rr := record.NewRecorder()
	res, err := Run(cfg, wl, engine.Options{Check: true, Observer: rr})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	// Every request ends completed or rejected, except the turns that a
	// rejection left unissued: a rejected request ends its session
	// (replay-model.md §3), whose later turns keep an empty status.
	rejected := map[string]bool{}
	for _, r := range res.Records {
		if r.Status == report.StatusRejected {
			rejected[r.SessionID] = true
		}
	}
	if len(res.Records) != len(rows) {
		t.Errorf("%d records for %d rows", len(res.Records), len(rows))
	}
	for _, r := range res.Records {
		switch {
		case r.Status == "" && rejected[r.SessionID]:
		case r.Status == report.StatusRejected, r.Completed():
		default:
			t.Errorf("%s ended %q", r.RequestID, r.Status)
		}
	}
	var passes bytes.Buffer
	if err := rr.Record().WriteJSONL(&passes); err != nil {
		t.Fatal(err)
	}
	return [3][]byte{res.PredictionJSON(), res.RequestsJSONL(), passes.Bytes()}
}

// TestCompletedLoadsGoFirst: in random world 28 (a cluster_shared pool,
// two DP ranks of 17 G1 blocks) a waiter whose G2 hit needs the capacity
// promised to a completed load stood in front of that load's request. In
// strict FIFO order among awake connector waiters (connectors.md §2.1) the
// replay stalls there, and the engine says so (invariant E-1); with
// completed loads first (scheduler.Rank.nextCandidate) it runs to the end.
func TestCompletedLoadsGoFirst(t *testing.T) {
	w, rows := randomWorld(rand.New(rand.NewPCG(28, 29)))
	cfg, err := config.Parse("world.yaml", ".", []byte(w.YAML()), nil)
	if err != nil {
		t.Fatal(err)
	}
	open := func(string) (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(harness.RowsJSONL(rows))), nil
	}
	for _, fifo := range []bool{true, false} {
		wl, err := Workload(cfg, open)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Run(cfg, wl, engine.Options{Check: true, FIFOWaiters: fifo})
		switch {
		case fifo && !errors.Is(err, engine.ErrStalled):
			t.Errorf("strict FIFO waiters: err %v; want the stall", err)
		case fifo && !strings.Contains(err.Error(), "2 dispatched requests can never finish (s7-1, s8-2)"):
			t.Errorf("the stall names %q; want s7-1 and s8-2", err)
		case !fifo && err != nil:
			t.Errorf("completed loads first: %v", err)
		}
	}
}
