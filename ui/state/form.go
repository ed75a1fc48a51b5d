// Package state is the browser app's logic that does not touch the DOM:
// the form that mirrors a config, the edits that turn a control change into
// a YAML edit, the shareable URL, the guided examples, compare variants and
// the formatting of results. It is plain Go, tested natively and under
// GOOS=js GOARCH=wasm; the vugu components in ui/ only call it.
//
// The YAML text is the single source of truth: every control change is an
// edit of that text at a config path (SetYAML, with the semantics of the
// CLI's --set), and the form is read back from the config core/config
// parses from the text. So the YAML view always shows exactly the config a
// run uses, and `kvsim predict --config` reads it unchanged.
package state

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/timing"
)

// A Field is one control of the config panel. Its Name is part of the
// page's element ids ("f-" + name for the control, "err-" + name for its
// error); the panel keeps one error per Field.
type Field int

// The config panel's controls.
const (
	NoField Field = iota
	FConnector
	FG1
	FG2
	FG2None
	FBlockSize
	FReplicas
	FAttnDP
	FPD
	// FDecodeReplicas and FKVBandwidth exist in P/D mode: the decode
	// role's replicas (FReplicas is then the prefill role's) and the
	// prefill → decode KV transfer bandwidth.
	FDecodeReplicas
	FKVBandwidth
	FMaxSeqs
	FBudget
	FPrefillMs
	FDecodeMs
	// FTiming is timing.type; FModel and FHardware are engine.model and
	// engine.hardware, offered from the timing catalog; FSpeedup is the
	// polynomial's speedup_ratio; FMemFraction sizes G1 from the GPUs'
	// memory (capacity type default).
	FTiming
	FModel
	FHardware
	FSpeedup
	FMemFraction
	FD2H
	FH2D
	FConcurrency
	FTrace
	// FGen is the synthetic-session generator (one error for its inputs)
	// and FUpBlock the upload's tokens per hash id; neither edits the YAML
	// through Edit.
	FGen
	FUpBlock
	// FRouting is every pool's routing policy (engine.routing).
	FRouting
	// The agentic load controls (traffic.load, agentic traces only;
	// docs/model/agentic.md): agentic_lanes, agentic_snapshot.seed,
	// agentic_warmup and agentic_profile.duration_seconds. An empty lanes,
	// seed or duration removes the key.
	FLanes
	FSnapshotSeed
	FWarmup
	FProfileSeconds
	// The profile's other keys (agentic_profile.response_grace_seconds,
	// cancel_drain_seconds, tree_idle_cap_seconds,
	// global_idle_cap_seconds); an empty one removes its key (the default
	// applies).
	FProfileGrace
	FProfileDrain
	FProfileTreeIdle
	FProfileGlobalIdle
	// NumFields counts the fields (NoField included), for arrays indexed
	// by Field.
	NumFields
)

var fieldNames = [NumFields]string{NoField: "", FConnector: "connector", FG1: "g1", FG2: "g2", FG2None: "g2none",
	FBlockSize: "block_size", FReplicas: "replicas", FAttnDP: "attn_dp", FPD: "pd", FDecodeReplicas: "decode_replicas",
	FKVBandwidth: "kv_bw", FMaxSeqs: "max_seqs", FBudget: "budget", FPrefillMs: "prefill_ms", FDecodeMs: "decode_ms",
	FTiming: "timing", FModel: "model", FHardware: "hardware", FSpeedup: "speedup", FMemFraction: "mem_fraction",
	FD2H: "d2h", FH2D: "h2d", FConcurrency: "concurrency", FTrace: "trace", FGen: "gen", FUpBlock: "upblock", FRouting: "routing",
	FLanes: "lanes", FSnapshotSeed: "snapshot_seed", FWarmup: "warmup", FProfileSeconds: "profile_seconds",
	FProfileGrace: "profile_grace", FProfileDrain: "profile_drain", FProfileTreeIdle: "profile_tree_idle",
	FProfileGlobalIdle: "profile_global_idle"}

// Name is the field's name in element ids ("" for NoField and values out
// of range).
func (f Field) Name() string {
	if f < 0 || f >= NumFields {
		return ""
	}
	return fieldNames[f]
}

// String is Name, or "Field(n)" for a value that names no field.
func (f Field) String() string {
	if n := f.Name(); n != "" || f == NoField {
		return n
	}
	return "Field(" + strconv.Itoa(int(f)) + ")"
}

// ID is the control's element id ("f-g1").
func (f Field) ID() string { return "f-" + f.Name() }

// ErrID is the element id of the control's error ("err-g1").
func (f Field) ErrID() string { return "err-" + f.Name() }

// Integer tells whether the control takes whole numbers (the others take
// decimal numbers, the connector a name).
func (f Field) Integer() bool {
	switch f {
	case FG1, FG2, FBlockSize, FReplicas, FAttnDP, FMaxSeqs, FBudget, FConcurrency, FDecodeReplicas, FLanes, FSnapshotSeed:
		return true
	}
	return false
}

// Connectors lists the three G2 connector profiles in display order.
var Connectors = config.Connectors

// TimingTypes, ModelNames and GPUNames are what the timing controls offer
// (docs/timing.md).
var (
	TimingTypes = timing.Types
	ModelNames  = timing.ModelNames()
	GPUNames    = timing.GPUNames()
)

// Modelled tells whether a timing type computes pass times from the work
// (every type but fixed): the form then has no prefill_ms or decode_ms.
func Modelled(t string) bool { return t != "" && t != timing.TypeFixed }

// IsModel and IsGPU tell whether a name as a config writes it (h200_sxm,
// meta-llama/Llama-3.1-8B-Instruct) is the catalog's entry, so the
// selects show the config's choice.
func IsModel(name, entry string) bool {
	a, ok := timing.LookupModel(name)
	return ok && a.Name == entry
}

// IsGPU is IsModel for GPUs.
func IsGPU(name, entry string) bool {
	g, ok := timing.LookupGPU(name)
	return ok && g.Name == entry
}

// NeedsGPU tells whether a timing type reads the model and the GPU.
func NeedsGPU(t string) bool { return t == timing.TypeRoofline || t == timing.TypeTrainedPhysics }

// ConnectorLabel is a profile's short label.
func ConnectorLabel(c string) string {
	switch c {
	case config.ConnectorOffloadingV024:
		return "offloading v0.24"
	case config.ConnectorOffloadingV032:
		return "offloading v0.32"
	case config.ConnectorSimpleCPUV032:
		return "SimpleCPU v0.32"
	}
	return c
}

// RoutingPolicies lists the routing policies in display order.
var RoutingPolicies = config.RoutingPolicies

// RoutingLabel is a routing policy's short label.
func RoutingLabel(p string) string {
	switch p {
	case config.RoutingRoundRobin:
		return "round robin"
	case config.RoutingLeastLoaded:
		return "least loaded"
	case config.RoutingSessionAffinity:
		return "session affinity"
	case config.RoutingKVRouter:
		return "KV router"
	}
	return p
}

// Form is what the controls show: the first role's settings of a parsed
// config (for a disaggregated config, the prefill role).
type Form struct {
	Mode      string
	Connector string
	// Routing is the first role's pool's routing policy.
	Routing   string
	G1        int
	HasG2     bool
	G2        int
	BlockSize int
	Replicas  int
	AttnDP    int
	MaxSeqs   int
	Budget    int
	PrefillMs float64
	DecodeMs  float64
	// Timing is timing.type; Model and Hardware the engine's names (as
	// written: they need not be in the catalog); Speedup the polynomial's
	// speedup_ratio; MemFraction the memory fraction of capacity type
	// default (0: fixed capacity).
	Timing          string
	Model, Hardware string
	Speedup         float64
	MemFraction     float64
	D2H, H2D        float64
	Source          Source
	// P/D (Mode disaggregated): the decode role's replicas, and the KV
	// transfer's bandwidth (0: untimed) and bytes per token (the prefill
	// role's unless kv_transfer gives its own).
	DecodeReplicas int
	KVBandwidth    float64
	KVBytes        int64
}

// PD tells whether the form is of a disaggregated config.
func (f Form) PD() bool { return f.Mode == config.ModeDisaggregated }

// Source describes the traffic for the trace picker.
type Source struct {
	Type           string // config.SourceTrace, SourceSyntheticSession, SourceSynthetic
	Path           string // trace path
	Format         string
	TraceBlockSize int
	LoadType       string
	Concurrency    int
	// synthetic-session
	Sessions, Turns, NewTokens, OutputTokens int
	DelayMs                                  float64
	// Agentic is the agentic load controls (agentic traces).
	Agentic Agentic
}

// Agentic is what the agentic load controls show: Lanes 0 is unset,
// Snapshot and Profile tell whether agentic_snapshot and agentic_profile
// are set.
type Agentic struct {
	Lanes          int
	Snapshot       bool
	Seed           uint64
	Warmup         bool
	Profile        bool
	ProfileSeconds float64
	// The profile's other keys, their defaults filled in (0 without a
	// profile).
	GraceSeconds, DrainSeconds, TreeIdleSeconds, GlobalIdleSeconds float64
}

// FormOf reads the form from a parsed config.
func FormOf(cfg *config.Config) Form {
	f := Form{Mode: cfg.Engine.Mode, Model: cfg.Engine.Model, Hardware: cfg.Engine.Hardware}
	roles := cfg.Roles()
	if len(roles) > 0 {
		r := roles[0]
		f.Routing = cfg.Engine.Routing.Policy(r.Name)
		f.G1 = r.KVCache.CapacityBlocks
		f.BlockSize = r.KVCache.BlockSize
		f.Replicas = r.Parallelism.Replicas
		f.AttnDP = r.Parallelism.AttentionData
		f.MaxSeqs = r.Scheduler.MaxSequences
		f.Budget = r.Scheduler.MaxBatchedTokens
		f.PrefillMs = float64(r.Timing.PrefillMs)
		f.DecodeMs = float64(r.Timing.DecodeMs)
		f.Timing = r.Timing.Type
		f.Speedup = r.Timing.SpeedupRatio
		f.MemFraction = r.KVCache.MemoryFraction
		if h := r.KVCache.HostOffload; h != nil {
			f.HasG2 = true
			f.G2 = h.NumHostBlocks
			f.Connector = h.Connector
			f.D2H, f.H2D = h.D2HBandwidthGBps, h.H2DBandwidthGBps
		}
	}
	if d := cfg.Engine.Workers.Decode; d != nil {
		f.DecodeReplicas = d.Parallelism.Replicas
	}
	if kt := cfg.Engine.KVTransfer; kt != nil {
		f.KVBandwidth, f.KVBytes = kt.BandwidthGBps, kt.BytesPerToken
	}
	s := cfg.Traffic.Source
	f.Source = Source{Type: s.Type, Format: s.Format, TraceBlockSize: s.BlockSize, LoadType: cfg.Traffic.Load.Type,
		Concurrency: cfg.Traffic.Load.Concurrency}
	if len(s.Paths) > 0 {
		f.Source.Path = s.Paths[0]
	}
	f.Source.Agentic = agenticOf(cfg.Traffic.Load)
	if s.Type == config.SourceSyntheticSession {
		f.Source.Sessions = cfg.Traffic.Stop.Sessions
		f.Source.Turns = s.Session.Turns
		f.Source.NewTokens = s.NewInputTokensPerTurn
		f.Source.OutputTokens = s.OutputTokensPerTurn
		f.Source.DelayMs = float64(s.Session.InterTurnDelayMs)
	}
	return f
}

// RolePaths are the YAML paths of the roles a control edits: every role
// the config has (the aggregated role when the config does not parse).
func RolePaths(cfg *config.Config) []string {
	if cfg == nil {
		return []string{"engine.workers.aggregated"}
	}
	var out []string
	for _, r := range cfg.Roles() {
		out = append(out, "engine.workers."+r.Name)
	}
	if len(out) == 0 {
		out = []string{"engine.workers.aggregated"}
	}
	return out
}

// rolePathsOf is RolePaths, reading the roles from the text when it does
// not parse as a config.
func rolePathsOf(cfg *config.Config, text string) []string {
	if cfg != nil {
		return RolePaths(cfg)
	}
	var out []string
	for _, r := range RolesInText(text) {
		out = append(out, "engine.workers."+r)
	}
	if len(out) == 0 {
		out = []string{"engine.workers.aggregated"}
	}
	return out
}

// roleField maps a control to its path below a role.
var roleField = map[Field]string{
	FConnector:   "kv_cache.host_offload.connector",
	FG2:          "kv_cache.host_offload.num_host_blocks",
	FBlockSize:   "kv_cache.block_size",
	FReplicas:    "parallelism.replicas",
	FAttnDP:      "parallelism.attention_data",
	FMaxSeqs:     "scheduler.max_sequences",
	FBudget:      "scheduler.max_batched_tokens",
	FPrefillMs:   "timing.prefill_ms",
	FDecodeMs:    "timing.decode_ms",
	FSpeedup:     "timing.speedup_ratio",
	FMemFraction: "kv_cache.capacity.memory_fraction",
	FD2H:         "kv_cache.host_offload.d2h_bandwidth_gbps",
	FH2D:         "kv_cache.host_offload.h2d_bandwidth_gbps",
}

// FieldOfPath names the control a config error path belongs to (NoField
// when no control shows it: the error goes next to the YAML view).
func FieldOfPath(path string) Field {
	switch {
	case path == "":
		return NoField
	case strings.HasSuffix(path, ".kv_cache.capacity.blocks"), strings.HasSuffix(path, ".kv_cache.capacity"),
		strings.HasSuffix(path, ".kv_cache.capacity.bytes"):
		return FG1
	case strings.HasSuffix(path, ".kv_cache.host_offload"):
		return FG2
	case strings.HasPrefix(path, "engine.kv_transfer"):
		return FKVBandwidth
	case path == "engine.workers.decode.parallelism.replicas":
		return FDecodeReplicas
	case path == "engine.mode", strings.HasPrefix(path, "engine.workers.prefill"), strings.HasPrefix(path, "engine.workers.decode"),
		path == "engine.workers.aggregated":
		if path == "engine.mode" || strings.Count(path, ".") <= 2 {
			return FPD
		}
	case path == "traffic.load.concurrency":
		return FConcurrency
	case strings.HasPrefix(path, "traffic.load.agentic_"):
		return agenticField(strings.TrimPrefix(path, "traffic.load."))
	case path == "engine.model", strings.HasPrefix(path, "engine.model_config"):
		return FModel
	case path == "engine.hardware":
		return FHardware
	case strings.HasSuffix(path, ".timing"), strings.HasSuffix(path, ".timing.type"), strings.HasSuffix(path, ".timing.beta"),
		strings.HasSuffix(path, ".timing.decode_speedup_ratio"):
		return FTiming
	case strings.HasSuffix(path, ".kv_cache.capacity.type"):
		return FMemFraction
	case strings.HasPrefix(path, "engine.routing"):
		return FRouting
	case strings.HasPrefix(path, "traffic"):
		return FTrace
	}
	for f, sub := range roleField {
		if strings.HasSuffix(path, "."+sub) {
			return f
		}
	}
	return NoField
}

// NumberText checks a control's input and writes it as YAML: whole
// numbers for integer controls, decimal numbers for the others. The range
// is left to the config parser, whose message the page then shows.
func NumberText(field Field, input string) (string, error) {
	in := strings.TrimSpace(strings.ReplaceAll(input, ",", ""))
	if field.Integer() {
		n, err := strconv.ParseInt(in, 10, 64)
		if err != nil {
			return "", fmt.Errorf("enter a whole number")
		}
		return strconv.FormatInt(n, 10), nil
	}
	x, err := strconv.ParseFloat(in, 64)
	if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
		return "", fmt.Errorf("enter a number")
	}
	return strconv.FormatFloat(x, 'f', -1, 64), nil
}

// Edit applies one control change to the YAML text. cfg is the config the
// text currently parses to (nil if it does not), last the last form that
// had a G2 tier (to restore it when "none" is unticked).
//
// In P/D mode the controls edit both roles, except Replicas (the prefill
// role) and Decode replicas; the P/D toggle (input "true" or "false")
// rewrites the roles (SetPD) with last.KVBandwidth, or DefaultKVBandwidth
// when it is 0.
func Edit(text string, cfg *config.Config, last Form, field Field, input string) (string, error) {
	roles := rolePathsOf(cfg, text)
	if field != FPD {
		// the controls edit each role; anchors and aliases between them
		// would make SetYAML refuse
		var err error
		if text, err = Unalias(text); err != nil {
			return "", err
		}
	}
	set := func(text, path, value string) (string, error) { return SetYAML(text, path, value) }
	var err error
	switch field {
	case FConnector:
		ok := false
		for _, c := range Connectors {
			ok = ok || c == input
		}
		if !ok {
			return "", fmt.Errorf("unknown connector %q", input)
		}
		for _, r := range roles {
			if text, err = set(text, r+"."+roleField[field], input); err != nil {
				return "", err
			}
		}
		return text, nil
	case FG2None:
		for _, r := range roles {
			if input == "true" {
				text, err = set(text, r+".kv_cache.host_offload", "null")
			} else {
				text, err = set(text, r+".kv_cache.host_offload", restoreG2(last))
			}
			if err != nil {
				return "", err
			}
		}
		return text, nil
	case FRouting:
		if !slices.Contains(RoutingPolicies, input) {
			return "", fmt.Errorf("unknown routing policy %q", input)
		}
		if input == config.RoutingRoundRobin {
			return set(text, "engine.routing", "null") // the default
		}
		return set(text, "engine.routing", input)
	case FPD:
		bw := last.KVBandwidth
		if bw <= 0 {
			bw = DefaultKVBandwidth
		}
		return SetPD(text, input == "true", bw)
	case FReplicas, FDecodeReplicas:
		v, err := NumberText(field, input)
		if err != nil {
			return "", err
		}
		path := roles[0]
		if field == FDecodeReplicas {
			path = "engine.workers." + config.RoleDecode
		}
		return set(text, path+".parallelism.replicas", v)
	case FKVBandwidth:
		in := strings.TrimSpace(input)
		if in == "" || in == "none" || in == "untimed" {
			return set(text, "engine.kv_transfer.bandwidth_gb_per_second", "null")
		}
		v, err := NumberText(field, input)
		if err != nil {
			return "", err
		}
		return set(text, "engine.kv_transfer.bandwidth_gb_per_second", v)
	case FConcurrency:
		v, err := NumberText(field, input)
		if err != nil {
			return "", err
		}
		return set(text, "traffic.load.concurrency", v)
	case FG1:
		v, err := NumberText(field, input)
		if err != nil {
			return "", err
		}
		for _, r := range roles {
			if cfg != nil && FormOf(cfg).MemFraction > 0 {
				// from memory back to a fixed number of blocks
				if text, err = set(text, r+".kv_cache.capacity", "{type: fixed, blocks: "+v+"}"); err != nil {
					return "", err
				}
				continue
			}
			if text, err = set(text, r+".kv_cache.capacity.bytes", "null"); err != nil {
				return "", err
			}
			if text, err = set(text, r+".kv_cache.capacity.blocks", v); err != nil {
				return "", err
			}
		}
		return text, nil
	case FTiming, FModel, FHardware, FMemFraction:
		return editTiming(text, cfg, roles, field, input)
	case FLanes, FSnapshotSeed, FWarmup, FProfileSeconds, FProfileGrace, FProfileDrain, FProfileTreeIdle, FProfileGlobalIdle:
		return editAgentic(text, cfg, field, input)
	}
	sub, ok := roleField[field]
	if !ok {
		return "", fmt.Errorf("unknown control %v", field)
	}
	v, err := NumberText(field, input)
	if err != nil {
		return "", err
	}
	for _, r := range roles {
		if text, err = set(text, r+"."+sub, v); err != nil {
			return "", err
		}
	}
	return text, nil
}

// restoreG2 is the host_offload a ticked-off "none" brings back.
func restoreG2(last Form) string {
	n, c := last.G2, last.Connector
	if n <= 0 {
		n = 192
	}
	if c == "" {
		c = config.ConnectorOffloadingV024
	}
	s := fmt.Sprintf("{num_host_blocks: %d, connector: %s", n, c)
	if last.HasG2 {
		s += fmt.Sprintf(", d2h_bandwidth_gbps: %s, h2d_bandwidth_gbps: %s",
			strconv.FormatFloat(last.D2H, 'f', -1, 64), strconv.FormatFloat(last.H2D, 'f', -1, 64))
	}
	return s + "}"
}

// Built-in traces and the traffic each one is run with.
var builtinTraffic = map[string]string{
	"delta-sessions.jsonl": "{source: {type: trace, format: mooncake-delta, paths: [delta-sessions.jsonl], block_size: 16}, load: {type: concurrency, concurrency: 4}}",
	"g2-restore.jsonl":     "{source: {type: trace, format: mooncake, paths: [g2-restore.jsonl], block_size: 4}, load: {type: trace_timestamps}}",
}

// BuiltinTraces lists the built-in traces with a short description.
var BuiltinTraces = []struct{ Name, Label string }{
	{"delta-sessions.jsonl", "§A: 8 sessions × 6 turns (mooncake-delta)"},
	{"g2-restore.jsonl", "§B: G2 restore, 4 requests (mooncake)"},
}

// IsBuiltinTrace tells whether name is a built-in trace.
func IsBuiltinTrace(name string) bool { _, ok := builtinTraffic[name]; return ok }

// UseBuiltin points the config at a built-in trace.
func UseBuiltin(text, name string) (string, error) {
	t, ok := builtinTraffic[name]
	if !ok {
		return "", fmt.Errorf("no built-in trace %q", name)
	}
	return SetYAML(text, "traffic", t)
}

// UseUpload points the config at an uploaded trace (its name must be a
// SafeName).
func UseUpload(text, name, format string, blockSize, concurrency int) (string, error) {
	if SafeName(name) != name {
		return "", fmt.Errorf("trace name %q needs quoting", name)
	}
	if !slices.Contains(UploadFormats, format) {
		return "", fmt.Errorf("unknown trace format %q", format)
	}
	block := fmt.Sprintf(", block_size: %d", blockSize)
	if format == config.FormatWeka && blockSize <= 0 {
		block = "" // the corpus's own block_size
	}
	load := fmt.Sprintf("{type: concurrency, concurrency: %d}", max(1, concurrency))
	if config.Agentic(format) {
		// agentic plays run on their own clocks (docs/model/agentic.md)
		load = "{type: trace_timestamps}"
	} else if kept, ok := keptLoad(text); ok {
		load = kept
	}
	return SetYAML(text, "traffic", fmt.Sprintf("{source: {type: trace, format: %s, paths: [%s]%s}, load: %s}",
		format, name, block, load))
}

// keptLoad is the load of the config text that an upload keeps: a trace's
// trace_timestamps load (with its speedup) or any concurrency load, unless
// the source was agentic (its load carries agentic controls).
func keptLoad(text string) (string, bool) {
	cfg, err := config.Parse("config.yaml", ".", []byte(text), nil)
	if err != nil || config.Agentic(cfg.Traffic.Source.Format) {
		return "", false
	}
	l := cfg.Traffic.Load
	switch {
	case l.Type == config.LoadConcurrency && l.Concurrency > 0:
		return fmt.Sprintf("{type: concurrency, concurrency: %d}", l.Concurrency), true
	case l.Type == config.LoadTraceTimestamps && cfg.Traffic.Source.Type == config.SourceTrace:
		if l.Speedup > 0 && l.Speedup != 1 {
			return fmt.Sprintf("{type: trace_timestamps, speedup: %s}", strconv.FormatFloat(l.Speedup, 'g', -1, 64)), true
		}
		return "{type: trace_timestamps}", true
	}
	return "", false
}

// UploadFormats lists the trace formats an upload can be read as, in the
// picker's order. A weka corpus embeds its block size: block size 0 takes
// it.
var UploadFormats = []string{config.FormatMooncakeDelta, config.FormatMooncake, config.FormatAgenticMooncake, config.FormatWeka}

// SessionSpec is the synthetic-session generator's form.
type SessionSpec struct {
	Sessions, Turns, NewTokens, OutputTokens, Concurrency int
	DelayMs                                               float64
}

// A GenField is one input of the synthetic-session generator.
type GenField int

// The generator's inputs.
const (
	GenSessions GenField = iota
	GenTurns
	GenNewTokens
	GenOutputTokens
	GenConcurrency
	GenDelayMs
)

// Set sets input g to n.
func (s *SessionSpec) Set(g GenField, n int) {
	switch g {
	case GenSessions:
		s.Sessions = n
	case GenTurns:
		s.Turns = n
	case GenNewTokens:
		s.NewTokens = n
	case GenOutputTokens:
		s.OutputTokens = n
	case GenConcurrency:
		s.Concurrency = n
	case GenDelayMs:
		s.DelayMs = float64(n)
	}
}

// DefaultSessions is the generator's starting point: the §A (docs/model/cases.md) shape scaled
// up to a workload that takes a noticeable time to run.
var DefaultSessions = SessionSpec{Sessions: 64, Turns: 6, NewTokens: 256, OutputTokens: 64, Concurrency: 4, DelayMs: 200}

// UseSessions points the config at generated synthetic sessions.
func UseSessions(text string, s SessionSpec) (string, error) {
	return SetYAML(text, "traffic", fmt.Sprintf("{source: {type: synthetic-session, new_input_tokens_per_turn: %d, output_tokens_per_turn: %d, session: {turns: %d, inter_turn_delay_ms: %s}}, load: {type: concurrency, concurrency: %d}, stop: {sessions: %d}}",
		s.NewTokens, s.OutputTokens, s.Turns, strconv.FormatFloat(s.DelayMs, 'f', -1, 64), s.Concurrency, s.Sessions))
}

// SafeName turns an uploaded file's name into a plain YAML scalar.
func SafeName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := b.String()
	if s == "" || s[0] == '.' || s[0] == '-' {
		s = "trace" + s
	}
	return s
}

// editTiming applies a change of the timing controls. A timing type
// replaces the roles' timing blocks: fixed brings back prefill_ms and
// decode_ms (the form's, or DefaultPrefillMs and DefaultDecodeMs), the
// modelled types take none; roofline and trained_physics also set the
// model and the GPU to the catalog's first when the config names one it
// does not know. A memory fraction turns G1 into capacity type default.
func editTiming(text string, cfg *config.Config, roles []string, field Field, input string) (string, error) {
	in := strings.TrimSpace(input)
	var f Form
	if cfg != nil {
		f = FormOf(cfg)
	}
	var err error
	switch field {
	case FModel, FHardware:
		names, key := ModelNames, "engine.model"
		if field == FHardware {
			names, key = GPUNames, "engine.hardware"
		}
		if !slices.Contains(names, in) {
			return "", fmt.Errorf("unknown %s %q (known: %s)", strings.TrimPrefix(key, "engine."), in, strings.Join(names, ", "))
		}
		return SetYAML(text, key, in)
	case FMemFraction:
		v, err := NumberText(field, input)
		if err != nil {
			return "", err
		}
		for _, r := range roles {
			if text, err = SetYAML(text, r+".kv_cache.capacity", "{type: default, memory_fraction: "+v+"}"); err != nil {
				return "", err
			}
		}
		return knownModelAndGPU(text, f)
	}
	if !slices.Contains(TimingTypes, in) {
		return "", fmt.Errorf("unknown timing type %q (known: %s)", in, strings.Join(TimingTypes, ", "))
	}
	block := "{type: " + in + "}"
	if !Modelled(in) {
		p, d := f.PrefillMs, f.DecodeMs
		if p <= 0 && d <= 0 {
			p, d = DefaultPrefillMs, DefaultDecodeMs
		}
		block = fmt.Sprintf("{type: fixed, prefill_ms: %s, decode_ms: %s}",
			strconv.FormatFloat(p, 'f', -1, 64), strconv.FormatFloat(d, 'f', -1, 64))
	}
	for _, r := range roles {
		if text, err = SetYAML(text, r+".timing", block); err != nil {
			return "", err
		}
	}
	if NeedsGPU(in) {
		return knownModelAndGPU(text, f)
	}
	return text, nil
}

// knownModelAndGPU sets engine.model and engine.hardware to the catalog's
// first entries when the form's are not in it (a model described by
// engine.model_config is kept).
func knownModelAndGPU(text string, f Form) (string, error) {
	var err error
	if _, ok := timing.LookupModel(f.Model); !ok && !strings.Contains(text, "model_config") {
		if text, err = SetYAML(text, "engine.model", ModelNames[0]); err != nil {
			return "", err
		}
	}
	if _, ok := timing.LookupGPU(f.Hardware); !ok {
		text, err = SetYAML(text, "engine.hardware", "H100")
	}
	return text, err
}

// The fixed pass times a switch back to fixed timing writes when the form
// has none.
const (
	DefaultPrefillMs = 20.0
	DefaultDecodeMs  = 5.0
)
