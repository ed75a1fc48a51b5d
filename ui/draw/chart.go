// Package draw rasterises the app's dense views (the per-turn chart, and
// the pass view's block grids) into Go RGBA buffers. The page pushes a
// finished buffer to its canvas with one CopyBytesToJS and one
// putImageData per frame, so no view costs a DOM node per bar or block.
// The package is plain Go: tests check pixels natively and under wasm.
package draw

import (
	"image"
	"image/color"
	"strconv"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"

	"github.com/kvsim/kvsim/wasm/proto"
)

// Okabe–Ito colours (safe for the common colour-vision deficiencies).
var (
	Black      = color.RGBA{0x22, 0x22, 0x22, 0xff}
	Orange     = color.RGBA{0xE6, 0x9F, 0x00, 0xff}
	SkyBlue    = color.RGBA{0x56, 0xB4, 0xE9, 0xff}
	Green      = color.RGBA{0x00, 0x9E, 0x73, 0xff}
	Yellow     = color.RGBA{0xF0, 0xE4, 0x42, 0xff}
	Blue       = color.RGBA{0x00, 0x72, 0xB2, 0xff}
	Vermillion = color.RGBA{0xD5, 0x5E, 0x00, 0xff}
	Purple     = color.RGBA{0xCC, 0x79, 0xA7, 0xff}
	White      = color.RGBA{0xff, 0xff, 0xff, 0xff}
	Grid       = color.RGBA{0xe4, 0xe6, 0xea, 0xff}
	Muted      = color.RGBA{0x6b, 0x72, 0x80, 0xff}
)

// Series colours of the turn chart.
var (
	ColG1         = Green
	ColRestored   = Blue
	ColRecomputed = Vermillion
)

// Fill paints r with c: the first row pixel by pixel, then the others
// copied from it (copy is a memmove, fast also in wasm).
func Fill(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	r = r.Intersect(img.Rect)
	if r.Empty() {
		return
	}
	i0 := img.PixOffset(r.Min.X, r.Min.Y)
	n := 4 * r.Dx()
	row := img.Pix[i0 : i0+n : i0+n]
	for i := 0; i < n; i += 4 {
		row[i], row[i+1], row[i+2], row[i+3] = c.R, c.G, c.B, c.A
	}
	for y := r.Min.Y + 1; y < r.Max.Y; y++ {
		i := i0 + (y-r.Min.Y)*img.Stride
		copy(img.Pix[i:i+n], row)
	}
}

// Hatch paints every pixel of r on a diagonal stripe (period 4) with c.
func Hatch(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	r = r.Intersect(img.Rect)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		x := r.Min.X + ((4 - (r.Min.X+y)%4) % 4)
		i := img.PixOffset(x, y)
		for ; x < r.Max.X; x += 4 {
			p := img.Pix[i : i+4 : i+4]
			p[0], p[1], p[2], p[3] = c.R, c.G, c.B, c.A
			i += 16
		}
	}
}

// Outline paints the 1-pixel border of r.
func Outline(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	Fill(img, image.Rect(r.Min.X, r.Min.Y, r.Max.X, r.Min.Y+1), c)
	Fill(img, image.Rect(r.Min.X, r.Max.Y-1, r.Max.X, r.Max.Y), c)
	Fill(img, image.Rect(r.Min.X, r.Min.Y, r.Min.X+1, r.Max.Y), c)
	Fill(img, image.Rect(r.Max.X-1, r.Min.Y, r.Max.X, r.Max.Y), c)
}

// Text writes s with its baseline at (x, y) in the 7×13 bitmap face,
// which has ASCII only: a few typographic characters are spelled in ASCII
// and others become '?'.
func Text(img *image.RGBA, x, y int, s string, c color.RGBA) {
	d := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(ascii(s))
}

func ascii(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return asciiReplacer.Replace(s)
		}
	}
	return s
}

var asciiReplacer = strings.NewReplacer("·", "|", "–", "-", "—", "-", "…", "...", "→", "->", "←", "<-", "×", "x", "§", "S")

// TextWidth is s's width in pixels.
func TextWidth(s string) int { return 7 * len([]rune(ascii(s))) }

// ChartLayout says where the bars of a turn chart are, for hit-testing.
type ChartLayout struct {
	Left, Top, Bottom int
	Group, Bar        int // pixels per turn group, per bar
	Max               int64
}

// TurnChart draws, per turn, one stacked bar per series (one series per
// compared run): G1-reused tokens (green), restored from G2 (blue) and
// recomputed (vermillion, hatched so colour is not the only cue).
func TurnChart(img *image.RGBA, series [][]proto.Turn, labels []string) ChartLayout {
	b := img.Rect
	Fill(img, b, White)
	turns := 0
	var top int64 = 1
	for _, s := range series {
		for _, t := range s {
			turns = max(turns, t.Turn+1)
			top = max(top, t.G1+t.Restored+t.Recomputed)
		}
	}
	top = niceCeil(top)
	head := 40
	if len(series) > 1 {
		head = 56
	}
	L := ChartLayout{Left: b.Min.X + 56, Top: b.Min.Y + head, Bottom: b.Max.Y - 22, Max: top}
	plotW := b.Max.X - 8 - L.Left
	if turns == 0 || len(series) == 0 || plotW <= 0 {
		Text(img, L.Left, L.Top+20, "no admitted requests", Muted)
		return L
	}
	h := L.Bottom - L.Top
	// grid and y labels
	for i := 0; i <= 4; i++ {
		y := L.Bottom - h*i/4
		Fill(img, image.Rect(L.Left, y, L.Left+plotW, y+1), Grid)
		lbl := compact(top * int64(i) / 4)
		Text(img, L.Left-6-TextWidth(lbl), y+4, lbl, Muted)
	}
	L.Group = plotW / turns
	n := len(series)
	L.Bar = max(2, (L.Group-6)/n)
	if L.Bar*n > L.Group-2 {
		L.Bar = max(1, (L.Group-2)/n)
	}
	for ti := 0; ti < turns; ti++ {
		gx := L.Left + ti*L.Group + (L.Group-L.Bar*n)/2
		for si, s := range series {
			var t proto.Turn
			for _, x := range s {
				if x.Turn == ti {
					t = x
				}
			}
			x0 := gx + si*L.Bar
			x1 := x0 + L.Bar - 1
			if L.Bar < 3 {
				x1 = x0 + L.Bar
			}
			y := L.Bottom
			for _, seg := range []struct {
				v     int64
				c     color.RGBA
				hatch bool
			}{{t.G1, ColG1, false}, {t.Restored, ColRestored, false}, {t.Recomputed, ColRecomputed, true}} {
				if seg.v <= 0 {
					continue
				}
				hh := int(int64(h) * seg.v / top)
				if hh == 0 {
					hh = 1
				}
				r := image.Rect(x0, y-hh, x1, y)
				Fill(img, r, seg.c)
				if seg.hatch {
					Hatch(img, r, White)
				}
				y -= hh
			}
		}
		lbl := "t" + strconv.Itoa(ti)
		Text(img, L.Left+ti*L.Group+(L.Group-TextWidth(lbl))/2, b.Max.Y-6, lbl, Muted)
	}
	// legend
	x := L.Left
	for _, it := range []struct {
		s     string
		c     color.RGBA
		hatch bool
	}{{"G1 reused", ColG1, false}, {"restored from G2", ColRestored, false}, {"recomputed", ColRecomputed, true}} {
		r := image.Rect(x, b.Min.Y+8, x+12, b.Min.Y+20)
		Fill(img, r, it.c)
		if it.hatch {
			Hatch(img, r, White)
		}
		Text(img, x+16, b.Min.Y+18, it.s, Black)
		x += 16 + TextWidth(it.s) + 14
	}
	if n > 1 {
		s := "bars in each turn, left to right:"
		for i, l := range labels {
			if i > 0 {
				s += ","
			}
			s += " " + l
		}
		Text(img, L.Left, b.Min.Y+36, s, Muted)
	}
	Text(img, b.Min.X+4, L.Top-12, "tokens", Muted)
	return L
}

// niceCeil rounds v up to 1, 2 or 5 × 10^k (and to a multiple of 4).
func niceCeil(v int64) int64 {
	p := int64(1)
	for p*10 <= v {
		p *= 10
	}
	for _, m := range []int64{1, 2, 4, 5, 8, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func compact(v int64) string {
	switch {
	case v >= 1_000_000 && v%100_000 == 0:
		return strconv.FormatFloat(float64(v)/1e6, 'f', -1, 64) + "M"
	case v >= 10_000 && v%100 == 0:
		return strconv.FormatFloat(float64(v)/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatInt(v, 10)
}
