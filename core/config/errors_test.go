package config

import (
	"fmt"
	"strings"
	"testing"
)

// errorCases are malformed configs, each with the exact error it must
// produce. A YAML text that starts with a newline begins on line 1 after
// it (the test trims that newline), so the positions read off the source.
var errorCases = []struct {
	name string
	yaml string
	set  []string
	want string
}{
	// YAML and document shape.
	{"syntax", "engine: {model: m\n", nil, `c.yaml:1:9: could not find flow mapping end token '}'`},
	{"two documents", "engine: {}\n---\nengine: {}\n", nil, `c.yaml:2:1: expected one YAML document, got 2`},
	{"two documents, second empty", "engine: {}\n\n---\n", nil, `c.yaml:3:1: expected one YAML document, got 2`},
	{"top-level list", "- a\n- b\n", nil, `c.yaml:1:1: expected a mapping, got a list`},
	{"empty document", "", nil, `c.yaml: engine: missing required key`},
	{"unknown top-level key", "engine: {}\nplanner: {}\n", nil, `c.yaml:2:1: planner: unknown key "planner" (allowed: traffic, engine)`},
	{"duplicate key", `
engine:
  model: m
  model: n
`, nil, `c.yaml:3:3: engine.model: duplicate key "model" (first at 2:3)`},
	{"tag", "engine: !!map {}\n", nil, `c.yaml:1:9: engine: YAML tags are not supported (got !!map)`},
	{"unknown alias", "engine: *e\n", nil, `c.yaml:1:9: engine: unknown alias *e`},

	// traffic
	{"traffic without source", `
traffic:
  load: {type: concurrency}
engine: {}
`, nil, `c.yaml:2:3: traffic.source: missing required key`},
	{"unknown source type", `
traffic:
  source: {type: replay}
  load: {}
engine: {}
`, nil, `c.yaml:2:18: traffic.source.type: expected one of synthetic, synthetic-session, trace, got "replay"`},
	{"input_tokens string", `
traffic:
  source: {input_tokens: abc}
  load: {}
  stop: {requests: 1}
engine: {}
`, nil, `c.yaml:2:26: traffic.source.input_tokens: expected a positive integer, got string "abc"`},
	{"output_tokens float", `
traffic:
  source: {output_tokens: 2.0}
  load: {}
  stop: {requests: 1}
engine: {}
`, nil, `c.yaml:2:27: traffic.source.output_tokens: expected a positive integer, got float 2.0`},
	{"input_tokens zero", `
traffic:
  source: {input_tokens: 0}
  load: {}
engine: {}
`, nil, `c.yaml:2:26: traffic.source.input_tokens: expected a positive integer, got 0`},
	{"cached prefix above input", `
traffic:
  source: {input_tokens: 64, cached_prefix_tokens: 128}
  load: {}
engine: {}
`, nil, `c.yaml:2:52: traffic.source.cached_prefix_tokens: must not exceed input_tokens (64), got 128`},
	{"session on synthetic", `
traffic:
  source: {type: synthetic, session: {turns: 2}}
  load: {}
engine: {}
`, nil, `c.yaml:2:38: traffic.source.session: rejected for source type synthetic: a session mapping applies only to synthetic-session`},
	{"session missing", `
traffic:
  source: {type: synthetic-session}
  load: {}
engine: {}
`, nil, `c.yaml:2:11: traffic.source.session: a session mapping is required for source type synthetic-session`},
	{"session turns 1", `
traffic:
  source:
    type: synthetic-session
    session: {turns: 1}
  load: {}
engine: {}
`, nil, `c.yaml:4:22: traffic.source.session.turns: expected an integer ≥ 2, got 1`},
	{"prefix ratio without groups", `
traffic:
  source:
    type: synthetic-session
    session: {shared_prefix_ratio: 0.5}
  load: {}
engine: {}
`, nil, `c.yaml:4:14: traffic.source.session.prefix_groups: must be positive when shared_prefix_ratio is positive`},
	{"ratio above one", `
traffic:
  source:
    type: synthetic-session
    session: {shared_prefix_ratio: 1.5, prefix_groups: 2}
  load: {}
engine: {}
`, nil, `c.yaml:4:36: traffic.source.session.shared_prefix_ratio: expected a number from 0 to 1, got 1.5`},
	{"paths on synthetic", `
traffic:
  source: {paths: [a.jsonl]}
  load: {}
engine: {}
`, nil, `c.yaml:2:19: traffic.source.paths: does not apply to source type synthetic`},
	{"trace without paths", `
traffic:
  source: {type: trace}
  load: {}
engine: {}
`, nil, `c.yaml:2:11: traffic.source.paths: missing required key`},
	{"two paths", `
traffic:
  source: {type: trace, paths: [a.jsonl, b.jsonl]}
  load: {}
engine: {}
`, nil, `c.yaml:2:32: traffic.source.paths: expected exactly one path, got 2`},
	{"empty path", `
traffic:
  source: {type: trace, paths: [""]}
  load: {}
engine: {}
`, nil, `c.yaml:2:33: traffic.source.paths: expected a nonempty path`},
	{"paths scalar", `
traffic:
  source: {type: trace, paths: a.jsonl}
  load: {}
engine: {}
`, nil, `c.yaml:2:32: traffic.source.paths: expected a list with one path, got string "a.jsonl"`},
	{"dynamo format", `
traffic:
  source: {type: trace, paths: [a.jsonl], format: dynamo}
  load: {}
engine: {}
`, nil, `c.yaml:2:51: traffic.source.format: trace format dynamo is not supported (supported: mooncake, mooncake-delta, agentic_mooncake, weka)`},
	{"weka needs timestamps", `
traffic:
  source: {type: trace, paths: [a.jsonl], format: weka}
  load: {}
engine: {}
`, nil, `c.yaml:3:9: traffic.load.type: weka traces require load type trace_timestamps`},
	{"nested basis on mooncake", `
traffic:
  source: {type: trace, paths: [a.jsonl], nested_timestamp_basis: absolute}
  load: {}
engine: {}
`, nil, `c.yaml:2:67: traffic.source.nested_timestamp_basis: applies only to the weka format`},
	{"unknown nested basis", `
traffic:
  source: {type: trace, paths: [a.jsonl], format: weka, nested_timestamp_basis: sometimes}
  load: {type: trace_timestamps}
engine: {}
`, nil, `c.yaml:2:81: traffic.source.nested_timestamp_basis: expected one of auto, absolute, relative, got "sometimes"`},
	{"unknown format", `
traffic:
  source: {type: trace, paths: [a.jsonl], format: csv}
  load: {}
engine: {}
`, nil, `c.yaml:2:51: traffic.source.format: expected one of mooncake, mooncake-delta, agentic_mooncake, weka, got "csv"`},
	{"trace with poisson", `
traffic:
  source: {type: trace, paths: [a.jsonl]}
  load: {type: poisson}
engine: {}
`, nil, `c.yaml:3:16: traffic.load.type: a trace source takes load type trace_timestamps or concurrency, got poisson`},
	{"synthetic with trace_timestamps", `
traffic:
  source: {type: synthetic}
  load: {type: trace_timestamps}
engine: {}
`, nil, `c.yaml:3:16: traffic.load.type: trace_timestamps needs a trace source; a synthetic source takes concurrency, poisson or constant_rate`},
	{"speedup with concurrency", `
traffic:
  source: {type: trace, paths: [a.jsonl]}
  load: {type: concurrency, speedup: 2}
engine: {}
`, nil, `c.yaml:3:38: traffic.load.speedup: rejected with load type concurrency: concurrency replaces the authored arrival pacing (speedup applies to trace_timestamps)`},
	{"seed with constant_rate", `
traffic:
  source: {type: synthetic}
  load: {type: constant_rate, requests_per_second: 2, seed: 1}
engine: {}
`, nil, `c.yaml:3:61: traffic.load.seed: applies only to load type poisson, not constant_rate`},
	{"poisson without rate", `
traffic:
  source: {type: synthetic}
  load: {type: poisson}
  stop: {requests: 10}
engine: {}
`, nil, `c.yaml:3:9: traffic.load.requests_per_second: missing required key: load type poisson with a synthetic source needs it`},
	{"wrong rate unit", `
traffic:
  source: {type: synthetic-session, session: {}}
  load: {type: poisson, requests_per_second: 2}
engine: {}
`, nil, `c.yaml:3:46: traffic.load.requests_per_second: does not apply to a synthetic-session source; use sessions_per_second`},
	{"negative seed", `
traffic:
  source: {type: synthetic}
  load: {type: poisson, requests_per_second: 2, seed: -1}
engine: {}
`, nil, `c.yaml:3:55: traffic.load.seed: expected an integer ≥ 0, got -1`},
	{"concurrency zero", `
traffic:
  source: {type: synthetic}
  load: {concurrency: 0}
engine: {}
`, nil, `c.yaml:3:23: traffic.load.concurrency: expected a positive integer, got 0`},
	{"infinite rate", `
traffic:
  source: {type: synthetic}
  load: {type: constant_rate, requests_per_second: .inf}
engine: {}
`, nil, `c.yaml:3:52: traffic.load.requests_per_second: expected a positive number, got float .inf`},
	{"agentic concurrency", `
traffic:
  source: {type: trace, paths: [a.jsonl], format: agentic_mooncake}
  load: {type: concurrency}
engine: {}
`, nil, `c.yaml:3:16: traffic.load.type: agentic_mooncake traces require load type trace_timestamps`},
	{"agentic lanes on mooncake", `
traffic:
  source: {type: trace, paths: [a.jsonl]}
  load: {type: trace_timestamps, agentic_lanes: 2}
engine: {}
`, nil, `c.yaml:3:49: traffic.load.agentic_lanes: requires an agentic trace (agentic_mooncake or weka)`},
	{"snapshot without lanes", `
traffic:
  source: {type: trace, paths: [a.jsonl], format: agentic_mooncake}
  load: {type: trace_timestamps, agentic_snapshot: {seed: 1}}
engine: {}
`, nil, `c.yaml:3:52: traffic.load.agentic_snapshot: requires agentic_lanes`},
	{"warmup without snapshot", `
traffic:
  source: {type: trace, paths: [a.jsonl], format: agentic_mooncake}
  load: {type: trace_timestamps, agentic_lanes: 1, agentic_warmup: true}
engine: {}
`, nil, `c.yaml:3:68: traffic.load.agentic_warmup: true requires agentic_snapshot`},
	{"profile without snapshot", `
traffic:
  source: {type: trace, paths: [a.jsonl], format: agentic_mooncake}
  load: {type: trace_timestamps, agentic_lanes: 1, agentic_profile: {}}
engine: {}
`, nil, `c.yaml:3:69: traffic.load.agentic_profile: requires agentic_snapshot`},
	{"snapshot without seed", `
traffic:
  source: {type: trace, paths: [a.jsonl], format: agentic_mooncake}
  load: {type: trace_timestamps, agentic_lanes: 1, agentic_snapshot: {}}
engine: {}
`, nil, `c.yaml:3:70: traffic.load.agentic_snapshot.seed: missing required key`},
	{"synthetic without stop", `
traffic:
  source: {type: synthetic}
  load: {type: concurrency}
engine: {}
`, nil, `c.yaml:2:3: traffic.stop.requests: a synthetic source needs stop.requests or stop.requests_per_load_unit`},
	{"both stops", `
traffic:
  source: {type: synthetic}
  load: {}
  stop: {requests: 10, requests_per_load_unit: 2}
engine: {}
`, nil, `c.yaml:4:48: traffic.stop.requests_per_load_unit: give only one of requests and requests_per_load_unit`},
	{"sessions stop on synthetic", `
traffic:
  source: {type: synthetic}
  load: {}
  stop: {sessions: 10}
engine: {}
`, nil, `c.yaml:4:20: traffic.stop.sessions: does not apply to source type synthetic (use requests or requests_per_load_unit)`},
	{"max virtual time on synthetic", `
traffic:
  source: {type: synthetic}
  load: {}
  stop: {requests: 1, max_virtual_time_seconds: 10}
engine: {}
`, nil, `c.yaml:4:49: traffic.stop.max_virtual_time_seconds: applies only to trace sources`},
	{"requests stop on trace", `
traffic:
  source: {type: trace, paths: [a.jsonl]}
  load: {}
  stop: {requests: 10}
engine: {}
`, nil, `c.yaml:4:20: traffic.stop.requests: applies only to synthetic sources; a trace runs until max_virtual_time_seconds or to its end`},
	{"max virtual time on agentic", `
traffic:
  source: {type: trace, paths: [a.jsonl], format: agentic_mooncake}
  load: {type: trace_timestamps}
  stop: {max_virtual_time_seconds: 10}
engine: {}
`, nil, `c.yaml:4:36: traffic.stop.max_virtual_time_seconds: not supported with agentic_mooncake traces`},
	{"unknown stop key", `
traffic:
  source: {type: synthetic}
  load: {}
  stop: {count: 3}
engine: {}
`, nil, `c.yaml:4:10: traffic.stop.count: unknown key "count" (allowed: requests, requests_per_load_unit, sessions, sessions_per_load_unit, max_virtual_time_seconds)`},

	// engine
	{"missing engine", "traffic: null\n", nil, `c.yaml:1:1: engine: missing required key`},
	{"missing model", `
engine:
  hardware: h
`, nil, `c.yaml:2:3: engine.model: missing required key`},
	{"model number", `
engine:
  model: 7
`, nil, `c.yaml:2:10: engine.model: expected a nonempty string, got integer 7`},
	{"empty model", `
engine:
  model: ""
`, nil, `c.yaml:2:10: engine.model: expected a nonempty string`},
	{"hardware auto", `
engine:
  model: m
  hardware: auto
`, nil, `c.yaml:3:13: engine.hardware: auto is rejected: it asks aisimulate to search hardware; name one (it is identity only)`},
	{"backend sglang", `
engine:
  model: m
  hardware: h
  backend: sglang
`, nil, `c.yaml:4:12: engine.backend: "sglang" is not modelled; only vllm is supported`},
	{"unknown routing policy", `
engine:
  model: m
  hardware: h
  routing: random
  workers:
    aggregated:
      kv_cache: {capacity: {blocks: 8}}
      timing: {type: fixed, prefill_ms: 1, decode_ms: 1}
`, nil, `c.yaml:4:12: engine.routing: expected one of round_robin, least_loaded, session_affinity, kv_router, got "random"`},
	{"unknown routing policy in a pool", `
engine:
  model: m
  hardware: h
  routing: {aggregated: kv}
  workers:
    aggregated:
      kv_cache: {capacity: {blocks: 8}}
      timing: {type: fixed, prefill_ms: 1, decode_ms: 1}
`, nil, `c.yaml:4:25: engine.routing.aggregated: expected one of round_robin, least_loaded, session_affinity, kv_router, got "kv"`},
	{"routing pool of the other mode", `
engine:
  model: m
  hardware: h
  routing: {decode: kv_router}
  workers:
    aggregated:
      kv_cache: {capacity: {blocks: 8}}
      timing: {type: fixed, prefill_ms: 1, decode_ms: 1}
`, nil, `c.yaml:4:21: engine.routing.decode: no decode pool in aggregated mode (its pools: aggregated)`},
	{"routing a number", `
engine:
  model: m
  hardware: h
  routing: 3
  workers:
    aggregated:
      kv_cache: {capacity: {blocks: 8}}
      timing: {type: fixed, prefill_ms: 1, decode_ms: 1}
`, nil, `c.yaml:4:12: engine.routing: expected a routing policy (round_robin, least_loaded, session_affinity, kv_router) or a mapping, got integer 3`},
	{"routing temperature negative", `
engine:
  model: m
  hardware: h
  routing: {policy: kv_router, temperature: -1}
  workers:
    aggregated:
      kv_cache: {capacity: {blocks: 8}}
      timing: {type: fixed, prefill_ms: 1, decode_ms: 1}
`, nil, `c.yaml:4:45: engine.routing.temperature: expected a number ≥ 0, got -1`},
	{"routing unknown key", `
engine:
  model: m
  hardware: h
  routing: {policy: kv_router, weight: 1}
  workers:
    aggregated:
      kv_cache: {capacity: {blocks: 8}}
      timing: {type: fixed, prefill_ms: 1, decode_ms: 1}
`, nil, `c.yaml:4:32: engine.routing.weight: unknown key "weight" (allowed: policy, aggregated, prefill, decode, overlap_score_weight, temperature, seed, host_overlap_weight)`},
	{"unknown mode", `
engine:
  mode: afd
`, nil, `c.yaml:2:9: engine.mode: expected one of aggregated, disaggregated, got "afd"`},
	{"context_length string", `
engine:
  model: m
  hardware: h
  context_length: long
`, nil, `c.yaml:4:19: engine.context_length: expected a positive integer or max, got string "long"`},
	{"chunked prefill yes", `
engine:
  model: m
  hardware: h
  enable_chunked_prefill: yes
`, nil, `c.yaml:4:27: engine.enable_chunked_prefill: expected a boolean (true or false), got string "yes"`},
	{"missing workers", `
engine:
  model: m
  hardware: h
`, nil, `c.yaml:2:3: engine.workers: missing required key`},
	{"aggregated without role", `
engine:
  model: m
  hardware: h
  workers: {prefill: {}}
`, nil, `c.yaml:4:12: engine.workers.aggregated: aggregated mode requires workers.aggregated`},
	{"prefill in aggregated", `
engine:
  model: m
  hardware: h
  workers: {aggregated: {}, prefill: {}}
`, nil, `c.yaml:4:38: engine.workers.prefill: rejected in aggregated mode (prefill and decode roles need mode: disaggregated)`},
	{"kv_transfer in aggregated", `
engine:
  model: m
  hardware: h
  workers: {aggregated: {}}
  kv_transfer: {}
`, nil, `c.yaml:5:16: engine.kv_transfer: applies only to disaggregated mode`},
	{"disaggregated without decode", `
engine:
  mode: disaggregated
  model: m
  hardware: h
  workers: {prefill: {}}
`, nil, `c.yaml:5:12: engine.workers.decode: disaggregated mode requires workers.decode`},
	{"aggregated in disaggregated", `
engine:
  mode: disaggregated
  model: m
  hardware: h
  workers: {prefill: {}, decode: {}, aggregated: {}}
`, nil, `c.yaml:5:50: engine.workers.aggregated: rejected in disaggregated mode (it needs prefill and decode roles)`},
	{"unknown role key", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      hardware: h100
`, nil, `c.yaml:6:7: engine.workers.aggregated.hardware: unknown key "hardware" (allowed: parallelism, scheduler, kv_cache, timing, startup_seconds)`},
	{"replicas zero", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      parallelism: {replicas: 0}
`, nil, `c.yaml:6:31: engine.workers.aggregated.parallelism.replicas: expected a positive integer, got 0`},
	{"block size 1", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache: {block_size: 1}
`, nil, `c.yaml:6:30: engine.workers.aggregated.kv_cache.block_size: expected an integer ≥ 2, got 1`},
	{"capacity missing", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache: {block_size: 16}
`, nil, `c.yaml:6:17: engine.workers.aggregated.kv_cache.capacity.blocks: fixed capacity requires blocks or bytes`},
	{"capacity both", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache:
        bytes_per_token: 2
        capacity: {blocks: 4, bytes: 1024}
`, nil, `c.yaml:8:38: engine.workers.aggregated.kv_cache.capacity.bytes: give only one of blocks and bytes`},
	{"capacity default type", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache:
        capacity: {type: default, memory_fraction: 0.9}
`, nil, `c.yaml:2:10: engine.model: engine.workers.aggregated.kv_cache.capacity.type needs a model architecture: "m" is not in the catalog (Llama-3.1-8B, Llama-3.1-70B, Qwen3-14B, Qwen3-32B, Mixtral-8x7B); describe it in engine.model_config (config.json fields)`},
	{"capacity default that the GPU cannot hold", `
engine:
  model: Mixtral-8x7B
  hardware: H100
  workers:
    aggregated:
      kv_cache:
        capacity: {type: default, memory_fraction: 0.9}
`, nil, `c.yaml:7:26: engine.workers.aggregated.kv_cache.capacity.type: default KV capacity: Mixtral-8x7B needs 95.14 GiB (86.99 weights + 8.00 activations + 0.15 other) but 1 × H100 at memory_fraction 0.9 has 72.00 GiB`},
	{"capacity default with blocks", `
engine:
  model: Llama-3.1-8B
  hardware: H100
  workers:
    aggregated:
      kv_cache:
        capacity: {type: default, blocks: 8}
`, nil, `c.yaml:7:43: engine.workers.aggregated.kv_cache.capacity.blocks: default KV capacity rejects blocks`},
	{"capacity bytes without bytes_per_token", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache:
        capacity: {bytes: 4096}
`, nil, `c.yaml:7:9: engine.workers.aggregated.kv_cache.bytes_per_token: capacity.bytes requires a positive integer bytes_per_token`},
	{"capacity bytes below one block", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache:
        block_size: 16
        bytes_per_token: 100
        capacity: {bytes: 1599}
`, nil, `c.yaml:9:27: engine.workers.aggregated.kv_cache.capacity.bytes: holds no block: 1599 bytes < block_size 16 × bytes_per_token 100`},
	{"bytes_per_token string", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache: {bytes_per_token: many}
`, nil, `c.yaml:6:35: engine.workers.aggregated.kv_cache.bytes_per_token: expected a positive integer or auto, got string "many"`},
	{"timing missing", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache: {capacity: {blocks: 8}}
`, nil, `c.yaml:6:7: engine.workers.aggregated.timing: missing required key (e.g. {type: fixed, prefill_ms, decode_ms} or {type: polynomial}; types: fixed, polynomial, roofline, trained_physics)`},
	{"timing default", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache: {capacity: {blocks: 8}}
      timing: {type: default}
`, nil, `c.yaml:7:22: engine.workers.aggregated.timing.type: default is aisimulate's GPU performance model, which kvsim does not have; use one of fixed, polynomial, roofline, trained_physics`},
	{"timing without type", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache: {capacity: {blocks: 8}}
      timing: {prefill_ms: 1, decode_ms: 1}
`, nil, `c.yaml:7:15: engine.workers.aggregated.timing.type: missing required key`},
	{"timing without decode_ms", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache: {capacity: {blocks: 8}}
      timing: {type: fixed, prefill_ms: 1}
`, nil, `c.yaml:7:15: engine.workers.aggregated.timing.decode_ms: fixed timing requires prefill_ms and decode_ms`},
	{"negative prefill_ms", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache: {capacity: {blocks: 8}}
      timing: {type: fixed, prefill_ms: -1, decode_ms: 1}
`, nil, `c.yaml:7:41: engine.workers.aggregated.timing.prefill_ms: expected a number ≥ 0, got -1`},
	{"negative startup", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache: {capacity: {blocks: 8}}
      timing: {type: fixed, prefill_ms: 1, decode_ms: 1}
      startup_seconds: -2
`, nil, `c.yaml:8:24: engine.workers.aggregated.startup_seconds: expected a number ≥ 0, got -2`},

	// host_offload (G2), g3_offload, kvcr
	{"num_host_blocks missing", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache:
        capacity: {blocks: 8}
        host_offload: {scope: dp_rank_local}
`, nil, `c.yaml:8:23: engine.workers.aggregated.kv_cache.host_offload.num_host_blocks: missing required key`},
	{"num_host_blocks zero", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache:
        capacity: {blocks: 8}
        host_offload: {num_host_blocks: 0}
`, nil, `c.yaml:8:41: engine.workers.aggregated.kv_cache.host_offload.num_host_blocks: expected a positive integer, got 0`},
	{"worker_local G2 scope", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache:
        capacity: {blocks: 8}
        host_offload: {num_host_blocks: 8, scope: worker_local}
`, nil, `c.yaml:8:51: engine.workers.aggregated.kv_cache.host_offload.scope: worker_local is a G3 scope; use dp_rank_local for a private G2 cache per DP rank`},
	{"unknown G2 scope", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache:
        capacity: {blocks: 8}
        host_offload: {num_host_blocks: 8, scope: global}
`, nil, `c.yaml:8:51: engine.workers.aggregated.kv_cache.host_offload.scope: expected one of dp_rank_local, cluster_shared, got "global"`},
	{"negative bandwidth", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache:
        capacity: {blocks: 8}
        host_offload: {num_host_blocks: 8, h2d_bandwidth_gbps: -1}
`, nil, `c.yaml:8:64: engine.workers.aggregated.kv_cache.host_offload.h2d_bandwidth_gbps: expected a number ≥ 0, got -1`},
	{"unknown connector", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache:
        capacity: {blocks: 8}
        host_offload: {num_host_blocks: 8, connector: lmcache}
`, nil, `c.yaml:8:55: engine.workers.aggregated.kv_cache.host_offload.connector: expected one of offloading_v0_24, offloading_v0_32, simple_cpu_v0_32, got "lmcache"`},
	{"G2 without prefix caching", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache:
        prefix_caching: false
        bytes_per_token: 2
        capacity: {blocks: 8}
        host_offload: {num_host_blocks: 8}
`, nil, `c.yaml:7:25: engine.workers.aggregated.kv_cache.prefix_caching: host_offload requires prefix_caching: true`},
	{"G2 without bytes_per_token", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache:
        capacity: {blocks: 8}
        host_offload: {num_host_blocks: 8}
`, nil, `c.yaml:7:9: engine.workers.aggregated.kv_cache.bytes_per_token: host_offload requires a positive integer bytes_per_token`},
	{"G2 with auto bytes_per_token", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache:
        bytes_per_token: auto
        capacity: {blocks: 8}
        host_offload: {num_host_blocks: 8}
`, nil, `c.yaml:7:26: engine.workers.aggregated.kv_cache.bytes_per_token: host_offload requires a positive integer bytes_per_token`},
	{"g3 without host_offload", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache:
        capacity: {blocks: 8}
        g3_offload: {scope: worker_local, num_g3_blocks: 8}
`, nil, `c.yaml:8:21: engine.workers.aggregated.kv_cache.g3_offload: requires host_offload`},
	{"g3 dp_rank_local scope", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache:
        bytes_per_token: 2
        capacity: {blocks: 8}
        host_offload: {num_host_blocks: 8}
        g3_offload: {scope: dp_rank_local, num_g3_blocks: 8}
`, nil, `c.yaml:10:29: engine.workers.aggregated.kv_cache.g3_offload.scope: dp_rank_local is a G2 scope; g3_offload takes worker_local or cluster_shared`},
	{"g3 without num_g3_blocks", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache:
        bytes_per_token: 2
        capacity: {blocks: 8}
        host_offload: {num_host_blocks: 8}
        g3_offload: {scope: cluster_shared}
`, nil, `c.yaml:10:21: engine.workers.aggregated.kv_cache.g3_offload.num_g3_blocks: missing required key`},
	{"g3 with attention DP", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      parallelism: {attention_data: 2}
      kv_cache:
        bytes_per_token: 2
        capacity: {blocks: 8}
        host_offload: {num_host_blocks: 8}
        g3_offload: {scope: cluster_shared, num_g3_blocks: 8}
`, nil, `c.yaml:11:21: engine.workers.aggregated.kv_cache.g3_offload: requires parallelism.attention_data 1, got 2`},
	{"g3 on prefill", `
engine:
  mode: disaggregated
  model: m
  hardware: h
  workers:
    prefill:
      kv_cache:
        bytes_per_token: 2
        capacity: {blocks: 8}
        host_offload: {num_host_blocks: 8}
        g3_offload: {scope: cluster_shared, num_g3_blocks: 8}
    decode: {}
`, nil, `c.yaml:11:21: engine.workers.prefill.kv_cache.g3_offload: supported only on the aggregated role`},
	{"v0_32 connector on decode", `
engine:
  mode: disaggregated
  model: m
  hardware: h
  workers:
    prefill:
      kv_cache: {capacity: {blocks: 8}}
      timing: {type: fixed, prefill_ms: 1, decode_ms: 1}
    decode:
      kv_cache:
        bytes_per_token: 2
        capacity: {blocks: 8}
        host_offload: {num_host_blocks: 8, connector: offloading_v0_32}
`, nil, `c.yaml:13:55: engine.workers.decode.kv_cache.host_offload.connector: offloading_v0_32 requires the aggregated role`},
	{"v0_32 connector cluster_shared", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache:
        bytes_per_token: 2
        capacity: {blocks: 8}
        host_offload: {num_host_blocks: 8, scope: cluster_shared, connector: simple_cpu_v0_32}
`, nil, `c.yaml:9:78: engine.workers.aggregated.kv_cache.host_offload.connector: simple_cpu_v0_32 requires scope dp_rank_local`},
	{"v0_32 connector with g3", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache:
        bytes_per_token: 2
        capacity: {blocks: 8}
        host_offload: {num_host_blocks: 8, connector: offloading_v0_32}
        g3_offload: {scope: worker_local, num_g3_blocks: 8}
`, nil, `c.yaml:9:55: engine.workers.aggregated.kv_cache.host_offload.connector: offloading_v0_32 cannot be combined with g3_offload`},
	{"v0_32 connector with kvcr", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache:
        bytes_per_token: 2
        capacity: {blocks: 8}
        host_offload: {num_host_blocks: 8, connector: simple_cpu_v0_32, kvcr: {}}
`, nil, `c.yaml:9:55: engine.workers.aggregated.kv_cache.host_offload.connector: simple_cpu_v0_32 cannot be combined with kvcr`},
	{"kvcr without host_offload", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache:
        capacity: {blocks: 8}
        kvcr: {}
`, nil, `c.yaml:8:15: engine.workers.aggregated.kv_cache.kvcr: requires host_offload`},
	{"kvcr twice", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache:
        bytes_per_token: 2
        capacity: {blocks: 8}
        host_offload: {num_host_blocks: 8, kvcr: {}}
        kvcr: {}
`, nil, `c.yaml:10:15: engine.workers.aggregated.kv_cache.kvcr: given twice: here and in host_offload`},
	{"kvcr with cluster_shared", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache:
        bytes_per_token: 2
        capacity: {blocks: 8}
        host_offload: {num_host_blocks: 8, scope: cluster_shared}
        kvcr: {}
`, nil, `c.yaml:10:15: engine.workers.aggregated.kv_cache.kvcr: requires host_offload scope dp_rank_local`},
	{"kvcr with g3", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache:
        bytes_per_token: 2
        capacity: {blocks: 8}
        host_offload: {num_host_blocks: 8}
        g3_offload: {scope: worker_local, num_g3_blocks: 8}
        kvcr: {}
`, nil, `c.yaml:11:15: engine.workers.aggregated.kv_cache.kvcr: cannot be combined with g3_offload`},
	{"kvcr on decode", `
engine:
  mode: disaggregated
  model: m
  hardware: h
  workers:
    prefill:
      kv_cache: {capacity: {blocks: 8}}
      timing: {type: fixed, prefill_ms: 1, decode_ms: 1}
    decode:
      kv_cache:
        bytes_per_token: 2
        capacity: {blocks: 8}
        host_offload: {num_host_blocks: 8}
        kvcr: {}
`, nil, `c.yaml:14:15: engine.workers.decode.kv_cache.kvcr: not supported on the decode role`},
	{"kvcr with keys", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache:
        bytes_per_token: 2
        capacity: {blocks: 8}
        host_offload: {num_host_blocks: 8}
        kvcr: {peers: 2}
`, nil, `c.yaml:10:16: engine.workers.aggregated.kv_cache.kvcr.peers: unknown key "peers" (this mapping takes no keys)`},
	{"cluster_shared incompatible", `
engine:
  mode: disaggregated
  model: m
  hardware: h
  workers:
    prefill: &w
      kv_cache:
        bytes_per_token: 2
        capacity: {blocks: 8}
        host_offload: {num_host_blocks: 8, scope: cluster_shared}
      timing: {type: fixed, prefill_ms: 1, decode_ms: 1}
    decode:
      <<: *w
      parallelism: {tensor: 2}
`, nil, `c.yaml:10:23: engine.workers.decode.kv_cache.host_offload: cluster_shared host_offload participants are incompatible: parallelism.tensor differs from prefill (2 vs 1)`},
	{"timed transfer without bytes", `
engine:
  mode: disaggregated
  model: m
  hardware: h
  kv_transfer: {bandwidth_gb_per_second: 10}
  workers:
    prefill: &w
      kv_cache: {capacity: {blocks: 8}}
      timing: {type: fixed, prefill_ms: 1, decode_ms: 1}
    decode: *w
`, nil, `c.yaml:5:16: engine.kv_transfer.bytes_per_token: a timed transfer (bandwidth_gb_per_second set) needs bytes_per_token here or in the prefill role's kv_cache`},
	{"transfer bandwidth zero", `
engine:
  mode: disaggregated
  model: m
  hardware: h
  kv_transfer: {bandwidth_gb_per_second: 0}
  workers:
    prefill: &w
      kv_cache: {capacity: {blocks: 8}}
      timing: {type: fixed, prefill_ms: 1, decode_ms: 1}
    decode: *w
`, nil, `c.yaml:5:42: engine.kv_transfer.bandwidth_gb_per_second: expected a positive number, got 0`},
	{"unknown timing_mode", `
engine:
  mode: disaggregated
  model: m
  hardware: h
  kv_transfer: {timing_mode: eager}
  workers:
    prefill: &w
      kv_cache: {capacity: {blocks: 8}}
      timing: {type: fixed, prefill_ms: 1, decode_ms: 1}
    decode: *w
`, nil, `c.yaml:5:30: engine.kv_transfer.timing_mode: expected one of destination_missing, full_prompt, got "eager"`},

	// traffic × engine
	{"mooncake-delta disaggregated", `
traffic:
  source: {type: trace, paths: [a.jsonl], format: mooncake-delta}
  load: {}
engine:
  mode: disaggregated
  model: m
  hardware: h
  workers:
    prefill: &w
      kv_cache: {capacity: {blocks: 8}}
      timing: {type: fixed, prefill_ms: 1, decode_ms: 1}
    decode: *w
`, nil, `c.yaml:2:51: traffic.source.format: mooncake-delta requires engine.mode aggregated`},
	{"cached prefix not block aligned", `
traffic:
  source: {cached_prefix_tokens: 100}
  load: {}
  stop: {requests: 1}
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache: {capacity: {blocks: 8}}
      timing: {type: fixed, prefill_ms: 1, decode_ms: 1}
`, nil, `c.yaml:2:34: traffic.source.cached_prefix_tokens: must be a multiple of the aggregated role's block_size 64, got 100`},
	{"agentic G3", `
traffic:
  source: {type: trace, paths: [a.jsonl], format: agentic_mooncake}
  load: {type: trace_timestamps}
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache:
        bytes_per_token: 2
        capacity: {blocks: 8}
        host_offload: {num_host_blocks: 8}
        g3_offload: {scope: worker_local, num_g3_blocks: 8}
      timing: {type: fixed, prefill_ms: 1, decode_ms: 1}
`, nil, `c.yaml:13:21: engine.workers.aggregated.kv_cache.g3_offload: agentic replay does not support G3 offload`},
	{"agentic two P/D workers", `
traffic:
  source: {type: trace, paths: [a.jsonl], format: agentic_mooncake}
  load: {type: trace_timestamps}
engine:
  mode: disaggregated
  model: m
  hardware: h
  workers:
    prefill:
      parallelism: {replicas: 2}
      kv_cache: {capacity: {blocks: 8}}
      timing: {type: fixed, prefill_ms: 1, decode_ms: 1}
    decode:
      kv_cache:
        bytes_per_token: 2
        capacity: {blocks: 8}
        host_offload: {num_host_blocks: 8}
      timing: {type: fixed, prefill_ms: 1, decode_ms: 1}
`, nil, `c.yaml:9:5: engine.workers: agentic host offload requires one aggregated worker or one prefill and one decode worker`},
	{"agentic shared pool on two workers", `
traffic:
  source: {type: trace, paths: [a.jsonl], format: agentic_mooncake}
  load: {type: trace_timestamps}
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      parallelism: {replicas: 2}
      kv_cache:
        bytes_per_token: 2
        capacity: {blocks: 8}
        host_offload: {num_host_blocks: 8, scope: cluster_shared}
      timing: {type: fixed, prefill_ms: 1, decode_ms: 1}
`, nil, `c.yaml:8:5: engine.workers: agentic host offload requires one aggregated worker or one prefill and one decode worker`},
	{"agentic attention DP", `
traffic:
  source: {type: trace, paths: [a.jsonl], format: agentic_mooncake}
  load: {type: trace_timestamps}
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      parallelism: {attention_data: 2}
      kv_cache:
        bytes_per_token: 2
        capacity: {blocks: 8}
        host_offload: {num_host_blocks: 8}
      timing: {type: fixed, prefill_ms: 1, decode_ms: 1}
`, nil, `c.yaml:9:37: engine.workers.aggregated.parallelism.attention_data: agentic host offload requires attention DP=1 on every role`},

	{"duplicate key in flow mapping", "engine: {model: m, model: n}\n", nil, `c.yaml:1:20: engine.model: duplicate key "model" (first at 1:10)`},
	{"merge of a scalar", `
engine:
  <<: 3
`, nil, `c.yaml:2:3: engine: a merge key (<<) needs a mapping or a list of mappings, got integer 3`},
	{"merge of itself", "engine: &e\n  <<: *e\n", nil, `c.yaml:2:3: engine: a merge key (<<) includes the mapping it is in`},
	{"traffic not a mapping", "traffic: [a]\nengine: {}\n", nil, `c.yaml:1:10: traffic: expected a mapping, got a list`},
	{"unknown load key", `
traffic:
  source: {}
  load: {type: concurrency, rate: 2}
engine: {}
`, nil, `c.yaml:3:29: traffic.load.rate: unknown key "rate" (allowed: type, concurrency, requests_per_second, sessions_per_second, seed, speedup, agentic_lanes, agentic_snapshot, agentic_warmup, agentic_profile)`},
	{"negative per load unit", `
traffic:
  source: {}
  load: {}
  stop: {requests_per_load_unit: -1}
engine: {}
`, nil, `c.yaml:4:34: traffic.stop.requests_per_load_unit: expected a positive number, got -1`},
	{"role not a mapping", `
engine:
  model: m
  hardware: h
  workers: {aggregated: 3}
`, nil, `c.yaml:4:25: engine.workers.aggregated: expected a mapping, got integer 3`},
	{"context_length zero", `
engine:
  model: m
  hardware: h
  context_length: 0
`, nil, `c.yaml:4:19: engine.context_length: expected a positive integer or max, got 0`},
	{"integer out of range", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache: {capacity: {blocks: 99999999999999999999}}
`, nil, `c.yaml:6:37: engine.workers.aggregated.kv_cache.capacity.blocks: expected a positive integer, got integer 99999999999999999999 (out of range)`},
	{"unknown kv_cache key", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache: {state_cache: {}}
`, nil, `c.yaml:6:18: engine.workers.aggregated.kv_cache.state_cache: unknown key "state_cache" (allowed: block_size, prefix_caching, bytes_per_token, capacity, host_offload, g3_offload, kvcr)`},
	{"polynomial timing with its keys", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache: {capacity: {blocks: 8}}
      timing: {type: polynomial, coefficients: [1, 2]}
`, nil, `c.yaml:7:34: engine.workers.aggregated.timing.coefficients: unknown key "coefficients" (allowed: type, prefill_ms, decode_ms, speedup_ratio, decode_speedup_ratio, beta)`},
	{"polynomial timing with fixed values", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache: {capacity: {blocks: 8}}
      timing: {type: polynomial, prefill_ms: 2}
`, nil, `c.yaml:7:46: engine.workers.aggregated.timing.prefill_ms: polynomial timing rejects fixed timing values`},
	{"fixed timing with a speedup", `
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache: {capacity: {blocks: 8}}
      timing: {type: fixed, prefill_ms: 2, decode_ms: 1, speedup_ratio: 2}
`, nil, `c.yaml:7:73: engine.workers.aggregated.timing.speedup_ratio: fixed timing rejects speedup_ratio`},
	{"roofline with an unknown model", `
engine:
  model: gpt-5
  hardware: h100
  workers:
    aggregated:
      kv_cache: {capacity: {blocks: 8}}
      timing: {type: roofline}
`, nil, `c.yaml:2:10: engine.model: engine.workers.aggregated.timing.type needs a model architecture: "gpt-5" is not in the catalog (Llama-3.1-8B, Llama-3.1-70B, Qwen3-14B, Qwen3-32B, Mixtral-8x7B); describe it in engine.model_config (config.json fields)`},
	{"trained_physics with an unknown GPU", `
engine:
  model: meta-llama/Llama-3.1-8B-Instruct
  hardware: tpu
  workers:
    aggregated:
      kv_cache: {capacity: {blocks: 8}}
      timing: {type: trained_physics}
`, nil, `c.yaml:3:13: engine.hardware: engine.workers.aggregated.timing.type needs a GPU: "tpu" is not in the catalog (A100, B200, H100, H200)`},
	{"model_config with a bad dtype", `
engine:
  model: mine
  hardware: h100
  model_config: {num_hidden_layers: 2, hidden_size: 64, num_attention_heads: 4, intermediate_size: 128, vocab_size: 100, torch_dtype: int4}
  workers:
    aggregated:
      kv_cache: {capacity: {blocks: 8}}
      timing: {type: roofline}
`, nil, `c.yaml:4:135: engine.model_config.torch_dtype: expected one of float32, float16, bfloat16, float8, got "int4"`},
	{"trained_physics TP that splits no heads", `
engine:
  model: llama-3.1-8b
  hardware: h100
  workers:
    aggregated:
      parallelism: {tensor: 3}
      kv_cache: {capacity: {blocks: 8}}
      timing: {type: trained_physics}
`, nil, `c.yaml:8:22: engine.workers.aggregated.timing.type: trained_physics timing cannot use model "Llama-3.1-8B" on 3 GPU(s): trained_physics needs num_attention_heads (32) and num_key_value_heads (8) divisible by tensor parallelism (3)`},
	{"set through list", "traffic:\n  source: {type: trace, paths: [a.jsonl]}\n  load: {}\n" + minimal, []string{"traffic.source.paths.first=b.jsonl"}, `--set traffic.source.paths.first=b.jsonl: traffic.source.paths: cannot set traffic.source.paths.first: traffic.source.paths is a list, not a mapping`},
	{"set alias in value", minimal, []string{"engine.model=*x"}, `--set engine.model=*x: engine.model: anchors, aliases, tags and merge keys are not allowed in a --set VALUE`},

	// --set
	{"set without equals", minimal, []string{"engine.model"}, `--set engine.model: expected PATH=VALUE`},
	{"set empty path", minimal, []string{"=3"}, `--set =3: expected PATH=VALUE with a nonempty PATH`},
	{"set empty key", minimal, []string{"engine..model=x"}, `--set engine..model=x: invalid path "engine..model": empty key`},
	{"set bad character", minimal, []string{"engine.workers[0]=x"}, `--set engine.workers[0]=x: invalid path "engine.workers[0]": '[' is not allowed in a key (use letters, digits, _ and -)`},
	{"set empty value", minimal, []string{"engine.model="}, `--set engine.model=: engine.model: expected one YAML value after '=' (use null to remove the key)`},
	{"set block value", minimal, []string{"engine.workers=aggregated: {}"}, `--set engine.workers=aggregated: {}: engine.workers: VALUE must be a scalar or a flow value: write a mapping as {key: value}`},
	{"set bad flow value", minimal, []string{"engine.model={a: 1"}, `--set engine.model={a: 1: engine.model: invalid VALUE: could not find flow mapping end token '}'`},
	{"set through scalar", minimal, []string{"engine.model.name=x"}, `--set engine.model.name=x: engine.model: cannot set engine.model.name: engine.model is string "m", not a mapping`},
	{"set wrong type", minimal, []string{"engine.workers.aggregated.kv_cache.capacity.blocks=abc"}, `--set engine.workers.aggregated.kv_cache.capacity.blocks=abc: engine.workers.aggregated.kv_cache.capacity.blocks: expected a positive integer, got string "abc"`},
	{"set unknown key", minimal, []string{"engine.workers.aggregated.kv_cache.host_offload={num_host_blocks: 8, size: 3}"}, `--set engine.workers.aggregated.kv_cache.host_offload={num_host_blocks: 8, size: 3}: engine.workers.aggregated.kv_cache.host_offload.size: unknown key "size" (allowed: num_host_blocks, scope, d2h_bandwidth_gbps, h2d_bandwidth_gbps, latency_to_first_byte_ms, shared_d2h_bandwidth_gbps, shared_h2d_bandwidth_gbps, connector, kvcr)`},
	{"set removes required", minimal, []string{"engine.model=null"}, `c.yaml:3:3: engine.model: missing required key`},
	{"set creates incomplete", minimal, []string{"engine.workers.aggregated.kv_cache.g3_offload.scope=worker_local"}, `--set engine.workers.aggregated.kv_cache.g3_offload.scope=worker_local: engine.workers.aggregated.kv_cache.g3_offload: requires host_offload`},
}

// minimal is the smallest valid config (the default traffic and one
// aggregated role).
const minimal = `engine:
  model: m
  hardware: h
  workers:
    aggregated:
      kv_cache: {capacity: {blocks: 8}}
      timing: {type: fixed, prefill_ms: 1, decode_ms: 1}
`

// Nested merges are expanded once per mapping: 40 levels that each merge
// the level below three times would take 3^40 steps otherwise.
func TestNestedMergesAreLinear(t *testing.T) {
	var b strings.Builder
	b.WriteString("<<:\n  - &m0 {k0: 0}\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "  - &m%d {<<: [*m%d, *m%d, *m%d], k%d: 0}\n", i, i-1, i-1, i-1, i)
	}
	_, err := Parse("c.yaml", "", []byte(b.String()), nil)
	if want := `c.yaml:2:10: k0: unknown key "k0" (allowed: traffic, engine)`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestParseErrors(t *testing.T) {
	seen := map[string]string{}
	for _, tc := range errorCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("c.yaml", "", []byte(strings.TrimPrefix(tc.yaml, "\n")), tc.set)
			if err == nil {
				t.Fatalf("no error; want %s", tc.want)
			}
			if _, ok := err.(*Error); !ok {
				t.Errorf("error is %T, want *Error", err)
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			if other, dup := seen[err.Error()]; dup {
				t.Errorf("same error as case %q", other)
			}
			seen[err.Error()] = tc.name
		})
	}
}
