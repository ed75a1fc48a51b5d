package state

import (
	"errors"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/config"
)

// agenticText is an example config reading an uploaded agentic trace.
func agenticText(t *testing.T) string {
	t.Helper()
	text, err := UseUpload(ExampleByID("A192").YAML(), "ag.jsonl", config.FormatAgenticMooncake, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// TestAgenticControls: lanes, snapshot seed, warmup and profile duration
// are written through the YAML and read back by the form; empty inputs
// (unticked warmup) remove the keys again.
func TestAgenticControls(t *testing.T) {
	text := agenticText(t)
	for _, e := range []struct {
		f  Field
		in string
	}{{FLanes, "2"}, {FSnapshotSeed, "7"}, {FWarmup, "true"}, {FProfileSeconds, "5"}} {
		var err error
		if text, err = Edit(text, mustParse(t, text), Form{}, e.f, e.in); err != nil {
			t.Fatalf("%v=%s: %v", e.f, e.in, err)
		}
	}
	a := FormOf(mustParse(t, text)).Source.Agentic
	want := Agentic{Lanes: 2, Snapshot: true, Seed: 7, Warmup: true, Profile: true, ProfileSeconds: 5,
		GraceSeconds: 30, DrainSeconds: 10, TreeIdleSeconds: 300, GlobalIdleSeconds: 10}
	if a != want {
		t.Fatalf("form %+v, want %+v\n%s", a, want, text)
	}
	// a second duration keeps the profile's other keys
	text, _ = SetYAML(text, "traffic.load.agentic_profile.response_grace_seconds", "3")
	text, err := Edit(text, mustParse(t, text), Form{}, FProfileSeconds, "9")
	if err != nil {
		t.Fatal(err)
	}
	if p := mustParse(t, text).Traffic.Load.AgenticProfile; p.DurationSeconds != 9 || p.ResponseGraceSeconds != 3 {
		t.Errorf("profile %+v", p)
	}
	for _, e := range []struct {
		f  Field
		in string
	}{{FProfileSeconds, ""}, {FWarmup, "false"}, {FSnapshotSeed, ""}, {FLanes, ""}} {
		if text, err = Edit(text, mustParse(t, text), Form{}, e.f, e.in); err != nil {
			t.Fatalf("%v=%q: %v", e.f, e.in, err)
		}
	}
	if a := FormOf(mustParse(t, text)).Source.Agentic; a != (Agentic{}) {
		t.Errorf("cleared form %+v\n%s", a, text)
	}
}

// TestAgenticRefused: a value the config refuses gets the parser's
// positioned message, placed next to its control; one the control cannot
// read is refused before the YAML changes.
func TestAgenticRefused(t *testing.T) {
	base := agenticText(t)
	withSnap, _ := SetYAML(base, "traffic.load.agentic_lanes", "2")
	withSnap, _ = SetYAML(withSnap, "traffic.load.agentic_snapshot", "{seed: 1}")
	for _, c := range []struct {
		text string
		f    Field
		in   string
		msg  string
	}{
		{base, FWarmup, "true", "true requires agentic_snapshot"},
		{base, FSnapshotSeed, "3", "requires agentic_lanes"},
		{base, FProfileSeconds, "60", "requires agentic_snapshot"},
		{base, FLanes, "0", "agentic_lanes"},
		{withSnap, FSnapshotSeed, "-1", "seed"},
		{withSnap, FProfileSeconds, "0", "duration_seconds"},
	} {
		next, err := Edit(c.text, mustParse(t, c.text), Form{}, c.f, c.in)
		if err != nil {
			t.Fatalf("%v=%s: %v", c.f, c.in, err)
		}
		_, err = config.Parse("c.yaml", "", []byte(next), nil)
		var ce *config.Error
		if !errors.As(err, &ce) {
			t.Fatalf("%v=%s: parsed (%v)", c.f, c.in, err)
		}
		if got := FieldOfPath(ce.Path); got != c.f || ce.Line == 0 || !strings.Contains(ce.Error(), c.msg) {
			t.Errorf("%v=%s: %q at %s (line %d) goes to %v", c.f, c.in, ce.Error(), ce.Path, ce.Line, got)
		}
	}
	if _, err := Edit(withSnap, mustParse(t, withSnap), Form{}, FSnapshotSeed, "seven"); err == nil {
		t.Error("seed 'seven' accepted")
	}
}

// TestProfileKnobs: the profile's grace, drain and idle caps are written
// into agentic_profile through the YAML (keeping its duration), read back
// with their defaults, and removed again by an empty input; a refused
// value gets the parser's positioned message at its own control.
func TestProfileKnobs(t *testing.T) {
	text := agenticText(t)
	for _, e := range []struct {
		f  Field
		in string
	}{{FLanes, "1"}, {FSnapshotSeed, "3"}, {FProfileSeconds, "60"}} {
		var err error
		if text, err = Edit(text, mustParse(t, text), Form{}, e.f, e.in); err != nil {
			t.Fatal(err)
		}
	}
	a := FormOf(mustParse(t, text)).Source.Agentic
	if a.GraceSeconds != 30 || a.DrainSeconds != 10 || a.TreeIdleSeconds != 300 || a.GlobalIdleSeconds != 10 {
		t.Errorf("defaults %+v", a)
	}
	for f, in := range map[Field]string{FProfileGrace: "0", FProfileDrain: "2.5", FProfileTreeIdle: "1,200", FProfileGlobalIdle: "7"} {
		var err error
		if text, err = Edit(text, mustParse(t, text), Form{}, f, in); err != nil {
			t.Fatalf("%v=%s: %v", f, in, err)
		}
	}
	p := mustParse(t, text).Traffic.Load.AgenticProfile
	if want := (config.AgenticProfile{DurationSeconds: 60, ResponseGraceSeconds: 0, CancelDrainSeconds: 2.5, TreeIdleCapSeconds: 1200,
		GlobalIdleCapSeconds: 7}); *p != want {
		t.Errorf("profile %+v, want %+v\n%s", *p, want, text)
	}
	if a := FormOf(mustParse(t, text)).Source.Agentic; a.GraceSeconds != 0 || a.DrainSeconds != 2.5 || a.TreeIdleSeconds != 1200 || a.GlobalIdleSeconds != 7 {
		t.Errorf("form %+v", a)
	}
	for f := range ProfileKeys {
		var err error
		if text, err = Edit(text, mustParse(t, text), Form{}, f, ""); err != nil {
			t.Fatal(err)
		}
	}
	if p := mustParse(t, text).Traffic.Load.AgenticProfile; *p != (config.AgenticProfile{DurationSeconds: 60, ResponseGraceSeconds: 30,
		CancelDrainSeconds: 10, TreeIdleCapSeconds: 300, GlobalIdleCapSeconds: 10}) {
		t.Errorf("cleared profile %+v\n%s", *p, text)
	}
	for _, c := range []struct {
		f   Field
		in  string
		msg string
	}{{FProfileGrace, "-1", "response_grace_seconds"}, {FProfileDrain, "-0.5", "cancel_drain_seconds"},
		{FProfileTreeIdle, "0", "tree_idle_cap_seconds"}, {FProfileGlobalIdle, "0", "global_idle_cap_seconds"}} {
		next, err := Edit(text, mustParse(t, text), Form{}, c.f, c.in)
		if err != nil {
			t.Fatalf("%v=%s: %v", c.f, c.in, err)
		}
		_, err = config.Parse("c.yaml", "", []byte(next), nil)
		var ce *config.Error
		if !errors.As(err, &ce) {
			t.Fatalf("%v=%s: parsed (%v)", c.f, c.in, err)
		}
		if got := FieldOfPath(ce.Path); got != c.f || ce.Line == 0 || !strings.Contains(ce.Error(), c.msg) {
			t.Errorf("%v=%s: %q at %s (line %d) goes to %v", c.f, c.in, ce.Error(), ce.Path, ce.Line, got)
		}
	}
	if _, err := Edit(text, mustParse(t, text), Form{}, FProfileDrain, "ten"); err == nil {
		t.Error("drain 'ten' accepted")
	}
}
