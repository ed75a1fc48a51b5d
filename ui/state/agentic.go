package state

import (
	"strings"

	"github.com/kvsim/kvsim/core/config"
)

// agenticOf reads the agentic load controls of a parsed load.
func agenticOf(l config.Load) Agentic {
	a := Agentic{Lanes: l.AgenticLanes, Warmup: l.AgenticWarmup}
	if s := l.AgenticSnapshot; s != nil {
		a.Snapshot, a.Seed = true, s.Seed
	}
	if p := l.AgenticProfile; p != nil {
		a.Profile, a.ProfileSeconds = true, p.DurationSeconds
		a.GraceSeconds, a.DrainSeconds, a.TreeIdleSeconds, a.GlobalIdleSeconds = p.ResponseGraceSeconds, p.CancelDrainSeconds,
			p.TreeIdleCapSeconds, p.GlobalIdleCapSeconds
	}
	return a
}

// ProfileKeys are the agentic_profile keys of the profile's controls
// other than its duration.
var ProfileKeys = map[Field]string{FProfileGrace: "response_grace_seconds", FProfileDrain: "cancel_drain_seconds",
	FProfileTreeIdle: "tree_idle_cap_seconds", FProfileGlobalIdle: "global_idle_cap_seconds"}

// ProfileDefaults are their defaults (aisimulate's; core/config).
var ProfileDefaults = map[Field]float64{FProfileGrace: 30, FProfileDrain: 10, FProfileTreeIdle: 300, FProfileGlobalIdle: 10}

// DrainHint is the cancel drain control's hint: the key is accepted and
// bounds nothing (docs/model/agentic.md, "Decision (cancel drain)").
const DrainHint = "accepted, not modelled: a cancel takes effect at once in virtual time, so no drain is waited for and this value changes no result"

// agenticField names the control of a path below traffic.load
// ("agentic_snapshot.seed").
func agenticField(sub string) Field {
	key, rest, _ := strings.Cut(sub, ".")
	if key == "agentic_profile" {
		pk, _, _ := strings.Cut(rest, ".")
		for f, k := range ProfileKeys {
			if k == pk {
				return f
			}
		}
	}
	switch key {
	case "agentic_lanes":
		return FLanes
	case "agentic_snapshot":
		return FSnapshotSeed
	case "agentic_warmup":
		return FWarmup
	case "agentic_profile":
		return FProfileSeconds
	}
	return FTrace
}

// editAgentic writes one agentic load control into traffic.load. An empty
// input removes the key (the warmup box: "false"); the values' ranges and
// the dependencies between the keys (a snapshot needs lanes, warmup and
// profile a snapshot) are the config parser's, whose positioned message
// the page shows next to the control.
func editAgentic(text string, cfg *config.Config, field Field, input string) (string, error) {
	const load = "traffic.load."
	in := strings.TrimSpace(input)
	switch field {
	case FWarmup:
		if in == "true" {
			return SetYAML(text, load+"agentic_warmup", "true")
		}
		return SetYAML(text, load+"agentic_warmup", "null")
	case FLanes:
		if in == "" {
			return SetYAML(text, load+"agentic_lanes", "null")
		}
		v, err := NumberText(field, in)
		if err != nil {
			return "", err
		}
		return SetYAML(text, load+"agentic_lanes", v)
	case FSnapshotSeed:
		if in == "" {
			return SetYAML(text, load+"agentic_snapshot", "null")
		}
		v, err := NumberText(field, in)
		if err != nil {
			return "", err
		}
		return SetYAML(text, load+"agentic_snapshot", "{seed: "+v+"}")
	}
	if k, ok := ProfileKeys[field]; ok {
		// within the profile; a key written without one turns it on
		// with its defaults, as the YAML would
		v := "null"
		if in != "" {
			var err error
			if v, err = NumberText(field, in); err != nil {
				return "", err
			}
		}
		return SetYAML(text, load+"agentic_profile."+k, v)
	}
	if in == "" {
		return SetYAML(text, load+"agentic_profile", "null")
	}
	v, err := NumberText(field, in)
	if err != nil {
		return "", err
	}
	if cfg != nil && cfg.Traffic.Load.AgenticProfile != nil {
		// keep the profile's other keys
		return SetYAML(text, load+"agentic_profile.duration_seconds", v)
	}
	return SetYAML(text, load+"agentic_profile", "{duration_seconds: "+v+"}")
}
