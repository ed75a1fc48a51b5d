package record

import (
	"math"
	"slices"

	"github.com/kvsim/kvsim/core/connector"
	"github.com/kvsim/kvsim/core/engine"
	"github.com/kvsim/kvsim/core/g1"
	"github.com/kvsim/kvsim/core/g2"
	"github.com/kvsim/kvsim/core/identity"
	"github.com/kvsim/kvsim/core/request"
	"github.com/kvsim/kvsim/core/scheduler"
	"github.com/kvsim/kvsim/core/vtime"
)

// A Recorder builds a Record while the engine runs: pass it as
// engine.Options.Observer. It is fed at every state change (never by
// diffing snapshots) while a rank is in its window; outside it the rank's
// G1 pool is quiet and keeps the slots' ages itself. Checkpoints are cut
// from the live pools.
type Recorder struct {
	rec   *Record
	ranks []*rankRec
	doms  map[*connector.Domain]*domRec
	focus *rankRec
	// LiveCheck, when set, is called at every pass end with the rank's
	// index and pass number, while the engine state is that pass's end
	// state (tests compare it with Seek).
	LiveCheck func(rank, pass int)
	// win and ranges: a windowed recorder's window and each rank's passes
	// in it (NewWindowRecorder); ranges is nil for a whole record.
	win    Window
	ranges []PassRange
	// pending: the window is set later (NewPendingRecorder).
	pending bool
}

// A PassRange is the passes of one rank a window holds, From to To
// inclusive; a rank without a pass in the window has From > To.
type PassRange struct{ From, To int }

// none is the range of a rank the window holds no pass of.
var none = PassRange{From: math.MaxInt, To: 0}

// passRange is a pass window's range, the same on every rank.
func passRange(w Window) PassRange {
	r := PassRange{From: int(max(w.From, 1)), To: math.MaxInt}
	if !math.IsInf(w.To, 1) {
		r.To = int(w.To)
	}
	return r
}

type rankRec struct {
	rr   *Recorder
	idx  int
	pool *g1.Pool
	log  *rankLog
	// A slot as recorded is the live pool's: its use, block and owner
	// (Classify) and its age (g1.Pool.Since: the pass line from which it
	// has had its state and block, which the pool keeps with the
	// recorder's clock, g1.Pool.SetClock); a checkpoint reads them, and
	// the eviction queue, from there. Keeping a copy here cost a cache
	// miss on most changes (16 % of the CPU of a recorded Mooncake run).
	//
	// count is how many slots are in each state code (admission waits
	// say what holds G1), kept while the rank is in its window.
	count [codeReserved + 1]int32
	dom   *domRec
	er    *engine.Rank
	// keep is the rank's passes to store (all of them in a whole record).
	// Outside it the pool is quiet (g1.Pool.SetQuiet): it keeps the ages
	// and counts the changes without calling the recorder, and nothing is
	// stored: passes before it are empty placeholders and passes after it
	// are left out. The pool's change count (g1n) and evn count the
	// changes seen, stored or not (the checkpoint rule counts them all, so
	// that a windowed record cuts its checkpoints at the same passes as
	// the whole one); the last* fields are their values, and the domain's
	// op count, at the last pass end.
	keep                      PassRange
	evn                       int
	lastG1n, lastEvn, lastOpn int
}

type domRec struct {
	rr   *Recorder
	idx  int
	tier *g2.Tier
	log  *domLog
	cap  int
	// ranks are the ranks sharing the domain; opn counts the operations
	// seen, stored or not. A windowed recorder stores the domain's
	// operations from the start of its first rank's window (started,
	// with a checkpoint of the live tier) until every rank is past its
	// window.
	ranks   []*rankRec
	opn     int
	started bool
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder {
	return &Recorder{rec: &Record{trs: map[int32]*trInfo{}}, doms: map[*connector.Domain]*domRec{}}
}

// NewWindowRecorder returns a recorder that stores only the passes of win
// (docs/record.md ("Windowed records")): ranges[k] are rank k's passes in
// it, as a Locator found them in a run of the same job (nil for a pass
// window: every rank keeps its pass numbers). Its record is the
// one Decode reads back from the whole record's WriteWindow(win), and
// WriteWindow(win) writes the same file; its memory grows with the
// window, not with the run.
func NewWindowRecorder(win Window, ranges []PassRange) *Recorder {
	rr := NewRecorder()
	rr.win, rr.ranges = win, ranges
	rr.rec.window = win.Spec
	return rr
}

// Record returns the record (complete once the run finished).
func (rr *Recorder) Record() *Record { return rr.rec }

// keepFor is the passes rank idx keeps of a record of window win (each
// rank's ranges, when not nil).
func keepFor(win Window, ranges []PassRange, idx int) PassRange {
	switch {
	case ranges != nil:
		if idx < len(ranges) {
			return ranges[idx]
		}
		return none
	case !win.Whole() && !win.Time:
		return passRange(win)
	}
	return PassRange{From: 1, To: math.MaxInt}
}

// Attach joins one rank (engine.Observer).
func (rr *Recorder) Attach(rk *engine.Rank) {
	rec := rr.rec
	rec.BlockSize = rk.Cfg.BlockSize
	rl := &rankLog{}
	r := &rankRec{rr: rr, idx: len(rr.ranks), pool: rk.Pool, log: rl, er: rk,
		keep: keepFor(rr.win, rr.ranges, len(rr.ranks))}
	if rr.pending {
		r.keep = pendingRange
	}
	rk.Pool.SetClock(1)
	rk.Pool.SetQuiet(true) // until its window starts (startWindow)
	rl.ckpts = append(rl.ckpts, g1Ckpt{pass: 0, pos: 0, st: r.compact()})
	rr.ranks = append(rr.ranks, r)
	rec.ranks = append(rec.ranks, rl)
	rec.Ranks = append(rec.Ranks, RankID{Worker: rk.Worker, Rank: rk.DP, Role: rk.Role})
	rec.G1Capacity = append(rec.G1Capacity, rk.Pool.Capacity())
	rk.Pool.SetObserver(r)
	rk.SetObserver(r)
	dom := -1
	if rk.Host != nil {
		rk.Host.SetObserver(r)
		d := rk.Host.Domain()
		dr, ok := rr.doms[d]
		if !ok {
			dr = &domRec{rr: rr, idx: len(rec.domains), tier: d.Tier, log: &domLog{}, cap: d.Tier.Capacity(),
				started: rr.win.Whole()}
			dr.log.ckpts = append(dr.log.ckpts, g2Ckpt{pos: 0, st: dr.snapshot()})
			rr.doms[d] = dr
			rec.domains = append(rec.domains, dr.log)
			rec.G2Capacity = append(rec.G2Capacity, d.Tier.Capacity())
			d.Tier.SetObserver(dr)
		}
		r.dom = dr
		dr.ranks = append(dr.ranks, r)
		dom = dr.idx
	}
	rec.Domain = append(rec.Domain, dom)
	if r.keep.From <= 1 && r.keep.From <= r.keep.To {
		r.startWindow()
	}
}

// on reports whether the rank's changes now are stored: those of its next
// pass, when that pass is in the rank's window.
func (r *rankRec) on() bool {
	p := r.log.lines() + 1
	return p >= r.keep.From && p <= r.keep.To
}

// past reports whether the rank is past its window (or has none).
func (r *rankRec) past() bool { return r.log.lines() >= r.keep.To }

// Past tells whether every rank has run the last pass of its window, so
// that nothing the run does after can change the record: a windowed
// recorder's engine.Options.Stop. A whole record, or a window of virtual
// time without ranges, is never past (its end is not a pass number).
func (rr *Recorder) Past() bool {
	for _, r := range rr.ranks {
		if r.keep.To == math.MaxInt || !r.past() {
			return false
		}
	}
	return len(rr.ranks) > 0
}

// startWindow is called when the rank's next pass is the first of its
// window: the rank's state now becomes its first checkpoint, and its G2
// domain, when no other rank started it, starts from the live tier.
func (r *rankRec) startWindow() {
	rl := r.log
	r.pool.SetQuiet(false)
	r.count = [codeReserved + 1]int32{}
	for i := range r.pool.Capacity() {
		use, _, _ := r.pool.Classify(int32(i))
		r.count[codeOfUse[use]]++
	}
	n := rl.lines()
	if n > 0 {
		rl.first = n + 1
		rl.ckpts = []g1Ckpt{{pass: n, pos: rl.g1.len(), st: r.compact()}}
	}
	if d := r.dom; d != nil && !d.started {
		d.started = true
		d.log.ckpts = []g2Ckpt{{pos: d.log.ops.len(), st: d.snapshot()}}
	}
}

// storing reports whether the domain's operations now are stored.
func (d *domRec) storing() bool {
	if !d.started {
		return false
	}
	for _, r := range d.ranks {
		if !r.past() {
			return true
		}
	}
	return false
}

func (rr *Recorder) rankOf(rk *engine.Rank) *rankRec { return rr.ranks[rk.Index] }

// Focus notes which rank acts next (engine.Observer).
func (rr *Recorder) Focus(rk *engine.Rank) { rr.focus = rr.rankOf(rk) }

// PassStart is part of engine.Observer.
func (rr *Recorder) PassStart(rk *engine.Rank, start vtime.Time) {}

// PassEnd closes one pass of rk (engine.Observer).
func (rr *Recorder) PassEnd(rk *engine.Rank, res *scheduler.PassResult, groupEnd vtime.Time) {
	r := rr.rankOf(rk)
	pe := passEntry{start: res.Start, computeStart: res.ComputeStart, end: groupEnd, bound: res.Bound}
	in := r.on()
	if in {
		pe.schedOff, pe.schedLen = int32(rr.rec.sched.len()), int32(len(res.Scheduled))
		for _, s := range res.Scheduled {
			pf := max(0, min(s.Before+s.Tokens, s.Req.PromptLen)-s.Before)
			rr.rec.sched.add(schedRaw{req: s.Req.Index, tokens: int32(s.Tokens), prefill: int32(pf)})
		}
	}
	r.closePass(pe)
	if rr.LiveCheck != nil && in {
		rr.LiveCheck(r.idx, r.log.lines())
	}
}

// closePass ends the rank's pass: stored when in the rank's window, an
// empty placeholder before it, left out after it.
func (r *rankRec) closePass(pe passEntry) {
	rl := r.log
	in := r.on()
	pe.g1End, pe.evEnd = rl.g1.len(), rl.events.len()
	pe.seq = r.rr.rec.seq
	r.rr.rec.seq++
	r.rr.rec.lines++
	r.rr.rec.lastEnd = pe.end
	if r.dom != nil {
		pe.g2End = r.dom.log.ops.len()
		r.lastOpn = r.dom.opn
	}
	r.lastG1n, r.lastEvn = r.pool.Changes(), r.evn
	if !pe.final {
		rl.ran++
	}
	if rl.lines() >= r.keep.To {
		return
	}
	if rl.lines()+1 < r.keep.From && len(rl.passes) == 1 {
		// Before the window only the last placeholder is read (the
		// base line's ends): it replaces the one before.
		rl.passes[0] = pe
		rl.skipped++
	} else {
		rl.passes = append(rl.passes, pe)
	}
	r.pool.SetClock(int32(rl.lines() + 1))
	if rl.lines() >= r.keep.To {
		r.pool.SetQuiet(true) // past its window
	}
	capacity := r.pool.Capacity()
	if g1n := r.pool.Changes(); g1n-rl.lastCkpt >= checkpointEvery*capacity {
		if in {
			rl.ckpts = append(rl.ckpts, g1Ckpt{pass: rl.lines(), pos: rl.g1.len(), st: r.compact()})
		}
		rl.lastCkpt = g1n
	}
	if d := r.dom; d != nil && d.storing() && d.log.ops.len()-d.log.lastCkpt >= checkpointEvery*max(d.cap, 1) {
		d.log.ckpts = append(d.log.ckpts, g2Ckpt{pos: d.log.ops.len(), st: d.snapshot()})
		d.log.lastCkpt = d.log.ops.len()
	}
	if rl.lines()+1 == r.keep.From {
		r.startWindow()
	}
}

// Finish names blocks and requests and closes each rank's log with a final
// line when changes trail its last pass (engine.Observer).
func (rr *Recorder) Finish(e *engine.Engine) {
	rec := rr.rec
	recs := e.RequestRecords()
	rec.Requests = make([]string, len(recs))
	rec.Sessions = make([]string, len(recs))
	for i := range recs {
		rec.Requests[i], rec.Sessions[i] = recs[i].RequestID, recs[i].SessionID
	}
	ids := e.Identities()
	rec.origins = ids.Origins()
	for _, r := range rr.ranks {
		trailing := r.pool.Changes() > r.lastG1n || r.evn > r.lastEvn
		if r.dom != nil && r.dom.opn > r.lastOpn {
			trailing = true
		}
		if trailing {
			now := e.Now()
			r.closePass(passEntry{start: now, computeStart: now, end: now, final: true})
		}
		if rl := r.log; rl.first == 0 && rl.lines() > 0 && rl.lines() < r.keep.From {
			rl.first = rl.lines() + 1 // the run ended before the window: placeholders only
		}
	}
}

// SlotChanged records one G1 slot change (g1.Observer); the pool calls it
// only while the rank is in its window. The slot's age, which restarts
// when its state or block changed, is the pool's (g1.Pool.Since): it
// restarts when the slot's use changes, which is the same (a use maps to
// one state code, but for a reservation and a pin, whose blocks differ;
// a block changes only with the use).
func (r *rankRec) SlotChanged(slot int32, was, use g1.Use) {
	id, owner := r.pool.Holder(slot)
	code := codeOfUse[use]
	if code == codeFree {
		owner = -1
	}
	if r.on() {
		r.log.g1.add(mkDelta(slot, code, int32(id), owner))
	}
	r.count[codeOfUse[was]]--
	r.count[code]++
}

// codeOfUse is the record's state for each G1 use: a pinned copy (a load
// will read it) shows as reserved, like a load's destination.
var codeOfUse = [...]uint8{
	g1.UseFree:        codeFree,
	g1.UseReservation: codeReserved,
	g1.UsePrivate:     codePrivate,
	g1.UseRef:         codeActive,
	g1.UsePin:         codeReserved,
	g1.UseHold:        codeHeld,
	g1.UseIdle:        codeIdle,
}

// compact cuts a checkpoint of the rank's G1 now.
func (r *rankRec) compact() g1Compact {
	n := r.pool.Capacity()
	c := g1Compact{code: make([]uint8, n), block: make([]int32, n), owner: make([]int32, n),
		since: make([]int32, n), queue: r.pool.IdleOrder(make([]int32, 0, r.pool.NumIdle()))}
	for i := range n {
		c.since[i] = r.pool.Since(int32(i))
		use, id, owner := r.pool.Classify(int32(i))
		c.code[i], c.block[i], c.owner[i] = codeOfUse[use], int32(id), owner
		if c.code[i] == codeFree {
			c.owner[i] = -1
		}
	}
	return c
}

// Evicted records a G1 eviction (g1.Observer).
func (r *rankRec) Evicted(slot int32, id identity.ID) {
	r.event(rawEvent{kind: evG1Evict, req: -1, a: int32(id), b: slot})
}

// event stores e when the rank is in its window.
func (r *rankRec) event(e rawEvent) {
	r.evn++
	if r.on() {
		r.log.events.add(e)
	}
}

// SchedulerEvent records admissions, preemptions, finishes, rejections.
func (r *rankRec) SchedulerEvent(ev scheduler.Event) {
	if !r.on() {
		r.evn++
		return
	}
	e := rawEvent{req: ev.Req.Index, t1: ev.At}
	switch ev.Kind {
	case scheduler.EvAdmit:
		e.kind, e.a, e.b, e.c, e.d, e.flag = evAdmit, int32(ev.Reused), int32(ev.G1), int32(ev.Host), int32(ev.Req.Host.Cursor), ev.Readmission
		if ev.Handoff {
			e.reason = 1
		}
	case scheduler.EvAdmissionWait:
		e.kind, e.a, e.b = evAdmissionWait, int32(ev.Needed), int32(ev.Available)
		c := &r.count
		e.c, e.d = r.rr.ints(int32(ev.Headroom), c[codeActive]+c[codePrivate], c[codeReserved], c[codeHeld])
	case scheduler.EvPreempt:
		e.kind, e.t1 = evPreempt, ev.FenceBefore
		e.setT2(ev.FenceAfter)
	case scheduler.EvFinish:
		e.kind = evFinish
	case scheduler.EvReject:
		e.kind, e.reason = evReject, reasonCode(ev.Reason)
	case scheduler.EvCancel: // a client cancellation ends the request like a rejection
		e.kind, e.reason = evReject, reasonCode(scheduler.CancelClient)
	}
	r.event(e)
}

func ids32(keys []identity.ID) []int32 {
	out := make([]int32, len(keys))
	for i, k := range keys {
		out[i] = int32(k)
	}
	return out
}

// ints stores numbers in the record's arena and returns their place.
func (rr *Recorder) ints(xs ...int32) (off, n int32) {
	off = int32(rr.rec.arena.len())
	for _, x := range xs {
		rr.rec.arena.add(x)
	}
	return off, int32(len(xs))
}

// blocks stores a block list in the record's arena and returns its place.
func (rr *Recorder) blocks(keys []identity.ID) (off, n int32) {
	off = int32(rr.rec.arena.len())
	for _, k := range keys {
		rr.rec.arena.add(int32(k))
	}
	return off, int32(len(keys))
}

func (r *rankRec) transfer(t *connector.Transfer) int32 {
	if _, ok := r.rr.rec.trs[t.ID]; !ok {
		kind := uint8(0)
		if t.Kind == connector.Load {
			kind = 1
		}
		// Indices are cloned: the connector reuses a delivered store's lists.
		r.rr.rec.trs[t.ID] = &trInfo{kind: kind, req: reqIndex(t.Req), blocks: ids32(t.Keys), indices: slices.Clone(t.Indices)}
	}
	return t.ID
}

func reqIndex(r *request.Request) int32 {
	if r == nil {
		return -1
	}
	return r.Index
}

// ConnectorEvent records G2 lookups, stores, transfers and fences.
func (r *rankRec) ConnectorEvent(ev connector.Event) {
	if !r.on() {
		r.evn++
		return
	}
	e := rawEvent{req: reqIndex(ev.Req), t1: ev.At}
	switch ev.Kind {
	case connector.EvLookup:
		e.kind, e.a, e.b = evLookup, int32(ev.G1Hits), int32(ev.Result)
		if ev.Loaded {
			e.b = 3 // "loaded"
		}
		e.c, e.d = r.rr.blocks(ev.Keys)
	case connector.EvStorePrepared:
		e.kind, e.a, e.flag = evStorePrepared, r.transfer(ev.Transfer), ev.Transfer.AtFinish
	case connector.EvStoreCursor:
		e.kind, e.a, e.b = evStoreCursor, int32(ev.Before), int32(ev.After)
	case connector.EvSubmit:
		e.kind, e.a = evD2HSubmit, r.transfer(ev.Transfer)
		if ev.Transfer.Kind == connector.Load {
			e.kind = evH2DSubmit
		}
		e.req = -1
		if d := ev.Transfer.Deadline; d < 1e300 {
			e.flag = true
			e.setT2(d)
		}
	case connector.EvComplete:
		e.kind, e.a, e.req = evD2HComplete, r.transfer(ev.Transfer), -1
		if ev.Transfer.Kind == connector.Load {
			e.kind = evH2DComplete
		}
	case connector.EvFence:
		e.kind, e.reason, e.t1 = evFence, reasonCode(ev.Reason), ev.Until
	case connector.EvHoldRelease:
		e.kind, e.a, e.req = evHoldRelease, r.transfer(ev.Transfer), -1
	case connector.EvStartLoad:
		e.kind, e.b, e.reason = evStartLoad, int32(ev.Start), reasonCode(ev.Reason)
		if ev.Transfer != nil {
			e.a = r.transfer(ev.Transfer)
		}
		e.c, e.d = r.rr.blocks(ev.Keys)
	case connector.EvStoreRetry:
		e.kind, e.a, e.b, e.c, e.d = evStoreRetry, int32(ev.Before), int32(ev.After), int32(ev.Missing), int32(ev.Room)
	}
	r.event(e)
}

func (d *domRec) op(id identity.ID, op uint8) {
	d.opn++
	if d.storing() {
		d.log.ops.add(g2Op{block: int32(id), op: op})
	}
}

// snapshot rebuilds the domain's state from the live tier (a checkpoint).
func (d *domRec) snapshot() *g2State {
	st := newG2State()
	st.nextAdd = int64(d.tier.Walk(func(e g2.EntryState) {
		x := st.entry(int32(e.ID))
		st.added[x] = int64(e.Added)
		switch {
		case e.Pending:
			st.state[x] = opPending
		case e.Pinned:
			st.state[x] = opPinned
		default:
			st.state[x] = opResident
		}
		if e.Listed {
			st.push(x)
		}
	}))
	return st
}

// EntryChanged records an entry's new state (g2.Observer). Outside the
// stored passes it only counts the change: finding the entry's state
// took two lookups in the tier, about 6 % of a compare's window move on
// the Mooncake trace spent before its window.
func (d *domRec) EntryChanged(id identity.ID) {
	if !d.storing() {
		d.opn++
		return
	}
	switch {
	case d.tier.Lookup(id) == g2.Pending:
		d.op(id, opPending)
	case d.tier.Pins(id) > 0:
		d.op(id, opPinned)
	default:
		d.op(id, opResident)
	}
}

// Listed records a move in the eviction order (g2.Observer).
func (d *domRec) Listed(id identity.ID, in bool) {
	if in {
		d.op(id, opListIn)
	} else {
		d.op(id, opListOut)
	}
}

// Evicted records a G2 eviction, as an event of the rank acting now.
func (d *domRec) Evicted(id identity.ID) {
	d.op(id, opEvict)
	if f := d.rr.focus; f != nil {
		f.event(rawEvent{kind: evG2Evict, req: -1, a: int32(id)})
	}
}
