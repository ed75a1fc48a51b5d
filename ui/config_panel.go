package main

import (
	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/ui/state"
)

// ConfigPanel is the left panel: trace, connector, cache sizes, workers,
// timing and the YAML view.
type ConfigPanel struct {
	App *App
}

func (c *ConfigPanel) radioClass(k string) string {
	if c.App.Form.HasG2 && c.App.Form.Connector == k {
		return "on"
	}
	return ""
}

func (c *ConfigPanel) replicasLabel() string {
	if c.App.PDOn() {
		return "Prefill replicas"
	}
	return "Replicas"
}

func (c *ConfigPanel) boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// missingTrace names a trace path the config reads that the picker does
// not offer.
func (c *ConfigPanel) missingTrace() string {
	f := c.App.Form
	if c.App.ShowGen || f.Source.Type != config.SourceTrace {
		return ""
	}
	if state.IsBuiltinTrace(f.Source.Path) || c.App.Uploads[f.Source.Path] != nil {
		return ""
	}
	return f.Source.Path
}
