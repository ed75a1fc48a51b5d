package main

import (
	"image"

	"github.com/kvsim/kvsim/ui/draw"
	"github.com/kvsim/kvsim/wasm/proto"
)

// Chart canvas size in CSS pixels.
const chartW, chartH = 720, 240

// turnChart is the run view's tokens-per-turn chart: a Go image drawn
// when the results or the width change, pushed to its canvas after every
// render.
type turnChart struct {
	img   *image.RGBA
	dirty bool
}

// draw redraws the chart if needed and pushes it to the canvas.
func (t *turnChart) draw(h Host, results []*Result) {
	w := chartW
	if pw := h.Width("chart"); pw > 0 {
		w = max(360, min(1600, pw))
	}
	if t.img == nil || t.img.Rect.Dx() != w {
		t.img = image.NewRGBA(image.Rect(0, 0, w, chartH))
		t.dirty = true
	}
	if t.dirty {
		t.dirty = false
		var series [][]proto.Turn
		var labels []string
		for _, r := range results {
			if r.View != nil {
				series = append(series, r.View.Turns)
				labels = append(labels, r.Label)
			}
		}
		draw.TurnChart(t.img, series, labels)
	}
	h.Blit("chart", t.img)
}

// width is the canvas's width.
func (t *turnChart) width() int {
	if t.img == nil {
		return chartW
	}
	return t.img.Rect.Dx()
}

// class hides the chart while no run has a view.
func (t *turnChart) class(results []*Result) string {
	for _, r := range results {
		if r.View != nil {
			return "chart-box"
		}
	}
	return "chart-box hidden"
}
