package draw

import (
	"image"
	"image/color"
	"math"
	"strconv"
)

// SweepPalette colours a sweep's lines in the order of `kvsim sweep`'s SVG
// plots (Okabe–Ito: blue, vermillion, green, purple, orange, sky blue,
// black, yellow), so a line has the same colour in both.
var SweepPalette = []color.RGBA{Blue, Vermillion, Green, Purple, Orange, SkyBlue, {0, 0, 0, 0xff}, Yellow}

// A SweepLine is one line of the sweep plots: its name and, per x (in
// increasing order), the values; NaN where a point is not evaluated yet
// or lacks the column.
type SweepLine struct {
	Name                 string
	X                    []float64
	Restored, Recomputed []float64
	TTFTP50, TTFTP99     []float64
}

// SweepPlotHeight is the canvas height for a width and the lines' names:
// three panels side by side on a wide canvas, stacked on a narrow one,
// under a legend that wraps.
func SweepPlotHeight(width int, names []string) int {
	_, rows := legendLayout(width, names)
	legend := rows * sweepLegendRow
	if width >= sweepWide {
		return legend + sweepPanelH
	}
	return legend + 3*sweepPanelH
}

const (
	sweepWide      = 840
	sweepLegendRow = 22
	sweepPanelH    = 250
)

// ttftNote ends the legend.
const ttftNote = "TTFT: p50 solid, p99 dashed"

// legendLayout places the legend's entries (and the TTFT note, last):
// their top-left corners, and the number of rows.
func legendLayout(width int, names []string) ([]image.Point, int) {
	var out []image.Point
	x, row := 8, 0
	place := func(w int) {
		if x > 8 && x+w > width-8 {
			x, row = 8, row+1
		}
		out = append(out, image.Pt(x, row*sweepLegendRow))
		x += w + 18
	}
	for _, n := range names {
		place(28 + TextWidth(n))
	}
	place(TextWidth(ttftNote))
	return out, row + 1
}

// SweepPlot draws the sizing curves of a sweep as `kvsim sweep` plots
// them: restored tokens, recomputed tokens, and TTFT p50 (solid) and p99
// (dashed) against the x axis, one line per series with its own colour
// and marker; the x axis is logarithmic when the values are positive and
// span a factor of 8 or more.
func SweepPlot(img *image.RGBA, xLabel string, lines []SweepLine) {
	b := img.Rect
	Fill(img, b, White)
	// legend: one entry per line, then the TTFT note
	var names []string
	for _, l := range lines {
		names = append(names, l.Name)
	}
	at, rows := legendLayout(b.Dx(), names)
	for k, l := range lines {
		c := SweepPalette[k%len(SweepPalette)]
		x, y := b.Min.X+at[k].X, b.Min.Y+at[k].Y+12
		thickLine(img, x, y, x+22, y, c, false)
		marker(img, x+11, y, k, c)
		Text(img, x+28, y+4, l.Name, Black)
	}
	note := at[len(at)-1]
	Text(img, b.Min.X+note.X, b.Min.Y+note.Y+16, ttftNote, Muted)
	top := b.Min.Y + rows*sweepLegendRow

	type panel struct {
		title string
		get   func(SweepLine) [][]float64
	}
	panels := []panel{
		{"restored tokens", func(l SweepLine) [][]float64 { return [][]float64{l.Restored} }},
		{"recomputed tokens", func(l SweepLine) [][]float64 { return [][]float64{l.Recomputed} }},
		{"TTFT ms (p50, p99)", func(l SweepLine) [][]float64 { return [][]float64{l.TTFTP50, l.TTFTP99} }},
	}
	w := b.Dx()
	for i, p := range panels {
		var r image.Rectangle
		if w >= sweepWide {
			pw := w / 3
			r = image.Rect(b.Min.X+i*pw, top, b.Min.X+(i+1)*pw, top+sweepPanelH)
		} else {
			r = image.Rect(b.Min.X, top+i*sweepPanelH, b.Max.X, top+(i+1)*sweepPanelH)
		}
		var series [][][]float64
		for _, l := range lines {
			series = append(series, p.get(l))
		}
		sweepPanel(img, r, p.title, xLabel, lines, series)
	}
}

// sweepPanel draws one plot: series[k] holds line k's y lists (one per
// dash style: solid, then dashed).
func sweepPanel(img *image.RGBA, r image.Rectangle, title, xLabel string, lines []SweepLine, series [][][]float64) {
	L := r.Min.X + 58
	R := r.Max.X - 14
	T := r.Min.Y + 22
	B := r.Max.Y - 40
	Text(img, r.Min.X+8, r.Min.Y+14, title, Black)
	if R-L < 40 || B-T < 40 {
		return
	}
	// ranges
	var xs []float64
	ymax := 0.0
	for k, l := range lines {
		xs = append(xs, l.X...)
		for _, ys := range series[k] {
			for _, y := range ys {
				if !math.IsNaN(y) {
					ymax = math.Max(ymax, y)
				}
			}
		}
	}
	if len(xs) == 0 {
		Text(img, L, (T+B)/2, "no points yet", Muted)
		return
	}
	xmin, xmax := xs[0], xs[0]
	for _, v := range xs {
		xmin, xmax = math.Min(xmin, v), math.Max(xmax, v)
	}
	logX := xmin > 0 && xmax/xmin >= 8
	fx := func(v float64) int {
		if xmax == xmin {
			return (L + R) / 2
		}
		if logX {
			return L + int(math.Round(float64(R-L)*math.Log(v/xmin)/math.Log(xmax/xmin)))
		}
		return L + int(math.Round(float64(R-L)*(v-xmin)/(xmax-xmin)))
	}
	step, nstep := niceStep(ymax)
	top := step * float64(nstep)
	fy := func(v float64) int { return B - int(math.Round(float64(B-T)*v/top)) }
	// grid, y labels
	for i := 0; i <= nstep; i++ {
		y := B - (B-T)*i/nstep
		Fill(img, image.Rect(L, y, R+1, y+1), Grid)
		lbl := shortNum(step * float64(i))
		Text(img, L-6-TextWidth(lbl), y+4, lbl, Muted)
	}
	Fill(img, image.Rect(L, T, L+1, B+1), Muted)
	Fill(img, image.Rect(L, B, R+1, B+1), Muted)
	// x ticks at every x value; labels that would overlap are left out
	seen := map[float64]bool{}
	lastEnd := math.MinInt
	for _, v := range sortedUnique(xs) {
		if seen[v] {
			continue
		}
		seen[v] = true
		px := fx(v)
		Fill(img, image.Rect(px, B, px+1, B+4), Muted)
		lbl := shortNum(v)
		lx := px - TextWidth(lbl)/2
		if lx > lastEnd+4 && lx+TextWidth(lbl) <= r.Max.X {
			Text(img, lx, B+16, lbl, Muted)
			lastEnd = lx + TextWidth(lbl)
		}
	}
	xl := xLabel
	if logX {
		xl += " (log scale)"
	}
	Text(img, L+(R-L-TextWidth(xl))/2, B+32, xl, Muted)
	// lines: solid first, then dashed; markers on every evaluated point
	for k, l := range lines {
		c := SweepPalette[k%len(SweepPalette)]
		for d, ys := range series[k] {
			px, py, have := 0, 0, false
			for j, v := range l.X {
				if j >= len(ys) || math.IsNaN(ys[j]) {
					have = false
					continue
				}
				x, y := fx(v), fy(ys[j])
				if have {
					thickLine(img, px, py, x, y, c, d > 0)
				}
				px, py, have = x, y, true
			}
		}
		for _, ys := range series[k] {
			for j, v := range l.X {
				if j < len(ys) && !math.IsNaN(ys[j]) {
					marker(img, fx(v), fy(ys[j]), k, c)
				}
			}
		}
	}
}

func sortedUnique(xs []float64) []float64 {
	out := append([]float64(nil), xs...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	k := 0
	for i, v := range out {
		if i == 0 || v != out[k-1] {
			out[k] = v
			k++
		}
	}
	return out[:k]
}

// niceStep picks the y axis's grid: a round step (1, 2, 2.5 or 5 × 10^k)
// and 3 to 6 steps that reach a little above max.
func niceStep(max float64) (float64, int) {
	if max <= 0 {
		return 0.25, 4
	}
	max *= 1.05
	p := math.Pow(10, math.Floor(math.Log10(max/6)))
	for _, m := range []float64{1, 2, 2.5, 5, 10, 20} {
		step := m * p
		if n := int(math.Ceil(max / step)); n <= 6 {
			return step, max3(n)
		}
	}
	return 20 * p, max3(int(math.Ceil(max / (20 * p))))
}

func max3(n int) int {
	if n < 3 {
		return 3
	}
	return n
}

// shortNum writes an axis value: 20000 → "20k", 2.5 → "2.5".
func shortNum(v float64) string {
	switch {
	case v >= 10000 && math.Mod(v, 1000) == 0:
		return strconv.FormatFloat(v/1000, 'f', -1, 64) + "k"
	case v >= 10000 && math.Mod(v, 100) == 0:
		return strconv.FormatFloat(v/1000, 'f', 1, 64) + "k"
	}
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}

// thickLine draws a 2-pixel line from (x0, y0) to (x1, y1), dashed (6 on,
// 4 off) when asked.
func thickLine(img *image.RGBA, x0, y0, x1, y1 int, c color.RGBA, dashed bool) {
	dx, dy := x1-x0, y1-y0
	n := max(abs(dx), abs(dy))
	if n == 0 {
		Fill(img, image.Rect(x0, y0, x0+2, y0+2), c)
		return
	}
	for i := 0; i <= n; i++ {
		if dashed && i%10 >= 6 {
			continue
		}
		x := x0 + int(math.Round(float64(dx*i)/float64(n)))
		y := y0 + int(math.Round(float64(dy*i)/float64(n)))
		Fill(img, image.Rect(x, y, x+2, y+2), c)
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// marker draws line k's point marker at (x, y): a disc, a square, a
// triangle, a plus, a cross, a ring, a box and a diamond, in the order of
// the SVG plots' glyphs, so colour is not the only cue.
func marker(img *image.RGBA, x, y, k int, c color.RGBA) {
	const s = 4
	switch k % 8 {
	case 0: // disc
		for dy := -s; dy <= s; dy++ {
			for dx := -s; dx <= s; dx++ {
				if dx*dx+dy*dy <= s*s {
					img.SetRGBA(x+dx, y+dy, c)
				}
			}
		}
	case 1: // square
		Fill(img, image.Rect(x-s, y-s, x+s+1, y+s+1), c)
	case 2: // triangle
		for dy := -s; dy <= s; dy++ {
			w := (dy + s) / 2
			Fill(img, image.Rect(x-w, y+dy, x+w+1, y+dy+1), c)
		}
	case 3: // plus
		Fill(img, image.Rect(x-s, y-1, x+s+1, y+1), c)
		Fill(img, image.Rect(x-1, y-s, x+1, y+s+1), c)
	case 4: // cross
		for d := -s; d <= s; d++ {
			Fill(img, image.Rect(x+d, y+d, x+d+2, y+d+1), c)
			Fill(img, image.Rect(x+d, y-d, x+d+2, y-d+1), c)
		}
	case 5: // ring
		for dy := -s; dy <= s; dy++ {
			for dx := -s; dx <= s; dx++ {
				if d := dx*dx + dy*dy; d <= s*s && d >= (s-2)*(s-2) {
					img.SetRGBA(x+dx, y+dy, c)
				}
			}
		}
	case 6: // box
		Outline(img, image.Rect(x-s, y-s, x+s+1, y+s+1), c)
		Outline(img, image.Rect(x-s+1, y-s+1, x+s, y+s), c)
	default: // diamond
		for dy := -s; dy <= s; dy++ {
			w := s - abs(dy)
			Fill(img, image.Rect(x-w, y+dy, x+w+1, y+dy+1), c)
		}
	}
}
