package draw

import (
	"image"
	"image/color"
	"math"
	"slices"
	"strconv"

	"github.com/kvsim/kvsim/core/numfmt"
	"github.com/kvsim/kvsim/wasm/proto"
)

// Session hues: ten colours that stay apart from the event flashes
// (vermillion for evictions, blue for restores) and from each other.
var Hues = []color.RGBA{
	{0xE6, 0x9F, 0x00, 0xff}, {0x56, 0xB4, 0xE9, 0xff}, {0x00, 0x9E, 0x73, 0xff}, {0xCC, 0x79, 0xA7, 0xff},
	{0x33, 0x22, 0x88, 0xff}, {0x99, 0x99, 0x33, 0xff}, {0x44, 0xAA, 0x99, 0xff}, {0x88, 0x22, 0x55, 0xff},
	{0xDD, 0xCC, 0x77, 0xff}, {0x11, 0x77, 0x33, 0xff},
}

// Cell colours.
var (
	ColFree      = color.RGBA{0xe6, 0xe9, 0xee, 0xff}
	ColUnused    = color.RGBA{0xf4, 0xf5, 0xf7, 0xff}
	ColBar       = color.RGBA{0x1d, 0x24, 0x33, 0xff}
	ColPending   = Yellow
	ColEvicted   = Vermillion
	ColRestore   = Blue
	ColDiff      = color.RGBA{0x11, 0x11, 0x11, 0xff}
	ColHighlight = color.RGBA{0xff, 0x00, 0xcc, 0xff}
	ColLaneD2H   = SkyBlue
	ColLaneH2D   = Blue
)

// Pale mixes c 58% towards white.
func Pale(c color.RGBA) color.RGBA {
	mix := func(v uint8) uint8 { return uint8(int(v) + (255-int(v))*58/100) }
	return color.RGBA{mix(c.R), mix(c.G), mix(c.B), 0xff}
}

var paleHues = func() []color.RGBA {
	out := make([]color.RGBA, len(Hues))
	for i, h := range Hues {
		out[i] = Pale(h)
	}
	return out
}()

// paleHue is Pale(Hue(session)), precomputed.
func paleHue(session int32) color.RGBA {
	if session < 0 {
		return Pale(Muted)
	}
	return paleHues[int(session)%len(paleHues)]
}

// Hue is a session's colour (black for no session).
func Hue(session int32) color.RGBA {
	if session < 0 {
		return Muted
	}
	return Hues[int(session)%len(Hues)]
}

// PassLayout places one run's pass view on its canvas: the G1 grid, the
// G2 grid under it and the transfer lanes at the bottom. A pool too large
// for the canvas at the smallest cell is drawn binned: each cell stands for
// Per consecutive slots (G1) or entries (G2), so the canvas, and the work of
// drawing it, stay bounded whatever the pool size.
type PassLayout struct {
	W, H      int
	Cell      int // pixels per cell, gap included
	Cols      int
	G1Y, G2Y  int // top of each grid
	G1N, G2N  int // slots and entries (G2: its capacity)
	Per       int // slots or entries per cell (1: one each)
	LanesY    int
	HasG2     bool
	TitleLine int
}

const (
	padX       = 8
	headH      = 18
	laneH      = 14
	lanesTotal = 2*laneH + 24
	// MinCell is the smallest cell; smaller pools keep their cells at
	// least this large, larger ones are binned (PassLayout.Per) in cells of
	// BinCell: a bin already hides single slots, and larger cells are
	// fewer to draw.
	MinCell = 3
	BinCell = 6
)

// LayoutPass chooses a cell size that fits g1+g2 cells in width × about
// maxH pixels, binning the pools when even MinCell does not fit.
func LayoutPass(width, maxH, g1, g2 int) PassLayout {
	for c := 28; c >= MinCell; c-- {
		if L := LayoutPassCell(width, c, g1, g2, 0); L.H <= maxH {
			return L
		}
	}
	return LayoutPassCell(width, BinCell, g1, g2, maxH)
}

// LayoutPassCell lays the grids out with a given cell size (compared runs
// share one, so that the same block count looks the same size). When maxH
// > 0 and the grids do not fit in it, they are binned until they do.
func LayoutPassCell(width, cell, g1, g2, maxH int) PassLayout {
	L := PassLayout{W: max(width, 160), G1N: g1, G2N: g2, HasG2: g2 > 0, Cell: max(cell, MinCell), Per: 1}
	L.Cols = max(1, (L.W-2*padX)/L.Cell)
	L.TitleLine = 14
	L.place()
	if maxH <= 0 || L.H <= maxH {
		return L
	}
	// rows that fit, then the smallest bin that fits g1+g2 into them
	fixed := L.H - (L.rows(g1)+L.rows(g2))*L.Cell
	rows := max(2, (maxH-fixed)/L.Cell)
	L.Per = max(1, (g1+g2+(rows-2)*L.Cols-1)/max(1, (rows-2)*L.Cols))
	for L.place(); L.H > maxH && L.Per < g1+g2; L.place() {
		L.Per += max(1, L.Per/8)
	}
	return L
}

// rows is the grid rows n slots take.
func (L PassLayout) rows(n int) int {
	cells := (n + L.Per - 1) / L.Per
	return (cells + L.Cols - 1) / L.Cols
}

// cells is the cells a grid of n slots draws.
func (L PassLayout) cells(n int) int { return (n + L.Per - 1) / L.Per }

// place sets the grids' and lanes' tops and the height.
func (L *PassLayout) place() {
	L.G1Y = 22 + headH
	y := L.G1Y + L.rows(L.G1N)*L.Cell
	if L.G2N > 0 {
		L.G2Y = y + 6 + headH
		y = L.G2Y + L.rows(L.G2N)*L.Cell
	}
	L.LanesY = y + 10
	L.H = L.LanesY + lanesTotal
}

// CellRect is the rectangle of cell i of a grid whose top is y (with
// binning, cell i holds slots i×Per … (i+1)×Per-1).
func (L PassLayout) CellRect(y, i int) image.Rectangle {
	x0 := padX + (i%L.Cols)*L.Cell
	y0 := y + (i/L.Cols)*L.Cell
	g := 1
	if L.Cell <= 4 {
		g = 0
	}
	return image.Rect(x0, y0, x0+L.Cell-g, y0+L.Cell-g)
}

// Hit finds the cell under (x, y): tier 1 (G1) or 2 (G2) and the index of
// its (first) slot.
func (L PassLayout) Hit(x, y int) (tier, i int, ok bool) {
	if x < padX || L.Cell == 0 {
		return 0, 0, false
	}
	col := (x - padX) / L.Cell
	if col >= L.Cols {
		return 0, 0, false
	}
	for _, g := range []struct{ tier, y, n int }{{1, L.G1Y, L.G1N}, {2, L.G2Y, L.G2N}} {
		if g.n == 0 || y < g.y {
			continue
		}
		row := (y - g.y) / L.Cell
		if c := row*L.Cols + col; c < L.cells(g.n) && row < L.rows(g.n) {
			return g.tier, c * L.Per, true
		}
	}
	return 0, 0, false
}

// PassOptions are the per-frame extras of DrawPass.
type PassOptions struct {
	Title, Subtitle string
	// DiffG1 and DiffG2 outline cells whose block another compared run
	// does not hold in that tier.
	DiffG1, DiffG2 []bool
	// Highlight outlines every cell holding this block (0: none).
	Highlight uint32
	// Lanes: the transfers to draw, the time window and the current pass.
	Transfers          []proto.Transfer
	From, To           float64
	PassStart, PassEnd float64
}

// DrawPass draws one run's frame.
func DrawPass(img *image.RGBA, L PassLayout, f *proto.Frame, o PassOptions) {
	Fill(img, img.Rect, White)
	Text(img, padX, L.TitleLine, o.Title, Black)
	if o.Subtitle != "" {
		Text(img, padX+TextWidth(o.Title)+12, L.TitleLine, o.Subtitle, Muted)
	}
	// G1
	idle := 0
	for i := range f.G1 {
		if f.G1[i].State == 'i' {
			idle++
		}
	}
	Text(img, padX, L.G1Y-5, "G1 "+numfmt.Thousands(int64(L.G1N))+" slots, "+numfmt.Thousands(int64(idle))+" idle"+L.perNote(), Muted)
	drawGrid(img, L, L.G1Y, L.G1N, f.G1, idle, o.DiffG1, o.Highlight)
	// G2
	if L.HasG2 {
		evictable := 0
		for i := range f.G2 {
			if f.G2[i].Order >= 0 {
				evictable++
			}
		}
		Text(img, padX, L.G2Y-5, "G2 "+numfmt.Thousands(int64(len(f.G2)))+"/"+numfmt.Thousands(int64(L.G2N))+" blocks, next victim first"+L.perNote(), Muted)
		drawGrid(img, L, L.G2Y, L.G2N, f.G2, evictable, o.DiffG2, o.Highlight)
	}
	drawLanes(img, L, o)
}

// perNote says how many slots a binned grid's cell stands for.
func (L PassLayout) perNote() string {
	if L.Per <= 1 {
		return ""
	}
	return " (a cell per " + numfmt.Thousands(int64(L.Per)) + ")"
}

// drawGrid draws the n cells of one tier whose top is y. A binned cell
// shows its most telling slot (cellRank) and the outlines of any of its
// slots; each slot is read once, so a redraw is O(slots) + O(cells).
func drawGrid(img *image.RGBA, L PassLayout, y, n int, cells []proto.Cell, queueLen int, diff []bool, highlight uint32) {
	for i := 0; i < L.cells(n); i++ {
		r := L.CellRect(y, i)
		lo := i * L.Per
		if lo >= len(cells) {
			Fill(img, r, ColUnused)
			continue
		}
		hi := min(lo+L.Per, len(cells))
		bin := cells[lo:hi]
		best, top := 0, int8(-1)
		lit := false
		for k := range bin {
			if rk := flashRank[bin[k].Flash] + stateRank[bin[k].State]; rk > top {
				best, top = k, rk
			}
		}
		if highlight != 0 {
			for k := range bin {
				lit = lit || bin[k].Key == highlight
			}
		}
		drawCell(img, r, bin[best], queueLen)
		if lo < len(diff) && slices.Contains(diff[lo:min(hi, len(diff))], true) {
			thick(img, r, ColDiff)
		}
		if lit {
			thick(img, r, ColHighlight)
		}
	}
}

// stateRank and flashRank order slots by what a binned cell should show:
// an event of this pass first, then a slot in use, then a cached one, then
// a free one.
var stateRank, flashRank = func() (s, f [256]int8) {
	for c, r := range map[byte]int8{'p': 4, 'A': 4, 'r': 3, 'h': 3, 'P': 3, 'N': 3, 'i': 2, 'R': 2, '.': 0} {
		s[c] = r
	}
	for c := range s {
		if s[c] == 0 && c != '.' {
			s[c] = 1
		}
	}
	f[proto.FlashEvicted], f[proto.FlashRestored], f[proto.FlashStored] = 30, 20, 10
	return s, f
}()

func thick(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	Outline(img, r, c)
	if r.Dx() > 6 {
		Outline(img, r.Inset(1), c)
	}
}

// State colours: a cell's fill says its state with the legend's colours
// (public/style.css's .sw swatches); its session is a second channel, a
// strip of the session's hue along its left edge, and an answer (decode)
// block carries a dark corner mark.
var (
	ColActive   = color.RGBA{0xe6, 0x9f, 0x00, 0xff} // cached, in use (and private, hatched)
	ColIdle     = color.RGBA{0xf4, 0xd1, 0x8a, 0xff} // cached idle, G2 resident, held, pinned
	ColReserved = White                              // reserved for a load: white, outlined
)

// drawCell paints one cell by its state (the colour rules of docs/ui.md
// ("Using it"); hatching, outlines and bars carry the state too).
func drawCell(img *image.RGBA, r image.Rectangle, c proto.Cell, queueLen int) {
	switch c.State {
	case '.':
		Fill(img, r, ColFree)
	case 'p': // private to a running request
		Fill(img, r, ColActive)
		Hatch(img, r, ColIdle)
	case 'A': // cached, in use
		Fill(img, r, ColActive)
	case 'i', 'R': // cached idle / G2 resident: pale, with the eviction bar
		Fill(img, r, ColIdle)
		if queueLen > 0 && c.Order >= 0 {
			bw := r.Dx() * (queueLen - int(c.Order)) / queueLen
			bh := max(1, r.Dy()/4)
			Fill(img, image.Rect(r.Min.X, r.Max.Y-bh, r.Min.X+max(1, bw), r.Max.Y), ColBar)
		}
	case 'h': // held for a copy
		Fill(img, r, ColIdle)
		Hatch(img, r, ColBar)
	case 'r': // reserved for a load
		Fill(img, r, ColReserved)
		Outline(img, r, ColActive)
		if r.Dx() > 6 {
			Outline(img, r.Inset(1), ColActive)
		}
	case 'P': // G2 pending store
		Fill(img, r, ColPending)
		Hatch(img, r, ColBar)
	case 'N': // G2 pinned by a load
		Fill(img, r, ColIdle)
		Outline(img, r, ColBar)
	default:
		Fill(img, r, Muted)
	}
	if c.State != '.' && r.Dx() >= 6 {
		if c.Session >= 0 {
			w := max(1, r.Dx()/5)
			Fill(img, image.Rect(r.Min.X, r.Min.Y, r.Min.X+w, r.Max.Y), Hue(c.Session))
		}
		if c.Answer {
			corner(img, r, ColBar)
		}
	}
	switch c.Flash {
	case proto.FlashEvicted:
		Fill(img, r, ColEvicted)
		cross(img, r, White)
	case proto.FlashRestored:
		Fill(img, r, ColRestore)
		dot(img, r, White)
	case proto.FlashStored:
		Outline(img, r, ColRestore)
	}
}

// corner marks an answer (decode) block: a triangle in the top-right
// corner, a third of the cell wide.
func corner(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	n := max(2, r.Dx()/3)
	for k := 0; k < n; k++ {
		Fill(img, image.Rect(r.Max.X-n+k, r.Min.Y+k, r.Max.X, r.Min.Y+k+1), c)
	}
}

func cross(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	n := min(r.Dx(), r.Dy())
	if n < 5 {
		return
	}
	for k := 1; k < n-1; k++ {
		img.SetRGBA(r.Min.X+k, r.Min.Y+k, c)
		img.SetRGBA(r.Max.X-1-k, r.Min.Y+k, c)
	}
}

func dot(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	n := min(r.Dx(), r.Dy())
	if n < 5 {
		return
	}
	s := max(2, n/3)
	cx, cy := r.Min.X+r.Dx()/2, r.Min.Y+r.Dy()/2
	Fill(img, image.Rect(cx-s/2, cy-s/2, cx-s/2+s, cy-s/2+s), c)
}

// drawLanes draws the D2H and H2D lanes: one bar per copy from its
// submission to its completion, on a time axis around the current pass.
func drawLanes(img *image.RGBA, L PassLayout, o PassOptions) {
	y := L.LanesY
	x0, x1 := padX+34, L.W-padX
	if x1-x0 < 40 || !(o.To > o.From) {
		return
	}
	Text(img, padX, y+10, "D2H", Muted)
	Text(img, padX, y+10+laneH, "H2D", Muted)
	lane := func(h2d bool) int {
		if h2d {
			return y + laneH
		}
		return y
	}
	xOf := func(t float64) int {
		return x0 + int(math.Round(float64(x1-x0)*(t-o.From)/(o.To-o.From)))
	}
	Fill(img, image.Rect(x0, y, x1, y+2*laneH-2), color.RGBA{0xf6, 0xf7, 0xf9, 0xff})
	// the current pass
	ps, pe := max(x0, xOf(o.PassStart)), min(x1, xOf(o.PassEnd))
	if pe <= ps {
		pe = ps + 1
	}
	Fill(img, image.Rect(ps, y, pe, y+2*laneH-2), color.RGBA{0xe3, 0xec, 0xf6, 0xff})
	for _, t := range o.Transfers {
		end := t.Complete
		if math.IsNaN(end) {
			end = t.Deadline
		}
		if math.IsNaN(end) || end < o.From || t.Submit > o.To {
			continue
		}
		a, b := max(x0, xOf(t.Submit)), min(x1, xOf(end))
		if b <= a {
			b = a + 2
		}
		col := ColLaneD2H
		if t.H2D {
			col = ColLaneH2D
		}
		active := t.Submit <= o.PassEnd && end >= o.PassStart
		if !active {
			col = Pale(col)
		}
		ly := lane(t.H2D)
		Fill(img, image.Rect(a, ly+2, b, ly+laneH-3), col)
		if lbl := strconv.Itoa(t.Blocks); b-a > TextWidth(lbl)+4 && active {
			Text(img, a+2, ly+laneH-4, lbl, White)
		}
	}
	// time axis
	ay := y + 2*laneH + 10
	Fill(img, image.Rect(x0, ay-8, x1, ay-7), Grid)
	for _, t := range []float64{o.From, (o.From + o.To) / 2, o.To} {
		lbl := strconv.FormatFloat(math.Round(t*10)/10, 'f', -1, 64) + " ms"
		x := xOf(t)
		if t == o.To {
			x -= TextWidth(lbl)
		} else if t != o.From {
			x -= TextWidth(lbl) / 2
		}
		Text(img, x, ay+4, lbl, Muted)
	}
}

// TimelineLayout places the timeline's rows (one per run).
type TimelineLayout struct {
	W, H, X0, X1 int
	Rows         int
	// First and Passes are the first and last pass on the axis (First is
	// 1 unless the records keep a window of a long run).
	First, Passes int
}

const tlRow = 26

// LayoutTimeline sizes the timeline for rows runs of passes first to
// last.
func LayoutTimeline(width, rows, first, last int) TimelineLayout {
	first = max(first, 1)
	return TimelineLayout{W: max(width, 200), H: 16 + rows*tlRow + 14, X0: 86, X1: max(width, 200) - 10, Rows: rows,
		First: first, Passes: max(last, first)}
}

// X is the x of pass p (1-based).
func (L TimelineLayout) X(p int) int {
	first := max(L.First, 1)
	if L.Passes <= first {
		return L.X0
	}
	return L.X0 + (L.X1-L.X0)*(p-first)/(L.Passes-first)
}

// PassAt is the pass under x.
func (L TimelineLayout) PassAt(x int) int {
	first := max(L.First, 1)
	if x <= L.X0 {
		return first
	}
	if x >= L.X1 {
		return L.Passes
	}
	return first + int(math.Round(float64(x-L.X0)*float64(L.Passes-first)/float64(L.X1-L.X0)))
}

// Timeline marker colours (by proto.Mark*).
var MarkColours = [proto.NumMarks]color.RGBA{Vermillion, Purple, SkyBlue, Blue, Black, Green}

// DrawTimeline draws one row per run: ticks for G1 evictions, G2
// evictions, stores and restores in four thin lanes, preemptions as full
// height ticks; the current pass as a cursor; and each run's first
// divergence from the first run as a dashed line.
func DrawTimeline(img *image.RGBA, L TimelineLayout, labels []string, tls []*proto.Timeline, cur int) {
	Fill(img, img.Rect, White)
	lanes := []int{proto.MarkG1Evict, proto.MarkG2Evict, proto.MarkStore, proto.MarkRestore}
	lh := (tlRow - 6) / len(lanes)
	for r := 0; r < L.Rows; r++ {
		y := 8 + r*tlRow
		lbl := ""
		if r < len(labels) {
			lbl = labels[r]
		}
		if len(lbl) > 11 {
			lbl = lbl[:11]
		}
		Text(img, 4, y+tlRow/2+2, lbl, Black)
		Fill(img, image.Rect(L.X0, y, L.X1+1, y+tlRow-4), color.RGBA{0xf6, 0xf7, 0xf9, 0xff})
		if r >= len(tls) || tls[r] == nil {
			Text(img, L.X0+6, y+tlRow/2+2, "indexing…", Muted)
			continue
		}
		t := tls[r]
		for p := range t.Counts {
			c := t.Counts[p]
			x := L.X(max(t.First, 1) + p)
			for li, m := range lanes {
				if c[m] > 0 {
					ly := y + 1 + li*lh
					Fill(img, image.Rect(x, ly, x+1, ly+lh-1), MarkColours[m])
				}
			}
			if c[proto.MarkPreempt] > 0 {
				Fill(img, image.Rect(x, y, x+2, y+tlRow-4), Black)
			}
		}
		if d := t.Diverge; d > 0 {
			x := L.X(d)
			for yy := y - 2; yy < y+tlRow-2; yy += 3 {
				Fill(img, image.Rect(x-1, yy, x+1, yy+2), ColHighlight)
			}
		}
	}
	// cursor and pass axis
	x := L.X(cur)
	Fill(img, image.Rect(x-1, 4, x+1, L.H-12), Black)
	Text(img, L.X0, L.H-2, "pass "+strconv.Itoa(max(L.First, 1)), Muted)
	end := "pass " + strconv.Itoa(L.Passes)
	Text(img, L.X1-TextWidth(end), L.H-2, end, Muted)
}

// ColBarrier is the agentic warmup barrier's line on the timeline.
var ColBarrier = Orange

// DrawBarrier marks an agentic warmup's barrier on timeline row r: an
// orange line after the row's last preparation pass prep (passes 1 …
// prep prepared the caches; docs/model/agentic.md, "Warmup"). prep 0
// draws nothing.
func DrawBarrier(img *image.RGBA, L TimelineLayout, r, prep int) {
	if prep <= 0 || r < 0 || r >= L.Rows {
		return
	}
	y := 8 + r*tlRow
	x := (L.X(prep) + L.X(min(prep+1, L.Passes)) + 1) / 2
	Fill(img, image.Rect(x-1, y-3, x+1, y+tlRow-3), ColBarrier)
}
