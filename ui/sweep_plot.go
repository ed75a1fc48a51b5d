package main

import (
	"image"
	"math"
	"strconv"
	"strings"

	"github.com/kvsim/kvsim/ui/draw"
	"github.com/kvsim/kvsim/ui/state"
	"github.com/kvsim/kvsim/wasm/proto"
)

// sweepPlot is the sweep view's plot canvas: a Go image redrawn when a
// point arrives or the width changes, pushed after every render.
type sweepPlot struct {
	img   *image.RGBA
	dirty bool
}

// draw redraws the plot if needed and pushes it to its canvas.
func (sp *sweepPlot) draw(h Host, plan *proto.SweepPlan, points []SweepPoint, curves *proto.SweepCurves) {
	w := h.Width("sweep-plot")
	if w <= 0 {
		return
	}
	w = max(320, min(1600, w))
	lines := sweepLines(plan, points, curves)
	var names []string
	for _, l := range lines {
		names = append(names, l.Name)
	}
	if ht := draw.SweepPlotHeight(w, names); sp.img == nil || sp.img.Rect.Dx() != w || sp.img.Rect.Dy() != ht {
		sp.img = image.NewRGBA(image.Rect(0, 0, w, ht))
		sp.dirty = true
	}
	if sp.dirty {
		sp.dirty = false
		xl := ""
		if plan != nil {
			xl = plan.XLabel
		}
		draw.SweepPlot(sp.img, xl, lines)
	}
	h.Blit("sweep-plot", sp.img)
}

// width and height are the plot canvas's size.
func (sp *sweepPlot) width() int {
	if sp.img == nil {
		return 900
	}
	return sp.img.Rect.Dx()
}

func (sp *sweepPlot) height() int {
	if sp.img == nil {
		return draw.SweepPlotHeight(900, nil)
	}
	return sp.img.Rect.Dy()
}

// sweepLines are the plot's lines: the finished sweep's curves (core/sweep's
// Series), or while it runs the points evaluated so far, grouped as the
// plan's lines.
func sweepLines(plan *proto.SweepPlan, points []SweepPoint, curves *proto.SweepCurves) []draw.SweepLine {
	if plan == nil || plan.X < 0 {
		return nil
	}
	var out []draw.SweepLine
	for k, l := range plan.Lines {
		dl := draw.SweepLine{Name: l.Name, X: l.X}
		if c := curves; c != nil {
			// the finished sweep: y by x from the collected result
			dl.Restored = curveAt(c.Restored, k, l.X)
			dl.Recomputed = curveAt(c.Recomputed, k, l.X)
			dl.TTFTP50 = curveAt(c.TTFTP50, k, l.X)
			dl.TTFTP99 = curveAt(c.TTFTP99, k, l.X)
		} else {
			for _, i := range l.Points {
				p := points[i]
				dl.Restored = append(dl.Restored, pointNum(p.Done, p.P.Restored))
				dl.Recomputed = append(dl.Recomputed, pointNum(p.Done, p.P.Recomputed))
				dl.TTFTP50 = append(dl.TTFTP50, pointNum(p.Done, p.P.TTFTP50))
				dl.TTFTP99 = append(dl.TTFTP99, pointNum(p.Done, p.P.TTFTP99))
			}
		}
		out = append(out, dl)
	}
	return out
}

// curveAt reads curve k's y at each x (NaN where it has none).
func curveAt(cs []proto.Curve, k int, xs []float64) []float64 {
	out := make([]float64, len(xs))
	for j := range out {
		out[j] = math.NaN()
	}
	if k >= len(cs) {
		return out
	}
	c := cs[k]
	for j, x := range xs {
		for i, cx := range c.X {
			if cx == x && i < len(c.Y) {
				out[j] = c.Y[i]
				break
			}
		}
	}
	return out
}

func pointNum(done bool, s string) float64 {
	if !done || s == "" {
		return math.NaN()
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return f
}

// pointValues is point i's value on each axis (the first axis varies
// slowest, as in core/sweep).
func pointValues(p *proto.SweepPlan, i int) []string {
	out := make([]string, len(p.Axes))
	for a := len(p.Axes) - 1; a >= 0; a-- {
		k := len(p.Axes[a].Values)
		out[a] = p.Axes[a].Values[i%k]
		i /= k
	}
	return out
}

// key is the point's values joined with "|" (tests find rows by it).
func (p SweepPoint) key() string { return strings.Join(p.Values, "|") }

func (p SweepPoint) class() string {
	if p.Done {
		return "done"
	}
	return "pending"
}

// SweepCell formats a point's column for the table.
func SweepCell(p SweepPoint, v string) string {
	if !p.Done {
		return "…"
	}
	if v == "" {
		return "–"
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return v
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return state.Thousands(int64(f))
	}
	return state.Ms(f)
}
