package main

import (
	"encoding/json"
	"fmt"
	"image"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/kvsim/kvsim/ui/draw"
	"github.com/kvsim/kvsim/ui/state"
	"github.com/kvsim/kvsim/wasm/proto"
)

// PassView is the pass-by-pass view of the shown results: which pass of
// which rank is on screen, the decoded frames (one per compared run), the
// timeline index as the worker builds it, playback and the hover card.
// The records stay in the worker; the page asks for one pass at a time
// (seek) and draws what comes back on canvases.
type PassView struct {
	Meta  []proto.PassMeta // per run (result index)
	Notes []string         // per run: why it kept no record
	Runs  int              // runs with a record

	Rank int
	Pass int    // the pass on screen (of the first run; others follow by Sync)
	Sync string // "pass" or "time"

	Indexed, Total int
	Indexing       bool
	// IndexMs is the worker's time spent indexing (its steps, summed).
	IndexMs   float64
	indexPct  int
	Timelines [][]*proto.Timeline // [run][rank], once indexed

	Frames   []*pvFrame // per run
	want     []int      // the passes to show, per run
	inflight []int      // the passes of the request in flight (nil: none)
	seekID   int

	Kind    int // proto.Mark* for the "next event" buttons and Shift+arrows
	Playing bool
	Speed   int // passes per second

	Hover    *Hover
	Pinned   bool
	Selected uint32 // block key highlighted everywhere (a clicked cell)

	focus      string // a guided example's focus, applied once the index allows
	focusRun   int
	layouts    []draw.PassLayout
	imgs       []*image.RGBA
	tlImg      *image.RGBA
	tlLayout   draw.TimelineLayout
	dirty      bool
	FrameMs    float64 // the last frame's decode + draw + blit time
	frameStart float64
}

// pvFrame is one run's decoded pass.
type pvFrame struct {
	f              proto.Frame
	meta           proto.FrameMeta
	pass           int
	err            string
	diffG1, diffG2 []bool
	bin            []byte
}

// Hover is the card of the cell under the pointer.
type Hover struct {
	Run, Tier, Index int
	X, Y             int // position in the pass view box
	Lines            []string
	Title            string
}

// Speeds of playback, passes per second.
var Speeds = []int{2, 5, 10, 30, 60}

// newPassView starts the pass view for the results of run job id.
func newPassView(meta []proto.PassMeta, notes []string, focus string, focusRun, pass, rank int) *PassView {
	pv := &PassView{Meta: meta, Notes: notes, Sync: "pass", Kind: proto.MarkRestore, Speed: 10, Indexing: true,
		Frames: make([]*pvFrame, len(meta)), focus: focus, focusRun: focusRun, Pass: max(pass, 1), Rank: max(rank, 0)}
	for _, m := range meta {
		if m.Recorded {
			pv.Runs++
		}
	}
	if pv.Rank >= pv.NumRanks() {
		pv.Rank = 0
	}
	pv.Pass = min(pv.Pass, pv.Lines(0))
	if pass > 0 {
		pv.focus = "" // an explicit pass wins
	}
	return pv
}

// NumRanks is the rank count of the first recorded run.
func (pv *PassView) NumRanks() int {
	for _, m := range pv.Meta {
		if m.Recorded {
			return len(m.Ranks)
		}
	}
	return 0
}

// RankLabel names rank r of the first recorded run: "worker 0, DP rank
// 1", or in P/D "prefill 0 (worker 0), DP rank 0" and "decode 0 (worker
// 1), DP rank 0", numbering the workers of each pool from 0 as the request
// table does.
func (pv *PassView) RankLabel(r int) string {
	for _, m := range pv.Meta {
		if !m.Recorded || r >= len(m.Ranks) {
			continue
		}
		rm := m.Ranks[r]
		if rm.Role == "" || rm.Role == "aggregated" {
			return fmt.Sprintf("worker %d, DP rank %d", rm.Worker, rm.Rank)
		}
		first := rm.Worker
		for _, x := range m.Ranks {
			if x.Role == rm.Role {
				first = min(first, x.Worker)
			}
		}
		return fmt.Sprintf("%s %d (worker %d), DP rank %d", rm.Role, rm.Worker-first, rm.Worker, rm.Rank)
	}
	return strconv.Itoa(r)
}

// Role is the role of the rank shown ("" or "aggregated" without P/D).
func (pv *PassView) Role() string {
	for _, m := range pv.Meta {
		if m.Recorded && pv.Rank < len(m.Ranks) {
			return m.Ranks[pv.Rank].Role
		}
	}
	return ""
}

// Lines is run v's pass count on the current rank (its last "line" may be
// the run end).
func (pv *PassView) Lines(v int) int {
	if v < 0 || v >= len(pv.Meta) || !pv.Meta[v].Recorded || pv.Rank >= len(pv.Meta[v].Ranks) {
		return 0
	}
	return pv.Meta[v].Ranks[pv.Rank].Lines
}

// MaxLines is the most passes any run has on the current rank.
func (pv *PassView) MaxLines() int {
	n := 0
	for v := range pv.Meta {
		n = max(n, pv.Lines(v))
	}
	return max(n, 1)
}

// first is the first run with a record.
func (pv *PassView) first() int {
	for v, m := range pv.Meta {
		if m.Recorded {
			return v
		}
	}
	return -1
}

// timeline is run v's timeline on the current rank (nil until indexed).
func (pv *PassView) timeline(v int) *proto.Timeline {
	if v < 0 || v >= len(pv.Timelines) || pv.Rank >= len(pv.Timelines[v]) {
		return nil
	}
	return pv.Timelines[v][pv.Rank]
}

// passesFor is the pass each run shows for the current pass: the same
// number, or in time sync the pass of each run that covers the first
// run's pass end.
func (pv *PassView) passesFor() []int {
	out := make([]int, len(pv.Meta))
	f := pv.first()
	var t float64 = math.NaN()
	if pv.Sync == "time" {
		if tl := pv.timeline(f); tl != nil && pv.Pass <= len(tl.End) {
			t = tl.End[pv.Pass-1]
		}
	}
	for v := range out {
		n := pv.Lines(v)
		if n == 0 {
			continue
		}
		p := min(pv.Pass, n)
		if !math.IsNaN(t) && v != f {
			if tl := pv.timeline(v); tl != nil {
				p = sort.Search(len(tl.End), func(i int) bool { return tl.End[i] >= t }) + 1
				p = min(max(p, 1), n)
			}
		}
		out[v] = p
	}
	return out
}

// --- App side: requests, replies and controls ---

// pvSeek asks the worker for the current passes (one request in flight;
// a newer position waits for its reply).
func (a *App) pvSeek() {
	pv := a.PV
	if pv == nil || pv.Runs == 0 {
		return
	}
	pv.want = pv.passesFor()
	if pv.inflight != nil {
		return
	}
	a.pvRequest()
}

func (a *App) pvRequest() {
	pv := a.PV
	ps := make([]any, len(pv.want))
	for i, p := range pv.want {
		ps[i] = p
	}
	a.seq++
	pv.seekID = a.seq
	pv.inflight = append([]int(nil), pv.want...)
	a.host.Post(map[string]any{"op": proto.OpSeek, "id": pv.seekID, "run": a.resultsRun, "rank": pv.Rank, "passes": ps})
}

// pvFrames takes a seek reply.
func (a *App) pvFrames(m WorkerMsg) bool {
	pv := a.PV
	if pv == nil || m.ID != pv.seekID {
		return false
	}
	got := pv.inflight
	pv.inflight = nil
	if m.Err != nil {
		a.PVNote = m.Err.Msg
		return true
	}
	start := a.host.Now()
	for v, fm := range m.Frames {
		if v >= len(pv.Frames) || fm == nil {
			continue
		}
		fr := pv.Frames[v]
		if fr == nil {
			fr = &pvFrame{}
			pv.Frames[v] = fr
		}
		fr.pass = got[v]
		fr.err = fm.Err
		if fm.Err != "" {
			continue
		}
		if err := proto.DecodeFrame(fm.Bin, &fr.f); err != nil {
			fr.err = err.Error()
			continue
		}
		fr.meta = proto.FrameMeta{}
		if err := json.Unmarshal([]byte(fm.Meta), &fr.meta); err != nil {
			fr.err = err.Error()
		}
	}
	pv.diff()
	pv.frameStart = float64(a.host.Now().Sub(start).Microseconds()) / 1000
	pv.dirty = true
	if pv.Hover != nil {
		a.pvHoverLines()
	}
	// a newer position asked meanwhile
	for v := range pv.want {
		if v < len(got) && pv.want[v] != got[v] {
			a.pvRequest()
			break
		}
	}
	return true
}

// diff marks the cells whose block the run compared with does not hold
// in the same tier (cached G1 copies and G2 entries): every run is
// compared with the first, and the first with the second.
func (pv *PassView) diff() {
	var live []*pvFrame
	for _, fr := range pv.Frames {
		if fr != nil {
			fr.diffG1, fr.diffG2 = nil, nil
			if fr.err == "" {
				live = append(live, fr)
			}
		}
	}
	if len(live) < 2 {
		return
	}
	cached := func(c proto.Cell) bool { return c.Key != 0 && c.State != '.' && c.State != 'p' }
	sets := func(fr *pvFrame) (g1, g2 map[uint32]bool) {
		g1, g2 = map[uint32]bool{}, map[uint32]bool{}
		for _, c := range fr.f.G1 {
			if cached(c) {
				g1[c.Key] = true
			}
		}
		for _, c := range fr.f.G2 {
			g2[c.Key] = true
		}
		return g1, g2
	}
	base1, base2 := sets(live[0])
	sec1, sec2 := sets(live[1])
	for i, fr := range live {
		o1, o2 := base1, base2
		if i == 0 {
			o1, o2 = sec1, sec2
		}
		fr.diffG1 = make([]bool, len(fr.f.G1))
		for s, c := range fr.f.G1 {
			fr.diffG1[s] = cached(c) && !o1[c.Key]
		}
		fr.diffG2 = make([]bool, len(fr.f.G2))
		for s, c := range fr.f.G2 {
			fr.diffG2[s] = !o2[c.Key]
		}
	}
}

// pvIndex takes an index progress message.
func (a *App) pvIndex(m WorkerMsg) bool {
	pv := a.PV
	if pv == nil || m.ID != a.resultsRun {
		return false
	}
	pv.Indexed, pv.Total = m.Indexed, m.Total
	if m.Err != nil {
		pv.Indexing = false
		a.PVNote = m.Err.Msg
		return true
	}
	if !m.IndexDone {
		// re-render in 5% steps only
		pct := pv.Indexed * 20 / max(pv.Total, 1)
		changed := pct != pv.indexPct
		pv.indexPct = pct
		return changed
	}
	pv.Indexing = false
	pv.IndexMs = m.Ms
	pv.Timelines = make([][]*proto.Timeline, len(m.Timelines))
	for v, ranks := range m.Timelines {
		for _, b := range ranks {
			t, err := proto.DecodeTimeline(b)
			if err != nil {
				a.PVNote = err.Error()
				t = nil
			}
			pv.Timelines[v] = append(pv.Timelines[v], t)
		}
	}
	pv.dirty = true
	if pv.focus != "" {
		if p := a.pvFocusPass(pv.focus, pv.focusRun); p > 0 {
			a.PVSeekTo(p)
		}
		pv.focus = ""
	}
	return true
}

// pvFocusPass is where a guided example opens: the first pass where the
// compared runs' blocks differ, or the first restore from G2.
func (a *App) pvFocusPass(focus string, run int) int {
	pv := a.PV
	switch focus {
	case state.FocusDivergence:
		if run > 0 {
			if tl := pv.timeline(run); tl != nil && tl.Diverge > 0 {
				return tl.Diverge
			}
		}
		best := 0
		for v := range pv.Meta {
			if tl := pv.timeline(v); tl != nil && tl.Diverge > 0 && (best == 0 || tl.Diverge < best) {
				best = tl.Diverge
			}
		}
		return best
	case state.FocusRestore:
		return pv.nextEvent(0, proto.MarkRestore, +1)
	}
	return 0
}

// nextEvent is the next (dir +1) or previous (-1) pass after from where
// any shown run has an event of kind k; 0 when there is none.
func (pv *PassView) nextEvent(from, k, dir int) int {
	best := 0
	for v := range pv.Meta {
		tl := pv.timeline(v)
		if tl == nil {
			continue
		}
		for p := from + dir; p >= 1 && p <= len(tl.Counts); p += dir {
			if tl.Counts[p-1][k] > 0 {
				if best == 0 || (dir > 0 && p < best) || (dir < 0 && p > best) {
					best = p
				}
				break
			}
		}
	}
	return best
}

// PVSeekTo shows pass p.
func (a *App) PVSeekTo(p int) {
	defer a.guard()
	pv := a.PV
	if pv == nil || pv.Runs == 0 {
		return
	}
	p = min(max(p, 1), pv.MaxLines())
	pv.focus = ""
	if p == pv.Pass && pv.want != nil {
		return
	}
	pv.Pass = p
	a.pvSeek()
	a.updateURL()
}

// PVStep moves by d passes.
func (a *App) PVStep(d int) {
	if a.PV != nil {
		a.PVSeekTo(a.PV.Pass + d)
	}
}

// PVJump goes to the previous or next pass with an event of the selected
// kind.
func (a *App) PVJump(dir int) {
	pv := a.PV
	if pv == nil {
		return
	}
	if p := pv.nextEvent(pv.Pass, pv.Kind, dir); p > 0 {
		a.PVSeekTo(p)
	} else {
		a.PVNote = fmt.Sprintf("no %s %s pass %d", proto.MarkNames[pv.Kind], map[int]string{1: "after", -1: "before"}[dir], pv.Pass)
	}
}

// PVSetKind selects the event kind for jumps.
func (a *App) PVSetKind(k string) {
	if n, err := strconv.Atoi(k); err == nil && n >= 0 && n < proto.NumMarks && a.PV != nil {
		a.PV.Kind = n
	}
}

// PVSetRank switches the rank shown.
func (a *App) PVSetRank(r string) {
	n, err := strconv.Atoi(r)
	if err != nil || a.PV == nil || n < 0 || n >= a.PV.NumRanks() {
		return
	}
	a.PV.Rank = n
	a.PV.Pass = min(a.PV.Pass, a.PV.MaxLines())
	a.PV.dirty = true
	a.pvSeek()
	a.updateURL()
}

// PVSetSync switches between same-pass and same-time synchronisation.
func (a *App) PVSetSync(s string) {
	if a.PV != nil && (s == "pass" || s == "time") {
		a.PV.Sync = s
		a.pvSeek()
	}
}

// PVPlay starts or stops playback.
func (a *App) PVPlay() {
	if a.PV == nil || a.PV.Runs == 0 {
		return
	}
	a.PV.Playing = !a.PV.Playing
	if a.PV.Playing && a.PV.Pass >= a.PV.MaxLines() {
		a.PVSeekTo(1)
	}
	a.host.Play(a.PV.Playing, a.PV.Speed)
}

// PVSetSpeed sets the playback speed.
func (a *App) PVSetSpeed(s string) {
	if n, err := strconv.Atoi(s); err == nil && n > 0 && a.PV != nil {
		a.PV.Speed = n
		if a.PV.Playing {
			a.host.Play(true, n)
		}
	}
}

// PlayTick advances playback by one pass (the host's timer); it skips a
// tick while a frame is on its way.
func (a *App) PlayTick() bool {
	pv := a.PV
	if pv == nil || !pv.Playing {
		a.host.Play(false, 0)
		return false
	}
	if pv.inflight != nil {
		return false
	}
	if pv.Pass >= pv.MaxLines() {
		pv.Playing = false
		a.host.Play(false, 0)
		return true
	}
	a.PVSeekTo(pv.Pass + 1)
	return true
}

// Key handles the pass view's keyboard shortcuts; it tells whether the
// key was used.
func (a *App) Key(key string, shift bool) bool {
	defer a.guard()
	switch key {
	case "c", "C":
		if a.View == ViewSweep {
			return false
		}
		a.ToggleCompare()
		return true
	case "/":
		a.host.Focus("f-trace")
		return true
	}
	if a.PV == nil || a.PV.Runs == 0 || a.View == ViewSweep {
		return false
	}
	switch key {
	case "ArrowLeft":
		if shift {
			a.PVJump(-1)
		} else {
			a.PVStep(-1)
		}
	case "ArrowRight":
		if shift {
			a.PVJump(+1)
		} else {
			a.PVStep(+1)
		}
	case " ":
		a.PVPlay()
	case "Home":
		a.PVSeekTo(1)
	case "End":
		a.PVSeekTo(a.PV.MaxLines())
	default:
		return false
	}
	return true
}

// TimelineClick seeks to the pass under x on the timeline.
func (a *App) TimelineClick(x float64) {
	if a.PV == nil || a.PV.tlLayout.W == 0 {
		return
	}
	a.PVSeekTo(a.PV.tlLayout.PassAt(int(x)))
}

// PVHover handles the pointer over run v's canvas (x, y in canvas pixels;
// v < 0: the pointer left). It tells whether the card changed.
func (a *App) PVHover(v, x, y int, click bool) bool { return a.PVHoverAt(v, x, y, 0, 0, click) }

// PVHoverAt is PVHover with the pointer's position in the pass view box
// (px, py), where the card goes.
func (a *App) PVHoverAt(v, x, y, px, py int, click bool) bool {
	defer a.guard()
	pv := a.PV
	if pv == nil {
		return false
	}
	if v < 0 || v >= len(pv.layouts) {
		if pv.Hover != nil && !pv.Pinned {
			pv.Hover = nil
			return true
		}
		return false
	}
	tier, i, ok := pv.layouts[v].Hit(x, y)
	if click {
		if !ok {
			pv.Pinned, pv.Selected, pv.Hover = false, 0, nil
			pv.dirty = true
			return true
		}
		pv.Pinned = true
	} else if pv.Pinned {
		return false
	}
	if !ok {
		if pv.Hover != nil {
			pv.Hover = nil
			return true
		}
		return false
	}
	if pv.Hover != nil && pv.Hover.Run == v && pv.Hover.Tier == tier && pv.Hover.Index == i && !click {
		return false
	}
	pv.Hover = &Hover{Run: v, Tier: tier, Index: i, X: px, Y: py}
	if click {
		if fr := pv.Frames[v]; fr != nil {
			if c := pvCell(fr, tier, i); c != nil {
				pv.Selected = c.Key
			}
		}
		pv.dirty = true
	}
	a.pvHoverLines()
	return true
}

func pvCell(fr *pvFrame, tier, i int) *proto.Cell {
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

// pvHoverLines fills the card of the hovered cell.
func (a *App) pvHoverLines() {
	pv := a.PV
	h := pv.Hover
	fr := pv.Frames[h.Run]
	if fr == nil {
		return
	}
	c := pvCell(fr, h.Tier, h.Index)
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
	if name != "" {
		if i := indexByte(name, '#'); i > 0 {
			req := name[:i]
			h.Lines = append(h.Lines, "first computed by "+req+", block "+name[i+1:])
		}
	}
	if o := fr.f.Str(c.Owner); o != "" {
		h.Lines = append(h.Lines, "owner: "+o)
	}
	if h.Tier == 1 && c.Since >= 0 && c.State != '.' {
		h.Lines = append(h.Lines, fmt.Sprintf("age: %d passes (since pass %d)", fr.pass-int(c.Since), c.Since))
	}
	if c.Order >= 0 {
		n := 0
		cells := fr.f.G1
		if h.Tier == 2 {
			cells = fr.f.G2
		}
		for _, x := range cells {
			if x.Order >= 0 {
				n++
			}
		}
		what := "G1 eviction queue"
		if h.Tier == 2 {
			what = "G2 eviction order"
		}
		h.Lines = append(h.Lines, fmt.Sprintf("%s of %d in the %s", ordinal(int(c.Order)+1), n, what))
	}
	if c.Key != 0 {
		var where []string
		for v, f := range pv.Frames {
			if f == nil || f.err != "" {
				continue
			}
			var tiers []string
			for _, x := range f.f.G1 {
				if x.Key == c.Key && x.State != '.' {
					tiers = append(tiers, "G1")
					break
				}
			}
			for _, x := range f.f.G2 {
				if x.Key == c.Key {
					tiers = append(tiers, "G2")
					break
				}
			}
			t := "—"
			if len(tiers) > 0 {
				t = joinStr(tiers, " + ")
			}
			label := "copies"
			if len(pv.Frames) > 1 && v < len(a.Results) {
				label = a.Results[v].Label
			}
			where = append(where, label+": "+t)
		}
		h.Lines = append(h.Lines, where...)
	}
	if pv.Pinned {
		h.Lines = append(h.Lines, "(pinned: click elsewhere to release)")
	}
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

func joinStr(s []string, sep string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += sep
		}
		out += x
	}
	return out
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

// pvDraw draws the pass view's canvases after a render (see AfterRender).
func (a *App) pvDraw() {
	pv := a.PV
	if pv == nil || pv.Runs == 0 {
		return
	}
	start := a.host.Now()
	drew := false
	n := len(pv.Frames)
	if len(pv.imgs) != n {
		pv.imgs = make([]*image.RGBA, n)
		pv.layouts = make([]draw.PassLayout, n)
	}
	// one cell size for all compared runs: the smallest that fits each
	widths := make([]int, n)
	cell := 0
	for v := 0; v < n; v++ {
		widths[v] = a.host.Width("pv-canvas-" + strconv.Itoa(v))
		if widths[v] <= 0 || !pv.Meta[v].Recorded {
			continue
		}
		rm := pv.Meta[v].Ranks[min(pv.Rank, len(pv.Meta[v].Ranks)-1)]
		maxH := 560
		if pv.Runs > 1 {
			maxH = 420
		}
		if c := draw.LayoutPass(widths[v], maxH, rm.G1, rm.G2).Cell; cell == 0 || c < cell {
			cell = c
		}
	}
	for v := 0; v < n; v++ {
		w := widths[v]
		if w <= 0 || !pv.Meta[v].Recorded {
			continue
		}
		rm := pv.Meta[v].Ranks[min(pv.Rank, len(pv.Meta[v].Ranks)-1)]
		L := draw.LayoutPassCell(w, cell, rm.G1, rm.G2)
		if pv.imgs[v] == nil || pv.imgs[v].Rect.Dx() != L.W || pv.imgs[v].Rect.Dy() != L.H {
			pv.imgs[v] = image.NewRGBA(image.Rect(0, 0, L.W, L.H))
			pv.dirty = true
		}
		if pv.layouts[v] != L {
			pv.layouts[v] = L
			pv.dirty = true
		}
	}
	if pv.dirty {
		pv.dirty = false
		drew = true
		for v, fr := range pv.Frames {
			img := pv.imgs[v]
			if img == nil {
				continue
			}
			L := pv.layouts[v]
			label := ""
			if v < len(a.Results) {
				label = shortLabel(a.Results[v].Label)
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
				continue
			}
			o := draw.PassOptions{Title: label, Subtitle: pvSubtitle(fr), DiffG1: fr.diffG1, DiffG2: fr.diffG2,
				Highlight: pv.Selected, PassStart: fr.meta.StartMs, PassEnd: fr.meta.EndMs}
			o.From, o.To = laneWindow(fr.meta.StartMs, fr.meta.EndMs)
			if tl := pv.timeline(v); tl != nil {
				o.Transfers = tl.Transfers
			}
			draw.DrawPass(img, L, &fr.f, o)
		}
		// timeline
		w := a.host.Width("pv-timeline")
		if w > 0 {
			rows := 0
			var labels []string
			var tls []*proto.Timeline
			for v := range pv.Meta {
				if !pv.Meta[v].Recorded {
					continue
				}
				rows++
				switch {
				case len(a.Results) == 1:
					labels = append(labels, "this run")
				case v < len(a.Results):
					labels = append(labels, shortLabel(a.Results[v].Label))
				}
				tls = append(tls, pv.timeline(v))
			}
			L := draw.LayoutTimeline(w, rows, pv.MaxLines())
			if pv.tlImg == nil || pv.tlImg.Rect.Dx() != L.W || pv.tlImg.Rect.Dy() != L.H {
				pv.tlImg = image.NewRGBA(image.Rect(0, 0, L.W, L.H))
			}
			pv.tlLayout = L
			draw.DrawTimeline(pv.tlImg, L, labels, tls, pv.Pass)
		}
	}
	for v, img := range pv.imgs {
		if img != nil {
			a.host.Blit("pv-canvas-"+strconv.Itoa(v), img)
		}
	}
	if pv.tlImg != nil {
		a.host.Blit("pv-timeline", pv.tlImg)
	}
	if drew {
		pv.FrameMs = pv.frameStart + float64(a.host.Now().Sub(start).Microseconds())/1000
		pv.frameStart = 0
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
	if strings.HasPrefix(l, "G2 ") {
		return strings.TrimSuffix(l, " blocks")
	}
	return l
}

// laneWindow is the time window of the transfer lanes around a pass.
func laneWindow(start, end float64) (float64, float64) {
	mid := (start + end) / 2
	half := math.Max(10, (end-start)*4)
	return math.Max(0, mid-half), math.Max(0, mid-half) + 2*half
}

// PVWidth and PVHeight are canvas v's size (its layout, once known).
func (a *App) PVWidth(v int) int {
	if a.PV == nil || v >= len(a.PV.layouts) || a.PV.layouts[v].W == 0 {
		return 300
	}
	return a.PV.layouts[v].W
}

func (a *App) PVHeight(v int) int {
	if a.PV == nil || v >= len(a.PV.layouts) || a.PV.layouts[v].H == 0 {
		return 150
	}
	return a.PV.layouts[v].H
}

// TLWidth and TLHeight are the timeline canvas's size.
func (a *App) TLWidth() int {
	if a.PV == nil || a.PV.tlLayout.W == 0 {
		return 300
	}
	return a.PV.tlLayout.W
}

func (a *App) TLHeight() int {
	if a.PV == nil || a.PV.tlLayout.H == 0 {
		return 60
	}
	return a.PV.tlLayout.H
}

// PVLayoutJSON describes canvas v's grid geometry (tests locate cells
// with it).
func (a *App) PVLayoutJSON(v int) string {
	if a.PV == nil || v >= len(a.PV.layouts) {
		return ""
	}
	L := a.PV.layouts[v]
	b, _ := json.Marshal(map[string]int{"cell": L.Cell, "cols": L.Cols, "g1y": L.G1Y, "g2y": L.G2Y, "x0": 8, "gap": map[bool]int{true: 0, false: 1}[L.Cell <= 4]})
	return string(b)
}
