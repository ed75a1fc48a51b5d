package main

import (
	"fmt"
	"strconv"

	"github.com/kvsim/kvsim/ui/state"
	"github.com/kvsim/kvsim/wasm/proto"
)

// PassViewBox is the pass view's markup: controls, scrubber, timeline,
// one canvas per compared run, the hover card and the legend.
type PassViewBox struct {
	App *App
}

func (c *PassViewBox) has() bool { return c.App.PV != nil && c.App.PV.Runs > 0 && !c.App.Stale() }

func (c *PassViewBox) pass() int {
	if !c.has() {
		return 0
	}
	return c.App.PV.Pass
}

// ready: every shown frame is the current position's.
func (c *PassViewBox) ready() bool {
	pv := c.App.PV
	if !c.has() || pv.inflight != nil {
		return false
	}
	want := pv.passesFor()
	for v, fr := range pv.Frames {
		if want[v] > 0 && (fr == nil || fr.pass != want[v]) {
			return false
		}
	}
	return true
}

func (c *PassViewBox) indexed() bool { return c.has() && !c.App.PV.Indexing }

func (c *PassViewBox) frameMs() string {
	if !c.has() {
		return ""
	}
	return strconv.FormatFloat(c.App.PV.FrameMs, 'f', 2, 64)
}

func (c *PassViewBox) indexMs() string {
	if !c.has() || c.App.PV.Indexing {
		return ""
	}
	return strconv.FormatFloat(c.App.PV.IndexMs, 'f', 1, 64)
}

func (c *PassViewBox) status() string {
	pv := c.App.PV
	switch {
	case c.App.PVNote != "" && (pv == nil || pv.Runs == 0):
		return ""
	case pv == nil || c.App.Stale():
		return ""
	case pv.Indexing:
		return fmt.Sprintf("indexing the timeline: %d%%", pv.Indexed*100/max(pv.Total, 1))
	}
	return c.App.PVNote
}

func (c *PassViewBox) emptyText() string {
	switch {
	case c.App.Running:
		return "Running…"
	case c.App.Stale():
		return "The config changed: run it to see its passes."
	case c.App.PVNote != "":
		return c.App.PVNote
	case len(c.App.Results) == 0:
		return "Run a config to see, pass by pass, which block sits in which G1 slot and G2 entry."
	}
	return "These results kept no per-pass record."
}

func (c *PassViewBox) playLabel() string {
	if c.App.PV.Playing {
		return "❚❚"
	}
	return "▶ play"
}

func (c *PassViewBox) speedLabel(s int) string { return strconv.Itoa(s) + " passes/s" }

func (c *PassViewBox) rankLabel(r int) string { return c.App.PV.RankLabel(r) }

func (c *PassViewBox) atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func (c *PassViewBox) passLabel() string {
	pv := c.App.PV
	f := pv.first()
	s := fmt.Sprintf("pass %d of %d", pv.Pass, pv.MaxLines())
	if f >= 0 && f < len(pv.Frames) && pv.Frames[f] != nil && pv.Frames[f].err == "" {
		m := pv.Frames[f].meta
		if m.Final {
			s += " (run end)"
		}
		req := "requests"
		if m.Scheduled == 1 {
			req = "request"
		}
		s += fmt.Sprintf(" · %s–%s ms · %d %s scheduled", state.Ms(m.StartMs), state.Ms(m.EndMs), m.Scheduled, req)
	}
	return s
}

// divergences lists, for each compared run after the first, the first
// pass where its blocks differ from the first run's.
func (c *PassViewBox) divergences() []divergence {
	pv := c.App.PV
	if pv.Runs < 2 || pv.Indexing {
		return nil
	}
	var out []divergence
	f := pv.first()
	for v := range pv.Meta {
		if v == f || !pv.Meta[v].Recorded {
			continue
		}
		d := divergence{Pass: 0}
		if tl := pv.timeline(v); tl != nil {
			d.Pass = tl.Diverge
		}
		a, b := "", ""
		if f < len(c.App.Results) && v < len(c.App.Results) {
			a, b = shortLabel(c.App.Results[f].Label), shortLabel(c.App.Results[v].Label)
		}
		if d.Pass == 0 {
			d.Text = fmt.Sprintf("%s and %s hold the same blocks in every pass", b, a)
		} else {
			d.Text = fmt.Sprintf("%s first differs from %s in pass %d", b, a, d.Pass)
		}
		out = append(out, d)
	}
	return out
}

type divergence struct {
	Pass int
	Text string
}

func (c *PassViewBox) gridsClass() string {
	if c.App.PV.Runs > 1 {
		return "pv-grids multi"
	}
	return "pv-grids"
}

func (c *PassViewBox) noRecord(v int) string {
	label := ""
	if v < len(c.App.Results) {
		label = c.App.Results[v].Label + ": "
	}
	if v < len(c.App.PV.Notes) && c.App.PV.Notes[v] != "" {
		return label + c.App.PV.Notes[v]
	}
	return label + "no per-pass record"
}

const shownEvents = 6

func (c *PassViewBox) events(v int) []proto.EventLine {
	fr := c.App.PV.Frames[v]
	if fr == nil || fr.err != "" {
		return nil
	}
	ev := fr.meta.Events
	return ev[:min(len(ev), shownEvents)]
}

func (c *PassViewBox) moreEvents(v int) string {
	fr := c.App.PV.Frames[v]
	if fr == nil || fr.err != "" {
		return ""
	}
	if fr.meta.NumEvents == 0 {
		return "no events in this pass"
	}
	if n := fr.meta.NumEvents - shownEvents; n > 0 {
		return fmt.Sprintf("… %d more events", n)
	}
	return ""
}

func (c *PassViewBox) cardStyle() string {
	h := c.App.PV.Hover
	return fmt.Sprintf("left: %dpx; top: %dpx", h.X+14, h.Y+14)
}
