package config

import (
	"fmt"
	"math"
	"slices"

	"github.com/goccy/go-yaml/ast"

	"github.com/kvsim/kvsim/core/vtime"
)

// Keys of traffic.source, traffic.load and traffic.stop, in the order the
// unknown-key error lists them, and the subsets that apply per type.
var (
	sourceKeys    = []string{"type", "input_tokens", "output_tokens", "cached_prefix_tokens", "new_input_tokens_per_turn", "output_tokens_per_turn", "session", "paths", "format", "block_size", "nested_timestamp_basis"}
	sourceKeysFor = map[string][]string{
		SourceSynthetic:        {"type", "input_tokens", "output_tokens", "cached_prefix_tokens"},
		SourceSyntheticSession: {"type", "new_input_tokens_per_turn", "output_tokens_per_turn", "session"},
		SourceTrace:            {"type", "paths", "format", "block_size", "nested_timestamp_basis"},
	}
	sessionKeys = []string{"turns", "shared_prefix_ratio", "prefix_groups", "inter_turn_delay_ms"}

	agenticKeys = []string{"agentic_lanes", "agentic_snapshot", "agentic_warmup", "agentic_profile"}
	loadKeys    = append([]string{"type", "concurrency", "requests_per_second", "sessions_per_second", "seed", "speedup"}, agenticKeys...)
	loadKeysFor = map[string][]string{
		LoadConcurrency:     {"type", "concurrency"},
		LoadPoisson:         {"type", "requests_per_second", "sessions_per_second", "seed"},
		LoadConstantRate:    {"type", "requests_per_second", "sessions_per_second"},
		LoadTraceTimestamps: append([]string{"type", "speedup"}, agenticKeys...),
	}
	profileKeys = []string{"duration_seconds", "response_grace_seconds", "cancel_drain_seconds", "tree_idle_cap_seconds", "global_idle_cap_seconds"}

	stopKeys = []string{"requests", "requests_per_load_unit", "sessions", "sessions_per_load_unit", "max_virtual_time_seconds"}

	// Trace formats aisimulate reads but kvsim does not
	// (docs/model/config.md ("Traffic settings")); named so that the error
	// says "not supported" rather than "unknown".
	unsupportedFormats = []string{"dynamo", "applied_compute_agentic"}
)

// defaultTraffic is what an omitted traffic block means
// (docs/model/config.md ("Traffic settings")). A supplied traffic block is
// decoded on its own, never merged with this.
func defaultTraffic() Traffic {
	return Traffic{
		Source: Source{Type: SourceSynthetic, InputTokens: 1024, OutputTokens: 128},
		Load:   Load{Type: LoadConcurrency, Concurrency: 10, Speedup: 1},
		Stop:   Stop{Requests: 100},
	}
}

// traffic decodes a supplied traffic block. source and load are required
// there, stop is optional: as in aisimulate's TrafficPredictionConfig
// (python/aisimulate/src/aisimulate/config/traffic.py).
func (d *decoder) traffic(t *mapping) Traffic {
	var tr Traffic
	tr.Source = d.source(d.mapping(t.require("source"), t.field("source"), sourceKeys...))
	tr.Load = d.load(d.mapping(t.require("load"), t.field("load"), loadKeys...), tr.Source)
	stop, _ := t.get("stop")
	tr.Stop = d.stop(d.mapping(stop, t.field("stop"), stopKeys...), tr.Source, tr.Load)
	return tr
}

func (d *decoder) source(m *mapping) Source {
	var s Source
	s.Type = m.enum("type", SourceSynthetic, SourceSynthetic, SourceSyntheticSession, SourceTrace)
	m.only(sourceKeysFor[s.Type], func(k string) string {
		if k == "session" && s.Type == SourceSynthetic {
			return "rejected for source type synthetic: a session mapping applies only to synthetic-session"
		}
		return "does not apply to source type " + s.Type
	})
	switch s.Type {
	case SourceSynthetic:
		s.InputTokens = m.int("input_tokens", 1024, positiveInt)
		s.OutputTokens = m.int("output_tokens", 128, positiveInt)
		s.CachedPrefixTokens = m.int("cached_prefix_tokens", 0, nonNegInt)
		if s.CachedPrefixTokens > s.InputTokens {
			m.fail("cached_prefix_tokens", "must not exceed input_tokens (%d), got %d", s.InputTokens, s.CachedPrefixTokens)
		}
	case SourceSyntheticSession:
		s.NewInputTokensPerTurn = m.int("new_input_tokens_per_turn", 1024, positiveInt)
		s.OutputTokensPerTurn = m.int("output_tokens_per_turn", 128, positiveInt)
		if !m.has("session") {
			m.fail("session", "a session mapping is required for source type synthetic-session")
		}
		sm := m.sub("session", sessionKeys...)
		s.Session = Session{
			Turns:             sm.int("turns", 4, atLeastTwo),
			SharedPrefixRatio: sm.float("shared_prefix_ratio", 0, ratioNum),
			PrefixGroups:      sm.int("prefix_groups", 0, nonNegInt),
			InterTurnDelayMs:  sm.ms("inter_turn_delay_ms", 0, nonNegNum),
		}
		if s.Session.SharedPrefixRatio > 0 && s.Session.PrefixGroups == 0 {
			sm.fail("prefix_groups", "must be positive when shared_prefix_ratio is positive")
		}
	case SourceTrace:
		s.Paths = d.paths(m.require("paths"), m.field("paths"))
		s.Format = m.str("format", FormatMooncake)
		switch {
		case s.Format == FormatMooncake, s.Format == FormatMooncakeDelta, s.Format == FormatAgenticMooncake, s.Format == FormatWeka:
		case slices.Contains(unsupportedFormats, s.Format):
			m.fail("format", "trace format %s is not supported (supported: mooncake, mooncake-delta, agentic_mooncake, weka)", s.Format)
		default:
			m.fail("format", "expected one of mooncake, mooncake-delta, agentic_mooncake, weka, got %q", s.Format)
		}
		if s.Format == FormatWeka {
			// The corpus embeds its block size; a configured one is an
			// equality assertion (docs/model/agentic.md ("Weka traces")).
			s.BlockSize = m.int("block_size", 0, positiveInt)
			s.NestedTimestampBasis = m.enum("nested_timestamp_basis", "auto", "auto", "absolute", "relative")
		} else {
			if m.has("nested_timestamp_basis") {
				m.fail("nested_timestamp_basis", "applies only to the weka format")
			}
			s.BlockSize = m.int("block_size", 512, positiveInt)
		}
	}
	return s
}

// paths reads traffic.source.paths: a list of exactly one nonempty path
// (aisimulate allows several only for the dynamo format).
func (d *decoder) paths(v ast.Node, path string) []string {
	seq, ok := v.(*ast.SequenceNode)
	if !ok {
		d.failNode(v, path, "expected a list with one path, got %s", describe(v))
	}
	if len(seq.Values) != 1 {
		d.failNode(v, path, "expected exactly one path, got %d", len(seq.Values))
	}
	p := d.stringValue(d.resolve(seq.Values[0], path), path, "a path string")
	if p == "" {
		d.failNode(seq.Values[0], path, "expected a nonempty path")
	}
	d.nodes[path+"[0]"] = seq.Values[0]
	return []string{p}
}

func (d *decoder) load(m *mapping, src Source) Load {
	var l Load
	l.Type = m.enum("type", LoadConcurrency, LoadConcurrency, LoadPoisson, LoadConstantRate, LoadTraceTimestamps)
	m.only(loadKeysFor[l.Type], func(k string) string {
		switch {
		case k == "speedup" && l.Type == LoadConcurrency:
			return "rejected with load type concurrency: concurrency replaces the authored arrival pacing (speedup applies to trace_timestamps)"
		case k == "seed":
			return "applies only to load type poisson, not " + l.Type
		}
		return "does not apply to load type " + l.Type
	})
	synthetic := src.Type != SourceTrace
	switch {
	case synthetic && l.Type == LoadTraceTimestamps:
		m.fail("type", "trace_timestamps needs a trace source; a %s source takes concurrency, poisson or constant_rate", src.Type)
	case !synthetic && (l.Type == LoadPoisson || l.Type == LoadConstantRate):
		m.fail("type", "a trace source takes load type trace_timestamps or concurrency, got %s", l.Type)
	case Agentic(src.Format) && l.Type != LoadTraceTimestamps:
		m.fail("type", "%s traces require load type trace_timestamps", src.Format)
	}

	switch l.Type {
	case LoadConcurrency:
		l.Concurrency = m.int("concurrency", 10, positiveInt)
	case LoadPoisson, LoadConstantRate:
		rate, other := "requests_per_second", "sessions_per_second"
		if src.Type == SourceSyntheticSession {
			rate, other = other, rate
		}
		if m.has(other) {
			m.fail(other, "does not apply to a %s source; use %s", src.Type, rate)
		}
		if !m.has(rate) {
			m.fail(rate, "missing required key: load type %s with a %s source needs it", l.Type, src.Type)
		}
		if src.Type == SourceSyntheticSession {
			l.SessionsPerSecond = m.float(rate, 0, positiveNum)
		} else {
			l.RequestsPerSecond = m.float(rate, 0, positiveNum)
		}
		if l.Type == LoadPoisson {
			l.Seed = m.int64Of("seed", 42, nonNegInt)
		}
	}
	l.Speedup = m.float("speedup", 1, positiveNum)
	d.agentic(m, src, &l)
	return l
}

// agentic decodes the agentic load controls (docs/model/agentic.md; keys,
// defaults and dependencies as aisimulate's workloads documentation gives
// them); only agentic_mooncake is an agentic format here.
func (d *decoder) agentic(m *mapping, src Source, l *Load) {
	for _, k := range m.keys {
		if m.has(k) && slices.Contains(agenticKeys, k) && !Agentic(src.Format) {
			m.fail(k, "requires an agentic trace (agentic_mooncake or weka)")
		}
	}
	l.AgenticLanes = m.int("agentic_lanes", 0, positiveInt)
	if m.has("agentic_snapshot") {
		if l.AgenticLanes == 0 {
			m.fail("agentic_snapshot", "requires agentic_lanes")
		}
		sm := m.sub("agentic_snapshot", "seed")
		sm.require("seed")
		l.AgenticSnapshot = &AgenticSnapshot{Seed: sm.uint64Of("seed", 0)}
	}
	l.AgenticWarmup = m.boolean("agentic_warmup", false)
	if l.AgenticWarmup && l.AgenticSnapshot == nil {
		m.fail("agentic_warmup", "true requires agentic_snapshot")
	}
	if m.has("agentic_profile") { // {} enables it with every default
		if l.AgenticSnapshot == nil {
			m.fail("agentic_profile", "requires agentic_snapshot")
		}
		pm := m.sub("agentic_profile", profileKeys...)
		l.AgenticProfile = &AgenticProfile{
			DurationSeconds:      pm.float("duration_seconds", 3600, positiveNum),
			ResponseGraceSeconds: pm.float("response_grace_seconds", 30, nonNegNum),
			CancelDrainSeconds:   pm.float("cancel_drain_seconds", 10, nonNegNum),
			TreeIdleCapSeconds:   pm.float("tree_idle_cap_seconds", 300, positiveNum),
			GlobalIdleCapSeconds: pm.float("global_idle_cap_seconds", 10, positiveNum),
		}
	}
}

// maxResolvedCount bounds a count resolved from *_per_load_unit so that
// the float→int conversion is exact.
const maxResolvedCount = 1 << 53

func (d *decoder) stop(m *mapping, src Source, l Load) Stop {
	var s Stop
	if src.Type == SourceTrace {
		m.only([]string{"max_virtual_time_seconds"}, func(string) string {
			return "applies only to synthetic sources; a trace runs until max_virtual_time_seconds or to its end"
		})
		if m.has("max_virtual_time_seconds") {
			if Agentic(src.Format) {
				m.fail("max_virtual_time_seconds", "not supported with %s traces", src.Format)
			}
			s.MaxVirtualTimeMs = vtime.Time(m.float("max_virtual_time_seconds", 0, positiveNum) * 1000)
			s.HasMaxVirtualTime = true
		}
		return s
	}

	count := "requests"
	if src.Type == SourceSyntheticSession {
		count = "sessions"
	}
	perUnit := count + "_per_load_unit"
	m.only([]string{count, perUnit}, func(k string) string {
		if k == "max_virtual_time_seconds" {
			return "applies only to trace sources"
		}
		return fmt.Sprintf("does not apply to source type %s (use %s or %s)", src.Type, count, perUnit)
	})
	var n int
	switch {
	case m.has(count) && m.has(perUnit):
		m.fail(perUnit, "give only one of %s and %s", count, perUnit)
	case m.has(count):
		n = m.int(count, 0, positiveInt)
	case m.has(perUnit):
		x := m.float(perUnit, 0, positiveNum)
		// Python's round(), as aisimulate resolves it: half to even
		// (docs/model/config.md ("Traffic settings")).
		r := max(1, math.RoundToEven(x*loadUnit(l)))
		if r > maxResolvedCount {
			m.fail(perUnit, "resolves to %g %s, more than %d", r, count, maxResolvedCount)
		}
		n = int(r)
	default:
		m.fail(count, "a %s source needs stop.%s or stop.%s", src.Type, count, perUnit)
	}
	if count == "requests" {
		s.Requests = n
	} else {
		s.Sessions = n
	}
	return s
}

// loadUnit is what *_per_load_unit multiplies: the concurrency for closed
// loop, the per-second rate for open loop.
func loadUnit(l Load) float64 {
	switch l.Type {
	case LoadConcurrency:
		return float64(l.Concurrency)
	case LoadPoisson, LoadConstantRate:
		return l.RequestsPerSecond + l.SessionsPerSecond // one of them is 0
	}
	return 0
}
