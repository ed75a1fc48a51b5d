package draw

import (
	"image"
	"image/color"
	"math"
	"testing"
)

// TestSweepPlot: each line gets its palette colour (the SVG plots' order),
// a point not evaluated yet leaves a gap, and narrow canvases stack the
// panels.
func TestSweepPlot(t *testing.T) {
	nan := math.NaN()
	xs := []float64{64, 128, 192, 256, 2048}
	lines := []SweepLine{
		{Name: "offloading_v0_24", X: xs, Restored: []float64{0, 560, 11488, 14144, 14144}, Recomputed: []float64{20320, 19520, 8800, 6544, 6544},
			TTFTP50: []float64{2, 3, 6, 6.375, 6.375}, TTFTP99: []float64{67, 71, 71, 77, 77}},
		{Name: "simple_cpu_v0_32", X: xs, Restored: []float64{32, nan, 12432, 15568, 15568}, Recomputed: []float64{20688, nan, 8368, 5248, 5248},
			TTFTP50: []float64{2, nan, 5.625, 6.75, 6.75}, TTFTP99: []float64{71, nan, 74.625, 77, 77}},
	}
	for _, w := range []int{1200, 500} {
		img := image.NewRGBA(image.Rect(0, 0, w, SweepPlotHeight(w, []string{lines[0].Name, lines[1].Name})))
		SweepPlot(img, "G2 size (blocks)", lines)
		count := map[color.RGBA]int{}
		for i := 0; i < len(img.Pix); i += 4 {
			count[color.RGBA{img.Pix[i], img.Pix[i+1], img.Pix[i+2], 0xff}]++
		}
		if count[SweepPalette[0]] < 300 || count[SweepPalette[1]] < 300 {
			t.Errorf("width %d: line pixels %d / %d", w, count[SweepPalette[0]], count[SweepPalette[1]])
		}
		for _, c := range SweepPalette[2:] {
			if count[c] > 0 {
				t.Errorf("width %d: %d pixels of an unused palette colour %v", w, count[c], c)
			}
		}
	}
	names := []string{"offloading_v0_24", "offloading_v0_32", "simple_cpu_v0_32"}
	if SweepPlotHeight(1200, names) >= SweepPlotHeight(500, names) {
		t.Error("narrow canvases do not stack the panels")
	}
	if _, rows := legendLayout(360, names); rows < 2 {
		t.Error("the legend does not wrap on a narrow canvas")
	}
	empty := image.NewRGBA(image.Rect(0, 0, 400, SweepPlotHeight(400, nil)))
	SweepPlot(empty, "", nil) // must not panic
	for _, c := range []struct {
		max  float64
		step float64
		n    int
	}{{20688, 5000, 5}, {15568, 5000, 4}, {77, 20, 5}, {0, 0.25, 4}, {1, 0.2, 6}} {
		if s, n := niceStep(c.max); s != c.step || n != c.n {
			t.Errorf("niceStep(%v) = %v × %d, want %v × %d", c.max, s, n, c.step, c.n)
		}
	}
}
