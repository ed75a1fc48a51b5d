package state

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/traces"
)

func builtin(t *testing.T, name string) string {
	t.Helper()
	b, err := traces.Read(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestUnaliasKeepsConfig: expanding aliases changes no built-in config,
// and leaves no anchor or alias in the P/D examples.
func TestUnaliasKeepsConfig(t *testing.T) {
	for _, name := range traces.Names() {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		text := builtin(t, name)
		u, err := Unalias(text)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(mustParse(t, text), mustParse(t, u)) {
			t.Errorf("%s: the expanded text parses to another config:\n%s", name, u)
		}
		if strings.HasSuffix(name, "-pd.yaml") && (strings.Contains(u, "&role") || strings.Contains(u, "*role")) {
			t.Errorf("%s: anchors left:\n%s", name, u)
		}
	}
	// an anchor that another alias still uses stays
	text := "a: &x {k: 1}\nb:\n  c: &y\n    k: 2\n  d: *y\ne: [*x]\n"
	u, err := Unalias(text)
	if err != nil || !strings.Contains(u, "&x") || strings.Contains(u, "&y") || !strings.Contains(u, "  d:\n    k: 2\n") {
		t.Errorf("Unalias: %v\n%s", err, u)
	}
}

// TestPDToggle turns §B into P/D and back with the toggle.
func TestPDToggle(t *testing.T) {
	text := builtin(t, "g2-restore.yaml")
	agg := mustParse(t, text)
	on, err := Edit(text, agg, FormOf(agg), FPD, "true")
	if err != nil {
		t.Fatal(err)
	}
	cfg := mustParse(t, on)
	f := FormOf(cfg)
	if !f.PD() || f.Replicas != 1 || f.DecodeReplicas != 1 || f.KVBandwidth != DefaultKVBandwidth || f.KVBytes != 250000 {
		t.Fatalf("P/D form %+v\n%s", f, on)
	}
	w := cfg.Engine.Workers
	for _, r := range []*config.Role{w.Prefill, w.Decode} {
		want := *agg.Engine.Workers.Aggregated
		want.Name = r.Name
		if !reflect.DeepEqual(*r, want) {
			t.Errorf("%s role %+v, want a copy of the aggregated role %+v", r.Name, *r, want)
		}
	}
	// P/D controls
	for _, s := range []struct {
		field Field
		input string
		check func(*config.Config) bool
	}{
		{FReplicas, "2", func(c *config.Config) bool {
			return c.Engine.Workers.Prefill.Parallelism.Replicas == 2 && c.Engine.Workers.Decode.Parallelism.Replicas == 1
		}},
		{FDecodeReplicas, "3", func(c *config.Config) bool {
			return c.Engine.Workers.Prefill.Parallelism.Replicas == 2 && c.Engine.Workers.Decode.Parallelism.Replicas == 3
		}},
		{FG1, "5", func(c *config.Config) bool {
			return c.Engine.Workers.Prefill.KVCache.CapacityBlocks == 5 && c.Engine.Workers.Decode.KVCache.CapacityBlocks == 5
		}},
		{FKVBandwidth, "0.5", func(c *config.Config) bool { return c.Engine.KVTransfer.BandwidthGBps == 0.5 }},
		{FKVBandwidth, "", func(c *config.Config) bool { return c.Engine.KVTransfer.BandwidthGBps == 0 }},
	} {
		next, err := Edit(on, cfg, FormOf(cfg), s.field, s.input)
		if err != nil {
			t.Fatalf("%s=%s: %v", s.field, s.input, err)
		}
		cfg = mustParse(t, next)
		if !s.check(cfg) {
			t.Fatalf("%s=%s:\n%s", s.field, s.input, next)
		}
		on = next
	}
	off, err := Edit(on, cfg, FormOf(cfg), FPD, "false")
	if err != nil {
		t.Fatal(err)
	}
	back := mustParse(t, off)
	if back.Engine.Mode != config.ModeAggregated || back.Engine.KVTransfer != nil || back.Engine.Workers.Decode != nil ||
		back.Engine.Workers.Aggregated.Parallelism.Replicas != 2 || back.Engine.Workers.Aggregated.KVCache.CapacityBlocks != 5 {
		t.Errorf("P/D off:\n%s", off)
	}
	// the last bandwidth comes back
	last := FormOf(cfg)
	last.KVBandwidth = 4
	again, err := Edit(off, back, last, FPD, "true")
	if err != nil || FormOf(mustParse(t, again)).KVBandwidth != 4 {
		t.Errorf("P/D on again: %v\n%s", err, again)
	}
}

// TestPDRejectsDelta: §A's mooncake-delta trace is aggregated only; the
// toggle writes the config and the validator's message names the trace
// (and, for a connector other than v0.24, the connector). Turning P/D off
// works on the text that does not parse.
func TestPDRejectsDelta(t *testing.T) {
	text := builtin(t, "connectors.yaml")
	cfg := mustParse(t, text)
	for conn, wantField := range map[string]Field{"offloading_v0_24": FTrace, "simple_cpu_v0_32": FConnector} {
		t1, err := Edit(text, cfg, FormOf(cfg), FConnector, conn)
		if err != nil {
			t.Fatal(err)
		}
		on, err := Edit(t1, mustParse(t, t1), FormOf(cfg), FPD, "true")
		if err != nil {
			t.Fatal(err)
		}
		_, perr := config.Parse("c.yaml", "", []byte(on), nil)
		var ce *config.Error
		if !errors.As(perr, &ce) || FieldOfPath(ce.Path) != wantField {
			t.Fatalf("%s + P/D: %v", conn, perr)
		}
		if conn == "offloading_v0_24" && !strings.Contains(ce.Msg, "mooncake-delta requires engine.mode aggregated") {
			t.Errorf("message %q", ce.Msg)
		}
		// the controls still find the roles, and P/D goes off again
		if got := RolesInText(on); !reflect.DeepEqual(got, []string{"prefill", "decode"}) {
			t.Errorf("roles %v", got)
		}
		off, err := Edit(on, nil, FormOf(cfg), FPD, "false")
		if err != nil {
			t.Fatal(err)
		}
		if c := mustParse(t, off); c.Engine.Mode != config.ModeAggregated {
			t.Errorf("off: %s", off)
		}
	}
}

// TestEditThroughAliases: a control edits the P/D example, whose decode
// role is an alias of the prefill role.
func TestEditThroughAliases(t *testing.T) {
	text := builtin(t, "g2-restore-pd.yaml")
	cfg := mustParse(t, text)
	next, err := Edit(text, cfg, FormOf(cfg), FMaxSeqs, "2")
	if err != nil {
		t.Fatal(err)
	}
	c := mustParse(t, next)
	if c.Engine.Workers.Prefill.Scheduler.MaxSequences != 2 || c.Engine.Workers.Decode.Scheduler.MaxSequences != 2 {
		t.Errorf("max sequences not set on both roles:\n%s", next)
	}
	if !strings.HasPrefix(next, "# Case B of docs/model/cases.md in P/D form") {
		t.Error("the comments went")
	}
}
