package replay

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/engine"
	"github.com/kvsim/kvsim/core/trace"
	"github.com/kvsim/kvsim/core/vtime"
)

// agentxTurns is the authored data of ai-dynamo/dynamo
// components/src/dynamo/replay/tests/test_agentx_g2.py (_trace): fill G1,
// evict its prefix, then request that prefix again.
var agentxTurns = []struct {
	id     string
	ms     int
	hashes []int
}{
	{"seed", 0, []int{1, 2, 3}},
	{"pressure", 100, []int{11, 12, 13}},
	{"restore", 200, []int{1, 2, 3}},
	{"finish", 300, []int{21, 22, 23}},
}

// agentxTrace writes _trace's rows in one of its forms: weka (one session
// object, every request top-level), or mooncake / mooncake-delta (distinct
// sessions, so the delta prompts stay independent).
func agentxTrace(format string) string {
	var b strings.Builder
	if format == "weka" {
		var reqs []string
		for _, tu := range agentxTurns {
			h, _ := json.Marshal(tu.hashes)
			reqs = append(reqs, fmt.Sprintf(`{"t":%g,"type":"s","model":"target-model","in":9,"out":1,"hash_ids":%s,"api_time":0.002}`,
				float64(tu.ms)/1000, h))
		}
		fmt.Fprintf(&b, `{"id":"host-restore","models":["target-model"],"block_size":4,"hash_id_scope":"local","requests":[%s]}`+"\n",
			strings.Join(reqs, ","))
		return b.String()
	}
	for _, tu := range agentxTurns {
		h, _ := json.Marshal(tu.hashes)
		fmt.Fprintf(&b, `{"request_id":%q,"session_id":%q,"timestamp":%d,"input_length":9,"output_length":1,"hash_ids":%s}`+"\n",
			tu.id, tu.id, tu.ms, h)
	}
	return b.String()
}

// agentxConfig is _spec: one aggregated vLLM worker, block size 4, G1 of 3
// blocks, one sequence, 16 batched tokens, 250,000 bytes per token, fixed
// timing (prefill 2 ms, decode 1 ms) and, unless scope is "", a G2 of 8
// blocks at 1 GB/s each way. Weka runs with one lane and the absolute basis.
func agentxConfig(format, scope string) string {
	src := fmt.Sprintf("{type: trace, format: %s, paths: [t.jsonl], block_size: 4}", format)
	load := "{type: trace_timestamps}"
	if format == "weka" {
		src = "{type: trace, format: weka, paths: [t.jsonl], block_size: 4, nested_timestamp_basis: absolute}"
		load = "{type: trace_timestamps, agentic_lanes: 1}"
	}
	g2 := ""
	if scope != "" {
		g2 = fmt.Sprintf("\n        host_offload: {num_host_blocks: 8, scope: %s, d2h_bandwidth_gbps: 1, h2d_bandwidth_gbps: 1}", scope)
	}
	return fmt.Sprintf(`traffic:
  source: %s
  load: %s
engine:
  mode: aggregated
  model: tiny
  hardware: h200_sxm
  backend: vllm
  context_length: 2048
  workers:
    aggregated:
      parallelism: {replicas: 1, tensor: 1, attention_data: 1}
      scheduler: {max_batched_tokens: 16, max_sequences: 1}
      kv_cache:
        block_size: 4
        prefix_caching: true
        bytes_per_token: 250000
        capacity: {type: fixed, blocks: 3}%s
      timing: {type: fixed, prefill_ms: 2, decode_ms: 1}
`, src, load, g2)
}

// runText runs a config text over one trace text (the invariant checker on
// every pass).
func runText(t *testing.T, cfgText, traceText string, sets ...string) *Result {
	t.Helper()
	cfg, err := config.Parse("c.yaml", ".", []byte(cfgText), sets)
	if err != nil {
		t.Fatal(err)
	}
	wl, err := Workload(cfg, func(string) (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(traceText)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunWith(cfg, wl, engine.Options{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// hostHits are the records whose first admission reused G2 tokens.
func hostHits(res *Result) []int {
	var out []int
	for i, r := range res.Records {
		if r.FirstHost > 0 {
			out = append(out, i)
		}
	}
	return out
}

// checkRestore applies the published expectations of one G2 run: 4
// completed, 28 prefill tokens committed, one request restoring 8 host
// tokens and no G1 tokens, admitted wait ms after arriving (the H2D copy of
// two blocks of 4 × 250,000 bytes), first token 2 ms (one prefill pass)
// later.
func checkRestore(t *testing.T, res *Result, wait vtime.Time) {
	t.Helper()
	if got := res.Summary.CompletedRequests; got != 4 {
		t.Errorf("completed %d; want 4", got)
	}
	if got := res.Summary.CommittedPrefillTokens; got != 28 {
		t.Errorf("committed prefill %d; want 28", got)
	}
	hits := hostHits(res)
	if len(hits) != 1 {
		t.Fatalf("host hits %v; want one", hits)
	}
	h := res.Records[hits[0]]
	if h.FirstHost != 8 || h.FirstG1 != 0 {
		t.Errorf("%s reused host %d, G1 %d; want 8 and 0", h.RequestID, h.FirstHost, h.FirstG1)
	}
	if got := h.FirstAdmitMs - h.ArrivalMs; !near(got, wait) {
		t.Errorf("%s admitted %v ms after arrival; want %v", h.RequestID, got, wait)
	}
	if got := h.FirstTokenMs - h.ArrivalMs; !near(got, wait+2) {
		t.Errorf("%s TTFT %v ms; want %v", h.RequestID, got, wait+2)
	}
}

func near(a, b vtime.Time) bool { return a-b < 1e-9 && b-a < 1e-9 }

// TestAgentxRestoresG2AndMeasuresH2D re-expresses dynamo's
// test_agentx_g2.py::test_existing_api_restores_g2_and_measures_h2d over the
// weka, mooncake and mooncake-delta forms (kvsim has no dynamo format) and
// both scopes: fast (1 GB/s, 2 ms wait) and slow (0.1 GB/s, 20 ms wait)
// H2D both restore the evicted prefix; without G2 nothing is restored and
// more prefill is committed.
func TestAgentxRestoresG2AndMeasuresH2D(t *testing.T) {
	const h2d = "engine.workers.aggregated.kv_cache.host_offload.h2d_bandwidth_gbps=0.1"
	for _, format := range []string{"weka", "mooncake", "mooncake-delta"} {
		for _, scope := range []string{"dp_rank_local", "cluster_shared"} {
			t.Run(format+"/"+scope, func(t *testing.T) {
				text := agentxTrace(format)
				fast := runText(t, agentxConfig(format, scope), text)
				checkRestore(t, fast, 2)
				checkRestore(t, runText(t, agentxConfig(format, scope), text, h2d), 20)
				if scope == "cluster_shared" {
					if d := fast.Summary.Domains; len(d) != 1 || d[0].CapacityBlocks != 8 {
						t.Errorf("g2 domains %+v; want one of 8 blocks", d)
					}
				}
				hbm := runText(t, agentxConfig(format, ""), text)
				if hbm.Summary.CompletedRequests != 4 || len(hostHits(hbm)) != 0 ||
					hbm.Summary.CommittedPrefillTokens <= fast.Summary.CommittedPrefillTokens {
					t.Errorf("HBM only: completed %d, host hits %v, committed %d; want 4, none, more than %d",
						hbm.Summary.CompletedRequests, hostHits(hbm), hbm.Summary.CommittedPrefillTokens,
						fast.Summary.CommittedPrefillTokens)
				}
			})
		}
	}
}

// TestAgentxParentResumesFromG2 re-expresses dynamo's
// test_agentx_g2.py::test_parent_resumes_from_g2_after_child_and_join on
// aisimulate's public fixture (core/trace/testdata/weka-g2-restore.jsonl,
// the same play with the pressure request inside a subagent): the child
// ends before the parent's next request arrives, and that request restores
// the parent's 8 tokens from G2.
func TestAgentxParentResumesFromG2(t *testing.T) {
	data, err := os.ReadFile("../trace/testdata/weka-g2-restore.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, scope := range []string{"dp_rank_local", "cluster_shared"} {
		t.Run(scope, func(t *testing.T) {
			res := runText(t, agentxConfig("weka", scope), string(data))
			checkRestore(t, res, 2)
			byID := map[string]int{}
			for i, r := range res.Records {
				byID[r.RequestID] = i
			}
			child := res.Records[byID["g2-parent-resume:outer:1:inner:0"]]
			hit := res.Records[hostHits(res)[0]]
			if hit.RequestID != "g2-parent-resume:outer:2" {
				t.Errorf("host hit on %s; want the parent's outer:2", hit.RequestID)
			}
			if child.TerminalMs > hit.ArrivalMs {
				t.Errorf("child ends at %v after the parent resumes at %v", child.TerminalMs, hit.ArrivalMs)
			}
		})
	}
}

// snapshotSeed is a seed whose kvsim cut of the _trace play falls in
// (2, 100) ms, where dynamo's test_snapshot_warmup_waits_for_g2_and_retains_cache
// finds seed 5's: kvsim draws its cuts from its own generator
// (docs/model/agentic.md ("Snapshot")), so the seeds differ, not the case.
const snapshotSeed = 23

func snapshotSets(extra ...string) []string {
	return append([]string{fmt.Sprintf("traffic.load.agentic_snapshot={seed: %d}", snapshotSeed)}, extra...)
}

// TestAgentxSnapshotCold re-expresses the cold half of dynamo's
// test_agentx_g2.py::test_snapshot_warmup_waits_for_g2_and_retains_cache:
// the cut lies in (2, 100) ms, so the seed request is history and the
// three others run, all computing their whole prompts (27 tokens): with
// cold caches nothing holds the seed's prefix, with or without G2. The cut
// is the same on every run of the seed.
func TestAgentxSnapshotCold(t *testing.T) {
	text := agentxTrace("weka")
	var first []trace.Cut
	for _, scope := range []string{"", "dp_rank_local", "cluster_shared"} {
		res := runText(t, agentxConfig("weka", scope), text, snapshotSets()...)
		cuts := res.Engine.Snapshots()
		if len(cuts) != 1 || cuts[0].TStarMs <= 2 || cuts[0].TStarMs >= 100 || cuts[0].History != 1 {
			t.Fatalf("scope %q: cuts %+v; want one in (2, 100) ms with one historical request", scope, cuts)
		}
		if first == nil {
			first = cuts
		} else if !reflect.DeepEqual(cuts, first) {
			t.Errorf("scope %q: cuts %+v differ from %+v", scope, cuts, first)
		}
		if got := res.Summary.CompletedRequests; got != 3 {
			t.Errorf("scope %q: completed %d; want 3", scope, got)
		}
		if got := res.Summary.CommittedPrefillTokens; got != 27 {
			t.Errorf("scope %q: committed prefill %d; want 27", scope, got)
		}
		if hits := hostHits(res); len(hits) != 0 {
			t.Errorf("scope %q: host hits %v on a cold run", scope, hits)
		}
	}
}

// TestAgentxSnapshotWarmup re-expresses dynamo's
// test_agentx_g2.py::test_snapshot_warmup_waits_for_g2_and_retains_cache.
// With G2, D2H runs at 0.01 GB/s: the primer's two full blocks (2 MB) take
// 200 ms to copy after the primer's 2 ms pass, longer than the ten 2 ms
// warmup passes, so the barrier opens at 202 ms, after the last
// preparation request (22 ms). The cuts are the cold run's; the warm run
// completes the same 3 requests, and with G2 the restore request finds the
// primed prefix in G2 (8 tokens: 19 committed instead of the cold 27);
// without G2, G1 (3 blocks) loses it to the pressure request and 27 are
// committed again. Every reported record is a profile request, timed from
// the barrier.
func TestAgentxSnapshotWarmup(t *testing.T) {
	text := agentxTrace("weka")
	const slowD2H = "engine.workers.aggregated.kv_cache.host_offload.d2h_bandwidth_gbps=0.01"
	for _, scope := range []string{"", "dp_rank_local", "cluster_shared"} {
		t.Run("scope="+scope, func(t *testing.T) {
			var sets []string
			if scope != "" {
				sets = append(sets, slowD2H)
			}
			cold := runText(t, agentxConfig("weka", scope), text, snapshotSets(sets...)...)
			warm := runText(t, agentxConfig("weka", scope), text, snapshotSets(append(sets, "traffic.load.agentic_warmup=true")...)...)
			if !reflect.DeepEqual(cold.Engine.Snapshots(), warm.Engine.Snapshots()) {
				t.Errorf("cuts differ: cold %+v, warm %+v", cold.Engine.Snapshots(), warm.Engine.Snapshots())
			}
			if c, w := cold.Summary.CompletedRequests, warm.Summary.CompletedRequests; c != 3 || w != 3 {
				t.Errorf("completed cold %d, warm %d; want 3 and 3", c, w)
			}
			wantPrefill, wantHost := int64(27), int64(0)
			if scope != "" {
				wantPrefill, wantHost = 19, 8
			}
			if got := warm.Summary.CommittedPrefillTokens; got != wantPrefill {
				t.Errorf("warm committed prefill %d; want %d", got, wantPrefill)
			}
			if got := restored(warm); got != wantHost {
				t.Errorf("warm host tokens %d; want %d", got, wantHost)
			}
			wu := warm.Engine.Warmup()
			if len(wu.Lanes) != 1 || wu.Lanes[0].WarmupCompleted != 10 || wu.Lanes[0].Primers != 1 {
				t.Fatalf("warmup lanes %+v; want one primer and 10 warmups", wu.Lanes)
			}
			t.Logf("barrier %v ms, last preparation request %v ms, lanes %+v", wu.ProfileStartMs, wu.QuiescentMs, wu.Lanes)
			if wu.ProfileStartMs < wu.QuiescentMs {
				t.Errorf("barrier %v before the last preparation request %v", wu.ProfileStartMs, wu.QuiescentMs)
			}
			if scope != "" && (!near(wu.ProfileStartMs, 202) || !(wu.ProfileStartMs > wu.QuiescentMs)) {
				t.Errorf("barrier at %v (quiescent %v); want 202 ms, after the last request", wu.ProfileStartMs, wu.QuiescentMs)
			}
			for _, r := range warm.Records {
				if strings.Contains(r.RequestID, "preparation") || r.ArrivalMs < 0 {
					t.Errorf("record %s arriving at %v in the profile report", r.RequestID, r.ArrivalMs)
				}
			}
		})
	}
}

// pdConfig is agentxConfig's engine as one prefill and one decode worker
// sharing a cluster_shared G2 (dynamo's _spec with disagg=True), over the
// weka form with lanes.
func pdConfig(lanes int) string {
	return fmt.Sprintf(`traffic:
  source: {type: trace, format: weka, paths: [t.jsonl], nested_timestamp_basis: absolute}
  load: {type: trace_timestamps, agentic_lanes: %d}
engine:
  mode: disaggregated
  model: tiny
  hardware: h200_sxm
  backend: vllm
  context_length: 2048
  kv_transfer: {bytes_per_token: 250000, bandwidth_gb_per_second: 1}
  workers:
    prefill: &role
      parallelism: {replicas: 1, tensor: 1, attention_data: 1}
      scheduler: {max_batched_tokens: 16, max_sequences: 1}
      kv_cache:
        block_size: 4
        prefix_caching: true
        bytes_per_token: 250000
        capacity: {type: fixed, blocks: 3}
        host_offload: {num_host_blocks: 8, scope: cluster_shared, d2h_bandwidth_gbps: 1, h2d_bandwidth_gbps: 1}
      timing: {type: fixed, prefill_ms: 2, decode_ms: 1}
    decode: *role
`, lanes)
}

// Warmup counts ten warmup requests on every lane, aggregated and P/D, and
// the cuts do not depend on warmup: two lanes over the one-play _trace
// each run their own instance of the play (their own cache identities).
func TestAgentxWarmupPerLane(t *testing.T) {
	text := agentxTrace("weka")
	agg := strings.Replace(agentxConfig("weka", "dp_rank_local"), "agentic_lanes: 1", "agentic_lanes: 2", 1)
	for name, cfg := range map[string]string{"aggregated": agg, "pd": pdConfig(2)} {
		t.Run(name, func(t *testing.T) {
			cold := runText(t, cfg, text, snapshotSets()...)
			warm := runText(t, cfg, text, snapshotSets("traffic.load.agentic_warmup=true")...)
			if !reflect.DeepEqual(cold.Engine.Snapshots(), warm.Engine.Snapshots()) || len(warm.Engine.Snapshots()) != 2 {
				t.Errorf("cuts: cold %+v, warm %+v", cold.Engine.Snapshots(), warm.Engine.Snapshots())
			}
			for l, lane := range warm.Engine.Warmup().Lanes {
				if lane.WarmupCompleted != 10 {
					t.Errorf("lane %d: %d warmup requests completed; want 10", l, lane.WarmupCompleted)
				}
			}
			if c, w := cold.Summary.CompletedRequests, warm.Summary.CompletedRequests; c != w || c != len(warm.Records) {
				t.Errorf("completed cold %d, warm %d of %d records", c, w, len(warm.Records))
			}
		})
	}
}

// TestAgenticSupportMatrix re-expresses aisimulate's
// test_agentic_invalid_configuration_matrix_rejects_python_and_native and
// test_agentic_g3_rejection_matches_without_requiring_g2 (its Weka G2
// acceptance tests) over the weka form, on each role of the aggregated
// (dp_rank_local) and P/D (cluster_shared) deployments, and dynamo's
// test_1p1d_shared_pool_rejects_incompatible_participants. Where kvsim
// rejects a fault before the agentic rules (it models only vLLM, without
// speculative decoding, planners or scaling), its own message is expected
// (docs/model/agentic.md ("Agentic G2 restrictions")).
func TestAgenticSupportMatrix(t *testing.T) {
	const workers = "agentic host offload requires one aggregated worker or one prefill and one decode worker"
	const dp = "agentic host offload requires attention DP=1 on every role"
	const g3 = "agentic replay does not support G3 offload"
	agg, pd := agentxConfig("weka", "dp_rank_local"), pdConfig(1)
	g3Set := func(role string) string {
		return "engine.workers." + role + ".kv_cache.g3_offload={scope: worker_local, num_g3_blocks: 8}"
	}
	for _, c := range []struct {
		name, cfg, set, want string
	}{
		{"workers/aggregated (cluster_shared)", agentxConfig("weka", "cluster_shared"), "engine.workers.aggregated.parallelism.replicas=2", workers},
		{"workers/prefill", pd, "engine.workers.prefill.parallelism.replicas=2", workers},
		{"workers/decode", pd, "engine.workers.decode.parallelism.replicas=2", workers},
		{"dp/aggregated", agg, "engine.workers.aggregated.parallelism.attention_data=2", dp},
		{"dp/prefill", pd, "engine.workers.prefill.parallelism.attention_data=2", dp},
		{"dp/decode", pd, "engine.workers.decode.parallelism.attention_data=2", dp},
		{"backend", agg, "engine.backend=sglang", `"sglang" is not modelled; only vllm is supported`},
		{"nextn", agg, "engine.nextn=1", `unknown key "nextn"`},
		{"speculation", agg, "engine.workers.aggregated.speculation={num_speculative_tokens: 1}", `unknown key "speculation"`},
		{"g3/aggregated", agg, g3Set("aggregated"), g3},
		{"g3/prefill", pd, g3Set("prefill"), g3},
		{"g3/decode", pd, g3Set("decode"), g3},
		{"g3 without G2", agentxConfig("weka", ""), g3Set("aggregated"), g3},
		{"scope", agg, "engine.workers.aggregated.kv_cache.host_offload.scope=unsupported_scope", "dp_rank_local"},
		{"scaling", agg + "planner: {}\n", "", `unknown key "planner"`},
		{"shared num_host_blocks", pd, "engine.workers.decode.kv_cache.host_offload.num_host_blocks=16", "cluster_shared host_offload participants are incompatible"},
		{"shared h2d", pd, "engine.workers.decode.kv_cache.host_offload.shared_h2d_bandwidth_gbps=2", "cluster_shared host_offload participants are incompatible"},
		{"shared layout", pd, "engine.workers.decode.parallelism.tensor=2", "cluster_shared host_offload participants are incompatible"},
	} {
		var sets []string
		if c.set != "" {
			sets = []string{c.set}
		}
		_, err := config.Parse("c.yaml", ".", []byte(c.cfg), sets)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error containing %q", c.name, err, c.want)
		}
	}
	// kvsim's extension: several aggregated workers, each with a private
	// dp_rank_local G2, run agentic traffic (aisimulate refuses them).
	if _, err := config.Parse("c.yaml", ".", []byte(agg), []string{"engine.workers.aggregated.parallelism.replicas=2"}); err != nil {
		t.Errorf("two aggregated workers with private G2: %v", err)
	}
}

// TestAgentx1P1DSharedPool re-expresses dynamo's
// test_agentx_g2.py::test_1p1d_shared_pool_counts_capacity_and_first_reuse_once
// over the weka form: one pool of 8 blocks, one request restoring 8 tokens
// once, admitted on both pools; with a 1-block pool nothing is restored and
// more prefill is committed.
func TestAgentx1P1DSharedPool(t *testing.T) {
	text := agentxTrace("weka")
	res := runText(t, pdConfig(1), text)
	if res.Summary.CompletedRequests != 4 || len(res.Summary.Domains) != 1 || res.Summary.Domains[0].CapacityBlocks != 8 {
		t.Fatalf("completed %d, domains %+v; want 4 and one pool of 8 blocks", res.Summary.CompletedRequests, res.Summary.Domains)
	}
	hits := hostHits(res)
	if len(hits) != 1 || res.Records[hits[0]].FirstHost != 8 || restored(res) != 8 {
		t.Fatalf("host hits %v, restored %d; want one of 8 tokens", hits, restored(res))
	}
	pools := map[string]bool{}
	for _, a := range res.Records[hits[0]].Admissions {
		pools[a.Pool] = true
	}
	if !pools["prefill"] || !pools["decode"] {
		t.Errorf("admission pools %v; want prefill and decode", pools)
	}
	small := runText(t, pdConfig(1), text,
		"engine.workers.prefill.kv_cache.host_offload.num_host_blocks=1",
		"engine.workers.decode.kv_cache.host_offload.num_host_blocks=1")
	if len(hostHits(small)) != 0 || small.Summary.CommittedPrefillTokens <= res.Summary.CommittedPrefillTokens {
		t.Errorf("1-block pool: host hits %v, committed %d; want none and more than %d",
			hostHits(small), small.Summary.CommittedPrefillTokens, res.Summary.CommittedPrefillTokens)
	}
}

// TestNonAgenticG2KeepsWorkersAndDP re-expresses dynamo's
// test_agentx_g2.py::test_non_agentic_g2_keeps_multiple_worker_dp_support:
// the agentic restrictions do not reach mooncake traces, which run on two
// workers of attention DP 2 sharing one cluster_shared pool of 8 blocks.
func TestNonAgenticG2KeepsWorkersAndDP(t *testing.T) {
	for _, format := range []string{"mooncake", "mooncake-delta"} {
		res := runText(t, agentxConfig(format, "cluster_shared"), agentxTrace(format),
			"engine.workers.aggregated.parallelism.replicas=2", "engine.workers.aggregated.parallelism.attention_data=2")
		if res.Summary.CompletedRequests != 4 || len(res.Summary.Domains) != 1 || res.Summary.Domains[0].CapacityBlocks != 8 {
			t.Errorf("%s: completed %d, domains %+v; want 4 and one pool of 8 blocks", format, res.Summary.CompletedRequests, res.Summary.Domains)
		}
	}
}
