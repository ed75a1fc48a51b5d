package replay

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/engine"
	"github.com/kvsim/kvsim/core/internal/harness"
	"github.com/kvsim/kvsim/core/record"
	"github.com/kvsim/kvsim/core/vtime"
)

// shardWorld is a random world a run can be split across its workers:
// single-turn sessions arriving by their timestamps on two to four
// replicas of one or two DP ranks, routed round robin, with no G2 or a
// private offloading_v0_32 or simple_cpu_v0_32 tier, fixed or modelled
// timing, a G1 small enough to preempt, sometimes a virtual-time cutoff.
func shardWorld(seed uint64) (*config.Config, Opener, error) {
	job := shardJob(seed)
	cfg, err := config.Parse("world.yaml", ".", job.Config, job.Sets)
	if err != nil {
		return nil, nil, fmt.Errorf("%v\n%s", err, job.Config)
	}
	return cfg, func(string) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(job.Traces.Inline)), nil
	}, nil
}

// shardJob is shardWorld's world as a Job (its trace inline).
func shardJob(seed uint64) Job {
	rng := rand.New(rand.NewPCG(seed, 33))
	w := harness.World{G1: 12 + rng.IntN(120), Budget: 8 + rng.IntN(120), MaxSeq: 1 + rng.IntN(8),
		Replicas: 2 + rng.IntN(3), DP: 1 + rng.IntN(2),
		Prefill: vtime.Time(0.5 + rng.Float64()*4), Decode: vtime.Time(0.1 + rng.Float64()*2)}
	if rng.IntN(2) == 0 {
		w.G2, w.Connector = 4+rng.IntN(60), []string{"offloading_v0_32", "simple_cpu_v0_32"}[rng.IntN(2)]
		w.D2H, w.H2D = []float64{0, 0.001, 0.01}[rng.IntN(3)], []float64{0, 0.001, 0.01}[rng.IntN(3)]
	}
	var rows []harness.Row
	next := 1
	for s := range 4 + rng.IntN(30) {
		var hash []int
		for range 1 + rng.IntN(8) {
			hash = append(hash, 1+rng.IntN(next+3)) // shared prefixes across sessions
			next++
		}
		rows = append(rows, harness.Row{ID: fmt.Sprintf("s%d", s), Session: fmt.Sprintf("s%d", s),
			At: vtime.Time(rng.IntN(60)), Hash: hash, Out: 1 + rng.IntN(60)})
	}
	yaml := w.YAML()
	if rng.IntN(4) == 0 {
		yaml = strings.Replace(yaml, "  load: {type: trace_timestamps}", fmt.Sprintf("  load: {type: trace_timestamps}\n  stop: {max_virtual_time_seconds: %v}", 0.02+rng.Float64()*0.1), 1)
	}
	var sets []string
	if typ := []string{"", "roofline", "trained_physics"}[rng.IntN(3)]; typ != "" {
		sets = []string{"engine.model=llama-3.1-8b", "engine.hardware=h100", "engine.workers.aggregated.timing={type: " + typ + "}"}
	}
	return Job{Name: "world.yaml", Dir: ".", Config: []byte(yaml), Sets: sets, Traces: Traces{Inline: []byte(harness.RowsJSONL(rows))}}
}

// TestShardedRunsChangeNothing: a run split across engines, each
// simulating every n-th worker (docs/model/engine.md ("Sharded runs")),
// gives the prediction.json and requests.jsonl of one engine byte for
// byte, for every split from two engines to one per worker, over 120
// random worlds; each shard checks the invariants after every pass. A
// world where a shard saw a worker held back by the no-op rule runs whole
// (seeds 52 and 73 do: split, their g2_lookups and passes differed).
func TestShardedRunsChangeNothing(t *testing.T) {
	g2, splits, whole := 0, 0, 0
	for seed := uint64(1); seed <= 120; seed++ {
		cfg, open, err := shardWorld(seed)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		wl, err := Workload(cfg, open)
		if err != nil {
			t.Fatal(err)
		}
		n := engine.Shardable(cfg, wl)
		if n < 2 {
			t.Fatalf("seed %d: the world cannot be split (Shardable %d)", seed, n)
		}
		if cfg.Engine.Workers.Aggregated.KVCache.HostOffload != nil {
			g2++
		}
		one, err := RunWith(cfg, wl, engine.Options{Check: true})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for k := 2; k <= n; k++ {
			split, ok, err := runSplit(cfg, wl, engine.Options{Check: true}, k)
			if err != nil {
				t.Fatalf("seed %d, %d shards: %v", seed, k, err)
			}
			if ok {
				splits++
			} else {
				whole++
			}
			if p, r := bytes.Equal(split.PredictionJSON(), one.PredictionJSON()), bytes.Equal(split.RequestsJSONL(), one.RequestsJSONL()); !p || !r {
				t.Errorf("seed %d, %d shards of %d workers (G2 %v): prediction.json the same %v, requests.jsonl the same %v", seed, k, n,
					cfg.Engine.Workers.Aggregated.KVCache.HostOffload != nil, p, r)
			}
			if split.Stats.Passes != one.Stats.Passes || split.Stats.CommittedPrefillTokens != one.Stats.CommittedPrefillTokens || split.RankPasses != one.RankPasses {
				t.Errorf("seed %d, %d shards: %d passes (%d on the longest rank), %d prefill tokens; one engine %d (%d), %d", seed, k,
					split.Stats.Passes, split.RankPasses, split.Stats.CommittedPrefillTokens, one.Stats.Passes, one.RankPasses, one.Stats.CommittedPrefillTokens)
			}
		}
	}
	t.Logf("%d runs split, %d run whole after a shard saw a held-back worker", splits, whole)
	if g2 == 0 || splits < 100 || whole == 0 {
		t.Errorf("%d worlds with G2, %d runs split, %d run whole: the comparison misses a case", g2, splits, whole)
	}
}

// TestShardableRefusesCoupledRuns: each coupling between workers that a
// shard could not see makes a run unsplittable, one flag at a time from a
// world that can be split.
func TestShardableRefusesCoupledRuns(t *testing.T) {
	base := harness.World{G1: 40, Replicas: 2}
	role := "{parallelism: {replicas: 2, attention_data: 1}, scheduler: {max_batched_tokens: 64, max_sequences: 4}, " +
		"kv_cache: {block_size: 4, bytes_per_token: 1000, capacity: {type: fixed, blocks: 40}}, timing: {type: fixed, prefill_ms: 2, decode_ms: 1}}"
	rows := []harness.Row{{ID: "a", Session: "a", Hash: []int{1, 2}, Out: 3}, {ID: "b", Session: "b", At: 1, Hash: []int{1, 3}, Out: 3}}
	cases := []struct {
		name  string
		world func(w *harness.World)
		sets  []string
		rows  []harness.Row
	}{
		{name: "splittable"},
		{name: "one replica", world: func(w *harness.World) { w.Replicas = 1 }},
		{name: "routing by load", world: func(w *harness.World) { w.Routing = "{policy: least_loaded}" }},
		{name: "closed-loop load", sets: []string{"traffic.load={type: concurrency, concurrency: 2}"}},
		{name: "a session of two turns", rows: append(rows[:1:1], harness.Row{ID: "a2", Session: "a", Later: true, Hash: []int{4}, Out: 2})},
		// The config allows a shared pool and G3 only with offloading_v0_24,
		// so these two cases are refused by its CohortLRU check too.
		{name: "a shared G2 pool", world: func(w *harness.World) { w.G2, w.Connector, w.Scope = 16, "offloading_v0_24", "cluster_shared" }},
		{name: "CohortLRU", world: func(w *harness.World) { w.G2, w.Connector = 16, "offloading_v0_24" }},
		{name: "G3", world: func(w *harness.World) { w.G2, w.Connector = 16, "offloading_v0_24" },
			sets: []string{"engine.workers.aggregated.kv_cache.g3_offload={num_g3_blocks: 64, scope: worker_local}"}},
		{name: "P/D", sets: []string{"engine.mode=disaggregated", "engine.workers.aggregated=null",
			"engine.workers.prefill=" + role, "engine.workers.decode=" + role,
			"engine.kv_transfer={bytes_per_token: 250000, bandwidth_gb_per_second: 100}"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := base
			if c.world != nil {
				c.world(&w)
			}
			rs := rows
			if c.rows != nil {
				rs = c.rows
			}
			cfg, err := config.Parse("w.yaml", ".", []byte(w.YAML()), c.sets)
			if err != nil {
				t.Fatal(err)
			}
			wl, err := Workload(cfg, func(string) (io.ReadCloser, error) {
				return io.NopCloser(strings.NewReader(harness.RowsJSONL(rs))), nil
			})
			if err != nil {
				t.Fatal(err)
			}
			n := engine.Shardable(cfg, wl)
			if want := c.name == "splittable"; (n >= 2) != want {
				t.Fatalf("Shardable = %d; want a split %v", n, want)
			}
			if n < 2 {
				if _, err := engine.New(cfg, wl, engine.Options{Shard: engine.Shard{Of: 2}}); err == nil {
					t.Error("engine.New took a shard of a run that cannot be split")
				}
			}
		})
	}
}

// TestShardsNeedOneEngineForARecord: a per-pass record or a pass bound
// keeps the run in one engine (shards gives 1).
func TestShardsNeedOneEngineForARecord(t *testing.T) {
	cfg, open, err := shardWorld(1)
	if err != nil {
		t.Fatal(err)
	}
	wl, err := Workload(cfg, open)
	if err != nil {
		t.Fatal(err)
	}
	for name, o := range map[string]engine.Options{"record": {Observer: record.NewRecorder()}, "pass bound": {MaxPasses: 1000}} {
		if n := shards(cfg, wl, o); n != 1 {
			t.Errorf("%s: %d shards", name, n)
		}
	}
}

// TestShardedMooncake: the Mooncake conversation trace's summary is the
// same split and in one engine (set KVSIM_MOONCAKE to conversation.yaml).
func TestShardedMooncake(t *testing.T) {
	for _, sets := range [][]string{nil, {"engine.workers.aggregated.kv_cache.host_offload={num_host_blocks: 200000, connector: simple_cpu_v0_32}"}} {
		cfg, open := mooncakeConfig(t, sets)
		wl, err := Workload(cfg, open)
		if err != nil {
			t.Fatal(err)
		}
		one, err := RunWith(cfg, wl, engine.Options{})
		if err != nil {
			t.Fatal(err)
		}
		split, ok, err := runSplit(cfg, wl, engine.Options{}, 2)
		if err != nil || !ok {
			t.Fatalf("split %v: %v", ok, err)
		}
		if !bytes.Equal(one.RequestsJSONL(), split.RequestsJSONL()) || !bytes.Equal(one.PredictionJSON(), split.PredictionJSON()) {
			t.Errorf("%v: the reports differ split in two", sets)
		}
	}
}

// mooncakeCase is the Mooncake conversation case that KVSIM_MOONCAKE names
// (its conversation.yaml; the test is skipped when unset): the config's
// path, its directory and text, and an opener for its trace.
func mooncakeCase(t testing.TB) (path, dir string, data []byte, open Opener) {
	t.Helper()
	path = os.Getenv("KVSIM_MOONCAKE")
	if path == "" {
		t.Skip("set KVSIM_MOONCAKE to the Mooncake case's conversation.yaml")
	}
	dir = filepath.Dir(path)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, dir, data, func(p string) (io.ReadCloser, error) { return os.Open(filepath.Join(dir, p)) }
}

// mooncakeConfig is mooncakeCase's config parsed with sets applied, and
// the opener for its trace.
func mooncakeConfig(t testing.TB, sets []string) (*config.Config, Opener) {
	t.Helper()
	path, dir, data, open := mooncakeCase(t)
	cfg, err := config.Parse(filepath.Base(path), dir, data, sets)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, open
}

// TestJobSplitsAShardableRun: Run splits a run it can (Output.Engines, at
// most one engine per processor) unless the job says NoShard, and the
// outputs are the same bytes.
func TestJobSplitsAShardableRun(t *testing.T) {
	w := harness.World{G1: 40, Replicas: 3}
	rows := []harness.Row{{ID: "a", Session: "a", Hash: []int{1, 2}, Out: 9}, {ID: "b", Session: "b", At: 1, Hash: []int{1, 3}, Out: 7},
		{ID: "c", Session: "c", At: 2, Hash: []int{1, 2, 4}, Out: 5}, {ID: "d", Session: "d", At: 3, Hash: []int{5}, Out: 3}}
	open := func(string) (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(harness.RowsJSONL(rows))), nil
	}
	job := Job{Name: "w.yaml", Config: []byte(w.YAML()), Traces: Traces{Files: open}, Capture: Capture{Requests: true}}
	split, err := Run(job)
	if err != nil {
		t.Fatal(err)
	}
	job.NoShard = true
	one, err := Run(job)
	if err != nil {
		t.Fatal(err)
	}
	if want := min(3, runtime.GOMAXPROCS(0)); split.Engines != want || one.Engines != 1 {
		t.Errorf("engines: %d split, %d with NoShard; want %d and 1", split.Engines, one.Engines, want)
	}
	if !bytes.Equal(split.Prediction, one.Prediction) || !bytes.Equal(split.Requests, one.Requests) {
		t.Error("the outputs differ split and whole")
	}
}
