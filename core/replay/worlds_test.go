package replay

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/engine"
	"github.com/kvsim/kvsim/core/internal/harness"
	"github.com/kvsim/kvsim/core/record"
	"github.com/kvsim/kvsim/core/report"
	"github.com/kvsim/kvsim/core/vtime"
)

var worlds = flag.Int("worlds", 0, "how many random worlds TestRandomWorldsRunClean replays (0: 500, or 100 under wasm)")

// TestRandomWorldsRunClean replays random small worlds that span the
// configuration space the page and the CLI accept (every connector and no
// tier, both scopes, several replicas and DP ranks, tiny and roomy G1 and
// G2, instant and slow copies, latency, G3 behind G2, prefill/decode
// deployments, multi-turn sessions sharing prefixes, prompts ending inside
// a block, agentic plays, delta traces, closed loops, speedups, cutoffs,
// synthetic sources, short contexts, no chunked prefill, no prefix caching)
// with the invariant checker on after every pass. Each world
// either fails validation with a config error or runs to the end; none may
// panic, trip an invariant or finish with requests unaccounted for, and a
// second run gives byte-identical prediction.json, requests.jsonl and
// passes.jsonl.
func TestRandomWorldsRunClean(t *testing.T) {
	n := *worlds
	if n == 0 {
		n = 500
		if runtime.GOARCH == "wasm" {
			n = 100 // the same code, five times slower: enough to compare
		}
	}
	ran, refused := 0, 0
	kinds := map[string]int{}
	for seed := uint64(1); seed <= uint64(n); seed++ {
		kind, yaml, rows := randomWorldOf(seed)
		cfg, err := config.Parse("world.yaml", ".", []byte(yaml), nil)
		if err != nil {
			var ce *config.Error
			if !errors.As(err, &ce) {
				t.Errorf("world %d: %T %v is not a config error", seed, err, err)
			}
			refused++
			continue
		}
		ran++
		kinds[kind]++
		t.Run(fmt.Sprintf("%d-%s", seed, kind), func(t *testing.T) {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("panic: %v\n%s\n%s", p, yaml, harness.RowsJSONL(rows))
				}
			}()
			first := runClean(t, cfg, rows)
			second := runClean(t, cfg, rows)
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
	t.Logf("%d worlds ran %v, %d refused by validation", ran, kinds, refused)
	if ran < n*3/4 {
		t.Errorf("only %d of %d worlds ran: the generator makes mostly invalid configs", ran, n)
	}
}

// randomWorldOf is world seed: a deployment, then each generator's
// variation of it (every generator draws from its own stream).
func randomWorldOf(seed uint64) (kind, yaml string, rows []harness.Row) {
	kind, yaml, rows = randomDeployment(seed)
	if y, ok := withSessions(seed, yaml); ok {
		kind, yaml, rows = kind+"-sessions", y, nil
	}
	if y, r, ok := withAgentic(seed, yaml, rows); ok {
		kind, yaml, rows = kind+"-agentic", y, r
	}
	if !strings.Contains(kind, "agentic") {
		if y, r, k, ok := withTraffic(seed, yaml, rows); ok {
			kind, yaml, rows = kind+"-"+k, y, r
		}
	}
	if y, ok := withEngineKnobs(seed, yaml); ok {
		kind, yaml = kind+"-knobs", y
	}
	if y, ok := withBlockSizes(seed, yaml); ok {
		kind, yaml = kind+"-blocks", y
	}
	return kind, yaml, rows
}

// withBlockSizes gives a fifth of the worlds a KV block size other than
// the trace's (2, 8 or 16 tokens against 4, the same on every role) and
// sometimes a coarser trace block (8 or 16 tokens per hash id), so that
// trace blocks split across KV blocks and KV blocks across trace blocks.
// Its own stream, as withSessions.
func withBlockSizes(seed uint64, yaml string) (string, bool) {
	rng := rand.New(rand.NewPCG(seed, 53))
	if rng.IntN(5) != 0 {
		return yaml, false
	}
	kv := []int{2, 8, 16}[rng.IntN(3)]
	yaml = strings.ReplaceAll(yaml, "        block_size: 4\n", fmt.Sprintf("        block_size: %d\n", kv))
	if rng.IntN(2) == 0 {
		// A coarser trace block only makes every row's prompt longer.
		yaml = strings.Replace(yaml, "paths: [t.jsonl], block_size: 4}", fmt.Sprintf("paths: [t.jsonl], block_size: %d}", []int{8, 16}[rng.IntN(2)]), 1)
	}
	return yaml, true
}

// randomDeployment draws world seed: half of them one aggregated role
// (randomWorld), a quarter that with G3 behind G2, a quarter prefill and
// decode roles. It returns the kind, the config and the rows.
func randomDeployment(seed uint64) (kind, yaml string, rows []harness.Row) {
	w, rows := randomWorld(rand.New(rand.NewPCG(seed, 29)))
	rng := rand.New(rand.NewPCG(seed, 31)) // a second stream keeps randomWorld's draws as they were
	pick := func(xs ...float64) float64 { return xs[rng.IntN(len(xs))] }
	switch rng.IntN(4) {
	case 0:
		// G3 needs the default connector, one DP rank and a G2
		// (docs/model/g3.md).
		w.Connector, w.DP = "offloading_v0_24", 1
		if w.G2 == 0 {
			w.G2 = 1 + rng.IntN(24)
		}
		scope := []string{"worker_local", "cluster_shared"}[rng.IntN(2)]
		g3 := fmt.Sprintf("\n        g3_offload: {scope: %s, num_g3_blocks: %d, read_bandwidth_gbps: %v, write_bandwidth_gbps: %v, latency_to_first_byte_ms: %v}",
			scope, 2+rng.IntN(60), pick(0, 0.1, 2), pick(0, 0.1, 2), pick(0, 0.1, 2))
		y := w.YAML()
		i := strings.Index(y, "\n      timing:")
		return "g3", y[:i] + g3 + y[i:], rows
	case 1:
		return "pd", pdYAML(rng, w), rows
	}
	return "aggregated", w.YAML(), rows
}

// withSessions gives a quarter of the worlds synthetic multi-turn sessions
// (some sharing prefixes) under a closed-loop or Poisson load instead of
// their trace rows. It draws from its own stream, so randomDeployment's
// worlds stay as TestWorldsThatStalled names them.
func withSessions(seed uint64, yaml string) (string, bool) {
	rng := rand.New(rand.NewPCG(seed, 37))
	if rng.IntN(4) != 0 {
		return yaml, false
	}
	ratio := []float64{0, 0.25, 0.75}[rng.IntN(3)]
	groups := 0
	if ratio > 0 {
		groups = 1 + rng.IntN(3)
	}
	load := fmt.Sprintf("{type: concurrency, concurrency: %d}", 1+rng.IntN(6))
	if rng.IntN(2) == 0 {
		load = fmt.Sprintf("{type: poisson, sessions_per_second: %d, seed: %d}", 20+rng.IntN(200), rng.IntN(100))
	}
	traffic := fmt.Sprintf(`traffic:
  source: {type: synthetic-session, new_input_tokens_per_turn: %d, output_tokens_per_turn: %d, session: {turns: %d, inter_turn_delay_ms: %v, shared_prefix_ratio: %v, prefix_groups: %d}}
  load: %s
  stop: {sessions: %d}
`, 1+rng.IntN(40), 1+rng.IntN(12), 2+rng.IntN(4), []float64{0, 1, 20}[rng.IntN(3)], ratio, groups, load, 3+rng.IntN(12))
	return traffic + yaml[strings.Index(yaml, "engine:"):], true
}

// withAgentic turns a fifth of the trace-driven worlds into agentic plays
// (agentic_mooncake): every later turn waits for the turn before it, a
// quarter of the rows also wait for a random earlier row (joining two
// sessions into one play, or making a root a dependent), dependents get
// tool waits, the file order is shuffled so that some references point
// forward, and half the worlds cap the plays in flight with agentic_lanes.
// Its own stream, as withSessions.
func withAgentic(seed uint64, yaml string, rows []harness.Row) (string, []harness.Row, bool) {
	rng := rand.New(rand.NewPCG(seed, 43))
	if rows == nil || rng.IntN(5) != 0 || strings.Contains(yaml, "g3_offload") {
		return yaml, rows, false // agentic replay refuses G3 (docs/model/config.md ("Agentic restrictions"))
	}
	out := slices.Clone(rows)
	for i := range out {
		r := &out[i]
		r.WaitFor = nil
		if r.Later {
			r.WaitFor = []string{out[i-1].ID} // randomWorld lists a session's turns in order
		}
		if i > 0 && rng.IntN(4) == 0 {
			if d := out[rng.IntN(i)].ID; !slices.Contains(r.WaitFor, d) {
				r.WaitFor = append(r.WaitFor, d)
			}
		}
		if len(r.WaitFor) > 0 {
			r.ToolWait = []vtime.Time{0, 0, 2, 15}[rng.IntN(4)]
		}
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	load := "load: {type: trace_timestamps}"
	if rng.IntN(2) == 0 {
		load = fmt.Sprintf("load: {type: trace_timestamps, agentic_lanes: %d}", 1+rng.IntN(3))
	}
	if strings.Contains(yaml, "host_offload") {
		// Agentic replay with a host tier takes one DP rank per worker, and
		// several workers only as aggregated ones with private tiers
		// (docs/model/config.md ("Agentic restrictions")).
		yaml = regexp.MustCompile(`attention_data: \d+`).ReplaceAllString(yaml, "attention_data: 1")
		if strings.Contains(yaml, "disaggregated") || strings.Contains(yaml, "cluster_shared") {
			yaml = regexp.MustCompile(`replicas: \d+`).ReplaceAllString(yaml, "replicas: 1")
		}
	}
	yaml = strings.Replace(yaml, "format: mooncake", "format: agentic_mooncake", 1)
	yaml = strings.Replace(yaml, "load: {type: trace_timestamps}", load, 1)
	return yaml, out, true
}

// withTraffic gives a fifth of the trace-driven worlds the traffic the
// other generators never make: the rows read as mooncake-delta (each later
// turn's hash ids are its new blocks only; aggregated mode), the trace
// replayed as a closed loop of sessions or at a speedup, a virtual-time
// cutoff, or a plain synthetic source with a cached prefix under a
// constant-rate or Poisson load. It returns the rows to replay (nil when
// the world no longer reads them) and a kind.
// Its own stream, as withSessions.
func withTraffic(seed uint64, yaml string, rows []harness.Row) (string, []harness.Row, string, bool) {
	rng := rand.New(rand.NewPCG(seed, 47))
	if rows == nil || rng.IntN(5) != 0 {
		return yaml, rows, "", false
	}
	const load = "load: {type: trace_timestamps}"
	switch rng.IntN(5) {
	case 0:
		if strings.Contains(yaml, "mode: disaggregated") {
			return yaml, rows, "", false
		}
		out := slices.Clone(rows)
		for i := range out {
			if out[i].Later {
				// Keep the new blocks only; the replay prepends the session's
				// history (previous prompt and output).
				out[i].Hash = out[i].Hash[len(rows[i-1].Hash):]
				out[i].In = 0
			}
		}
		return strings.Replace(yaml, "format: mooncake", "format: mooncake-delta", 1), out, "delta", true
	case 1:
		return strings.Replace(yaml, load, fmt.Sprintf("load: {type: concurrency, concurrency: %d}", 1+rng.IntN(5)), 1), rows, "closed", true
	case 2:
		return strings.Replace(yaml, load, fmt.Sprintf("load: {type: trace_timestamps, speedup: %v}", []float64{0.25, 2, 50}[rng.IntN(3)]), 1), rows, "speedup", true
	case 3:
		i := strings.Index(yaml, "engine:")
		return yaml[:i] + fmt.Sprintf("  stop: {max_virtual_time_seconds: %v}\n", []float64{0.005, 0.02, 0.1}[rng.IntN(3)]) + yaml[i:], rows, "cutoff", true
	}
	in := 1 + rng.IntN(60)
	traffic := fmt.Sprintf(`traffic:
  source: {type: synthetic, input_tokens: %d, output_tokens: %d, cached_prefix_tokens: %d}
  load: {type: %s, requests_per_second: %d}
  stop: {requests: %d}
`, in, 1+rng.IntN(12), 4*rng.IntN(in/4+1), []string{"constant_rate", "poisson"}[rng.IntN(2)], 50+rng.IntN(500), 3+rng.IntN(20))
	return traffic + yaml[strings.Index(yaml, "engine:"):], nil, "synthetic", true
}

// withEngineKnobs sets, for a third of the worlds, the engine keys the
// other generators leave at their defaults: a short context_length (prompts
// at or past it are rejected, generation stops at it), chunked prefill off,
// and prefix caching off where no host tier needs it. Its own stream, as
// withSessions.
func withEngineKnobs(seed uint64, yaml string) (string, bool) {
	rng := rand.New(rand.NewPCG(seed, 41))
	if rng.IntN(3) != 0 {
		return yaml, false
	}
	var knobs string
	if rng.IntN(2) == 0 {
		knobs += fmt.Sprintf("  context_length: %d\n", 8+rng.IntN(48))
	}
	if rng.IntN(2) == 0 {
		knobs += "  enable_chunked_prefill: false\n"
	}
	if !strings.Contains(yaml, "host_offload") && rng.IntN(2) == 0 {
		yaml = strings.ReplaceAll(yaml, "prefix_caching: true", "prefix_caching: false")
	}
	const at = "  backend: vllm\n"
	i := strings.Index(yaml, at) + len(at)
	return yaml[:i] + knobs + yaml[i:], true
}

// pdYAML turns w into one prefill and one decode role of their own sizes,
// with a G2 on neither, the prefill role or both (one cluster_shared pool
// or a private tier each); P/D allows only the default connector.
func pdYAML(rng *rand.Rand, w harness.World) string {
	pick := func(xs ...float64) float64 { return xs[rng.IntN(len(xs))] }
	shared := rng.IntN(2) == 0
	poolBlocks := 1 + rng.IntN(24)
	role := func(name string, g2 bool) string {
		ho := ""
		if g2 {
			scope, blocks := "dp_rank_local", 1+rng.IntN(24)
			if shared {
				scope, blocks = "cluster_shared", poolBlocks
			}
			ho = fmt.Sprintf("\n        host_offload: {num_host_blocks: %d, scope: %s, d2h_bandwidth_gbps: %v, h2d_bandwidth_gbps: %v, shared_d2h_bandwidth_gbps: 20, shared_h2d_bandwidth_gbps: 20}",
				blocks, scope, pick(0, 0.1, 1), pick(0, 0.1, 1))
		}
		return fmt.Sprintf(`    %s:
      parallelism: {replicas: %d, tensor: 1, attention_data: %d}
      scheduler: {max_batched_tokens: %d, max_sequences: %d}
      kv_cache:
        block_size: 4
        prefix_caching: true
        bytes_per_token: 250000
        capacity: {type: fixed, blocks: %d}%s
      timing: {type: fixed, prefill_ms: %v, decode_ms: %v}
`, name, 1+rng.IntN(2), 1+rng.IntN(2), 4+rng.IntN(61), 1+rng.IntN(8), 6+rng.IntN(60), ho, w.Prefill, w.Decode)
	}
	g2 := rng.IntN(3) // 0 none, 1 prefill only, 2 both
	bw := "null"
	if rng.IntN(3) > 0 {
		bw = fmt.Sprint(pick(0.1, 1, 10))
	}
	return fmt.Sprintf(`traffic:
  source: {type: trace, format: mooncake, paths: [t.jsonl], block_size: 4}
  load: {type: trace_timestamps}
engine:
  mode: disaggregated
  model: tiny
  hardware: h200_sxm
  backend: vllm
  kv_transfer: {bytes_per_token: 250000, bandwidth_gb_per_second: %s, timing_mode: %s}
  workers:
%s%s`, bw, []string{"destination_missing", "full_prompt"}[rng.IntN(2)], role("prefill", g2 > 0), role("decode", g2 == 2))
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
		Latency:   vtime.Time(pick(0, 0, 0.5, 3)),
		Prefill:   vtime.Time(pick(0.5, 2, 5)),
		Decode:    vtime.Time(pick(0.5, 1, 3)),
		Replicas:  1 + rng.IntN(3),
		DP:        1 + rng.IntN(2),
	}
	if rng.IntN(5) > 0 {
		w.G2 = 1 + rng.IntN(24)
	}
	if rng.IntN(4) == 0 {
		// The shared pool is offloading_v0_24's
		// (docs/model/g2.md ("Configuration rules")).
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
		at := vtime.Time(rng.IntN(40))
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
				r.Later, r.Delay = true, vtime.Time(pick(0, 1, 20))
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
	// A few dozen requests need a few thousand passes; far more means a
	// livelock, which must fail rather than fill the memory.
	res, err := RunWith(cfg, wl, engine.Options{Check: true, Observer: rr, MaxPasses: 100000})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	// Every request ends completed or rejected, except the turns that a
	// rejection left unissued: a rejected request ends its session
	// (docs/model/traffic.md ("A rejected turn ends its session")), whose
	// later turns keep an empty status. A virtual-time cutoff may also leave
	// requests unfinished (reported incomplete,
	// docs/model/traffic.md ("Stop conditions")) and rows unissued.
	stop := cfg.Traffic.Stop
	exact := !stop.HasMaxVirtualTime
	rejected := map[string]bool{}
	for _, r := range res.Records {
		if r.Status == report.StatusRejected {
			rejected[r.SessionID] = true
		}
	}
	if exact && rows != nil && len(res.Records) != len(rows) {
		t.Errorf("%d records for %d rows", len(res.Records), len(rows))
	}
	for _, r := range res.Records {
		if stop.HasMaxVirtualTime && r.Status != "" && r.TerminalMs > stop.MaxVirtualTimeMs {
			// A soft cutoff processes the events at the cutoff and none after.
			t.Errorf("%s ended at %v ms, after the %v ms cutoff", r.RequestID, r.TerminalMs, stop.MaxVirtualTimeMs)
		}
		if r.Completed() {
			if err := checkCompleted(r, cfg); err != nil {
				t.Errorf("%s: %v", r.RequestID, err)
			}
		}
		switch {
		case r.Status == "" && (rejected[r.SessionID] || !exact):
		case r.Status == report.StatusRejected, r.Completed():
		default:
			t.Errorf("%s ended %q", r.RequestID, r.Status)
		}
	}
	var passes bytes.Buffer
	if err := rr.Record().WriteJSONL(&passes); err != nil {
		t.Fatal(err)
	}
	checkRecord(t, passes.Bytes())
	return [3][]byte{res.PredictionJSON(), res.RequestsJSONL(), passes.Bytes()}
}

// checkRecord decodes passes.jsonl, which must encode back to the same
// bytes, and checks the snapshot of every pass of every rank.
func checkRecord(t *testing.T, jsonl []byte) {
	t.Helper()
	rec, err := record.Decode(bytes.NewReader(jsonl))
	if err != nil {
		t.Fatalf("passes.jsonl does not decode: %v", err)
	}
	var again bytes.Buffer
	if err := rec.WriteJSONL(&again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), jsonl) {
		t.Errorf("passes.jsonl changes when decoded and encoded again")
	}
	for rank := range rec.Ranks {
		for pass := 1; pass <= rec.NumPasses(rank); pass++ {
			snap, err := rec.Seek(rank, pass)
			if err == nil {
				err = record.CheckSnapshot(snap, rec)
			}
			if err != nil {
				t.Fatalf("rank %d pass %d: %v", rank, pass, err)
			}
		}
	}
}

// checkCompleted holds a completed request's record to what any run must
// give: its times in order, its tokens as asked (fewer only under a
// context length), its first-admission reuse split into G1 and G2 parts
// that add up, at least one prompt token computed at the first admission,
// and inter-token gaps for every token after the first.
func checkCompleted(r report.Request, cfg *config.Config) error {
	times := []vtime.Time{r.ArrivalMs, r.DispatchedMs, r.FirstAdmitMs, r.FirstTokenMs, r.LastTokenMs, r.TerminalMs}
	for i := 1; i < len(times); i++ {
		if !(times[i-1] <= times[i]) { // also fails on NaN
			return fmt.Errorf("times out of order: arrival, dispatch, first admission, first token, last token, end = %v", times)
		}
	}
	if r.Tokens < 1 || r.Tokens > r.RequestedOutput || (cfg.Engine.ContextLength == 0 && r.Tokens != r.RequestedOutput) {
		return fmt.Errorf("%d tokens for %d requested (context length %d)", r.Tokens, r.RequestedOutput, cfg.Engine.ContextLength)
	}
	if r.FirstG1+r.FirstHost != r.FirstReused || (!r.HasHost && r.FirstHost != 0) {
		return fmt.Errorf("first admission reused %d = G1 %d + host %d (host tier %v)", r.FirstReused, r.FirstG1, r.FirstHost, r.HasHost)
	}
	if r.FirstReused > max(0, r.InputLength-1) {
		return fmt.Errorf("first admission reused %d of %d prompt tokens: the last one must be computed", r.FirstReused, r.InputLength)
	}
	gaps := 0
	r.EachGap(func(_ vtime.Time, n int) { gaps += n })
	if gaps != r.Tokens-1 {
		return fmt.Errorf("%d inter-token gaps for %d tokens", gaps, r.Tokens)
	}
	return nil
}

// TestCompletedLoadsGoFirst: in random world 28 (a cluster_shared pool,
// two DP ranks of 17 G1 blocks) a waiter whose G2 hit needs the capacity
// promised to a completed load stood in front of that load's request. In
// strict FIFO order among awake connector waiters
// (docs/model/pass.md ("Choosing the next candidate")) the replay stalls
// there, and the engine says so (invariant E-1); with completed loads first
// (scheduler.Rank.nextCandidate) it runs to the end.
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
		_, err = RunWith(cfg, wl, engine.Options{Check: true, FIFOWaiters: fifo})
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

// TestWorldsThatStalled replays, with the checker on, the random worlds in
// which TestRandomWorldsRunClean (some with -worlds 20000) first showed each
// stall or loop of docs/invariants.md; each failed before the rule named
// here and runs clean with it.
func TestWorldsThatStalled(t *testing.T) {
	for _, c := range []struct {
		seed uint64
		rule string
	}{
		{6, "a G3 completion wakes every rank that reads the store (engine.wakeG3Readers)"},
		{28, "materialized handoffs first on every decode rank (scheduler.Rank.nextCandidate)"},
		{386, "an idle decode rank retries its reservations when copies finish (engine.tickIdle)"},
		{728, "G3 restore rounds count only new promotions while the rank does no work (connector.bypassRounds)"},
		{3044, "every decode rank of a group retries its reservations at the pass end (engine.completePass)"},
	} {
		kind, yaml, rows := randomDeployment(c.seed)
		t.Run(fmt.Sprintf("%d-%s", c.seed, kind), func(t *testing.T) {
			cfg, err := config.Parse("world.yaml", ".", []byte(yaml), nil)
			if err != nil {
				t.Fatal(err)
			}
			runClean(t, cfg, rows)
			if t.Failed() {
				t.Logf("the rule this world needs: %s\n%s", c.rule, yaml)
			}
		})
	}
}
