package main

import (
	"fmt"

	"github.com/kvsim/kvsim/ui/state"
	"github.com/kvsim/kvsim/wasm/proto"
)

// PageRows is the request table's page length (the DOM stays small).
const PageRows = 16

// RequestTable is the selected run's request table: sorted by a column
// (a second click reverses) and shown a page at a time. Its run view
// shows it only while a run with a view is selected.
type RequestTable struct {
	Run      *RunView
	SortKey  string
	SortDesc bool
	Page     int

	// What a render reads, worked out once per view and order: every
	// render of the page builds the table, and sorting the Mooncake
	// trace's 12,031 rows and finding its sessions three times took
	// part of each scrub's render.
	sorted    []proto.Row
	sortedFor sortedKey
	placed    placed
}

// sortedKey is what RequestTable.sorted was sorted for.
type sortedKey struct {
	view *proto.View
	key  string
	desc bool
}

// placed is the "where each session went" table of one view.
type placed struct {
	view  *proto.View
	rows  []state.PlacementRow
	turns int
	more  bool
}

// view is the selected run's view (nil when there is none).
func (c *RequestTable) view() *proto.View {
	if r := c.Run.Sel(); r != nil {
		return r.View
	}
	return nil
}

// SortBy sorts the table by a column; a second click reverses.
func (c *RequestTable) SortBy(key string) {
	if c.SortKey == key {
		c.SortDesc = !c.SortDesc
	} else {
		c.SortKey, c.SortDesc = key, key == "ttft" || key == "recomputed"
	}
	c.Page = 0
}

// SortMark is a column header's sort arrow.
func (c *RequestTable) SortMark(key string) string {
	if c.SortKey != key {
		return ""
	}
	if c.SortDesc {
		return " ▼"
	}
	return " ▲"
}

// Rows is the visible page of the sorted table.
func (c *RequestTable) Rows() []proto.Row {
	v := c.view()
	if v == nil {
		c.sorted, c.sortedFor, c.placed = nil, sortedKey{}, placed{} // keep no rows of gone results
		return nil
	}
	if k := (sortedKey{v, c.SortKey, c.SortDesc}); c.sortedFor != k {
		c.sorted, c.sortedFor = state.SortRows(v.Rows, c.SortKey, c.SortDesc), k
	}
	rows := c.sorted
	from := min(c.Page*PageRows, len(rows))
	return rows[from:min(from+PageRows, len(rows))]
}

// Pages is the number of table pages.
func (c *RequestTable) Pages() int {
	v := c.view()
	if v == nil {
		return 0
	}
	return (len(v.Rows) + PageRows - 1) / PageRows
}

// Turn turns the table page by d.
func (c *RequestTable) Turn(d int) { c.Page = max(0, min(c.Pages()-1, c.Page+d)) }

func (c *RequestTable) note() string {
	if len(c.Run.Results) > 1 {
		return c.Run.Sel().Label + " · click a column to sort"
	}
	return "click a column to sort"
}

func (c *RequestTable) pageNote() string { return fmt.Sprintf("page %d of %d", c.Page+1, c.Pages()) }

// The "where each session went" table shows at most this many sessions
// and turns (the DOM stays small).
const (
	placementSessions = 24
	placementTurns    = 12
)

func (c *RequestTable) placementRows() ([]state.PlacementRow, int, bool) {
	v := c.view()
	if v == nil {
		return nil, 0, false
	}
	if c.placed.view != v {
		rows, turns, more := state.SessionPlacement(v.Rows, placementSessions, placementTurns)
		c.placed = placed{v, rows, turns, more}
	}
	return c.placed.rows, c.placed.turns, c.placed.more
}

// placement is the rows of the "where each session went" table.
func (c *RequestTable) placement() []state.PlacementRow {
	rows, _, _ := c.placementRows()
	return rows
}

func (c *RequestTable) placementTurns() int {
	_, n, _ := c.placementRows()
	return n
}

func (c *RequestTable) placementNote() string {
	if _, _, more := c.placementRows(); more {
		return fmt.Sprintf("first %d sessions and %d turns · the worker of each turn", placementSessions, placementTurns)
	}
	return "the worker of each turn"
}
