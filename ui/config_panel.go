package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/ui/state"
)

// ConfigPanel is the left panel: the traces (TracePanel), the connector,
// the cache sizes, workers and timing, and the YAML view. The YAML text is
// the truth; Cfg is what it parses to (nil when it does not) and Form what
// the controls show. Every control is a state.Field; the panel keeps what
// each one shows while its value does not parse, and the CLI's error
// message next to the control it belongs to.
type ConfigPanel struct {
	page   *Root
	Traces *TracePanel

	Name string
	YAML string
	Cfg  *config.Config
	Form state.Form
	// YAMLErr is a config error with no control of its own.
	YAMLErr string

	lastG2 state.Form // the last form with a G2 tier, for unticking "none"
	lastKV float64    // the last P/D transfer bandwidth, for turning P/D on again
	errs   [state.NumFields]string
	shown  [state.NumFields]*string // what a control shows while its value does not parse
}

func newConfigPanel(page *Root) *ConfigPanel {
	c := &ConfigPanel{page: page, Name: "config.yaml"}
	c.Traces = newTracePanel(c)
	return c
}

// open adopts a link's config text and the uploaded trace it reads.
func (c *ConfigPanel) open(text string, upload *state.UploadRef) {
	c.Traces.restore(upload)
	c.setYAML(text, state.NoField)
}

// setYAML adopts new config text; field is the control that caused it
// (NoField for the YAML view or a whole-config change).
func (c *ConfigPanel) setYAML(text string, field state.Field) {
	c.YAML = text
	c.YAMLErr = ""
	c.errs = [state.NumFields]string{}
	cfg, err := config.Parse(c.Name, "", []byte(text), nil)
	if err != nil {
		c.Cfg = nil
		c.placeError(err, field)
	} else {
		c.Cfg = cfg
		c.Form = state.FormOf(cfg)
		if c.Form.HasG2 {
			c.lastG2 = c.Form
		}
		if c.Form.PD() && c.Form.KVBandwidth > 0 {
			c.lastKV = c.Form.KVBandwidth
		}
		c.shown = [state.NumFields]*string{}
		if p := c.Form.Source.Path; c.Form.Source.Type == config.SourceTrace && !state.IsBuiltinTrace(p) && c.Traces.Uploads[p] == nil &&
			p != state.MooncakeTrace {
			c.errs[state.FTrace] = fmt.Sprintf("%s is not a built-in trace and has not been uploaded", p)
		}
		c.Traces.needMooncake()
	}
	c.page.updateURL()
}

// placeError puts a parse error next to the control its path belongs to,
// or next to the YAML view.
func (c *ConfigPanel) placeError(err error, field state.Field) {
	var ce *config.Error
	if !errors.As(err, &ce) {
		c.YAMLErr = err.Error()
		return
	}
	f := state.FieldOfPath(ce.Path)
	switch {
	case f != state.NoField:
		c.errs[f] = ce.Error()
	case field != state.NoField && ce.Line == 0:
		c.errs[field] = ce.Error()
	default:
		c.YAMLErr = ce.Error()
	}
	// the control just changed made the config invalid elsewhere (P/D
	// with a mooncake-delta trace or a v0.32 connector): the message goes
	// next to it too
	if field != state.NoField && f != state.NoField && field != f {
		c.errs[field] = ce.Error()
	}
	if f == state.FTrace && strings.Contains(ce.Msg, "engine.mode") {
		c.errs[state.FPD] = ce.Error()
	}
}

// Err is the message next to control f ("" when it has none).
func (c *ConfigPanel) Err(f state.Field) string {
	if f < 0 || f >= state.NumFields {
		return ""
	}
	return state.Clip(c.errs[f], maxErrText)
}

// Invalid tells whether the panel holds anything that does not apply: a
// config that does not parse, or a control whose value was refused (the
// YAML then still holds the last good value, which Run must not run).
func (c *ConfigPanel) Invalid() bool { return c.FirstErr() != "" }

// FirstErr is the first message of the panel ("" when it has none): the
// YAML's, then the controls' in their order.
func (c *ConfigPanel) FirstErr() string {
	if c.YAMLErr != "" {
		return c.YAMLErr
	}
	for _, e := range c.errs {
		if e != "" {
			return e
		}
	}
	if c.Cfg == nil {
		return "the config does not parse"
	}
	return ""
}

// show keeps what control f shows until the config parses again.
func (c *ConfigPanel) show(f state.Field, value string) {
	value = state.Clip(value, maxShown)
	c.shown[f] = &value
}

// maxShown bounds what a control shows of a refused value (vugu sends it
// in one instruction of a 16 KB buffer; a longer one would end the page).
const maxShown = 1000

// Value is what control f shows.
func (c *ConfigPanel) Value(f state.Field) string {
	if f >= 0 && f < state.NumFields && c.shown[f] != nil {
		return *c.shown[f]
	}
	return formValue(c.Form, c.lastG2, f)
}

// formValue is what control f shows of a parsed form (last: the last form
// with a G2 tier, shown while there is none).
func formValue(f, last state.Form, field state.Field) string {
	num := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	switch field {
	case state.FG1:
		return strconv.Itoa(f.G1)
	case state.FG2:
		if !f.HasG2 {
			return strconv.Itoa(last.G2)
		}
		return strconv.Itoa(f.G2)
	case state.FBlockSize:
		return strconv.Itoa(f.BlockSize)
	case state.FReplicas:
		return strconv.Itoa(f.Replicas)
	case state.FDecodeReplicas:
		return strconv.Itoa(f.DecodeReplicas)
	case state.FKVBandwidth:
		if f.KVBandwidth <= 0 {
			return ""
		}
		return num(f.KVBandwidth)
	case state.FPD:
		return strconv.FormatBool(f.PD())
	case state.FAttnDP:
		return strconv.Itoa(f.AttnDP)
	case state.FMaxSeqs:
		return strconv.Itoa(f.MaxSeqs)
	case state.FBudget:
		return strconv.Itoa(f.Budget)
	case state.FPrefillMs:
		return num(f.PrefillMs)
	case state.FDecodeMs:
		return num(f.DecodeMs)
	case state.FTiming:
		return f.Timing
	case state.FModel:
		return f.Model
	case state.FHardware:
		return f.Hardware
	case state.FSpeedup:
		return num(f.Speedup)
	case state.FMemFraction:
		if f.MemFraction <= 0 {
			return ""
		}
		return num(f.MemFraction)
	case state.FD2H:
		return num(f.D2H)
	case state.FH2D:
		return num(f.H2D)
	case state.FConnector:
		if !f.HasG2 {
			return last.Connector
		}
		return f.Connector
	case state.FLanes, state.FSnapshotSeed, state.FWarmup, state.FProfileSeconds, state.FProfileGrace, state.FProfileDrain,
		state.FProfileTreeIdle, state.FProfileGlobalIdle:
		return agenticValue(f.Source.Agentic, field)
	case state.FConcurrency:
		if f.Source.LoadType != config.LoadConcurrency {
			return ""
		}
		return strconv.Itoa(f.Source.Concurrency)
	}
	return ""
}

// OnField handles a control change.
func (c *ConfigPanel) OnField(f state.Field, value string) {
	defer c.page.guard()
	if f <= state.NoField || f >= state.NumFields {
		return
	}
	last := c.lastG2
	last.KVBandwidth = c.lastKV
	next, err := state.Edit(c.YAML, c.Cfg, last, f, value)
	if err != nil {
		c.errs[f] = err.Error()
		c.show(f, value)
		return
	}
	c.setYAML(next, f)
	if c.Cfg != nil {
		return
	}
	c.show(f, value)
	if f == state.FPD && value == "true" {
		// the form is the last parsed (aggregated) one: show what the
		// toggle wrote
		bw := last.KVBandwidth
		if bw <= 0 {
			bw = state.DefaultKVBandwidth
		}
		c.show(state.FReplicas, "1")
		c.show(state.FDecodeReplicas, "1")
		c.show(state.FKVBandwidth, strconv.FormatFloat(bw, 'f', -1, 64))
	}
}

// Typing keeps what a control shows while the user types (a render in
// between must not overwrite it); OnField commits it.
func (c *ConfigPanel) Typing(f state.Field, value string) {
	if f > state.NoField && f < state.NumFields {
		c.show(f, value)
	}
}

// OnYAML handles an edit in the YAML view.
func (c *ConfigPanel) OnYAML(text string) {
	defer c.page.guard()
	if text == c.YAML {
		return
	}
	c.setYAML(text, state.NoField)
}

// PDOn tells whether the P/D toggle is on (as last edited, even when the
// config it made does not parse).
func (c *ConfigPanel) PDOn() bool { return c.Value(state.FPD) == "true" }

// PDNote explains the P/D toggle's state.
func (c *ConfigPanel) PDNote() string {
	if !c.PDOn() {
		return "split each request: prefill on one worker, then the KV cache moves to a decode worker"
	}
	if c.Cfg == nil || !c.Form.PD() {
		return "a prefill and a decode role, each a copy of the controls"
	}
	if c.Form.KVBytes > 0 {
		return fmt.Sprintf("a prefill and a decode role, each a copy of the controls; the transfer moves %s bytes per token (the prefill role's bytes_per_token)",
			state.Thousands(c.Form.KVBytes))
	}
	return "a prefill and a decode role, each a copy of the controls; no bytes_per_token, so the transfer is untimed"
}

// DownloadConfig offers the YAML as a file the CLI reads.
func (c *ConfigPanel) DownloadConfig() { c.page.host.Download("config.yaml", c.YAML) }

// ConnectorOn tells whether connector k's radio is on: the connector last
// chosen, even while the config it made does not parse (P/D with a
// mooncake-delta trace), so the radios follow every click.
func (c *ConfigPanel) ConnectorOn(k string) bool {
	return c.Form.HasG2 && c.Value(state.FConnector) == k
}

func (c *ConfigPanel) radioClass(k string) string {
	if c.ConnectorOn(k) {
		return "on"
	}
	return ""
}

func (c *ConfigPanel) routingClass(k string) string {
	if c.Form.Routing == k {
		return "on"
	}
	return ""
}

func (c *ConfigPanel) replicasLabel() string {
	if c.PDOn() {
		return "Prefill replicas"
	}
	return "Replicas"
}

// agenticValue is what an agentic load control shows ("" for an unset
// key).
func agenticValue(a state.Agentic, field state.Field) string {
	switch {
	case field == state.FWarmup:
		return strconv.FormatBool(a.Warmup)
	case field == state.FLanes && a.Lanes > 0:
		return strconv.Itoa(a.Lanes)
	case field == state.FSnapshotSeed && a.Snapshot:
		return strconv.FormatUint(a.Seed, 10)
	case field == state.FProfileSeconds && a.Profile:
		return strconv.FormatFloat(a.ProfileSeconds, 'f', -1, 64)
	case !a.Profile:
		return ""
	case field == state.FProfileGrace:
		return strconv.FormatFloat(a.GraceSeconds, 'f', -1, 64)
	case field == state.FProfileDrain:
		return strconv.FormatFloat(a.DrainSeconds, 'f', -1, 64)
	case field == state.FProfileTreeIdle:
		return strconv.FormatFloat(a.TreeIdleSeconds, 'f', -1, 64)
	case field == state.FProfileGlobalIdle:
		return strconv.FormatFloat(a.GlobalIdleSeconds, 'f', -1, 64)
	}
	return ""
}
