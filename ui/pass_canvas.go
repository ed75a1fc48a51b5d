package main

import (
	"encoding/json"
	"fmt"
	"image"
	"math"
	"strconv"
	"strings"

	"github.com/kvsim/kvsim/ui/draw"
	"github.com/kvsim/kvsim/ui/state"
	"github.com/kvsim/kvsim/wasm/proto"
)

// passCanvas holds the pass view's canvases: one grid image per compared
// run and the timeline, redrawn when a frame, the layout or the selection
// changed and pushed after every render.
type passCanvas struct {
	layouts    []draw.PassLayout
	imgs       []*image.RGBA
	tlImg      *image.RGBA
	tl         draw.TimelineLayout
	dirty      bool
	FrameMs    float64 // the last frame's decode + draw + blit time
	DrawMs     float64 // the last redraw's draw + blit time (no decode)
	frameStart float64 // the decode part of it
}

// draw lays the canvases out at their shown widths, redraws them if
// needed and pushes them (labels: the runs').
func (pc *passCanvas) draw(h Host, pv *passState, labels []string) {
	start := h.Now()
	pc.layout(h, pv)
	drew := pc.dirty
	if pc.dirty {
		pc.dirty = false
		for v, fr := range pv.Frames {
			pc.drawRun(v, fr, pv, labels)
		}
		pc.drawTimeline(h, pv, labels)
	}
	for v, img := range pc.imgs {
		if img != nil {
			h.Blit("pv-canvas-"+strconv.Itoa(v), img)
		}
	}
	if pc.tlImg != nil {
		h.Blit("pv-timeline", pc.tlImg)
	}
	if drew {
		pc.DrawMs = float64(h.Now().Sub(start).Microseconds()) / 1000
		pc.FrameMs = pc.frameStart + pc.DrawMs
		pc.frameStart = 0
	}
}

// layout sizes each run's canvas: each run its own cell size, the largest
// that fits its pools (binned when even the smallest cell does not), so
// one large run does not shrink the others' cells; the grids' headers say
// how many slots each holds.
func (pc *passCanvas) layout(h Host, pv *passState) {
	n := len(pv.Frames)
	if len(pc.imgs) != n {
		pc.imgs = make([]*image.RGBA, n)
		pc.layouts = make([]draw.PassLayout, n)
	}
	maxH := 560
	if pv.Runs > 1 {
		maxH = 420
	}
	for v := 0; v < n; v++ {
		w := h.Width("pv-canvas-" + strconv.Itoa(v))
		if w <= 0 || !pv.Meta[v].Recorded {
			continue
		}
		rm := pv.Meta[v].Ranks[min(pv.Rank, len(pv.Meta[v].Ranks)-1)]
		L := draw.LayoutPass(w, maxH, rm.G1, rm.G2)
		if pc.imgs[v] == nil || pc.imgs[v].Rect.Dx() != L.W || pc.imgs[v].Rect.Dy() != L.H {
			pc.imgs[v] = image.NewRGBA(image.Rect(0, 0, L.W, L.H))
			pc.dirty = true
		}
		if pc.layouts[v] != L {
			pc.layouts[v] = L
			pc.dirty = true
		}
	}
}

// drawRun draws run v's grids, or why there are none yet.
func (pc *passCanvas) drawRun(v int, fr *pvFrame, pv *passState, labels []string) {
	img := pc.imgs[v]
	if img == nil {
		return
	}
	L := pc.layouts[v]
	label := ""
	if v < len(labels) {
		label = shortLabel(labels[v])
	}
	if r := pv.Role(); r != "" && r != "aggregated" {
		label = r + " rank | " + label
	}
	if fr == nil || fr.err != "" {
		draw.Fill(img, img.Rect, draw.White)
		msg := "loading pass…"
		if fr != nil {
			msg = fr.err
		}
		draw.Text(img, 8, 16, label+": "+msg, draw.Muted)
		return
	}
	o := draw.PassOptions{Title: label, Subtitle: pvSubtitle(fr), DiffG1: fr.diffG1, DiffG2: fr.diffG2,
		Highlight: pv.hover.Selected, PassStart: fr.meta.StartMs, PassEnd: fr.meta.EndMs}
	o.From, o.To = laneWindow(fr.meta.StartMs, fr.meta.EndMs)
	if tl := pv.timeline(v); tl != nil {
		o.Transfers = tl.Transfers
	}
	draw.DrawPass(img, L, &fr.f, o)
}

// drawTimeline draws the timeline: one row per recorded run.
func (pc *passCanvas) drawTimeline(h Host, pv *passState, labels []string) {
	w := h.Width("pv-timeline")
	if w <= 0 {
		return
	}
	rows := 0
	var names []string
	var tls []*proto.Timeline
	var prep []int // per row: the rank's preparation passes (agentic warmup)
	for v := range pv.Meta {
		if !pv.Meta[v].Recorded {
			continue
		}
		rows++
		prep = append(prep, 0)
		if m := pv.Meta[v]; m.Warmup && pv.Rank < len(m.Ranks) {
			prep[len(prep)-1] = m.Ranks[pv.Rank].Prep
		}
		switch {
		case len(labels) == 1:
			names = append(names, "this run")
		case v < len(labels):
			names = append(names, shortLabel(labels[v]))
		}
		tls = append(tls, pv.timeline(v))
	}
	L := draw.LayoutTimeline(w, rows, pv.FirstLine(), pv.MaxLines())
	if pc.tlImg == nil || pc.tlImg.Rect.Dx() != L.W || pc.tlImg.Rect.Dy() != L.H {
		pc.tlImg = image.NewRGBA(image.Rect(0, 0, L.W, L.H))
	}
	pc.tl = L
	draw.DrawTimeline(pc.tlImg, L, names, tls, pv.Pass)
	for r, n := range prep {
		draw.DrawBarrier(pc.tlImg, L, r, n)
	}
}

func pvSubtitle(fr *pvFrame) string {
	s := "pass " + strconv.Itoa(fr.pass)
	if fr.meta.Final {
		s = "run end"
	}
	return s + ", " + state.Ms(fr.meta.StartMs) + "-" + state.Ms(fr.meta.EndMs) + " ms"
}

// shortLabel fits a run's label into the canvases' headers.
func shortLabel(l string) string {
	switch l {
	case "offloading v0.24":
		return "v0.24"
	case "offloading v0.32":
		return "v0.32"
	case "SimpleCPU v0.32":
		return "SimpleCPU"
	}
	// a G2-size row: its size (the rows share the rest)
	if i := strings.LastIndex(l, "G2 "); i >= 0 && strings.HasSuffix(l, " blocks") {
		return strings.TrimSuffix(l[i:], " blocks")
	}
	return l
}

// laneWindow is the time window of the transfer lanes around a pass.
func laneWindow(start, end float64) (float64, float64) {
	mid := (start + end) / 2
	half := math.Max(10, (end-start)*4)
	return math.Max(0, mid-half), math.Max(0, mid-half) + 2*half
}

// width and height are canvas v's size (its layout, once known).
func (pc *passCanvas) width(v int) int {
	if v >= len(pc.layouts) || pc.layouts[v].W == 0 {
		return 300
	}
	return pc.layouts[v].W
}

func (pc *passCanvas) height(v int) int {
	if v >= len(pc.layouts) || pc.layouts[v].H == 0 {
		return 150
	}
	return pc.layouts[v].H
}

// tlWidth and tlHeight are the timeline canvas's size.
func (pc *passCanvas) tlWidth() int {
	if pc.tl.W == 0 {
		return 300
	}
	return pc.tl.W
}

func (pc *passCanvas) tlHeight() int {
	if pc.tl.H == 0 {
		return 60
	}
	return pc.tl.H
}

// layoutJSON describes canvas v's grid geometry (tests locate cells with
// it).
func (pc *passCanvas) layoutJSON(v int) string {
	if v >= len(pc.layouts) {
		return ""
	}
	L := pc.layouts[v]
	gap := 1
	if L.Cell <= 4 {
		gap = 0
	}
	b, _ := json.Marshal(map[string]int{"cell": L.Cell, "cols": L.Cols, "g1y": L.G1Y, "g2y": L.G2Y, "x0": 8, "gap": gap, "per": L.Per})
	return string(b)
}

// hoverCard is the card of the cell under the pointer, and the block a
// click selected (highlighted in every run).
type hoverCard struct {
	Hover    *Hover
	Pinned   bool
	Selected uint32
}

// Hover is the card's content and place.
type Hover struct {
	Run, Tier, Index int
	X, Y             int // position in the pass view box
	Lines            []string
	Title            string
}

// style places the card beside the pointer.
func (h *Hover) style() string { return fmt.Sprintf("left: %dpx; top: %dpx", h.X+14, h.Y+14) }

// at moves the pointer to (x, y) of run v's canvas (v < 0: off the
// canvases) at (px, py) in the box; click pins the card or, off a cell,
// releases it. changed: the card changed (a new one needs fill); picked:
// the selected block changed (the grids need a redraw).
func (hc *hoverCard) at(layouts []draw.PassLayout, frames []*pvFrame, v, x, y, px, py int, click bool) (changed, picked bool) {
	if v < 0 || v >= len(layouts) {
		if hc.Hover != nil && !hc.Pinned {
			hc.Hover = nil
			return true, false
		}
		return false, false
	}
	tier, i, ok := layouts[v].Hit(x, y)
	if click {
		if !ok {
			hc.Pinned, hc.Selected, hc.Hover = false, 0, nil
			return true, true
		}
		hc.Pinned = true
	} else if hc.Pinned {
		return false, false
	}
	if !ok {
		changed = hc.Hover != nil
		hc.Hover = nil
		return changed, false
	}
	if h := hc.Hover; h != nil && h.Run == v && h.Tier == tier && h.Index == i && !click {
		return false, false
	}
	hc.Hover = &Hover{Run: v, Tier: tier, Index: i, X: px, Y: py}
	if click {
		if fr := frames[v]; fr != nil {
			if c := frameCell(fr, tier, i); c != nil {
				hc.Selected = c.Key
			}
		}
	}
	return true, click
}

// frameCell is cell i of a frame's tier (1: G1, 2: G2); nil past the end.
func frameCell(fr *pvFrame, tier, i int) *proto.Cell {
	cells := fr.f.G1
	if tier == 2 {
		cells = fr.f.G2
	}
	if i < 0 || i >= len(cells) {
		return nil
	}
	return &cells[i]
}

var stateNames = map[byte]string{'.': "free", 'p': "private to a running request (no identity yet)", 'A': "cached, in use",
	'i': "cached, idle (in the eviction queue)", 'h': "held for a copy to G2", 'r': "reserved for a load from G2",
	'P': "pending: a store is copying it", 'R': "resident", 'N': "pinned by a load"}

// fill writes the card of the hovered cell (labels: the runs').
func (hc *hoverCard) fill(frames []*pvFrame, labels []string) {
	h := hc.Hover
	fr := frames[h.Run]
	if fr == nil {
		return
	}
	c := frameCell(fr, h.Tier, h.Index)
	h.Lines = h.Lines[:0]
	if c == nil {
		h.Title = "unused G2 capacity"
		return
	}
	tier := "G1 slot " + strconv.Itoa(h.Index)
	if h.Tier == 2 {
		tier = "G2 entry " + strconv.Itoa(h.Index)
	}
	name := fr.f.Str(c.Name)
	h.Title = tier
	if name != "" {
		h.Title = name + " · " + tier
	}
	h.Lines = append(h.Lines, stateNames[c.State])
	if req, block, ok := strings.Cut(name, "#"); ok && req != "" {
		h.Lines = append(h.Lines, "first computed by "+req+", block "+block)
	}
	if o := fr.f.Str(c.Owner); o != "" {
		h.Lines = append(h.Lines, "owner: "+o)
	}
	if h.Tier == 1 && c.Since >= 0 && c.State != '.' {
		h.Lines = append(h.Lines, fmt.Sprintf("age: %d passes (since pass %d)", fr.pass-int(c.Since), c.Since))
	}
	if c.Order >= 0 {
		h.Lines = append(h.Lines, queueLine(fr, h.Tier, int(c.Order)))
	}
	if c.Key != 0 {
		h.Lines = append(h.Lines, copiesLines(frames, labels, c.Key)...)
	}
	if hc.Pinned {
		h.Lines = append(h.Lines, "(pinned: click elsewhere to release)")
	}
}

// queueLine places a cell in its tier's eviction order.
func queueLine(fr *pvFrame, tier, order int) string {
	cells, what := fr.f.G1, "G1 eviction queue"
	if tier == 2 {
		cells, what = fr.f.G2, "G2 eviction order"
	}
	n := 0
	for _, x := range cells {
		if x.Order >= 0 {
			n++
		}
	}
	return fmt.Sprintf("%s of %s in the %s", ordinal(order+1), state.Thousands(int64(n)), what)
}

// copiesLines say, per run, which tiers hold block key.
func copiesLines(frames []*pvFrame, labels []string, key uint32) []string {
	var where []string
	for v, f := range frames {
		if f == nil || f.err != "" {
			continue
		}
		var tiers []string
		for _, x := range f.f.G1 {
			if x.Key == key && x.State != '.' {
				tiers = append(tiers, "G1")
				break
			}
		}
		for _, x := range f.f.G2 {
			if x.Key == key {
				tiers = append(tiers, "G2")
				break
			}
		}
		t := "—"
		if len(tiers) > 0 {
			t = strings.Join(tiers, " + ")
		}
		label := "copies"
		if len(frames) > 1 && v < len(labels) {
			label = labels[v]
		}
		where = append(where, label+": "+t)
	}
	return where
}

func ordinal(n int) string {
	suf := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suf = "st"
	case n%10 == 2:
		suf = "nd"
	case n%10 == 3:
		suf = "rd"
	}
	return strconv.Itoa(n) + suf
}
