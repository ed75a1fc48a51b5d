package config

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
)

func mustParse(t *testing.T, src string, set ...string) *Config {
	t.Helper()
	c, err := Parse("c.yaml", "dir", []byte(strings.TrimPrefix(src, "\n")), set)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return c
}

// diff reports the differences between two values field by field, so a
// failure names the field instead of printing two large structs.
func diff(t *testing.T, got, want any) {
	t.Helper()
	var walk func(path string, g, w reflect.Value)
	walk = func(path string, g, w reflect.Value) {
		switch g.Kind() {
		case reflect.Pointer:
			if g.IsNil() || w.IsNil() {
				if g.IsNil() != w.IsNil() {
					t.Errorf("%s: got %v, want %v", path, g, w)
				}
				return
			}
			walk(path, g.Elem(), w.Elem())
		case reflect.Struct:
			for i := range g.NumField() {
				if !g.Type().Field(i).IsExported() {
					continue // bookkeeping such as where keys were written
				}
				walk(path+"."+g.Type().Field(i).Name, g.Field(i), w.Field(i))
			}
		default:
			if !reflect.DeepEqual(g.Interface(), w.Interface()) {
				t.Errorf("%s: got %#v, want %#v", path, g.Interface(), w.Interface())
			}
		}
	}
	walk("", reflect.ValueOf(got), reflect.ValueOf(want))
}

func readCase(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestConnectorsExample(t *testing.T) {
	c, err := Parse("connectors.yaml", "cases", readCase(t, "connectors.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, c, &Config{
		Name: "connectors.yaml",
		Dir:  "cases",
		Traffic: Traffic{
			Source: Source{Type: SourceTrace, Paths: []string{"delta-sessions.jsonl"}, Format: FormatMooncakeDelta, BlockSize: 16},
			Load:   Load{Type: LoadConcurrency, Concurrency: 4, Speedup: 1},
		},
		Engine: Engine{
			Mode:                 ModeAggregated,
			Model:                "tests/e2e/configs/unified_cli/fixtures/tiny-model",
			Hardware:             "h200_sxm",
			Backend:              "vllm",
			ContextLength:        4096,
			EnableChunkedPrefill: true,
			Routing:              defaultRouting,
			Workers: Workers{Aggregated: &Role{
				Name:        RoleAggregated,
				Parallelism: Parallelism{Replicas: 1, Tensor: 1, Pipeline: 1, AttentionData: 1, MoETensor: 1, MoEExpert: 1},
				Scheduler:   Scheduler{MaxBatchedTokens: 2048, MaxSequences: 2},
				KVCache: KVCache{
					BlockSize: 16, PrefixCaching: true, BytesPerToken: 250000, CapacityBlocks: 128,
					HostOffload: &HostOffload{
						NumHostBlocks: 2048, Scope: ScopeDPRankLocal,
						D2HBandwidthGBps: 32, H2DBandwidthGBps: 32,
						SharedD2HBandwidthGBps: 80, SharedH2DBandwidthGBps: 80,
						Connector: ConnectorSimpleCPUV032,
					},
				},
				Timing: Timing{Type: "fixed", PrefillMs: 2, DecodeMs: 1},
			}},
		},
	})
}

func TestG2RestoreExample(t *testing.T) {
	c, err := Parse("g2-restore.yaml", "cases", readCase(t, "g2-restore.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, c, &Config{
		Name: "g2-restore.yaml",
		Dir:  "cases",
		Traffic: Traffic{
			Source: Source{Type: SourceTrace, Paths: []string{"g2-restore.jsonl"}, Format: FormatMooncake, BlockSize: 4},
			Load:   Load{Type: LoadTraceTimestamps, Speedup: 1},
		},
		Engine: Engine{
			Mode:                 ModeAggregated,
			Model:                "tiny",
			Hardware:             "h200_sxm",
			Backend:              "vllm",
			ContextLength:        2048,
			EnableChunkedPrefill: true,
			Routing:              defaultRouting,
			Workers: Workers{Aggregated: &Role{
				Name:        RoleAggregated,
				Parallelism: Parallelism{Replicas: 1, Tensor: 1, Pipeline: 1, AttentionData: 1, MoETensor: 1, MoEExpert: 1},
				Scheduler:   Scheduler{MaxBatchedTokens: 16, MaxSequences: 1},
				KVCache: KVCache{
					BlockSize: 4, PrefixCaching: true, BytesPerToken: 250000, CapacityBlocks: 3,
					HostOffload: &HostOffload{
						NumHostBlocks: 8, Scope: ScopeDPRankLocal,
						D2HBandwidthGBps: 1, H2DBandwidthGBps: 1,
						SharedD2HBandwidthGBps: 80, SharedH2DBandwidthGBps: 80,
						Connector: ConnectorOffloadingV024,
					},
				},
				Timing: Timing{Type: "fixed", PrefillMs: 2, DecodeMs: 1},
			}},
		},
	})
}

func TestDefaults(t *testing.T) {
	c := mustParse(t, minimal)
	diff(t, c, &Config{
		Name:    "c.yaml",
		Dir:     "dir",
		Traffic: defaultTraffic(),
		Engine: Engine{
			Mode:                 ModeAggregated,
			Model:                "m",
			Hardware:             "h",
			Backend:              "vllm",
			EnableChunkedPrefill: true,
			Routing:              defaultRouting,
			Workers: Workers{Aggregated: &Role{
				Name:        RoleAggregated,
				Parallelism: Parallelism{Replicas: 1, Tensor: 1, Pipeline: 1, AttentionData: 1, MoETensor: 1, MoEExpert: 1},
				Scheduler:   Scheduler{MaxBatchedTokens: 8192, MaxSequences: 256},
				KVCache:     KVCache{BlockSize: 64, PrefixCaching: true, CapacityBlocks: 8},
				Timing:      Timing{Type: "fixed", PrefillMs: 1, DecodeMs: 1},
			}},
		},
	})
	want := Traffic{
		Source: Source{Type: SourceSynthetic, InputTokens: 1024, OutputTokens: 128},
		Load:   Load{Type: LoadConcurrency, Concurrency: 10, Speedup: 1},
		Stop:   Stop{Requests: 100},
	}
	diff(t, c.Traffic, want)
	// An explicit null means the same as an absent key.
	diff(t, mustParse(t, "traffic: null\n"+minimal).Traffic, want)
}

// A supplied traffic block is not merged with the default one.
func TestSuppliedTrafficIsNotMerged(t *testing.T) {
	c := mustParse(t, `
traffic:
  source: {input_tokens: 10}
  load: {type: poisson, requests_per_second: 4}
  stop: {requests_per_load_unit: 2.5}
`+minimal)
	diff(t, c.Traffic, Traffic{
		Source: Source{Type: SourceSynthetic, InputTokens: 10, OutputTokens: 128},
		Load:   Load{Type: LoadPoisson, RequestsPerSecond: 4, Seed: 42, Speedup: 1},
		Stop:   Stop{Requests: 10},
	})
}

func TestSyntheticSession(t *testing.T) {
	c := mustParse(t, `
traffic:
  source:
    type: synthetic-session
    new_input_tokens_per_turn: 8
    output_tokens_per_turn: 2
    session: {turns: 3, shared_prefix_ratio: 0.5, prefix_groups: 2, inter_turn_delay_ms: 200}
  load: {type: constant_rate, sessions_per_second: 0.5}
  stop: {sessions_per_load_unit: 3}
`+minimal)
	diff(t, c.Traffic, Traffic{
		Source: Source{
			Type: SourceSyntheticSession, NewInputTokensPerTurn: 8, OutputTokensPerTurn: 2,
			Session: Session{Turns: 3, SharedPrefixRatio: 0.5, PrefixGroups: 2, InterTurnDelayMs: 200},
		},
		Load: Load{Type: LoadConstantRate, SessionsPerSecond: 0.5, Speedup: 1},
		Stop: Stop{Sessions: 2}, // round(1.5) = 2
	})
	c = mustParse(t, `
traffic:
  source: {type: synthetic-session, session: {}}
  load: {}
  stop: {sessions: 7}
`+minimal)
	diff(t, c.Traffic.Source.Session, Session{Turns: 4})
	diff(t, c.Traffic.Source.NewInputTokensPerTurn, 1024)
	diff(t, c.Traffic.Source.OutputTokensPerTurn, 128)
	diff(t, c.Traffic.Stop, Stop{Sessions: 7})
}

// requests_per_load_unit resolves to max(1, round(x × load unit)), with
// Python's half-to-even rounding.
func TestPerLoadUnit(t *testing.T) {
	for _, tc := range []struct {
		load string
		x    string
		want int
	}{
		{"{concurrency: 10}", "0.25", 2},
		{"{concurrency: 10}", "0.35", 4},
		{"{concurrency: 10}", "3", 30},
		{"{concurrency: 10}", "0.001", 1},
		{"{type: poisson, requests_per_second: 3}", "2", 6},
		{"{type: constant_rate, requests_per_second: 0.5}", "5", 2},
	} {
		c := mustParse(t, fmt.Sprintf("traffic:\n  source: {}\n  load: %s\n  stop: {requests_per_load_unit: %s}\n%s", tc.load, tc.x, minimal))
		if got := c.Traffic.Stop.Requests; got != tc.want {
			t.Errorf("load %s, x %s: requests %d, want %d", tc.load, tc.x, got, tc.want)
		}
	}
}

func TestTrace(t *testing.T) {
	c := mustParse(t, `
traffic:
  source: {type: trace, paths: [t.jsonl]}
  load: {type: trace_timestamps, speedup: 2}
  stop: {max_virtual_time_seconds: 1.5}
`+minimal)
	diff(t, c.Traffic, Traffic{
		Source: Source{Type: SourceTrace, Paths: []string{"t.jsonl"}, Format: FormatMooncake, BlockSize: 512},
		Load:   Load{Type: LoadTraceTimestamps, Speedup: 2},
		Stop:   Stop{MaxVirtualTimeMs: 1500, HasMaxVirtualTime: true},
	})
}

func TestAgentic(t *testing.T) {
	c := mustParse(t, `
traffic:
  source: {type: trace, paths: [plays.jsonl], format: agentic_mooncake, block_size: 4}
  load:
    type: trace_timestamps
    agentic_lanes: 2
    agentic_snapshot: {seed: 18446744073709551615}
    agentic_warmup: true
    agentic_profile: {duration_seconds: 60}
engine:
  model: m
  hardware: h
  workers:
    aggregated:
      parallelism: {replicas: 2}
      kv_cache:
        block_size: 4
        bytes_per_token: 250000
        capacity: {blocks: 3}
        host_offload: {num_host_blocks: 8, kvcr: {}}
      timing: {type: fixed, prefill_ms: 2, decode_ms: 1}
`)
	diff(t, c.Traffic.Load, Load{
		Type: LoadTraceTimestamps, Speedup: 1,
		AgenticLanes:    2,
		AgenticSnapshot: &AgenticSnapshot{Seed: 1<<64 - 1},
		AgenticWarmup:   true,
		AgenticProfile: &AgenticProfile{
			DurationSeconds: 60, ResponseGraceSeconds: 30, CancelDrainSeconds: 10,
			TreeIdleCapSeconds: 300, GlobalIdleCapSeconds: 10,
		},
	})
	// Several aggregated workers with private G2 are allowed, and kvcr is
	// accepted (it never pulls with round-robin placement).
	if ho := c.Engine.Workers.Aggregated.KVCache.HostOffload; ho.KVCR == nil || !ho.KVCR.Enabled {
		t.Errorf("KVCR = %v, want enabled", ho.KVCR)
	}
}

// One prefill and one decode worker join one cluster_shared pool through a
// YAML anchor, as in aisimulate's examples/cli/agentx-g2-shared-pd.yaml.
func TestDisaggregatedSharedPool(t *testing.T) {
	c := mustParse(t, `
traffic:
  source: {type: trace, paths: [plays.jsonl], format: agentic_mooncake}
  load: {type: trace_timestamps, agentic_lanes: 1}
engine:
  mode: disaggregated
  model: m
  hardware: h
  kv_transfer: {bandwidth_gb_per_second: 1}
  workers:
    prefill: &worker
      kv_cache:
        block_size: 4
        bytes_per_token: 250000
        capacity: {type: fixed, blocks: 3}
        host_offload: {scope: cluster_shared, num_host_blocks: 8, shared_h2d_bandwidth_gbps: 1}
      timing: {type: fixed, prefill_ms: 2, decode_ms: 1}
    decode: *worker
`)
	p, d := c.Engine.Workers.Prefill, c.Engine.Workers.Decode
	if p.Name != RolePrefill || d.Name != RoleDecode {
		t.Errorf("names %q, %q", p.Name, d.Name)
	}
	if p.Scheduler.MaxSequences != 1 || d.Scheduler.MaxSequences != 256 {
		t.Errorf("max_sequences prefill %d decode %d, want 1 and 256", p.Scheduler.MaxSequences, d.Scheduler.MaxSequences)
	}
	if p.KVCache.HostOffload == d.KVCache.HostOffload {
		t.Error("roles share one HostOffload value")
	}
	diff(t, d.KVCache, p.KVCache)
	diff(t, c.Engine.KVTransfer, &KVTransfer{BytesPerToken: 250000, BandwidthGBps: 1, TimingMode: TransferDestinationMissing})
	roles := c.Roles()
	if len(roles) != 2 || roles[0] != p || roles[1] != d {
		t.Errorf("Roles() = %v", roles)
	}
}

func TestPrefillMaxSequences(t *testing.T) {
	c := mustParse(t, `
engine:
  mode: disaggregated
  model: m
  hardware: h
  workers:
    prefill:
      scheduler: {max_sequences: 4}
      kv_cache: {capacity: {blocks: 8}}
      timing: {type: fixed, prefill_ms: 1, decode_ms: 1}
    decode:
      kv_cache: {capacity: {blocks: 8}}
      timing: {type: fixed, prefill_ms: 1, decode_ms: 1}
`)
	if got := c.Engine.Workers.Prefill.Scheduler.MaxSequences; got != 4 {
		t.Errorf("explicit prefill max_sequences = %d, want 4", got)
	}
	// Without kv_transfer a disaggregated engine still gets one: an
	// untimed transfer of destination-missing blocks.
	diff(t, c.Engine.KVTransfer, &KVTransfer{TimingMode: TransferDestinationMissing})
}

func TestEngineFields(t *testing.T) {
	c := mustParse(t, `
engine:
  mode: aggregated
  model: Qwen/Qwen3-32B-FP8
  hardware: h200_sxm
  backend: vllm
  backend_version: "0.24.0"
  context_length: max
  enable_chunked_prefill: false
  workers:
    aggregated:
      parallelism: {replicas: 2, tensor: 2, pipeline: 3, attention_data: 1, moe_tensor: 1, moe_expert: 4}
      scheduler: {max_batched_tokens: 4096, max_sequences: 2}
      kv_cache:
        block_size: 16
        prefix_caching: true
        bytes_per_token: 131072
        capacity: {type: fixed, bytes: 10000000}
        host_offload:
          scope: cluster_shared
          num_host_blocks: 1024
          d2h_bandwidth_gbps: 0
          h2d_bandwidth_gbps: 16.5
          latency_to_first_byte_ms: 0.25
          shared_d2h_bandwidth_gbps: 40
          shared_h2d_bandwidth_gbps: 60
        g3_offload: {scope: cluster_shared, num_g3_blocks: 4096}
      timing: {type: fixed, prefill_ms: 20.0, decode_ms: 5}
      startup_seconds: 30
`)
	e := c.Engine
	if e.BackendVersion != "0.24.0" || e.ContextLength != 0 || e.EnableChunkedPrefill {
		t.Errorf("engine fields: %+v", e)
	}
	r := e.Workers.Aggregated
	diff(t, r.Parallelism, Parallelism{Replicas: 2, Tensor: 2, Pipeline: 3, AttentionData: 1, MoETensor: 1, MoEExpert: 4})
	// 10,000,000 bytes / (16 tokens × 131,072 bytes) = 4.77 → 4 blocks.
	if r.KVCache.CapacityBlocks != 4 {
		t.Errorf("capacity blocks %d, want 4", r.KVCache.CapacityBlocks)
	}
	diff(t, r.KVCache.HostOffload, &HostOffload{
		NumHostBlocks: 1024, Scope: ScopeClusterShared,
		D2HBandwidthGBps: 0, H2DBandwidthGBps: 16.5, LatencyToFirstByteMs: 0.25,
		SharedD2HBandwidthGBps: 40, SharedH2DBandwidthGBps: 60,
		Connector: ConnectorOffloadingV024,
	})
	diff(t, r.KVCache.G3Offload, &G3Offload{
		Scope: ScopeClusterShared, NumBlocks: 4096, LatencyToFirstByteMs: 0.1,
		ReadBandwidthGBps: 10, WriteBandwidthGBps: 10,
		SharedReadBandwidthGBps: 80, SharedWriteBandwidthGBps: 80,
	})
	diff(t, r.Timing, Timing{Type: "fixed", PrefillMs: 20, DecodeMs: 5})
	if r.StartupSeconds != 30 {
		t.Errorf("startup %v", r.StartupSeconds)
	}
}

// bytes_per_token: auto is accepted when nothing needs bytes.
func TestAutoBytesPerToken(t *testing.T) {
	c := mustParse(t, strings.Replace(minimal, "kv_cache: {", "kv_cache: {bytes_per_token: auto, ", 1))
	if got := c.Engine.Workers.Aggregated.KVCache.BytesPerToken; got != 0 {
		t.Errorf("BytesPerToken = %d, want 0", got)
	}
}

// Merge keys copy a mapping; keys written next to the merge win.
func TestMergeKeys(t *testing.T) {
	c := mustParse(t, `
engine:
  mode: disaggregated
  model: m
  hardware: h
  workers:
    prefill: &w
      kv_cache: {block_size: 16, capacity: {blocks: 8}}
      timing: {type: fixed, prefill_ms: 1, decode_ms: 1}
    decode:
      <<: *w
      timing: {type: fixed, prefill_ms: 1, decode_ms: 3}
`)
	d := c.Engine.Workers.Decode
	if d.KVCache.BlockSize != 16 || d.KVCache.CapacityBlocks != 8 || d.Timing.DecodeMs != 3 || d.Scheduler.MaxSequences != 256 {
		t.Errorf("decode %+v", *d)
	}
	if p := c.Engine.Workers.Prefill; p.Timing.DecodeMs != 1 {
		t.Errorf("prefill decode_ms %v, want 1", p.Timing.DecodeMs)
	}
}

func TestOverrides(t *testing.T) {
	g2 := readCase(t, "g2-restore.yaml")
	parse := func(t *testing.T, set ...string) *Config {
		t.Helper()
		c, err := Parse("g2-restore.yaml", "", g2, set)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	t.Run("nested scalar", func(t *testing.T) {
		c := parse(t, "engine.workers.aggregated.kv_cache.host_offload.scope=cluster_shared",
			"engine.workers.aggregated.kv_cache.host_offload.h2d_bandwidth_gbps=0.1")
		ho := c.Engine.Workers.Aggregated.KVCache.HostOffload
		if ho.Scope != ScopeClusterShared || ho.H2DBandwidthGBps != 0.1 || ho.NumHostBlocks != 8 {
			t.Errorf("host_offload %+v", *ho)
		}
	})
	t.Run("flow mapping", func(t *testing.T) {
		c := parse(t, "engine.workers.aggregated.kv_cache.host_offload={num_host_blocks: 192, connector: offloading_v0_32}")
		ho := c.Engine.Workers.Aggregated.KVCache.HostOffload
		// The mapping replaces the old one: its bandwidths are back to defaults.
		if ho.NumHostBlocks != 192 || ho.Connector != ConnectorOffloadingV032 || ho.H2DBandwidthGBps != 32 {
			t.Errorf("host_offload %+v", *ho)
		}
	})
	t.Run("remove with null", func(t *testing.T) {
		c := parse(t, "engine.workers.aggregated.kv_cache.host_offload=null", "traffic.source.format=null")
		if ho := c.Engine.Workers.Aggregated.KVCache.HostOffload; ho != nil {
			t.Errorf("host_offload %+v, want removed", *ho)
		}
		if f := c.Traffic.Source.Format; f != FormatMooncake {
			t.Errorf("format %q, want the default", f)
		}
		// Removing a key that does not exist changes nothing.
		parse(t, "engine.workers.aggregated.kv_cache.g3_offload=null", "engine.nothing.here=null")
	})
	t.Run("create missing mappings", func(t *testing.T) {
		c, err := Parse("c.yaml", "", []byte(minimal), []string{
			"engine.workers.aggregated.kv_cache.bytes_per_token=1000",
			"engine.workers.aggregated.kv_cache.host_offload.num_host_blocks=4",
			"traffic.source.type=trace",
			"traffic.source.paths=[x.jsonl]",
			"traffic.load.type=trace_timestamps",
		})
		if err != nil {
			t.Fatal(err)
		}
		if ho := c.Engine.Workers.Aggregated.KVCache.HostOffload; ho == nil || ho.NumHostBlocks != 4 {
			t.Errorf("host_offload %v", ho)
		}
		if s := c.Traffic.Source; s.Type != SourceTrace || s.Paths[0] != "x.jsonl" {
			t.Errorf("source %+v", s)
		}
	})
	t.Run("whole document", func(t *testing.T) {
		c, err := Parse("<default>", "", nil, []string{
			"engine.model=m", "engine.hardware=h",
			"engine.workers.aggregated={kv_cache: {capacity: {blocks: 2}}, timing: {type: fixed, prefill_ms: 0, decode_ms: 0}}",
		})
		if err != nil {
			t.Fatal(err)
		}
		if c.Engine.Workers.Aggregated.KVCache.CapacityBlocks != 2 {
			t.Errorf("capacity %d", c.Engine.Workers.Aggregated.KVCache.CapacityBlocks)
		}
	})
	// An override below an alias or merge changes only the path named,
	// not the anchored mapping's other users.
	t.Run("through an alias", func(t *testing.T) {
		src := `
engine:
  mode: disaggregated
  model: m
  hardware: h
  workers:
    prefill: &w
      kv_cache:
        bytes_per_token: 2
        capacity: {blocks: 8}
        host_offload: {num_host_blocks: 8}
      timing: {type: fixed, prefill_ms: 1, decode_ms: 1}
    decode: *w
`
		c := mustParse(t, src,
			"engine.workers.decode.kv_cache.host_offload.num_host_blocks=16",
			"engine.workers.decode.scheduler.max_sequences=3")
		p, d := c.Engine.Workers.Prefill, c.Engine.Workers.Decode
		if p.KVCache.HostOffload.NumHostBlocks != 8 || d.KVCache.HostOffload.NumHostBlocks != 16 {
			t.Errorf("num_host_blocks prefill %d decode %d, want 8 and 16",
				p.KVCache.HostOffload.NumHostBlocks, d.KVCache.HostOffload.NumHostBlocks)
		}
		if p.Scheduler.MaxSequences != 1 || d.Scheduler.MaxSequences != 3 {
			t.Errorf("max_sequences prefill %d decode %d, want 1 and 3", p.Scheduler.MaxSequences, d.Scheduler.MaxSequences)
		}
		// A merged key can be removed like any other.
		c = mustParse(t, strings.Replace(src, "decode: *w", "decode:\n      <<: *w", 1),
			"engine.workers.decode.kv_cache.host_offload=null")
		if c.Engine.Workers.Decode.KVCache.HostOffload != nil || c.Engine.Workers.Prefill.KVCache.HostOffload == nil {
			t.Error("removing decode's merged host_offload")
		}
	})
}

func TestErrorFields(t *testing.T) {
	_, err := Parse("c.yaml", "", []byte(strings.Replace(minimal, "blocks: 8", "blocks: 8.5", 1)), nil)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not *Error", err)
	}
	want := Error{
		File: "c.yaml", Line: 6, Col: 37,
		Path: "engine.workers.aggregated.kv_cache.capacity.blocks",
		Msg:  "expected a positive integer, got float 8.5",
	}
	if *e != want {
		t.Errorf("got %+v, want %+v", *e, want)
	}
}

func TestErrorAtPlacesPathsLikeTheDecoder(t *testing.T) {
	const hostOffload = "engine.workers.aggregated.kv_cache.host_offload"
	// testdata/connectors.yaml line 20: "        capacity: {type: fixed, blocks: 128}"
	_, c, err := ParsePlaced("c.yaml", "", readCase(t, "connectors.yaml"), []string{"traffic.load.concurrency=8", hostOffload + "=null"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		// a written key: its value's position
		{"engine.workers.aggregated.kv_cache.capacity.blocks", "c.yaml:20:41: engine.workers.aggregated.kv_cache.capacity.blocks: m"},
		// an override: named as the CLI wrote it
		{"traffic.load.concurrency", "--set traffic.load.concurrency=8: traffic.load.concurrency: m"},
		// a key not written (removed by an override): the nearest written
		// ancestor's position (kv_cache's first key, line 17)
		{hostOffload + ".num_host_blocks", "c.yaml:17:9: " + hostOffload + ".num_host_blocks: m"},
	} {
		if got := c.ErrorAt(tc.path, "m").Error(); got != tc.want {
			t.Errorf("ErrorAt(%s) = %q; want %q", tc.path, got, tc.want)
		}
	}
	if e := c.Place((&Config{Name: "c.yaml"}).Refuse(hostOffload, "m")); e.Error() != "c.yaml:17:9: "+hostOffload+": m" {
		t.Errorf("Place(Refuse) = %q", e.Error())
	}
}

// TestRouting: engine.routing as a policy name for every pool, or a mapping
// with a default policy, a policy per pool and the kv_router's parameters
// (docs/model/engine.md ("Placement")).
func TestRouting(t *testing.T) {
	c := mustParse(t, strings.Replace(minimal, "  workers:", "  routing: kv_router\n  workers:", 1))
	if r := c.Engine.Routing; r.Aggregated != RoutingKVRouter || r.OverlapScoreWeight != 1 || r.Default() {
		t.Errorf("routing: kv_router read as %+v", r)
	}
	c = mustParse(t, strings.Replace(minimal, "  workers:",
		"  routing: {aggregated: session_affinity, overlap_score_weight: 2, temperature: 0.5, seed: 7, host_overlap_weight: 0.25}\n  workers:", 1))
	want := Routing{Aggregated: RoutingSessionAffinity, Prefill: RoutingRoundRobin, Decode: RoutingRoundRobin,
		OverlapScoreWeight: 2, Temperature: 0.5, Seed: 7, HostOverlapWeight: 0.25}
	diff(t, c.Engine.Routing, want)
	if got := c.Engine.Routing.Policy(RoleAggregated); got != RoutingSessionAffinity {
		t.Errorf("Policy(aggregated) = %s", got)
	}
	c, err := Parse("c.yaml", "", []byte(minimal), []string{"engine.routing=least_loaded"})
	if err != nil || c.Engine.Routing.Aggregated != RoutingLeastLoaded {
		t.Fatalf("--set engine.routing=least_loaded: %v, %+v", err, c)
	}
}

var defaultRouting = Routing{Aggregated: RoutingRoundRobin, Prefill: RoutingRoundRobin, Decode: RoutingRoundRobin,
	OverlapScoreWeight: 1}
