package main

import (
	"github.com/kvsim/kvsim/ui/state"
	"github.com/kvsim/kvsim/wasm/proto"
)

// AgenticReport is the run view's agentic section: cards for the selected
// run's snapshot, warmup and profile (prediction.json's agentic_snapshots,
// agentic_phases and agentic_profile; docs/model/agentic.md ("Report"))
// and, unfolded on demand, a table of its lanes. Its run view shows it
// only for a selected run that has these sections.
type AgenticReport struct {
	Run *RunView
	// Open: the per-lane table is unfolded (kept across runs).
	Open bool
}

// agentic is the selected run's agentic sections (nil when it has none).
func (c *AgenticReport) agentic() *proto.Agentic {
	if r := c.Run.Sel(); r != nil && r.View != nil {
		return r.View.Agentic
	}
	return nil
}

// Shown tells whether the section has anything to show.
func (c *AgenticReport) Shown() bool { return c.agentic() != nil }

// Toggle folds or unfolds the per-lane table.
func (c *AgenticReport) Toggle() { c.Open = !c.Open }

func (c *AgenticReport) cards() []state.Card { return state.AgenticCards(c.agentic()) }

func (c *AgenticReport) lanes() []state.AgenticLaneRow { return state.AgenticLanes(c.agentic()) }

func (c *AgenticReport) toggleLabel() string {
	if c.Open {
		return "hide the lanes ▾"
	}
	return "per lane ▸"
}

// note names the run in compare mode (the section follows the selected
// row) and says where the summary's times start.
func (c *AgenticReport) note() string {
	s := "the summary and request table cover the measured requests only"
	if a := c.agentic(); a != nil && a.Warmup != nil {
		s += ", with times from the warmup barrier"
	}
	if len(c.Run.Results) > 1 {
		if r := c.Run.Sel(); r != nil {
			s = r.Label + ": " + s
		}
	}
	return s
}
