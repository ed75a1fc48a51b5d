package main

import (
	"fmt"
	"strings"
)

// SweepView is the sweep view's markup: the grid, the run bar, the plot
// canvas and the point table.
type SweepView struct {
	App *App
}

func (c *SweepView) finished() bool { return c.App.Sw.CSV != nil && !c.App.Sw.Running }

// key is point i's values joined with "|" (tests find rows by it).
func (c *SweepView) key(i int) string { return strings.Join(c.App.Sw.Points[i].Values, "|") }

func (c *SweepView) rowClass(i int) string {
	if c.App.Sw.Points[i].Done {
		return "done"
	}
	return "pending"
}

func (c *SweepView) tableNote() string {
	s := c.App.Sw
	return fmt.Sprintf("%d of %d evaluated", s.Done, len(s.Points))
}

func (c *SweepView) pageNote() string {
	return fmt.Sprintf("page %d of %d", c.App.Sw.Page+1, c.App.SweepPages())
}
