package main

import "github.com/kvsim/kvsim/ui/state"

// NumField is one numeric control of the config panel: a label, a text
// input, a unit, an optional hint under it and the CLI's error message
// for it. Its parent sets every
// field; the panel holds the value and the error.
type NumField struct {
	Panel       *ConfigPanel
	Field       state.Field
	Label       string
	Unit        string
	Placeholder string
	Hint        string
	Disabled    bool
}

func (c *NumField) class() string {
	if c.Panel.Err(c.Field) != "" {
		return "field bad"
	}
	return "field"
}
