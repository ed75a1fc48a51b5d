package main

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kvsim/kvsim/core/record"
	"github.com/kvsim/kvsim/core/report"
	"github.com/kvsim/kvsim/wasm/proto"
)

// MaxRecordRequests bounds the runs whose per-pass record the worker
// keeps for the pass view (the record of a long run is large and indexing
// it takes a while in wasm).
const MaxRecordRequests = 5000

// largeWindow is the window of proto.WindowPasses passes from pass from
// that the worker keeps of a run too long for a whole record
// (replay.Capture.LargeWindow): from pass 1, so the pass view shows how
// the run starts, or from the pass the page asks for (RunJob.FromPass).
func largeWindow(from int) record.Window {
	from = max(from, 1)
	w, _ := record.ParseWindow(strconv.Itoa(from) + ":" + strconv.Itoa(from+proto.WindowPasses-1))
	return w
}

// passes is what the worker knows of one run job's per-pass records: the
// records (one per variant, nil when a variant failed), and the timeline
// index built from them after the run, a few milliseconds at a time
// (step), so that seeks are answered while it grows.
type passes struct {
	recs []*record.Record
	sess []map[string]int32 // per variant: session → hue index
	// prompt is per variant each request's prompt length (tokens), to
	// mark answer (decode) blocks; nil when unknown.
	prompt []map[string]int
	blocks []blockCache      // per variant: what a frame says of each block
	frames uint32            // frames encoded (listing.listed)
	owners []listing         // per request: its id's place in the frame's strings
	snaps  []record.Snapshot // per variant: scratch for seeks
	// index
	tl         [][]*proto.Timeline // [variant][rank]
	open       []map[int]int       // per variant: transfer id → index in its rank's Transfers
	rank, pass int                 // the next pass to index
	indexed    int                 // passes indexed, over all ranks
	total      int
	done       bool
	passesDone bool
	// divs are the comparisons of every later variant with the first, per
	// rank (record.Diff), made after the passes; diffV, diffK the next.
	divs         []proto.Divergence
	diffV, diffK int
	kinds        []string      // scratch for record.EventKinds
	copies       []record.Copy // scratch for record.Copies
	// spent is the time the steps took so far (docs/ui.md reports it).
	spent time.Duration
}

func newPasses(recs []*record.Record) *passes {
	p := &passes{recs: recs, sess: make([]map[string]int32, len(recs)), snaps: make([]record.Snapshot, len(recs)),
		tl: make([][]*proto.Timeline, len(recs)), open: make([]map[int]int, len(recs))}
	ranks := 0
	for v, r := range recs {
		p.sess[v] = map[string]int32{}
		p.open[v] = map[int]int{}
		if r == nil {
			continue
		}
		ranks = max(ranks, len(r.Ranks))
		for k := range r.Ranks {
			p.tl[v] = append(p.tl[v], &proto.Timeline{First: r.FirstPass(k)})
		}
	}
	for k := 0; k < ranks; k++ {
		if n := p.lines(k); n > 0 {
			p.total += n - p.firstLine(k) + 1
		}
	}
	p.rank, p.pass = 0, p.firstLine(0)
	p.passesDone = p.total == 0
	return p
}

// lines is the most passes (lines) any variant has on rank k.
func (p *passes) lines(k int) int {
	n := 0
	for _, r := range p.recs {
		if r != nil && k < len(r.Ranks) {
			n = max(n, r.NumLines(k))
		}
	}
	return n
}

// firstLine is the first pass any variant keeps on rank k (1 unless the
// records keep a window).
func (p *passes) firstLine(k int) int {
	first := 0
	for _, r := range p.recs {
		if r != nil && k < len(r.Ranks) && r.NumLines(k) > 0 {
			if f := r.FirstPass(k); first == 0 || f < first {
				first = f
			}
		}
	}
	return max(first, 1)
}

// markerOf maps an event kind to its timeline marker.
var markerOf = map[string]int{"g1_evict": proto.MarkG1Evict, "g2_evict": proto.MarkG2Evict, "d2h_submit": proto.MarkStore,
	"h2d_complete": proto.MarkRestore, "preempt": proto.MarkPreempt, "admit": proto.MarkAdmit}

// step indexes passes for about budget, and tells whether the index is
// complete. Once every pass is indexed, the steps compare each later
// variant with the first, one rank at a time (diffNext).
func (p *passes) step(budget time.Duration) bool {
	start := time.Now()
	defer func() { p.spent += time.Since(start) }()
	for !p.done {
		if p.passesDone {
			p.diffNext()
		} else {
			p.indexPass(p.rank, p.pass)
			p.indexed++
			p.pass++
			if p.pass > p.lines(p.rank) {
				p.rank++
				for p.rank < len(p.tl[0]) && p.lines(p.rank) == 0 {
					p.rank++
				}
				p.pass = p.firstLine(p.rank)
				p.passesDone = p.rank >= p.maxRanks()
			}
		}
		if time.Since(start) >= budget {
			break
		}
	}
	return p.done
}

// diffNext makes the next comparison of a later variant with the first on
// one rank; after the last it marks each timeline's first divergence and
// the index done.
func (p *passes) diffNext() {
	for len(p.recs) > 1 && p.recs[0] != nil && p.diffV < len(p.recs) {
		v, k := p.diffV, p.diffK
		if v == 0 || p.recs[v] == nil || k >= len(p.recs[0].Ranks) {
			p.diffV, p.diffK = v+1, 0
			continue
		}
		d := divergence(p.recs[0], p.recs[v], v, k)
		p.divs = append(p.divs, d)
		if k < len(p.tl[v]) {
			p.tl[v][k].Diverge = d.Pass
		}
		p.diffK++
		return
	}
	p.done = true
}

func (p *passes) maxRanks() int {
	n := 0
	for _, t := range p.tl {
		n = max(n, len(t))
	}
	return n
}

// indexPass records pass `pass` of rank k in every variant's timeline and
// checks whether the variants' cached blocks differ there. The timeline
// needs only the pass's times and event kinds (record.Info and
// record.EventKinds, which rebuild no state) and, for passes that submit
// or complete a copy, the events themselves (record.Events). Only the
// first-divergence check needs the blocks each run holds, so a rank's
// state is rebuilt (SeekInto) only while some compared run has not yet
// diverged from the first on it.
func (p *passes) indexPass(k, pass int) {
	for v, rec := range p.recs {
		if rec == nil || k >= len(rec.Ranks) || pass > rec.NumLines(k) {
			continue
		}
		in, err := rec.Info(k, pass)
		if err != nil {
			continue
		}
		tl := p.tl[v][k]
		tl.Start = append(tl.Start, float64(in.StartMs))
		tl.End = append(tl.End, float64(in.EndMs))
		var c [proto.NumMarks]uint16
		copies := false
		p.kinds = rec.EventKinds(k, pass, p.kinds[:0])
		for _, kind := range p.kinds {
			if m, ok := markerOf[kind]; ok && c[m] < math.MaxUint16 {
				c[m]++
			}
			copies = copies || transferKind[kind]
		}
		tl.Counts = append(tl.Counts, c)
		if !copies {
			continue
		}
		p.copies = rec.Copies(k, pass, p.copies[:0])
		for _, e := range p.copies {
			switch e.Kind {
			case "d2h_submit", "h2d_submit":
				tr := proto.Transfer{H2D: e.Kind == "h2d_submit", Blocks: e.Blocks, Submit: e.AtMs,
					Deadline: e.DeadlineMs, Complete: math.NaN(), Pass: pass}
				p.open[v][e.Transfer] = len(tl.Transfers)
				tl.Transfers = append(tl.Transfers, tr)
			case "d2h_complete", "h2d_complete":
				if i, ok := p.open[v][e.Transfer]; ok {
					tl.Transfers[i].Complete = e.AtMs
					delete(p.open[v], e.Transfer)
				}
			}
		}
	}
}

// transferKind marks the event kinds that open or close a copy on the
// transfer lanes.
var transferKind = map[string]bool{"d2h_submit": true, "h2d_submit": true, "d2h_complete": true, "h2d_complete": true}

// setPrompts notes variant v's prompt lengths from its report records.
func (p *passes) setPrompts(v int, recs []report.Request) {
	for len(p.prompt) <= v {
		p.prompt = append(p.prompt, nil)
	}
	m := make(map[string]int, len(recs))
	for i := range recs {
		m[recs[i].RequestID] = recs[i].InputLength
	}
	p.prompt[v] = m
}

// divergences is every later run compared with the first on every rank
// (record.Diff), for the page's divergence summary and "why" panel, once
// the index is done.
func (p *passes) divergences() []proto.Divergence { return p.divs }

func divergence(a, b *record.Record, v, k int) proto.Divergence {
	d := proto.Divergence{Run: v, Rank: k, BlockSize: a.BlockSize}
	if f := a.FirstPass(k); f > 1 {
		d.From = f
	}
	res, err := record.Diff(a, b, k)
	if err != nil {
		d.Refused = err.Error()
		return d
	}
	d.Pass = res.FirstDivergent
	d.HeldOnlyFirst, d.HeldOnlyThis = tierBlocks(res.HeldOnlyA), tierBlocks(res.HeldOnlyB)
	blocks := 0
	for i, pd := range res.Passes {
		blocks += len(pd.EvictedByAKeptByB) + len(pd.EvictedByBKeptByA)
		if i == proto.MaxDivergentPasses || blocks > proto.MaxDivergentBlocks {
			d.MorePasses = len(res.Passes) - i
			break
		}
		d.Passes = append(d.Passes, proto.DivergentPass{Pass: pd.Pass, First: tierBlocks(pd.EvictedByAKeptByB), This: tierBlocks(pd.EvictedByBKeptByA)})
	}
	d.RestoresOnlyFirst, d.RestoresOnlyThis = len(res.OnlyA), len(res.OnlyB)
	return d
}

func tierBlocks(tbs []record.TierBlock) []proto.TierBlock {
	var out []proto.TierBlock
	for _, tb := range tbs {
		out = append(out, proto.TierBlock{Tier: tb.Tier, Block: tb.Block})
	}
	return out
}

// meta describes the records for the page (proto.PassMeta).
func (p *passes) meta() []proto.PassMeta {
	out := make([]proto.PassMeta, len(p.recs))
	for v, r := range p.recs {
		if r == nil {
			continue
		}
		m := proto.PassMeta{Recorded: true, BlockSize: r.BlockSize}
		for k, id := range r.Ranks {
			g2 := 0
			if d := r.Domain[k]; d >= 0 {
				g2 = r.G2Capacity[d]
			}
			m.Ranks = append(m.Ranks, proto.RankMeta{Worker: id.Worker, Rank: id.Rank, Role: id.Role, Passes: r.NumPasses(k),
				Lines: r.NumLines(k), First: r.FirstPass(k), Ran: r.RunPasses(k), G1: r.G1Capacity[k], G2: g2})
		}
		out[v] = m
	}
	return out
}

// frame seeks variant v to (rank, pass) and encodes it for the page.
func (p *passes) frame(v, rank, pass int) (bin []byte, meta *proto.FrameMeta, err error) {
	rec := p.recs[v]
	snap := &p.snaps[v]
	if err := rec.SeekInto(rank, pass, snap); err != nil {
		return nil, nil, err
	}
	return p.encodeFrame(v, snap)
}

// A blockCache holds, per block of one variant's record, what every frame
// that shows the block says of it, worked out once: its name, key, hue
// and answer mark (naming a block allocates; a Mooncake frame shows
// 40,000 of them). Pages of 1,024 blocks are made as blocks are seen.
type blockCache struct{ pages [][]blockInfo }

type blockInfo struct {
	name    string
	key     uint32
	session int32
	known   bool
	answer  int8 // 0 unknown (no prompt lengths yet), 1 prompt, 2 answer
	listing
}

// A listing is where the strings of frame listed (passes.frames) list a
// name.
type listing struct {
	listed uint32
	idx    int32
}

const blockPage = 1024

// info is block b's (b ≥ 0) entry of variant v, filled on first use.
func (p *passes) info(v int, b int32) *blockInfo {
	for len(p.blocks) <= v {
		p.blocks = append(p.blocks, blockCache{})
	}
	c := &p.blocks[v]
	k := int(b) / blockPage
	if k >= len(c.pages) {
		c.pages = append(c.pages, make([][]blockInfo, k+1-len(c.pages))...)
	}
	if c.pages[k] == nil {
		c.pages[k] = make([]blockInfo, blockPage)
	}
	in := &c.pages[k][int(b)%blockPage]
	rec := p.recs[v]
	prompts := v < len(p.prompt) && p.prompt[v] != nil && rec.BlockSize > 0
	if in.known && (in.answer != 0 || !prompts) {
		return in
	}
	blk := rec.Block(b)
	if !in.known {
		in.name, in.key, in.known = blk.Name, key(blk.Name), true
		sess := p.sess[v]
		i, ok := sess[blk.Session]
		if !ok {
			i = int32(len(sess))
			sess[blk.Session] = i
		}
		in.session = i
	}
	if prompts {
		pl, ok := p.prompt[v][blk.Request]
		in.answer = 1
		if ok && blk.Index >= pl/rec.BlockSize {
			in.answer = 2
		}
	}
	return in
}

// blockKey is a block name's 32-bit hash (0 is "no block"); the page
// compares cells of different runs by it.
func blockKey(name string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(name))
	k := h.Sum32()
	if k == 0 {
		k = 1
	}
	return k
}

// encodeFrame writes variant v's snapshot as proto.Frame's binary form
// plus its metadata (pass info and events). Its strings list each block
// name and each owner once (a name equal to a request id may be listed
// twice: the page reads strings by index).
func (p *passes) encodeFrame(v int, s *record.Snapshot) ([]byte, *proto.FrameMeta, error) {
	rec := p.recs[v]
	p.frames++
	var nameList []string
	if n := len(rec.Requests); len(p.owners) < n {
		p.owners = make([]listing, n)
	}
	owner := func(r int32) int32 {
		name := rec.Request(r)
		if name == "" {
			return -1
		}
		if o := &p.owners[r]; o.listed != p.frames {
			o.listed, o.idx = p.frames, int32(len(nameList))
			nameList = append(nameList, name)
		}
		return p.owners[r].idx
	}
	// block is a block's name index in the strings, key, hue and answer
	// mark (-1, 0, -1, false without a block).
	block := func(b int32) (name int32, k uint32, session int32, answer bool) {
		if b < 0 {
			return -1, 0, -1, false
		}
		in := p.info(v, b)
		if in.listed != p.frames {
			in.listed, in.idx = p.frames, int32(len(nameList))
			nameList = append(nameList, in.name)
		}
		return in.idx, in.key, in.session, in.answer == 2
	}
	// flashes: G1 slots evicted in this pass, blocks restored in this pass
	evicted := map[int]bool{}
	restored := map[string]bool{}
	stored := map[string]bool{}
	for _, e := range s.Events {
		switch e.Kind {
		case "g1_evict":
			if e.Slot != nil {
				evicted[*e.Slot] = true
			}
		case "h2d_complete":
			for _, b := range e.Blocks {
				restored[b] = true
			}
		case "d2h_complete":
			for _, b := range e.Blocks {
				stored[b] = true
			}
		}
	}
	// room for the cells and, after them, the names (about 16 bytes a
	// cell): growing the buffer for 200,000 G2 names allocated 19 MB a
	// frame more than this (a compare's seek asks for three)
	cells := len(s.G1) + len(s.G2)
	b := make([]byte, 0, 12+cells*(proto.SlotBytes+16))
	nameList = slices.Grow(nameList, cells)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s.G1)))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s.G2)))
	for i, sl := range s.G1 {
		o := owner(sl.Owner)
		name, k, session, answer := block(sl.Block)
		var flash byte
		switch {
		case evicted[i]:
			flash = proto.FlashEvicted
		case name >= 0 && len(restored) > 0 && restored[nameList[name]]:
			flash = proto.FlashRestored
		}
		b = appendCell(b, sl.State, flash, answer, session, sl.QueuePos, sl.Since, o, k, name)
	}
	for _, e := range s.G2 {
		name, k, session, answer := block(e.Block)
		var flash byte
		if name >= 0 && len(stored) > 0 && stored[nameList[name]] {
			flash = proto.FlashStored
		}
		b = appendCell(b, e.State, flash, answer, session, e.Order, -1, -1, k, name)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(nameList)))
	for _, n := range nameList {
		b = binary.AppendUvarint(b, uint64(len(n)))
		b = append(b, n...)
	}
	in := s.Info
	m := proto.FrameMeta{Pass: in.Pass, Final: in.Final, StartMs: float64(in.StartMs), ComputeStartMs: float64(in.ComputeStartMs), EndMs: float64(in.EndMs),
		Bound: in.Bound, Scheduled: len(in.Scheduled), NumEvents: len(s.Events)}
	for _, sc := range in.Scheduled {
		if len(m.Work) < 8 {
			m.Work = append(m.Work, proto.Work{Request: sc.Request, Tokens: sc.Tokens, Prefill: sc.Prefill})
		}
	}
	for _, e := range s.Events {
		if len(m.Events) >= proto.MaxFrameEvents {
			break
		}
		m.Events = append(m.Events, describeEvent(e))
	}
	for _, e := range s.G2 {
		if e.Order >= 0 {
			m.G2Evictable++
			if len(m.G2Next) < proto.MaxNextVictims {
				m.G2Next = append(m.G2Next, rec.BlockName(e.Block))
			}
		}
	}
	return b, &m, nil
}

func key(name string) uint32 {
	if name == "" {
		return 0
	}
	return blockKey(name)
}

// appendCell writes one proto.Cell (proto.SlotBytes bytes).
func appendCell(b []byte, state, flash byte, answer bool, session, order, since, owner int32, k uint32, name int32) []byte {
	var a byte
	if answer {
		a = 1
	}
	b = append(b, state, flash, a, 0)
	for _, v := range []uint32{uint32(session), uint32(order), uint32(since), uint32(owner), k, uint32(name)} {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	return b
}

// describeEvent is one line of the pass's event list. The texts agree
// with each other and with the report: a lookup that consumes a completed
// load says so (its admission then reuses G2 tokens), a P/D handoff's
// admission says its tokens came from the prefill worker, and every copy
// names its request.
func describeEvent(e record.Event) proto.EventLine {
	l := proto.EventLine{Kind: e.Kind, Request: e.Request, Text: eventText(e)}
	return l
}

func intOf(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// blockList names a few blocks, or the first and last of many.
func blockList(bs []string) string {
	switch len(bs) {
	case 0:
		return ""
	case 1, 2, 3:
		return strings.Join(bs, ", ")
	}
	return bs[0] + " … " + bs[len(bs)-1] + " (" + itoa(len(bs)) + " blocks)"
}

func eventText(e record.Event) string {
	n := intOf
	blocks := func() string { return blockList(e.Blocks) }
	of := func() string {
		if e.Request == "" {
			return ""
		}
		return " for " + e.Request
	}
	switch e.Kind {
	case "g1_evict":
		return "G1 evicts " + e.Block + " from slot " + itoa(n(e.Slot))
	case "g2_evict":
		return "G2 evicts " + e.Block
	case "admit":
		return admitText(e)
	case "lookup":
		return lookupText(e)
	case "admission_wait":
		return e.Request + " waits: needs " + itoa(n(e.Needed)) + " G1 blocks, " + itoa(n(e.Available)) +
			" available (" + itoa(n(e.InUse)) + " in use by requests, " + itoa(n(e.Reserved)) + " reserved for loads, " +
			itoa(n(e.Held)) + " held for copies, " + itoa(n(e.Headroom)) + " promised to loads and prefills)"
	case "start_load":
		switch e.Result {
		case "queued":
			return e.Request + " starts H2D copy #" + itoa(e.Transfer) + " of " + itoa(len(e.Blocks)) + " blocks from G2: " + blocks()
		case "deferred":
			return e.Request + " defers its G2 load: " + e.Reason
		}
		return e.Request + " cannot start its G2 load: " + e.Reason
	case "store_retry":
		return e.Request + " cannot store blocks " + itoa(n(e.From)) + " to " + itoa(n(e.To)-1) + ": " + itoa(n(e.Missing)) +
			" not in G2, room for " + itoa(n(e.Room)) + " (retried when G2 changes)"
	case "preempt":
		return e.Request + " preempted (recompute)"
	case "finish":
		return e.Request + " finished"
	case "reject":
		return e.Request + " rejected: " + e.Reason
	case "store_prepared":
		return e.Request + " prepares a store: " + blocks()
	case "store_cursor":
		return e.Request + " store cursor " + itoa(n(e.Before)) + " → " + itoa(n(e.After))
	case "d2h_submit":
		return "D2H copy #" + itoa(e.Transfer) + " submitted" + of() + ": " + blocks()
	case "h2d_submit":
		return "H2D copy #" + itoa(e.Transfer) + " submitted" + of() + ": " + blocks()
	case "d2h_complete":
		return "D2H copy #" + itoa(e.Transfer) + of() + " done: " + blocks() + " now in G2"
	case "h2d_complete":
		return "H2D copy #" + itoa(e.Transfer) + of() + " done: " + blocks() + " restored to G1"
	case "fence":
		return "compute held back (" + e.Reason + ")"
	case "hold_release":
		return "G1 copies released after copy #" + itoa(e.Transfer) + of() + ": " + blocks()
	}
	return e.Kind
}

func lookupText(e record.Event) string {
	g1 := intOf(e.G1Hits)
	prefix := e.Request + " looks up G2"
	if g1 > 0 {
		prefix = e.Request + " has " + itoa(g1) + " blocks in G1, looks up G2 for the rest"
	}
	switch e.Result {
	case "loaded":
		return e.Request + " uses its completed G2 load (no lookup)"
	case "hit":
		return prefix + ": hit, " + itoa(len(e.Blocks)) + " blocks (" + blockList(e.Blocks) + ")"
	case "defer":
		return prefix + ": deferred (a block it needs is being stored or loaded)"
	}
	return prefix + ": miss"
}

func admitText(e record.Event) string {
	r, g1, host := intOf(e.Reused), intOf(e.G1), intOf(e.Host)
	again := ""
	if e.Readmit != nil && *e.Readmit {
		again = " again"
	}
	switch {
	case e.Handoff != nil && *e.Handoff:
		return e.Request + " admitted" + again + " with its " + itoa(r) + " prompt tokens from the prefill worker (P/D handoff)"
	case r == 0:
		return e.Request + " admitted" + again + ": nothing reused"
	}
	return e.Request + " admitted" + again + ": " + itoa(r) + " tokens reused (G1 " + itoa(g1) + ", G2 " + itoa(host) + ")"
}

func itoa(n int) string { return strconv.Itoa(n) }

// markWarmup marks a warmed agentic run's barrier and, per rank, its
// preparation passes: those that started before the barrier (the barrier
// opens only when nothing is in flight, so no pass spans it).
func markWarmup(m *proto.PassMeta, rec *record.Record, a *report.Agentic) {
	if rec == nil || a == nil || a.Phases == nil || !a.Phases.ProfileStartMs.IsSet() {
		return
	}
	barrier := a.Phases.ProfileStartMs
	m.Warmup, m.BarrierMs = true, float64(barrier)
	for k := range m.Ranks {
		n := rec.NumPasses(k)
		m.Ranks[k].Prep = sort.Search(n, func(i int) bool {
			in, err := rec.Info(k, i+1)
			return err != nil || in.StartMs >= barrier
		})
	}
}
