package config

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kvsim/kvsim/core/timing"

	"github.com/goccy/go-yaml/ast"
)

// Keys of the engine block, in the order the unknown-key error lists them.
var (
	engineKeys      = []string{"mode", "model", "hardware", "model_config", "backend", "backend_version", "context_length", "enable_chunked_prefill", "workers", "kv_transfer", "routing"}
	routingKeys     = []string{"policy", RoleAggregated, RolePrefill, RoleDecode, "overlap_score_weight", "temperature", "seed", "host_overlap_weight"}
	roleNames       = []string{RoleAggregated, RolePrefill, RoleDecode}
	roleKeys        = []string{"parallelism", "scheduler", "kv_cache", "timing", "startup_seconds"}
	parallelismKeys = []string{"replicas", "tensor", "pipeline", "attention_data", "moe_tensor", "moe_expert"}
	schedulerKeys   = []string{"max_batched_tokens", "max_sequences"}
	kvCacheKeys     = []string{"block_size", "prefix_caching", "bytes_per_token", "capacity", "host_offload", "g3_offload", "kvcr"}
	capacityKeys    = []string{"type", "blocks", "bytes", "memory_fraction"}
	hostOffloadKeys = []string{"num_host_blocks", "scope", "d2h_bandwidth_gbps", "h2d_bandwidth_gbps", "latency_to_first_byte_ms", "shared_d2h_bandwidth_gbps", "shared_h2d_bandwidth_gbps", "connector", "kvcr"}
	g3OffloadKeys   = []string{"scope", "num_g3_blocks", "latency_to_first_byte_ms", "read_bandwidth_gbps", "write_bandwidth_gbps", "shared_read_bandwidth_gbps", "shared_write_bandwidth_gbps"}
	timingKeys      = []string{"type", "prefill_ms", "decode_ms", "speedup_ratio", "decode_speedup_ratio", "beta"}
	kvTransferKeys  = []string{"bytes_per_token", "bandwidth_gb_per_second", "timing_mode"}
)

// Roles returns the roles that are present, in the order aggregated,
// prefill, decode.
func (c *Config) Roles() []*Role { return c.Engine.roles() }

func (e *Engine) roles() []*Role {
	var rs []*Role
	for _, r := range []*Role{e.Workers.Aggregated, e.Workers.Prefill, e.Workers.Decode} {
		if r != nil {
			rs = append(rs, r)
		}
	}
	return rs
}

func rolePath(name string) string { return "engine.workers." + name }

func (d *decoder) engine(top *mapping) Engine {
	m := d.mapping(top.require("engine"), "engine", engineKeys...)
	var e Engine
	e.Mode = m.enum("mode", ModeAggregated, ModeAggregated, ModeDisaggregated)
	e.Model = m.nonEmpty("model")
	e.Hardware = m.nonEmpty("hardware")
	if e.Hardware == "auto" {
		m.fail("hardware", "auto is rejected: it asks aisimulate to search hardware; name one (it is identity only)")
	}
	e.Backend = m.str("backend", "vllm")
	if e.Backend != "vllm" {
		m.fail("backend", "%q is not modelled; only vllm is supported", e.Backend)
	}
	e.BackendVersion = m.str("backend_version", "")
	d.modelAndGPU(m, &e)
	e.ContextLength = d.contextLength(m)
	e.EnableChunkedPrefill = m.boolean("enable_chunked_prefill", true)

	w := d.mapping(m.require("workers"), m.field("workers"), roleNames...)
	if e.Mode == ModeAggregated {
		if !w.has(RoleAggregated) {
			w.fail(RoleAggregated, "aggregated mode requires workers.aggregated")
		}
		for _, r := range []string{RolePrefill, RoleDecode} {
			if w.has(r) {
				w.fail(r, "rejected in aggregated mode (prefill and decode roles need mode: disaggregated)")
			}
		}
		if m.has("kv_transfer") {
			m.fail("kv_transfer", "applies only to disaggregated mode")
		}
	} else {
		for _, r := range []string{RolePrefill, RoleDecode} {
			if !w.has(r) {
				w.fail(r, "disaggregated mode requires workers.%s", r)
			}
		}
		if w.has(RoleAggregated) {
			w.fail(RoleAggregated, "rejected in disaggregated mode (it needs prefill and decode roles)")
		}
	}
	for _, name := range roleNames {
		if !w.has(name) {
			continue
		}
		r := d.role(w.sub(name, roleKeys...), name, &e)
		switch name {
		case RoleAggregated:
			e.Workers.Aggregated = r
		case RolePrefill:
			e.Workers.Prefill = r
		case RoleDecode:
			e.Workers.Decode = r
		}
	}
	d.sharedPool(&e)
	if e.Mode == ModeDisaggregated {
		e.KVTransfer = d.kvTransfer(m.sub("kv_transfer", kvTransferKeys...), e.Workers.Prefill)
	}
	e.Routing = d.routing(m, e.Mode)
	return e
}

// routing reads engine.routing: a policy name for every pool, or a mapping
// with a default policy, a policy per pool of the mode and the kv_router's
// parameters (docs/model/engine.md ("Placement")).
func (d *decoder) routing(em *mapping, mode string) Routing {
	r := Routing{OverlapScoreWeight: 1}
	v, _ := em.get("routing")
	if s, ok := v.(*ast.StringNode); ok {
		d.policy(v, em.field("routing"), s.Value)
		r.Aggregated, r.Prefill, r.Decode = s.Value, s.Value, s.Value
		return r
	}
	if _, ok := v.(*ast.MappingNode); !ok && !isNull(v) {
		d.failNode(v, em.field("routing"), "expected a routing policy (%s) or a mapping, got %s",
			strings.Join(RoutingPolicies, ", "), describe(v))
	}
	m := em.sub("routing", routingKeys...)
	def := m.enum("policy", RoutingRoundRobin, RoutingPolicies...)
	r.Aggregated, r.Prefill, r.Decode = def, def, def
	pools := []string{RoleAggregated}
	if mode == ModeDisaggregated {
		pools = []string{RolePrefill, RoleDecode}
	}
	for _, pool := range []string{RoleAggregated, RolePrefill, RoleDecode} {
		if !m.has(pool) {
			continue
		}
		if !slices.Contains(pools, pool) {
			m.fail(pool, "no %s pool in %s mode (its pools: %s)", pool, mode, strings.Join(pools, ", "))
		}
		p := m.enum(pool, def, RoutingPolicies...)
		switch pool {
		case RoleAggregated:
			r.Aggregated = p
		case RolePrefill:
			r.Prefill = p
		case RoleDecode:
			r.Decode = p
		}
	}
	r.OverlapScoreWeight = m.float("overlap_score_weight", 1, nonNegNum)
	r.Temperature = m.float("temperature", 0, nonNegNum)
	r.Seed = m.uint64Of("seed", 0)
	r.HostOverlapWeight = m.float("host_overlap_weight", 0, ratioNum)
	return r
}

// policy fails unless name is a routing policy.
func (d *decoder) policy(n ast.Node, path, name string) {
	if !slices.Contains(RoutingPolicies, name) {
		d.failNode(n, path, "expected one of %s, got %q", strings.Join(RoutingPolicies, ", "), name)
	}
}

// nonEmpty reads a required, nonempty string.
func (m *mapping) nonEmpty(key string) string {
	s := m.d.stringValue(m.require(key), m.field(key), "a nonempty string")
	if s == "" {
		m.fail(key, "expected a nonempty string")
	}
	return s
}

// contextLength reads engine.context_length: a positive integer, or max
// (0: no limit).
func (d *decoder) contextLength(m *mapping) int {
	v, ok := m.get("context_length")
	if !ok {
		return 0
	}
	if s, ok := v.(*ast.StringNode); ok && s.Value == "max" {
		return 0
	}
	if _, ok := v.(*ast.IntegerNode); !ok {
		m.fail("context_length", "expected a positive integer or max, got %s", describe(v))
	}
	return m.int("context_length", 0, intRule{1, "a positive integer or max"})
}

// autoBytes is what bytesPerToken returns for auto.
const autoBytes = -1

// bytesPerToken reads a bytes_per_token field: a positive integer, or
// aisimulate's auto (autoBytes), which the model's architecture resolves
// where it is known (kvCache) and which otherwise means not known (0).
// auto is accepted so that configs which never need bytes read
// unmodified; where bytes matter, a missing number is reported by the
// check that needs it.
func (d *decoder) bytesPerToken(m *mapping, key string) int64 {
	v, ok := m.get(key)
	if !ok {
		return 0
	}
	if s, ok := v.(*ast.StringNode); ok && s.Value == "auto" {
		return autoBytes
	}
	if _, ok := v.(*ast.IntegerNode); !ok {
		m.fail(key, "expected a positive integer or auto, got %s", describe(v))
	}
	return m.int64Of(key, 0, intRule{1, "a positive integer or auto"})
}

func (d *decoder) role(m *mapping, name string, e *Engine) *Role {
	r := &Role{Name: name}
	p := m.sub("parallelism", parallelismKeys...)
	r.Parallelism = Parallelism{
		Replicas:      p.int("replicas", 1, positiveInt),
		Tensor:        p.int("tensor", 1, positiveInt),
		Pipeline:      p.int("pipeline", 1, positiveInt),
		AttentionData: p.int("attention_data", 1, positiveInt),
		MoETensor:     p.int("moe_tensor", 1, positiveInt),
		MoEExpert:     p.int("moe_expert", 1, positiveInt),
	}
	s := m.sub("scheduler", schedulerKeys...)
	maxSeqs := 256
	if name == RolePrefill {
		maxSeqs = 1 // the prefill default applies only when the key is absent
	}
	r.Scheduler = Scheduler{
		MaxBatchedTokens: s.int("max_batched_tokens", 8192, positiveInt),
		MaxSequences:     s.int("max_sequences", maxSeqs, positiveInt),
	}
	r.KVCache = d.kvCache(m.sub("kv_cache", kvCacheKeys...), r, e)
	r.Timing = d.timing(m, r, e)
	r.StartupSeconds = m.float("startup_seconds", 0, nonNegNum)
	return r
}

// kvCache decodes and checks one role's kv_cache; r has its name and
// parallelism filled in.
func (d *decoder) kvCache(m *mapping, r *Role, e *Engine) KVCache {
	kv := KVCache{
		BlockSize:     m.int("block_size", 64, atLeastTwo),
		PrefixCaching: m.boolean("prefix_caching", true),
		BytesPerToken: d.bytesPerToken(m, "bytes_per_token"),
	}
	if kv.BytesPerToken == autoBytes {
		kv.BytesPerToken = 0
		if a := d.knownArch(e); a != nil {
			kv.BytesPerToken = a.KVBytesPerToken()
		}
	}
	kv.CapacityBlocks = d.capacity(m, &kv, r, e)

	var hm *mapping
	if m.has("host_offload") {
		hm = m.sub("host_offload", hostOffloadKeys...)
		kv.HostOffload = d.hostOffload(hm)
	}
	// kvcr is read from kv_cache (where aisimulate puts it) or from
	// host_offload (docs/model/kvcr.md ("Constraints")), but not from both.
	kvcrPath := ""
	if hm != nil && hm.has("kvcr") {
		hm.sub("kvcr")
		kv.HostOffload.KVCR = &KVCR{Enabled: true}
		kvcrPath = hm.field("kvcr")
	}
	if m.has("kvcr") {
		switch {
		case kv.HostOffload == nil:
			m.fail("kvcr", "requires host_offload")
		case kvcrPath != "":
			m.fail("kvcr", "given twice: here and in host_offload")
		}
		m.sub("kvcr")
		kv.HostOffload.KVCR = &KVCR{Enabled: true}
		kvcrPath = m.field("kvcr")
	}
	if m.has("g3_offload") {
		if d.agenticTrace {
			// aisimulate rejects G3 for agentic replay on every role, with
			// or without G2, before its other G3 rules
			// (docs/model/config.md ("Agentic restrictions")).
			m.fail("g3_offload", "agentic replay does not support G3 offload")
		}
		if kv.HostOffload == nil {
			m.fail("g3_offload", "requires host_offload")
		}
		kv.G3Offload = d.g3Offload(m.sub("g3_offload", g3OffloadKeys...))
	}

	ho := kv.HostOffload
	if ho == nil {
		return kv
	}
	// G2 needs vLLM, which is the only backend accepted at all.
	if !kv.PrefixCaching {
		m.fail("prefix_caching", "host_offload requires prefix_caching: true")
	}
	if kv.BytesPerToken == 0 {
		m.fail("bytes_per_token", "host_offload requires a positive integer bytes_per_token")
	}
	if kv.G3Offload != nil {
		if r.Name != RoleAggregated {
			m.fail("g3_offload", "supported only on the aggregated role")
		}
		if r.Parallelism.AttentionData != 1 {
			m.fail("g3_offload", "requires parallelism.attention_data 1, got %d", r.Parallelism.AttentionData)
		}
	}
	if c := ho.Connector; c != ConnectorOffloadingV024 {
		switch {
		case r.Name != RoleAggregated:
			hm.fail("connector", "%s requires the aggregated role", c)
		case ho.Scope != ScopeDPRankLocal:
			hm.fail("connector", "%s requires scope dp_rank_local", c)
		case kv.G3Offload != nil:
			hm.fail("connector", "%s cannot be combined with g3_offload", c)
		case ho.KVCR != nil:
			hm.fail("connector", "%s cannot be combined with kvcr", c)
		}
	}
	if ho.KVCR != nil {
		switch {
		case ho.Scope != ScopeDPRankLocal:
			d.fail(kvcrPath, "requires host_offload scope dp_rank_local")
		case kv.G3Offload != nil:
			d.fail(kvcrPath, "cannot be combined with g3_offload")
		case r.Name == RoleDecode:
			d.fail(kvcrPath, "not supported on the decode role")
		}
	}
	return kv
}

// capacity reads kv_cache.capacity and returns the G1 blocks per DP rank.
// An absent capacity means type fixed
// (docs/model/config.md ("KV cache settings"), Decision) and then fails for
// want of blocks or bytes.
func (d *decoder) capacity(kvm *mapping, kv *KVCache, r *Role, e *Engine) int {
	raw, _ := kvm.get("capacity")
	m := d.mapping(raw, kvm.field("capacity"), capacityKeys...)
	switch t := m.str("type", "fixed"); t {
	case "default":
		return d.memoryCapacity(m, kv, r, e)
	case "fixed":
		if m.has("memory_fraction") {
			m.fail("memory_fraction", "fixed KV capacity rejects memory_fraction")
		}
	default:
		m.fail("type", "expected fixed or default, got %q", t)
	}
	switch {
	case m.has("blocks") && m.has("bytes"):
		m.fail("bytes", "give only one of blocks and bytes")
	case m.has("blocks"):
		return m.int("blocks", 0, positiveInt)
	case !m.has("bytes"):
		m.fail("blocks", "fixed capacity requires blocks or bytes")
	}
	bytes := m.int64Of("bytes", 0, positiveInt)
	if kv.BytesPerToken == 0 {
		kvm.fail("bytes_per_token", "capacity.bytes requires a positive integer bytes_per_token")
	}
	blockBytes := int64(kv.BlockSize) * kv.BytesPerToken
	if kv.BytesPerToken > math.MaxInt64/int64(kv.BlockSize) || bytes < blockBytes {
		m.fail("bytes", "holds no block: %d bytes < block_size %d × bytes_per_token %d", bytes, kv.BlockSize, kv.BytesPerToken)
	}
	return int(bytes / blockBytes)
}

func (d *decoder) hostOffload(m *mapping) *HostOffload {
	m.require("num_host_blocks")
	ho := &HostOffload{
		NumHostBlocks: m.int("num_host_blocks", 0, positiveInt),
		Scope:         m.str("scope", ScopeDPRankLocal),
	}
	switch ho.Scope {
	case ScopeDPRankLocal, ScopeClusterShared:
	case ScopeWorkerLocal:
		m.fail("scope", "worker_local is a G3 scope; use dp_rank_local for a private G2 cache per DP rank")
	default:
		m.fail("scope", "expected one of dp_rank_local, cluster_shared, got %q", ho.Scope)
	}
	ho.D2HBandwidthGBps = m.float("d2h_bandwidth_gbps", 32, nonNegNum)
	ho.H2DBandwidthGBps = m.float("h2d_bandwidth_gbps", 32, nonNegNum)
	ho.LatencyToFirstByteMs = m.ms("latency_to_first_byte_ms", 0, nonNegNum)
	// The shared bandwidths matter only for cluster_shared; like
	// aisimulate, a dp_rank_local G2 accepts and ignores them.
	ho.SharedD2HBandwidthGBps = m.float("shared_d2h_bandwidth_gbps", 80, nonNegNum)
	ho.SharedH2DBandwidthGBps = m.float("shared_h2d_bandwidth_gbps", 80, nonNegNum)
	ho.Connector = m.enum("connector", ConnectorOffloadingV024, Connectors...)
	return ho
}

// g3Offload reads g3_offload (docs/model/config.md ("Storage tier and peer
// fetch settings"), docs/model/g3.md; keys and defaults as aisimulate's
// G3OffloadConfig has them): scope and num_g3_blocks are required.
func (d *decoder) g3Offload(m *mapping) *G3Offload {
	m.require("scope")
	g := &G3Offload{Scope: m.str("scope", "")}
	switch g.Scope {
	case ScopeWorkerLocal, ScopeClusterShared:
	case ScopeDPRankLocal:
		m.fail("scope", "dp_rank_local is a G2 scope; g3_offload takes worker_local or cluster_shared")
	default:
		m.fail("scope", "expected one of worker_local, cluster_shared, got %q", g.Scope)
	}
	m.require("num_g3_blocks")
	g.NumBlocks = m.int("num_g3_blocks", 0, positiveInt)
	g.LatencyToFirstByteMs = m.ms("latency_to_first_byte_ms", 0.1, nonNegNum)
	g.ReadBandwidthGBps = m.float("read_bandwidth_gbps", 10, nonNegNum)
	g.WriteBandwidthGBps = m.float("write_bandwidth_gbps", 10, nonNegNum)
	g.SharedReadBandwidthGBps = m.float("shared_read_bandwidth_gbps", 80, nonNegNum)
	g.SharedWriteBandwidthGBps = m.float("shared_write_bandwidth_gbps", 80, nonNegNum)
	return g
}

// timing reads a role's timing block (docs/model/timing.md). type must be
// written: aisimulate's default for an absent type is its GPU performance
// model, so an absent type cannot silently mean something else.
func (d *decoder) timing(role *mapping, r *Role, e *Engine) Timing {
	if !role.has("timing") {
		role.fail("timing", "missing required key (e.g. {type: fixed, prefill_ms, decode_ms} or {type: polynomial}; types: %s)", strings.Join(timing.Types, ", "))
	}
	// Name aisimulate's GPU performance model before its own keys fail as
	// unknown keys.
	raw, _ := role.get("timing")
	if n, t := d.peek(raw, role.field("timing"), "type"); t == "default" {
		d.failNode(n, role.field("timing")+".type", "default is aisimulate's GPU performance model, which kvsim does not have; use one of %s", strings.Join(timing.Types, ", "))
	}
	m := d.mapping(raw, role.field("timing"), timingKeys...)
	t := Timing{Type: d.stringValue(m.require("type"), m.field("type"), "a timing type")}
	kind, ok := timing.KindOf(t.Type)
	if !ok {
		m.fail("type", "expected one of %s, got %q", strings.Join(timing.Types, ", "), t.Type)
	}
	t.Kind = kind
	if kind == timing.Fixed {
		if !m.has("prefill_ms") || !m.has("decode_ms") {
			k := "prefill_ms"
			if m.has(k) {
				k = "decode_ms"
			}
			m.fail(k, "fixed timing requires prefill_ms and decode_ms")
		}
		m.only([]string{"type", "prefill_ms", "decode_ms"}, func(k string) string { return "fixed timing rejects " + k })
		t.PrefillMs = m.ms("prefill_ms", 0, nonNegNum)
		t.DecodeMs = m.ms("decode_ms", 0, nonNegNum)
		return t
	}
	for _, k := range []string{"prefill_ms", "decode_ms"} {
		if m.has(k) {
			m.fail(k, "%s timing rejects fixed timing values", t.Type)
		}
	}
	if kind == timing.Polynomial {
		m.only([]string{"type", "speedup_ratio", "decode_speedup_ratio"}, func(k string) string { return "polynomial timing rejects " + k })
		t.SpeedupRatio = m.float("speedup_ratio", 1, nonNegNum)
		t.DecodeSpeedupRatio = m.float("decode_speedup_ratio", 1, nonNegNum)
		return t
	}
	keys := []string{"type"}
	if kind == timing.TrainedPhysics {
		keys = append(keys, "beta")
	}
	m.only(keys, func(k string) string { return t.Type + " timing rejects " + k })
	var beta []float64
	if m.has("beta") {
		beta = d.floats(m, "beta")
	}
	a, g := d.archAndGPU(e, m.field("type"))
	step, err := timing.NewStep(kind, *a, *g, r.Parallelism.Tensor, beta)
	if err != nil {
		m.fail("type", "%s timing cannot use model %q on %d GPU(s): %v", t.Type, a.Name, r.Parallelism.Tensor, err)
	}
	t.Step = step
	return t
}

// kvTransfer reads the prefill→decode handoff; an absent block means all
// defaults, so disaggregated configs always have one.
func (d *decoder) kvTransfer(m *mapping, prefill *Role) *KVTransfer {
	kt := &KVTransfer{
		BytesPerToken: max(d.bytesPerToken(m, "bytes_per_token"), 0),
		BandwidthGBps: m.float("bandwidth_gb_per_second", 0, positiveNum),
		TimingMode:    m.enum("timing_mode", TransferDestinationMissing, TransferDestinationMissing, TransferFullPrompt),
	}
	if kt.BytesPerToken == 0 {
		kt.BytesPerToken = prefill.KVCache.BytesPerToken
	}
	if kt.BandwidthGBps > 0 && kt.BytesPerToken == 0 {
		m.fail("bytes_per_token", "a timed transfer (bandwidth_gb_per_second set) needs bytes_per_token here or in the prefill role's kv_cache")
	}
	return kt
}

// sharedPool checks that every role joining the deployment-wide
// cluster_shared G2 pool agrees on its geometry and pool settings.
// Per-role link bandwidths and latency may differ.
func (d *decoder) sharedPool(e *Engine) {
	var ref *Role
	for _, r := range e.roles() {
		ho := r.KVCache.HostOffload
		if ho == nil || ho.Scope != ScopeClusterShared {
			continue
		}
		if ref == nil {
			ref = r
			continue
		}
		a, b := ref.KVCache, r.KVCache
		for _, diff := range []struct {
			what string
			x, y any
		}{
			{"block_size", a.BlockSize, b.BlockSize},
			{"bytes_per_token", a.BytesPerToken, b.BytesPerToken},
			{"parallelism.tensor", ref.Parallelism.Tensor, r.Parallelism.Tensor},
			{"num_host_blocks", a.HostOffload.NumHostBlocks, ho.NumHostBlocks},
			{"shared_d2h_bandwidth_gbps", a.HostOffload.SharedD2HBandwidthGBps, ho.SharedD2HBandwidthGBps},
			{"shared_h2d_bandwidth_gbps", a.HostOffload.SharedH2DBandwidthGBps, ho.SharedH2DBandwidthGBps},
		} {
			if diff.x != diff.y {
				d.fail(rolePath(r.Name)+".kv_cache.host_offload",
					"cluster_shared host_offload participants are incompatible: %s differs from %s (%v vs %v)",
					diff.what, ref.Name, fmt.Sprint(diff.y), fmt.Sprint(diff.x))
			}
		}
	}
}
