package config

import (
	"github.com/kvsim/kvsim/core/timing"
	"github.com/kvsim/kvsim/core/vtime"
)

// A Config is one validated replay configuration with every default filled
// in. The engine reads only this struct; it never sees YAML.
type Config struct {
	// Name is the file name the config was read from ("<default>" for the
	// embedded one); errors and the report use it.
	Name string
	// Dir is the directory of the config file. Relative trace paths resolve
	// against it; the core never opens files itself.
	Dir string

	Traffic Traffic
	Engine  Engine
}

// Traffic says what requests exist (Source), when they start (Load) and
// when the run ends (Stop).
type Traffic struct {
	Source Source
	Load   Load
	Stop   Stop
}

// Source types.
const (
	SourceSynthetic        = "synthetic"
	SourceSyntheticSession = "synthetic-session"
	SourceTrace            = "trace"
)

// Trace formats.
const (
	FormatMooncake        = "mooncake"
	FormatMooncakeDelta   = "mooncake-delta"
	FormatAgenticMooncake = "agentic_mooncake"
	FormatWeka            = "weka"
)

// Agentic reports whether a trace format is made of agentic plays.
func Agentic(format string) bool { return format == FormatAgenticMooncake || format == FormatWeka }

// A Source describes the request population.
type Source struct {
	Type string

	// synthetic
	InputTokens        int
	OutputTokens       int
	CachedPrefixTokens int

	// synthetic-session
	NewInputTokensPerTurn int
	OutputTokensPerTurn   int
	Session               Session

	// trace
	Paths     []string // as written in the config (resolve against Config.Dir)
	Format    string
	BlockSize int // tokens per trace hash block; weka: 0 = the corpus's own
	// NestedTimestampBasis is weka's auto, absolute or relative.
	NestedTimestampBasis string
}

// Session is the synthetic-session shape.
type Session struct {
	Turns             int
	SharedPrefixRatio float64
	PrefixGroups      int
	InterTurnDelayMs  vtime.Time
}

// Load types.
const (
	LoadConcurrency     = "concurrency"
	LoadPoisson         = "poisson"
	LoadConstantRate    = "constant_rate"
	LoadTraceTimestamps = "trace_timestamps"
)

// A Load says when sessions start.
type Load struct {
	Type              string
	Concurrency       int
	RequestsPerSecond float64 // synthetic, open loop
	SessionsPerSecond float64 // synthetic-session, open loop
	Seed              int64   // poisson
	Speedup           float64 // trace_timestamps (1 when not set)

	// Agentic controls (agentic_mooncake traces under trace_timestamps
	// only; docs/model/agentic.md). The keys live in traffic.load, as in
	// aisimulate.
	AgenticLanes    int              // agentic_lanes; 0 = unset
	AgenticSnapshot *AgenticSnapshot // agentic_snapshot; nil = unset
	AgenticWarmup   bool             // agentic_warmup
	AgenticProfile  *AgenticProfile  // agentic_profile; nil = unset
}

// AgenticSnapshot starts each lane at a seeded cut inside its play.
type AgenticSnapshot struct {
	Seed uint64
}

// AgenticProfile recycles plays until an admission deadline. Every field
// is filled with its default when not given.
type AgenticProfile struct {
	DurationSeconds      float64 // 3600, > 0
	ResponseGraceSeconds float64 // 30, ≥ 0
	CancelDrainSeconds   float64 // 10, ≥ 0
	TreeIdleCapSeconds   float64 // 300, > 0
	GlobalIdleCapSeconds float64 // 10, > 0
}

// A Stop says when the run ends. Zero values mean "no limit from this key".
type Stop struct {
	Requests int // synthetic: resolved from requests or requests_per_load_unit
	Sessions int // synthetic-session: resolved likewise
	// MaxVirtualTimeMs is the soft cutoff for traces; HasMaxVirtualTime
	// tells whether it was given.
	MaxVirtualTimeMs  vtime.Time
	HasMaxVirtualTime bool
}

// Engine modes.
const (
	ModeAggregated    = "aggregated"
	ModeDisaggregated = "disaggregated"
)

// An Engine is the served deployment.
type Engine struct {
	Mode           string
	Model          string
	Hardware       string
	Backend        string
	BackendVersion string
	// ContextLength is the context limit in tokens; 0 means "max" (no limit).
	ContextLength        int
	EnableChunkedPrefill bool
	Workers              Workers
	KVTransfer           *KVTransfer // disaggregated only
	// Arch is engine.model_config, or the catalog's entry for engine.model
	// (nil when neither); GPU is the catalog's entry for engine.hardware.
	Arch *timing.Arch
	GPU  *timing.GPU
	// Routing says how each pool places ready requests on its ranks
	// (docs/model/engine.md ("Placement")).
	Routing Routing
}

// Routing policies (docs/model/engine.md ("Placement")).
const (
	RoutingRoundRobin      = "round_robin"
	RoutingLeastLoaded     = "least_loaded"
	RoutingSessionAffinity = "session_affinity"
	RoutingKVRouter        = "kv_router"
)

// RoutingPolicies lists the routing policies: the one list the config's
// validation, sweeps and the CLI share.
var RoutingPolicies = []string{RoutingRoundRobin, RoutingLeastLoaded, RoutingSessionAffinity, RoutingKVRouter}

// Routing is engine.routing: a policy per pool and the kv_router's
// parameters. The zero value is not valid; the decoder fills every pool.
type Routing struct {
	Aggregated, Prefill, Decode string // the policy of each pool
	// OverlapScoreWeight weighs the prefill blocks against the decode
	// blocks in the kv_router's cost (Dynamo's overlap_score_weight, 1).
	OverlapScoreWeight float64
	// Temperature is the kv_router's softmax temperature (0: the lowest
	// cost wins).
	Temperature float64
	// Seed seeds the kv_router's draws (softmax and ties).
	Seed uint64
	// HostOverlapWeight counts a G2-resident block after the G1 prefix as
	// this fraction of a cached block (an extension; 0: off).
	HostOverlapWeight float64
}

// Policy returns the routing policy of the pool of role (a Role name).
func (r Routing) Policy(role string) string {
	switch role {
	case RolePrefill:
		return r.Prefill
	case RoleDecode:
		return r.Decode
	}
	return r.Aggregated
}

// Default reports whether every pool routes round robin (the routing of
// every result before routing policies existed).
func (r Routing) Default() bool {
	return r.Aggregated == RoutingRoundRobin && r.Prefill == RoutingRoundRobin && r.Decode == RoutingRoundRobin
}

// Workers holds the roles; a nil role is absent.
type Workers struct {
	Aggregated *Role
	Prefill    *Role
	Decode     *Role
}

// Role names as they appear in the YAML and in reports.
const (
	RoleAggregated = "aggregated"
	RolePrefill    = "prefill"
	RoleDecode     = "decode"
)

// A Role is one pool of identical workers.
type Role struct {
	Name           string // RoleAggregated, RolePrefill or RoleDecode
	Parallelism    Parallelism
	Scheduler      Scheduler
	KVCache        KVCache
	Timing         Timing
	StartupSeconds float64
}

// Parallelism of one role.
type Parallelism struct {
	Replicas      int
	Tensor        int
	Pipeline      int
	AttentionData int
	// MoETensor and MoEExpert are accepted so aisimulate configs that set
	// them (examples/cli/shared-g2-predict.yaml) read unmodified. They
	// shape aisimulate's performance model only and have no effect here.
	MoETensor int
	MoEExpert int
}

// Scheduler limits per DP rank.
type Scheduler struct {
	MaxBatchedTokens int
	MaxSequences     int
}

// KVCache is the G1 cache of each DP rank, with its optional tiers.
type KVCache struct {
	BlockSize     int
	PrefixCaching bool
	BytesPerToken int64 // 0 when not given
	// CapacityBlocks is G1 blocks per DP rank (from blocks, or from bytes,
	// or from the GPUs' memory).
	CapacityBlocks int
	// MemoryFraction is capacity.memory_fraction of capacity type default
	// (0 for fixed capacity).
	MemoryFraction float64
	HostOffload    *HostOffload
	G3Offload      *G3Offload
}

// G2 scopes.
const (
	ScopeDPRankLocal   = "dp_rank_local"
	ScopeClusterShared = "cluster_shared"
	ScopeWorkerLocal   = "worker_local" // G3 only
)

// Connector profiles (docs/model/g2.md, "The rules table").
const (
	ConnectorOffloadingV024 = "offloading_v0_24"
	ConnectorOffloadingV032 = "offloading_v0_32"
	ConnectorSimpleCPUV032  = "simple_cpu_v0_32"
)

// Connectors lists the connector profiles in table order: the one list
// the config's validation, the rules table, sweeps, the CLI and the page
// share.
var Connectors = []string{ConnectorOffloadingV024, ConnectorOffloadingV032, ConnectorSimpleCPUV032}

// HostOffload is the G2 (host memory) tier.
type HostOffload struct {
	NumHostBlocks          int
	Scope                  string
	D2HBandwidthGBps       float64 // 0 = unlimited
	H2DBandwidthGBps       float64
	LatencyToFirstByteMs   vtime.Time
	SharedD2HBandwidthGBps float64
	SharedH2DBandwidthGBps float64
	Connector              string
	KVCR                   *KVCR
}

// G3Offload is the storage tier behind G2 (docs/model/g3.md).
type G3Offload struct {
	Scope                    string // worker_local or cluster_shared
	NumBlocks                int
	ReadBandwidthGBps        float64
	WriteBandwidthGBps       float64
	SharedReadBandwidthGBps  float64
	SharedWriteBandwidthGBps float64
	LatencyToFirstByteMs     vtime.Time
}

// KVCR is peer fetch between workers' host tiers (docs/model/kvcr.md).
// The YAML block is `kvcr: {}`, written in kv_cache (aisimulate's place)
// or in host_offload (docs/model/kvcr.md ("Constraints")); it has no keys, so
// a non-nil KVCR always has Enabled set.
type KVCR struct {
	Enabled bool
}

// Timing is a role's pass-time model (docs/model/timing.md).
type Timing struct {
	Type      string // one of timing.Types
	Kind      timing.Kind
	PrefillMs vtime.Time // fixed
	DecodeMs  vtime.Time // fixed
	// SpeedupRatio and DecodeSpeedupRatio scale modelled times (not fixed
	// and not the step models' own; 1 unless written).
	SpeedupRatio, DecodeSpeedupRatio float64
	// Step is the roofline or trained_physics model (nil otherwise).
	Step *timing.Step
}

// Timing modes of a P/D KV transfer.
const (
	TransferDestinationMissing = "destination_missing"
	TransferFullPrompt         = "full_prompt"
)

// KVTransfer is the prefill→decode KV handoff.
type KVTransfer struct {
	BytesPerToken int64
	// BandwidthGBps is 0 when null (the transfer takes no time).
	BandwidthGBps float64
	TimingMode    string
}
