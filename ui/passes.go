package main

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/kvsim/kvsim/ui/state"
	"github.com/kvsim/kvsim/wasm/proto"
)

// passState is the pass view of one job's results: which pass of which
// rank is on screen, the decoded frames (one per compared run), the
// timeline index as the worker builds it, playback, the hover card and
// the canvases. A new one starts with each job's results.
type passState struct {
	Meta  []proto.PassMeta // per run (result index)
	Notes []string         // per run: why it kept no record
	Runs  int              // runs with a record

	Rank int
	Pass int    // the pass on screen (of the first run; others follow by Sync)
	Sync string // "pass" or "time"

	Indexed, Total int
	Indexing       bool
	// Warm is the last step of the worker's warm-up of the run's
	// checkpoints (a single long run, after the index).
	Warm proto.WarmReply
	// IndexMs is the worker's time spent indexing (its steps, summed).
	IndexMs   float64
	indexPct  int
	Timelines [][]*proto.Timeline // [run][rank], once indexed
	// Divergences compare every later run with the first, per rank (the
	// worker's kvsim diff), once indexed.
	Divergences []proto.Divergence

	// Filter narrows the event lists (kind, request or text); Expanded
	// shows every event of a run's pass instead of the first few.
	Filter   string
	Expanded []bool

	Frames   []*pvFrame // per run
	want     []int      // the passes to show, per run
	inflight []int      // the passes of the request in flight (nil: none)
	seekID   int

	Kind    int // proto.Mark* for the "next event" buttons and Shift+arrows
	Playing bool
	Speed   int // passes per second

	focus    string // a guided example's focus, applied once the index allows
	focusRun int
	hover    hoverCard
	canvas   passCanvas
}

// pvFrame is one run's decoded pass.
type pvFrame struct {
	f              proto.Frame
	meta           proto.FrameMeta
	pass           int
	err            string
	diffG1, diffG2 []bool
}

// newPassState starts the pass view of results with per-pass records,
// at pass and rank (0: the first, or the focus).
func newPassState(meta []proto.PassMeta, notes []string, focus string, focusRun, pass, rank int) *passState {
	pv := &passState{Meta: meta, Notes: notes, Sync: "time", Kind: proto.MarkRestore, Speed: 10, Indexing: true,
		Frames: make([]*pvFrame, len(meta)), Expanded: make([]bool, len(meta)), focus: focus, focusRun: focusRun,
		Pass: max(pass, 1), Rank: max(rank, 0)}
	for _, m := range meta {
		if m.Recorded {
			pv.Runs++
		}
	}
	if pv.Rank >= pv.NumRanks() {
		pv.Rank = 0
	}
	pv.Pass = max(min(pv.Pass, pv.Lines(0)), pv.FirstLine())
	if pass > 0 {
		pv.focus = "" // an explicit pass wins
	}
	return pv
}

// NumRanks is the rank count of the first recorded run.
func (pv *passState) NumRanks() int {
	if v := pv.first(); v >= 0 {
		return len(pv.Meta[v].Ranks)
	}
	return 0
}

// RankLabel names rank r of the first recorded run: "worker 0, DP rank
// 1", or in P/D "prefill 0 (worker 0), DP rank 0" and "decode 0 (worker
// 1), DP rank 0", numbering the workers of each pool from 0 as the request
// table does.
func (pv *passState) RankLabel(r int) string {
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
// RankRows are the per-rank summary of the pass view's rank picker: every
// DP rank of the first recorded run with its pass count and pool sizes, and
// each compared run's pass count on it.
func (pv *passState) RankRows() []RankRow {
	v := pv.first()
	if v < 0 {
		return nil
	}
	out := make([]RankRow, len(pv.Meta[v].Ranks))
	for r, rm := range pv.Meta[v].Ranks {
		row := RankRow{Rank: r, Label: pv.RankLabel(r), G1: state.Thousands(int64(rm.G1)), G2: "–"}
		if rm.G2 > 0 {
			row.G2 = state.Thousands(int64(rm.G2))
		}
		var passes []string
		for _, m := range pv.Meta {
			if m.Recorded && r < len(m.Ranks) {
				passes = append(passes, state.Thousands(int64(m.Ranks[r].Passes)))
			}
		}
		row.Passes = strings.Join(passes, " / ")
		out[r] = row
	}
	return out
}

// RankRow is one DP rank in the rank summary.
type RankRow struct {
	Rank                  int
	Label, Passes, G1, G2 string
}

func (pv *passState) Role() string {
	for _, m := range pv.Meta {
		if m.Recorded && pv.Rank < len(m.Ranks) {
			return m.Ranks[pv.Rank].Role
		}
	}
	return ""
}

// Lines is run v's pass count on the current rank (its last "line" may be
// the run end).
func (pv *passState) Lines(v int) int {
	if v < 0 || v >= len(pv.Meta) || !pv.Meta[v].Recorded || pv.Rank >= len(pv.Meta[v].Ranks) {
		return 0
	}
	return pv.Meta[v].Ranks[pv.Rank].Lines
}

// FirstLine is the first pass any run keeps on the current rank: 1, or
// the first of the window a long run's record keeps.
func (pv *passState) FirstLine() int {
	first := 0
	for v := range pv.Meta {
		if f := pv.firstOf(v); f <= pv.Lines(v) && (first == 0 || f < first) {
			first = f
		}
	}
	return max(first, 1)
}

// firstOf is run v's first kept pass on the current rank (1 unless its
// record keeps a window).
func (pv *passState) firstOf(v int) int {
	if pv.Lines(v) == 0 {
		return 1
	}
	return max(pv.Meta[v].Ranks[pv.Rank].First, 1)
}

// Windowed tells whether the records keep only a window of the run's
// passes (the run was too long for a whole record).
func (pv *passState) Windowed() bool {
	for _, m := range pv.Meta {
		if m.Stopped {
			return true
		}
		for _, r := range m.Ranks {
			if r.First > 1 || r.Ran > r.Passes {
				return true
			}
		}
	}
	return false
}

// stopped tells whether a run stopped after its kept window (so Ran
// counts only the passes up to there).
func (pv *passState) stopped() bool {
	for _, m := range pv.Meta {
		if m.Stopped {
			return true
		}
	}
	return false
}

// MostRan is the most passes a rank of any run ran.
func (pv *passState) MostRan() int {
	n := 0
	for _, m := range pv.Meta {
		for _, r := range m.Ranks {
			n = max(n, r.Ran, r.Passes)
		}
	}
	return n
}

// MaxLines is the most passes any run has on the current rank.
func (pv *passState) MaxLines() int {
	n := 0
	for v := range pv.Meta {
		n = max(n, pv.Lines(v))
	}
	return max(n, 1)
}

// first is the first run with a record (-1: none).
func (pv *passState) first() int {
	for v, m := range pv.Meta {
		if m.Recorded {
			return v
		}
	}
	return -1
}

// timeline is run v's timeline on the current rank (nil until indexed).
func (pv *passState) timeline(v int) *proto.Timeline {
	if v < 0 || v >= len(pv.Timelines) || pv.Rank >= len(pv.Timelines[v]) {
		return nil
	}
	return pv.Timelines[v][pv.Rank]
}

// passesFor is the pass each run shows for the current pass: the same
// number, or in time sync the pass of each run that covers the first
// run's pass end.
func (pv *passState) passesFor() []int {
	out := make([]int, len(pv.Meta))
	f := pv.first()
	t := math.NaN()
	if pv.Sync == "time" {
		if tl := pv.timeline(f); tl != nil {
			if i := pv.Pass - max(tl.First, 1); i >= 0 && i < len(tl.End) {
				t = tl.End[i]
			}
		}
	}
	for v := range out {
		n, first := pv.Lines(v), pv.firstOf(v)
		if n == 0 || first > n {
			continue
		}
		p := min(pv.Pass, n)
		if !math.IsNaN(t) && v != f {
			if tl := pv.timeline(v); tl != nil {
				p = sort.Search(len(tl.End), func(i int) bool { return tl.End[i] >= t }) + max(tl.First, 1)
				p = min(p, n)
			}
		}
		out[v] = max(p, first)
	}
	return out
}

// takeFrames decodes a seek reply's frames (got: the passes asked).
func (pv *passState) takeFrames(m *WorkerMsg, got []int) {
	for v, fo := range m.Frame.Frames {
		if v >= len(pv.Frames) || v >= len(got) || fo == nil {
			continue
		}
		fr := pv.Frames[v]
		if fr == nil {
			fr = &pvFrame{}
			pv.Frames[v] = fr
		}
		fr.pass = got[v]
		fr.err = fo.Error
		if fo.Error != "" {
			continue
		}
		if err := proto.DecodeFrame(m.Bin(fo.Bin), &fr.f); err != nil {
			fr.err = err.Error()
			continue
		}
		fr.meta = proto.FrameMeta{}
		if fo.Meta != nil {
			fr.meta = *fo.Meta
		}
	}
	pv.diff()
}

// diff marks the cells whose block the run compared with does not hold
// in the same tier (cached G1 copies and G2 entries): every run is
// compared with the first, and the first with the second.
func (pv *passState) diff() {
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
	base1, base2 := blockSets(live[0])
	sec1, sec2 := blockSets(live[1])
	for i, fr := range live {
		o1, o2 := base1, base2
		if i == 0 {
			o1, o2 = sec1, sec2
		}
		fr.diffG1 = make([]bool, len(fr.f.G1))
		for s, c := range fr.f.G1 {
			fr.diffG1[s] = cachedCell(c) && !o1[c.Key]
		}
		fr.diffG2 = make([]bool, len(fr.f.G2))
		for s, c := range fr.f.G2 {
			fr.diffG2[s] = !o2[c.Key]
		}
	}
}

// cachedCell tells whether a G1 cell holds a cached block.
func cachedCell(c proto.Cell) bool { return c.Key != 0 && c.State != '.' && c.State != 'p' }

// blockSets are the blocks a frame holds in G1 (cached) and in G2.
func blockSets(fr *pvFrame) (g1, g2 map[uint32]bool) {
	g1, g2 = map[uint32]bool{}, map[uint32]bool{}
	for _, c := range fr.f.G1 {
		if cachedCell(c) {
			g1[c.Key] = true
		}
	}
	for _, c := range fr.f.G2 {
		g2[c.Key] = true
	}
	return g1, g2
}

// takeIndex takes the finished timeline index ([run][rank] encoded
// timelines, payloads of m); the error is the last that did not decode.
func (pv *passState) takeIndex(m *WorkerMsg, ir *proto.IndexReply) error {
	var bad error
	pv.Indexing = false
	pv.IndexMs = ir.Ms
	pv.Timelines = make([][]*proto.Timeline, len(ir.Timelines))
	for v, ranks := range ir.Timelines {
		for _, ref := range ranks {
			t, err := proto.DecodeTimeline(m.Bin(ref))
			if err != nil {
				bad, t = err, nil
			}
			pv.Timelines[v] = append(pv.Timelines[v], t)
		}
	}
	pv.Divergences = ir.Divergences
	pv.canvas.dirty = true
	return bad
}

// focusPass is where a guided example opens: the first pass where the
// compared runs' blocks differ, or the first restore from G2 (0: none).
func (pv *passState) focusPass() int {
	switch pv.focus {
	case state.FocusDivergence:
		if pv.focusRun > 0 {
			if tl := pv.timeline(pv.focusRun); tl != nil && tl.Diverge > 0 {
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
func (pv *passState) nextEvent(from, k, dir int) int {
	best := 0
	for v := range pv.Meta {
		tl := pv.timeline(v)
		if tl == nil {
			continue
		}
		first := max(tl.First, 1)
		p := from + dir
		if dir > 0 {
			p = max(p, first)
		} else {
			p = min(p, first+len(tl.Counts)-1)
		}
		for ; p >= first && p < first+len(tl.Counts); p += dir {
			if tl.Counts[p-first][k] > 0 {
				if best == 0 || (dir > 0 && p < best) || (dir < 0 && p > best) {
					best = p
				}
				break
			}
		}
	}
	return best
}

// The pass view's data attributes (tests read them). They take a nil
// passState, the view with nothing on screen.

func (pv *passState) pass() int {
	if pv == nil {
		return 0
	}
	return pv.Pass
}

// ready: every shown frame is the current position's.
func (pv *passState) ready() bool {
	if pv == nil || pv.inflight != nil {
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

func (pv *passState) indexed() bool { return pv != nil && !pv.Indexing }

// warmed is the number of checkpoints kept once their warm-up is over,
// and nil (no attribute) before.
func (pv *passState) warmed() any {
	if pv == nil || !pv.Warm.Done {
		return nil
	}
	return pv.Warm.Checkpoints
}

func (pv *passState) frameMs() string {
	if pv == nil {
		return ""
	}
	return strconv.FormatFloat(pv.canvas.FrameMs, 'f', 2, 64)
}

func (pv *passState) drawMs() string {
	if pv == nil {
		return ""
	}
	return strconv.FormatFloat(pv.canvas.DrawMs, 'f', 2, 64)
}

func (pv *passState) indexMs() string {
	if pv == nil || pv.Indexing {
		return ""
	}
	return strconv.FormatFloat(pv.IndexMs, 'f', 1, 64)
}

func (pv *passState) playLabel() string {
	if pv.Playing {
		return "❚❚"
	}
	return "▶ play"
}

func (pv *passState) passLabel() string {
	f := pv.first()
	s := "pass " + state.Thousands(int64(pv.Pass)) + " of " + state.Thousands(int64(pv.MaxLines()))
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
		if m.Bound != "" {
			s += " · " + m.Bound + "-bound"
		}
	}
	return s
}

// divergence is one compared run's first difference from the first run.
type divergence struct {
	Pass int
	Text string
}

// divergences lists, for each compared run after the first, the first
// pass where its blocks differ from the first run's (labels: the runs').
func (pv *passState) divergences(labels []string) []divergence {
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
		if f < len(labels) && v < len(labels) {
			a, b = shortLabel(labels[f]), shortLabel(labels[v])
		}
		switch first := pv.firstOf(v); {
		case d.Pass == 0 && first > 1:
			d.Text = fmt.Sprintf("%s and %s hold the same blocks in every kept pass", b, a)
		case d.Pass == 0:
			d.Text = fmt.Sprintf("%s and %s hold the same blocks in every pass", b, a)
		case first > 1 && d.Pass == first:
			d.Text = fmt.Sprintf("%s already differs from %s in pass %d, the first kept", b, a, d.Pass)
		default:
			d.Text = fmt.Sprintf("%s first differs from %s in pass %d", b, a, d.Pass)
		}
		out = append(out, d)
	}
	return out
}

func (pv *passState) gridsClass() string {
	if pv.Runs > 1 {
		return "pv-grids multi"
	}
	return "pv-grids"
}

func (pv *passState) noRecord(v int, labels []string) string {
	label := ""
	if v < len(labels) {
		label = labels[v] + ": "
	}
	if v < len(pv.Notes) && pv.Notes[v] != "" {
		return label + pv.Notes[v]
	}
	return label + "no per-pass record"
}

const shownEvents = 6

// events are the event lines of run v's pass shown: those that differ from
// the other runs' shown passes first, then the rest, in order; narrowed by
// the filter; the first few unless expanded.
func (pv *passState) events(v int) []evLine {
	all := pv.allEvents(v)
	if !pv.Expanded[v] && len(all) > shownEvents {
		all = all[:shownEvents]
	}
	return all
}

// evLine is one event line with whether it differs from the other runs.
type evLine struct {
	proto.EventLine
	Differs bool
}

func (l evLine) class() string {
	c := "ev " + l.Kind
	if l.Differs {
		c += " differs"
	}
	return c
}

func (pv *passState) allEvents(v int) []evLine {
	fr := pv.Frames[v]
	if fr == nil || fr.err != "" {
		return nil
	}
	others := map[string]bool{}
	compared := false
	for u, o := range pv.Frames {
		if u != v && o != nil && o.err == "" {
			compared = true
			for _, e := range o.meta.Events {
				others[e.Text] = true
			}
		}
	}
	var diff, same []evLine
	for _, e := range fr.meta.Events {
		if !matches(e, pv.Filter) {
			continue
		}
		if compared && !others[e.Text] {
			diff = append(diff, evLine{e, true})
		} else {
			same = append(same, evLine{e, false})
		}
	}
	return append(diff, same...)
}

// matches tells whether an event line passes the filter: every word of
// it appears in the line's kind, request or text.
func matches(e proto.EventLine, filter string) bool {
	for _, w := range strings.Fields(strings.ToLower(filter)) {
		if !strings.Contains(strings.ToLower(e.Kind+" "+e.Request+" "+e.Text), w) {
			return false
		}
	}
	return true
}

// moreEvents labels the expand button of run v's events ("" when all
// show and none is hidden).
func (pv *passState) moreEvents(v int) string {
	n := len(pv.allEvents(v))
	switch {
	case pv.Expanded[v] && n > shownEvents:
		return "show the first " + strconv.Itoa(shownEvents)
	case n > shownEvents:
		return fmt.Sprintf("show all %d events", n)
	}
	return ""
}

// eventsNote says what the list holds when it is empty or cut.
func (pv *passState) eventsNote(v int) string {
	fr := pv.Frames[v]
	if fr == nil || fr.err != "" {
		return ""
	}
	switch {
	case fr.meta.NumEvents == 0:
		return "no events in this pass"
	case len(pv.allEvents(v)) == 0:
		return fmt.Sprintf("none of the %d events matches the filter", fr.meta.NumEvents)
	case fr.meta.NumEvents > len(fr.meta.Events):
		return fmt.Sprintf("the first %d of %d events", len(fr.meta.Events), fr.meta.NumEvents)
	}
	return ""
}

// NumEvents is how many events run v's shown pass has (tests read it).
func (pv *passState) NumEvents(v int) int {
	if v >= len(pv.Frames) || pv.Frames[v] == nil {
		return 0
	}
	return pv.Frames[v].meta.NumEvents
}

// states is run v's G1 slot states at the shown pass, one character per
// slot, '*' for a slot flashing an event (tests read it); "" for a G1 of
// more than maxStatesAttr slots: vugu sends an attribute to the DOM in
// one instruction of a bounded buffer, and a 16,384-character one does
// not fit (the render loop panics).
func (pv *passState) states(v int) string {
	if v >= len(pv.Frames) || pv.Frames[v] == nil || pv.Frames[v].err != "" || len(pv.Frames[v].f.G1) > maxStatesAttr {
		return ""
	}
	b := make([]byte, len(pv.Frames[v].f.G1))
	for i, c := range pv.Frames[v].f.G1 {
		b[i] = c.State
		if c.Flash != 0 {
			b[i] = '*'
		}
	}
	return string(b)
}

// maxStatesAttr bounds the G1 size whose states go into the canvas's
// data-states attribute.
const maxStatesAttr = 2048

// warmupRank is the first recorded run's meta of the rank on screen when
// that run had an agentic warmup (ok false otherwise).
func (pv *passState) warmupRank() (m proto.PassMeta, prep int, ok bool) {
	if pv == nil {
		return m, 0, false
	}
	for _, m := range pv.Meta {
		if m.Recorded {
			if !m.Warmup || pv.Rank >= len(m.Ranks) {
				return m, 0, false
			}
			return m, m.Ranks[pv.Rank].Prep, true
		}
	}
	return m, 0, false
}

// phase says where the pass on screen stands to an agentic warmup's
// barrier ("" without warmup): the rank's first passes prepare the caches
// and are left out of the report, whose times start at the barrier
// (docs/model/agentic.md, "Warmup").
func (pv *passState) phase() string {
	m, prep, ok := pv.warmupRank()
	if !ok || pv.Pass < 1 {
		return ""
	}
	at := state.Ms(m.BarrierMs)
	switch {
	case pv.Pass <= prep:
		return fmt.Sprintf("preparation pass %d of %d (agentic warmup, before the barrier at %s ms; not in the report)", pv.Pass, prep, at)
	case pv.Pass == prep+1:
		return fmt.Sprintf("first pass after the warmup barrier (%s ms; report times start there)", at)
	}
	return fmt.Sprintf("after the warmup barrier (%s ms)", at)
}

// phaseClass is the phase label's class ("prep" on preparation passes).
func (pv *passState) phaseClass() string {
	if _, prep, ok := pv.warmupRank(); ok && pv.Pass <= prep {
		return "prep"
	}
	return "profile"
}
