package main

import (
	"fmt"

	"github.com/kvsim/kvsim/ui/state"
	"github.com/kvsim/kvsim/wasm/proto"
)

// Results is the main column: the example's text, the run bar, summary
// cards or compare rows, the chart, the request table and the pass view.
type Results struct {
	App *App
}

// single is the one run's view in single-run mode.
func (c *Results) single() *proto.View {
	if len(c.App.Results) != 1 {
		return nil
	}
	return c.App.Results[0].View
}

func (c *Results) toggleClass() string {
	if c.App.Compare != nil {
		return "toggle on"
	}
	return "toggle"
}

func (c *Results) rowClass(i int) string {
	s := "cmp-row"
	if i == c.App.Selected {
		s += " sel"
	}
	if c.App.Results[i].Err != nil {
		s += " failed"
	}
	return s
}

func (c *Results) chartClass() string {
	for _, r := range c.App.Results {
		if r.View != nil {
			return "chart-box"
		}
	}
	return "chart-box hidden"
}

func (c *Results) completed(r *Result) string {
	return fmt.Sprintf("%d / %d", r.View.Completed, r.View.Requests)
}

func (c *Results) runNote(v *proto.View) string {
	return fmt.Sprintf("%d of %d requests completed, %s passes, %s ms simulated", v.Completed, v.Requests,
		state.Thousands(v.Passes), state.Ms(v.DurationMs))
}

func (c *Results) tableNote() string {
	r := c.App.Sel()
	if len(c.App.Results) > 1 {
		return r.Label + " · click a column to sort"
	}
	return "click a column to sort"
}

func (c *Results) pageNote() string {
	return fmt.Sprintf("page %d of %d", c.App.Page+1, c.App.Pages())
}
