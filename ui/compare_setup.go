package main

import (
	"slices"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/ui/state"
	"github.com/kvsim/kvsim/wasm/proto"
)

// CompareSetup is the compare mode: off (Set nil), or two or three runs of
// the same config that vary the connector profile or the G2 size. It
// shows only in compare mode; the run bar's toggle switches it.
type CompareSetup struct {
	page *Root
	// Set is the compare set-up (nil: one run).
	Set *state.Compare
	// G2Text is the G2-size input ("192, 2048, none").
	G2Text string
	Err    string
}

// Toggle switches compare mode.
func (c *CompareSetup) Toggle() {
	defer c.page.guard()
	if c.Set != nil {
		c.Set = nil
	} else {
		d := state.DefaultCompare()
		c.Set = &d
	}
	c.Err = ""
	c.page.updateURL()
}

// SetAxis switches the compare axis.
func (c *CompareSetup) SetAxis(axis string) {
	defer c.page.guard()
	if c.Set == nil {
		return
	}
	switch axis {
	case state.AxisG2:
		c.SetG2(c.G2Text)
	case state.AxisRouting:
		d := state.DefaultRoutingCompare()
		c.Set = &d
		c.Err = ""
	default:
		d := state.DefaultCompare()
		c.Set = &d
		c.Err = ""
	}
	c.page.updateURL()
}

// SetConnector adds or removes a connector from the compare set.
func (c *CompareSetup) SetConnector(conn string, on bool) {
	defer c.page.guard()
	if c.Set == nil || c.Set.Axis != state.AxisConnector {
		return
	}
	var vals []string
	for _, k := range state.Connectors {
		if (k == conn && on) || (k != conn && c.Has(k)) {
			vals = append(vals, k)
		}
	}
	c.Set.Values = vals
	c.Err = ""
	if err := c.Set.Check(); err != nil {
		c.Err = err.Error()
	}
	c.page.updateURL()
}

// SetRouting adds or removes a routing policy from the compare set.
func (c *CompareSetup) SetRouting(policy string, on bool) {
	defer c.page.guard()
	if c.Set == nil || c.Set.Axis != state.AxisRouting {
		return
	}
	var vals []string
	for _, k := range state.RoutingPolicies {
		if (k == policy && on) || (k != policy && c.Has(k)) {
			vals = append(vals, k)
		}
	}
	c.Set.Values = vals
	c.Err = ""
	if err := c.Set.Check(); err != nil {
		c.Err = err.Error()
	}
	c.page.updateURL()
}

// Has tells whether a connector (or routing policy) is in the compare set.
func (c *CompareSetup) Has(conn string) bool {
	return c.Set != nil && slices.Contains(c.Set.Values, conn)
}

// SetG2 sets the G2 sizes to compare ("192, 2048, none").
func (c *CompareSetup) SetG2(text string) {
	defer c.page.guard()
	c.G2Text = text
	s, err := state.ParseCompare(state.AxisG2 + ":" + text)
	if err != nil {
		c.Err = err.Error()
		c.Set = &state.Compare{Axis: state.AxisG2}
		return
	}
	c.Err = ""
	c.Set = &s
	c.page.updateURL()
}

// variants are the runs of a job on cfg: the compared ones, or the one
// run labelled single. A set-up that does not check keeps its message and
// gives none.
func (c *CompareSetup) variants(cfg *config.Config, single string) []proto.Variant {
	if c.Set == nil {
		return []proto.Variant{{Label: single, Sets: []string{}}}
	}
	if err := c.Set.Check(); err != nil {
		c.Err = err.Error()
		return nil
	}
	if c.Problem() != "" {
		return nil
	}
	return c.Set.Variants(cfg)
}

// Problem is why the compare set-up cannot run ("" when it can): its own
// error, or a connector compare on a P/D config.
func (c *CompareSetup) Problem() string {
	if c.Set == nil {
		return ""
	}
	if c.Err != "" {
		return c.Err
	}
	return c.Set.PDProblem(c.pdOn())
}

// pdOn tells whether the panel's config is P/D (as last edited).
func (c *CompareSetup) pdOn() bool { return c.page.Panel.PDOn() }

// pdNote is the reason the connector axis is disabled ("" when it is not).
func (c *CompareSetup) pdNote() string {
	return state.Compare{Axis: state.AxisConnector}.PDProblem(c.pdOn())
}

func (c *CompareSetup) toggleClass() string {
	if c.Set != nil {
		return "toggle on"
	}
	return "toggle"
}
