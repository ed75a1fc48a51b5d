// Package plot draws a sweep's sizing curves as SVG with gonum.org/v1/plot:
// restored and recomputed tokens and TTFT p50/p99 against the numeric
// --vary (the G2 size in the default sweep), one line per combination of
// the other axes (the connector). It lives outside core/ so that the wasm
// bundle, which only needs core/sweep, does not carry fonts.
//
// It does no file I/O: Sweep returns each plot's bytes and the caller
// writes them.
package plot

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/kvsim/kvsim/core/sweep"
)

// A File is one plot.
type File struct {
	Name string // e.g. "restored.svg"
	SVG  []byte
}

// Size of each plot.
const (
	Width  = 7 * vg.Inch
	Height = 4.5 * vg.Inch
)

// Names of the files Sweep returns, in order.
const (
	Restored   = "restored.svg"
	Recomputed = "recomputed.svg"
	TTFT       = "ttft.svg"
)

// Sweep draws the plots of r against axis x (sweep.Plan.XAxis picks the
// default; -1 there means there is nothing to plot). A plot whose column
// no point has (restored tokens when no point has a G2 tier) is left out.
func Sweep(r *sweep.Result, x int) ([]File, error) {
	p := r.Plan
	if x < 0 || x >= len(p.Axes) {
		return nil, fmt.Errorf("plot: no axis %d", x)
	}
	if !p.Axes[x].Numeric() {
		return nil, fmt.Errorf("plot: --vary %s is not numeric and cannot be an x axis", p.Axes[x].Path)
	}
	xl := xLabel(&p.Axes[x])
	type line struct {
		column, suffix string
		dashed         bool
	}
	specs := []struct {
		name, title, ylabel string
		lines               []line
	}{
		{Restored, "Restored tokens", "restored tokens (first-admission G2 reuse)",
			[]line{{sweep.ColumnRestored, "", false}}},
		{Recomputed, "Recomputed tokens", "recomputed tokens (committed prefill)",
			[]line{{sweep.ColumnRecomputed, "", false}}},
		{TTFT, "Time to first token", "TTFT (ms)",
			[]line{{sweep.ColumnTTFTP50, "p50", false}, {sweep.ColumnTTFTP99, "p99", true}}},
	}
	var out []File
	for _, s := range specs {
		var curves []curve
		for _, l := range s.lines {
			for k, ser := range r.Series(x, l.column) {
				if len(ser.X) == 0 {
					continue
				}
				name := ser.Name
				if l.suffix != "" {
					name = strings.TrimSpace(name + " " + l.suffix)
				}
				if name == "" {
					name = l.column
				}
				curves = append(curves, curve{name: name, color: k, dashed: l.dashed, x: ser.X, y: ser.Y})
			}
		}
		if len(curves) == 0 {
			continue
		}
		svg, err := draw1(s.title+" vs "+xName(&p.Axes[x]), xl, s.ylabel, curves)
		if err != nil {
			return nil, fmt.Errorf("plot: %s: %v", s.name, err)
		}
		out = append(out, File{Name: s.name, SVG: svg})
	}
	return out, nil
}

// xName is the x axis in a title: "G2 size" for num_host_blocks.
func xName(a *sweep.Axis) string {
	if strings.HasSuffix(a.Path, "num_host_blocks") {
		return "G2 size"
	}
	return a.Path
}

func xLabel(a *sweep.Axis) string {
	if strings.HasSuffix(a.Path, "num_host_blocks") {
		return "G2 size (" + a.Path + ", blocks)"
	}
	return a.Path
}

type curve struct {
	name   string
	color  int // index in the palette
	dashed bool
	x, y   []float64
}

// palette is colour-blind safe (Okabe–Ito).
var palette = []color.RGBA{
	{0, 114, 178, 255}, {213, 94, 0, 255}, {0, 158, 115, 255}, {204, 121, 167, 255},
	{230, 159, 0, 255}, {86, 180, 233, 255}, {0, 0, 0, 255}, {240, 228, 66, 255},
}

var glyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{},
	draw.PlusGlyph{}, draw.CrossGlyph{}, draw.RingGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}}

func draw1(title, xlabel, ylabel string, curves []curve) ([]byte, error) {
	p := gplot.New()
	sans := func(size vg.Length) font.Font {
		return font.Font{Typeface: "Liberation", Variant: "Sans", Size: size}
	}
	p.Title.Text = title
	p.Title.TextStyle.Font = sans(13)
	p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
	p.X.Label.TextStyle.Font, p.Y.Label.TextStyle.Font = sans(11), sans(11)
	p.X.Tick.Label.Font, p.Y.Tick.Label.Font = sans(9), sans(9)
	p.Legend.TextStyle.Font = sans(10)
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs = 0.1 * vg.Inch
	p.Add(plotter.NewGrid())

	var xs []float64
	ymax := 0.0
	for _, c := range curves {
		pts := make(plotter.XYs, len(c.x))
		for j := range c.x {
			pts[j] = plotter.XY{X: c.x[j], Y: c.y[j]}
			ymax = math.Max(ymax, c.y[j])
		}
		xs = append(xs, c.x...)
		l, s, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, fmt.Errorf("series %q: %v", c.name, err)
		}
		col := palette[c.color%len(palette)]
		l.Color, s.Color = col, col
		l.Width = vg.Points(1.5)
		if c.dashed {
			l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		s.Shape = glyphs[c.color%len(glyphs)]
		s.Radius = vg.Points(2.5)
		p.Add(l, s)
		p.Legend.Add(c.name, l, s)
	}
	slices.Sort(xs)
	xs = slices.Compact(xs)
	// Sizes are usually geometric (64 … 2,048): use a log axis when every
	// x is positive and they span at least a factor of 8.
	if xs[0] > 0 && xs[len(xs)-1]/xs[0] >= 8 {
		p.X.Scale = gplot.LogScale{}
	}
	p.X.Tick.Marker = valueTicks(xs, p.X.Scale)
	p.Y.Tick.Marker = gplot.TickerFunc(niceTicks)
	// Room above the curves for the legend, and a zero baseline.
	p.Y.Min = 0
	if ymax <= 0 {
		ymax = 1
	}
	p.Y.Max = ymax * (1.15 + 0.07*float64(len(curves)))

	c := vgsvg.New(Width, Height)
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// valueTicks puts a tick at every x value, labelling those that are at
// least 5% of the axis apart from the previous label.
func valueTicks(xs []float64, scale gplot.Normalizer) gplot.Ticker {
	return gplot.TickerFunc(func(min, max float64) []gplot.Tick {
		var ticks []gplot.Tick
		last := math.Inf(-1)
		for _, x := range xs {
			pos := scale.Normalize(min, max, x)
			label := ""
			if pos-last >= 0.05 {
				label = strconv.FormatFloat(x, 'f', -1, 64)
				last = pos
			}
			ticks = append(ticks, gplot.Tick{Value: x, Label: label})
		}
		return ticks
	})
}

// niceTicks labels 4 to 10 round values (1, 2 or 5 × 10^k apart) with
// minor ticks between them.
func niceTicks(min, max float64) []gplot.Tick {
	span := max - min
	if !(span > 0) || math.IsInf(span, 0) {
		return []gplot.Tick{{Value: min, Label: strconv.FormatFloat(min, 'g', -1, 64)}}
	}
	mag := math.Pow(10, math.Floor(math.Log10(span/5)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if span/(m*mag) <= 8 {
			step = m * mag
			break
		}
	}
	prec := max0(-int(math.Floor(math.Log10(step))))
	var ticks []gplot.Tick
	for k := math.Ceil(min / step); k*step <= max+step*1e-9; k++ {
		v := k * step
		ticks = append(ticks, gplot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', prec, 64)})
		if half := v + step/2; half <= max {
			ticks = append(ticks, gplot.Tick{Value: half})
		}
	}
	return ticks
}

func max0(n int) int {
	if n < 0 {
		return 0
	}
	return n
}
