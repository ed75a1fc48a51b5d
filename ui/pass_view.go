package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kvsim/kvsim/ui/state"
	"github.com/kvsim/kvsim/wasm/proto"
)

// PassView is the pass-by-pass view of the run view's results: controls,
// scrubber, timeline, one canvas per compared run, the hover card and the
// legend. The records stay in the worker; the view asks for one pass at a
// time (seek) and draws what comes back. Its state for the shown results
// (passState) starts with each job's results; a link's pass and rank wait
// for them.
type PassView struct {
	Run *RunView
	// Note says what went wrong with the pass view, or why there is none.
	Note string

	pv                 *passState // nil before results with records
	linkPass, linkRank int        // where a link opens the next results (0: not set)

	// FromText and FromErr: the "show passes from" field of a long run's
	// pass view, as typed, and why it was refused.
	FromText, FromErr string
	// ran is the most passes a rank of the shown results ran: a job that
	// moved the window stopped after it (proto.PassMeta.Stopped), so its
	// own records cannot say.
	ran int
}

// Speeds of playback, passes per second.
var Speeds = []int{2, 5, 10, 30, 60}

// reset closes the pass view; pass and rank place the next one.
func (c *PassView) reset(pass, rank int) {
	c.pv, c.Note = nil, ""
	c.linkPass, c.linkRank = pass, rank
}

// lost closes the pass view when the worker that kept its records is gone.
func (c *PassView) lost() {
	if c.pv != nil {
		c.Run.page.host.Play(false, 0)
		c.pv = nil
		c.Note = "the simulator was restarted, and the passes of these results went with it; press Run to see them again"
	}
}

// start opens the pass view on new results: at the link's pass, or where
// the guided example points (focus), or at pass 1.
func (c *PassView) start(res *proto.RunResult, focus string, focusRun int) {
	c.pv, c.Note = nil, ""
	notes := make([]string, len(res.Results))
	for i, r := range res.Results {
		notes[i] = r.RecordNote
		if r.RecordNote != "" {
			c.Note = r.RecordNote
		}
	}
	if len(res.Passes) == 0 {
		return
	}
	c.pv = newPassState(res.Passes, notes, focus, focusRun, c.linkPass, c.linkRank)
	c.linkPass, c.linkRank = 0, 0
	if !c.pv.stopped() {
		c.ran = c.pv.MostRan()
	}
	c.seek()
	c.Run.page.updateURL()
}

// shown is the pass view on screen: nil before results with records and
// while the results are stale.
func (c *PassView) shown() *passState {
	if c.pv == nil || c.pv.Runs == 0 || c.Run.Stale() {
		return nil
	}
	return c.pv
}

// place is the pass and rank on screen, for the link (0, 0: none).
func (c *PassView) place() (pass, rank int) {
	if pv := c.shown(); pv != nil {
		return pv.Pass, pv.Rank
	}
	return 0, 0
}

// recorded tells whether run v of the results kept a per-pass record.
func (c *PassView) recorded(v int) bool {
	return c.pv != nil && v >= 0 && v < len(c.pv.Meta) && c.pv.Meta[v].Recorded
}

// seek asks the worker for the current passes (one request in flight; a
// newer position waits for its reply).
func (c *PassView) seek() {
	pv := c.pv
	if pv == nil || pv.Runs == 0 {
		return
	}
	pv.want = pv.passesFor()
	if pv.inflight == nil {
		c.request()
	}
}

func (c *PassView) request() {
	pv := c.pv
	page := c.Run.page
	pv.seekID = page.nextID()
	pv.inflight = append([]int(nil), pv.want...)
	page.host.Post(Message{Req: proto.Request{Op: proto.OpSeek, ID: pv.seekID,
		Seek: &proto.SeekJob{Run: c.Run.passesRun, Rank: pv.Rank, Passes: append([]int(nil), pv.want...)}}})
}

// frames takes a seek reply, and asks again when the position moved
// meanwhile.
func (c *PassView) frames(m WorkerMsg) bool {
	pv := c.pv
	if pv == nil || m.ID != pv.seekID {
		return false
	}
	got := pv.inflight
	pv.inflight = nil
	if m.Error != nil || m.Frame == nil {
		c.Note = "the worker sent no frames"
		if m.Error != nil {
			c.Note = m.Error.Msg
		}
		return true
	}
	h := c.Run.page.host
	start := h.Now()
	pv.takeFrames(&m, got)
	pv.canvas.frameStart = float64(h.Now().Sub(start).Microseconds()) / 1000
	pv.canvas.dirty = true
	if pv.hover.Hover != nil {
		pv.hover.fill(pv.Frames, c.labels())
	}
	for v := range pv.want {
		if v < len(got) && pv.want[v] != got[v] {
			c.request()
			break
		}
	}
	return true
}

// index takes the worker's timeline index progress; when the index is
// done, a guided example's focus applies.
func (c *PassView) index(m WorkerMsg) bool {
	pv := c.pv
	if pv == nil || m.ID != c.Run.passesRun {
		return false
	}
	ir := m.Index
	if ir == nil {
		ir = &proto.IndexReply{Done: true}
	}
	if w := ir.Warm; w != nil && m.Error == nil {
		// a step of the checkpoints' warm-up, after the index
		pv.Warm = *w
		return w.Done
	}
	pv.Indexed, pv.Total = ir.Indexed, ir.Total
	if m.Error != nil {
		pv.Indexing = false
		c.Note = m.Error.Msg
		return true
	}
	if !ir.Done {
		// re-render in 5% steps only
		pct := pv.Indexed * 20 / max(pv.Total, 1)
		changed := pct != pv.indexPct
		pv.indexPct = pct
		return changed
	}
	if err := pv.takeIndex(&m, ir); err != nil {
		c.Note = err.Error()
	}
	if pv.focus != "" {
		if p := pv.focusPass(); p > 0 {
			c.SeekTo(p)
		}
		pv.focus = ""
	}
	return true
}

// SeekTo shows pass p.
func (c *PassView) SeekTo(p int) {
	defer c.Run.page.guard()
	pv := c.pv
	if pv == nil || pv.Runs == 0 {
		return
	}
	p = max(min(p, pv.MaxLines()), pv.FirstLine())
	pv.focus = ""
	if p == pv.Pass && pv.want != nil {
		return
	}
	pv.Pass = p
	c.seek()
	c.Run.page.updateURL()
}

// Scrub is the scrubber's input, which the host takes outside vugu's
// events (host_js.go) so that it costs no render of its own: the frame it
// asks for renders when it comes, and a scrub across the Mooncake page
// took two renders of about 45 ms each in Chromium (docs/ui.md, "Renders
// are rationed"). It tells whether the page must render now: when no frame
// is on its way (nothing to show, or the position did not change).
func (c *PassView) Scrub(p int) (render bool) {
	c.SeekTo(p)
	pv := c.pv
	return pv == nil || pv.inflight == nil || c.Run.page.Fatal != ""
}

// MoveTo shows pass p of the whole run: the run-wide scrubber of a long
// run's pass view, whose records keep a window of it. Inside the window it
// seeks; elsewhere it runs the config again keeping the window that has p
// a tenth of the way in (RunView.runPasses: from the nearest engine
// checkpoint, docs/ui.md, "Window moves from checkpoints") and opens it at
// p. A tenth, not the middle: the first frame of a moved window is read
// from the window's start (the timeline index that keeps snapshots inside
// it comes after), so a pass far into it is drawn later; 200 passes still
// leave room to step back.
func (c *PassView) MoveTo(p int) {
	defer c.Run.page.guard()
	pv := c.pv
	if pv == nil || pv.Runs == 0 || c.Run.Running {
		return
	}
	most := c.mostRan()
	p = max(1, min(p, most))
	if p >= pv.FirstLine() && p <= pv.MaxLines() {
		c.SeekTo(p)
		return
	}
	from := max(1, min(p-proto.WindowPasses/10, most-proto.WindowPasses+1))
	c.FromText, c.FromErr = "", ""
	c.Run.runPasses(from)
	c.linkPass, c.linkRank = p, pv.Rank
}

// mostRan is the most passes a rank of the shown results ran (the
// run-wide scrubber's end).
func (c *PassView) mostRan() int {
	if c.pv == nil {
		return 1
	}
	return max(c.ran, c.pv.MostRan(), 1)
}

// runLabel says where the run-wide scrubber stands and what it does.
func (c *PassView) runLabel() string {
	return "pass " + state.Thousands(int64(c.pv.Pass)) + " of " + state.Thousands(int64(c.mostRan())) +
		" in the whole run (drag anywhere: outside the kept passes " + c.moveText() + ")"
}

// moveText says what a window move runs: a single run goes on from its
// nearest checkpoint, a compare keeps none (docs/ui.md, "Window moves
// from checkpoints").
func (c *PassView) moveText() string {
	if c.pv != nil && c.pv.Runs > 1 {
		return "each compared run runs again up to there"
	}
	return "the view runs again from the nearest checkpoint"
}

// dragLabel is the run-wide scrubber's label while it is dragged to p.
func (c *PassView) dragLabel(p int) string {
	if c.pv == nil {
		return ""
	}
	p = max(1, min(p, c.mostRan()))
	s := "release to show pass " + state.Thousands(int64(p)) + " of " + state.Thousands(int64(c.mostRan()))
	if p < c.pv.FirstLine() || p > c.pv.MaxLines() {
		s += " (" + c.moveText() + ")"
	}
	return s
}

// Step moves by d passes.
func (c *PassView) Step(d int) {
	if c.pv != nil {
		c.SeekTo(c.pv.Pass + d)
	}
}

// Jump goes to the previous (dir -1) or next (+1) pass with an event of
// the selected kind.
func (c *PassView) Jump(dir int) {
	pv := c.pv
	if pv == nil {
		return
	}
	if p := pv.nextEvent(pv.Pass, pv.Kind, dir); p > 0 {
		c.SeekTo(p)
	} else {
		c.Note = fmt.Sprintf("no %s %s pass %d", proto.MarkNames[pv.Kind], map[int]string{1: "after", -1: "before"}[dir], pv.Pass)
	}
}

// SetKind selects the event kind for jumps.
func (c *PassView) SetKind(k string) {
	if n, err := strconv.Atoi(k); err == nil && n >= 0 && n < proto.NumMarks && c.pv != nil {
		c.pv.Kind = n
	}
}

// SetRank switches the rank shown.
func (c *PassView) SetRank(r string) {
	n, err := strconv.Atoi(r)
	if err != nil || c.pv == nil || n < 0 || n >= c.pv.NumRanks() {
		return
	}
	c.pv.Rank = n
	c.pv.Pass = max(min(c.pv.Pass, c.pv.MaxLines()), c.pv.FirstLine())
	c.pv.canvas.dirty = true
	c.seek()
	c.Run.page.updateURL()
}

// rankRowClass marks the shown rank's row in the rank summary.
func (c *PassView) rankRowClass(r int) string {
	if c.pv != nil && c.pv.Rank == r {
		return "sel"
	}
	return ""
}

// SetSync switches between same-pass and same-time synchronisation.
func (c *PassView) SetSync(s string) {
	if c.pv != nil && (s == "pass" || s == "time") {
		c.pv.Sync = s
		c.seek()
	}
}

// Play starts or stops playback.
func (c *PassView) Play() {
	pv := c.pv
	if pv == nil || pv.Runs == 0 {
		return
	}
	pv.Playing = !pv.Playing
	if pv.Playing && pv.Pass >= pv.MaxLines() {
		c.SeekTo(1)
	}
	c.Run.page.host.Play(pv.Playing, pv.Speed)
}

// SetSpeed sets the playback speed.
func (c *PassView) SetSpeed(s string) {
	if n, err := strconv.Atoi(s); err == nil && n > 0 && c.pv != nil {
		c.pv.Speed = n
		if c.pv.Playing {
			c.Run.page.host.Play(true, n)
		}
	}
}

// PlayTick advances playback by one pass (the host's timer); it skips a
// tick while a frame is on its way.
func (c *PassView) PlayTick() bool {
	pv := c.pv
	h := c.Run.page.host
	if pv == nil || !pv.Playing {
		h.Play(false, 0)
		return false
	}
	if pv.inflight != nil {
		return false
	}
	if pv.Pass >= pv.MaxLines() {
		pv.Playing = false
		h.Play(false, 0)
		return true
	}
	c.SeekTo(pv.Pass + 1)
	return true
}

// Key handles the pass view's keyboard shortcuts; it tells whether the
// key was used.
func (c *PassView) Key(key string, shift bool) bool {
	if c.pv == nil || c.pv.Runs == 0 {
		return false
	}
	dir := map[string]int{"ArrowLeft": -1, "ArrowRight": +1}[key]
	switch {
	case dir != 0 && shift:
		c.Jump(dir)
	case dir != 0:
		c.Step(dir)
	case key == " ":
		c.Play()
	case key == "Home":
		c.SeekTo(1)
	case key == "End":
		c.SeekTo(c.pv.MaxLines())
	default:
		return false
	}
	return true
}

// TimelineClick seeks to the pass under x on the timeline.
func (c *PassView) TimelineClick(x float64) {
	if c.pv == nil || c.pv.canvas.tl.W == 0 {
		return
	}
	c.SeekTo(c.pv.canvas.tl.PassAt(int(x)))
}

// Hover handles the pointer over run v's canvas (x, y in canvas pixels;
// v < 0: the pointer left) at (px, py) in the pass view box, where the
// card goes; click pins the card. It tells whether the card changed.
func (c *PassView) Hover(v, x, y, px, py int, click bool) bool {
	defer c.Run.page.guard()
	pv := c.pv
	if pv == nil {
		return false
	}
	changed, picked := pv.hover.at(pv.canvas.layouts, pv.Frames, v, x, y, px, py, click)
	if picked {
		pv.canvas.dirty = true
	}
	if changed && pv.hover.Hover != nil {
		pv.hover.fill(pv.Frames, c.labels())
	}
	return changed
}

// Hovering tells whether the pointer matters to the pass view now (a card
// shows or is pinned).
func (c *PassView) Hovering() bool {
	return c.pv != nil && (c.pv.hover.Pinned || c.pv.hover.Hover != nil)
}

// Pinned tells whether the hover card is pinned.
func (c *PassView) Pinned() bool { return c.pv != nil && c.pv.hover.Pinned }

// draw draws the pass view's canvases after a render (see
// Root.AfterRender).
func (c *PassView) draw() {
	if c.pv != nil && c.pv.Runs > 0 {
		c.pv.canvas.draw(c.Run.page.host, c.pv, c.labels())
	}
}

// labels are the results' labels (the runs' names on canvases and cards).
func (c *PassView) labels() []string {
	out := make([]string, len(c.Run.Results))
	for i, r := range c.Run.Results {
		out[i] = r.Label
	}
	return out
}

func (c *PassView) status() string {
	pv := c.pv
	switch {
	case c.Note != "" && (pv == nil || pv.Runs == 0):
		return ""
	case pv == nil || c.Run.Stale():
		return ""
	case pv.Indexing:
		return fmt.Sprintf("indexing the timeline: %d%%", pv.Indexed*100/max(pv.Total, 1))
	}
	return c.Note
}

// checkpointsNote says what the worker's warm-up of the run's checkpoints
// left for window moves ("" before it ends, or with none).
func (c *PassView) checkpointsNote() string {
	pv := c.pv
	switch {
	case pv == nil || !pv.Warm.Done:
		return ""
	case pv.Warm.Error != "":
		return "no checkpoints: " + pv.Warm.Error
	case pv.Warm.Checkpoints == 0:
		return ""
	case pv.Warm.Checkpoints == 1:
		return "moves start from a checkpoint of the run, or from its start"
	}
	return fmt.Sprintf("moves start from the nearest of %d checkpoints spread over the run", pv.Warm.Checkpoints)
}

// windowLabel labels the "show passes from" field.
func windowLabel() string {
	return "show " + state.Thousands(proto.WindowPasses) + " passes from pass "
}

// fromValue is what the "show passes from" field shows: what was typed,
// or the first pass the records keep.
func (c *PassView) fromValue() string {
	if c.FromText != "" || c.pv == nil {
		return c.FromText
	}
	return strconv.Itoa(c.pv.FirstLine())
}

// TypeFrom keeps what is typed in the "show passes from" field.
func (c *PassView) TypeFrom(v string) { c.FromText, c.FromErr = v, "" }

// ShowFrom runs the results' config again for the pass view, keeping the
// window of passes that starts at the pass in the "show passes from" field
// (a long run's record keeps proto.WindowPasses passes of each rank), as
// far as that window (RunView.runPasses); the pass view then opens at
// that pass.
func (c *PassView) ShowFrom() {
	pv := c.pv
	if pv == nil || c.Run.Running {
		return
	}
	most := c.mostRan()
	n, err := strconv.Atoi(strings.TrimSpace(strings.ReplaceAll(c.FromText, ",", "")))
	if err != nil || n < 1 || n > most {
		c.FromErr = fmt.Sprintf("Give a pass from 1 to %s (the longest rank ran %s passes).", state.Thousands(int64(most)), state.Thousands(int64(most)))
		return
	}
	c.FromText, c.FromErr = "", ""
	c.Run.runPasses(n)
	c.linkPass, c.linkRank = n, pv.Rank
}

func (c *PassView) emptyText() string {
	switch {
	case c.Run.Running:
		return "Running…"
	case c.Run.Stale():
		return "The config changed: run it to see its passes."
	case c.Note != "":
		return c.Note
	case len(c.Run.Results) == 0:
		return "Run a config to see, pass by pass, which block sits in which G1 slot and G2 entry."
	}
	return "These results kept no per-pass record."
}

func speedLabel(s int) string { return strconv.Itoa(s) + " passes/s" }

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// runs names the compared runs for the explanations (labels, short
// labels, connector policies).
func (c *PassView) runs() []state.Run {
	labels := c.labels()
	out := make([]state.Run, len(labels))
	for i, l := range labels {
		out[i] = state.Run{Label: l, Short: shortLabel(l)}
		if c.pv != nil && i < len(c.pv.Meta) {
			out[i].Policy = state.PolicyOf(c.Run.page.Policies, c.pv.Meta[i].Connector)
		}
	}
	return out
}

// summaryLine is one compared run's divergence summary.
type summaryLine struct {
	Run, Pass int
	Text      string
}

// summary explains, for each later run, how and why it diverges from the
// first on the shown rank (empty for a single run or before the index).
func (c *PassView) summary() []summaryLine {
	pv := c.pv
	if pv == nil || pv.Runs < 2 || pv.Indexing {
		return nil
	}
	runs := c.runs()
	var out []summaryLine
	for i := range pv.Divergences {
		d := &pv.Divergences[i]
		if d.Rank != pv.Rank || d.Run >= len(runs) {
			continue
		}
		l := summaryLine{Run: d.Run, Pass: d.Pass, Text: state.Summary(runs[0], runs[d.Run], d)}
		if dp := state.Decisive(d); dp != nil {
			l.Pass = dp.Pass
		}
		out = append(out, l)
	}
	return out
}

// why is run v's "why" panel at the shown pass: its policy, its next G2
// victims, and what it evicted or kept that the compared runs did not.
type why struct {
	Policy  string
	Victims string
	Fates   []string
	Lost    string // over the run: restores one run made that the other lost
}

func (c *PassView) why(v int) *why {
	pv := c.pv
	if pv == nil || v >= len(pv.Frames) || pv.Frames[v] == nil || pv.Frames[v].err != "" {
		return nil
	}
	runs := c.runs()
	if v >= len(runs) {
		return nil // results of another job are arriving
	}
	w := &why{}
	if p := runs[v].Policy; p != nil {
		w.Policy = runs[v].Short + " evicts " + p.Evicts + "; touches " + p.Touches + "; stores " + p.Stores + "."
	}
	m := pv.Frames[v].meta
	if len(m.G2Next) > 0 {
		w.Victims = fmt.Sprintf("next G2 victims, in order: %s", strings.Join(m.G2Next, ", "))
		if m.G2Evictable > len(m.G2Next) {
			w.Victims += fmt.Sprintf(" … (%d evictable)", m.G2Evictable)
		}
	}
	pass := pv.Frames[v].pass
	for _, f := range state.FateAt(pv.Divergences, pv.Rank, v, pass, runs) {
		w.Fates = append(w.Fates, f.Text())
	}
	if pv.Runs > 1 && !pv.Indexing && len(w.Fates) == 0 {
		w.Fates = append(w.Fates, fmt.Sprintf("In pass %d %s evicts nothing that the compared runs keep.", pass, runs[v].Short))
	}
	// over the whole run: the restores one run made and the other lost
	var lost []string
	for i := range pv.Divergences {
		d := &pv.Divergences[i]
		if d.Rank == pv.Rank && d.Refused == "" && d.Run < len(runs) && (v == 0 || d.Run == v) {
			lost = append(lost, state.Consequence(runs[0], runs[d.Run], d))
		}
	}
	w.Lost = strings.Join(lost, " ")
	return w
}

// JumpDivergence goes to the next (dir +1) or previous (-1) pass where the
// compared runs evicted different blocks.
func (c *PassView) JumpDivergence(dir int) {
	pv := c.pv
	if pv == nil {
		return
	}
	if p := state.NextDivergence(pv.Divergences, pv.Rank, pv.Pass, dir); p > 0 {
		c.SeekDivergence(p)
	} else {
		c.Note = fmt.Sprintf("no divergence %s pass %d", map[int]string{1: "after", -1: "before"}[dir], pv.Pass)
	}
}

// SeekDivergence shows pass p of every run, lined up by pass number: the
// divergences compare the runs pass by pass (kvsim diff), so the why
// panels then speak of the passes on screen.
func (c *PassView) SeekDivergence(p int) {
	if c.pv != nil && c.pv.Sync != "pass" {
		c.pv.Sync = "pass"
		c.pv.want = nil // a new line-up: ask again even at the same pass
	}
	c.SeekTo(p)
}

// ToggleEvents expands or folds run v's event list.
func (c *PassView) ToggleEvents(v int) {
	if c.pv != nil && v < len(c.pv.Expanded) {
		c.pv.Expanded[v] = !c.pv.Expanded[v]
	}
}

// SetFilter narrows the event lists.
func (c *PassView) SetFilter(f string) {
	if c.pv != nil {
		c.pv.Filter = f
	}
}
