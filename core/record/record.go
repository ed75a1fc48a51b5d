package record

import (
	"iter"
	"math"
	"strconv"

	"github.com/kvsim/kvsim/core/identity"
	"github.com/kvsim/kvsim/core/timing"
	"github.com/kvsim/kvsim/core/vtime"
)

// A Record is a run's per-pass record: for every DP rank the G1 delta log,
// the passes and their events; for every G2 domain its delta log. Build one
// with a Recorder or Decode.
type Record struct {
	Ranks []RankID
	// G1Capacity and Domain per rank (Domain -1 without host offload).
	G1Capacity []int
	Domain     []int
	// G2Capacity per domain.
	G2Capacity []int
	// Requests and Sessions are request ids and their sessions by global
	// request index.
	Requests []string
	Sessions []string

	ranks   []*rankLog
	domains []*domLog
	// Blocks are named from origins (live record) or names (decoded).
	origins       identity.Origins
	births        *identity.Births // origins by request, made by the first diff that needs them
	names         []string
	blockOf       map[string]int32 // decoded records: name → block
	arena         chunks[int32]    // block lists of events
	sched         schedLog         // scheduled requests of passes
	pub           []Event          // decoded records: events as read
	blockSessions []string         // decoded records: block → session
	trs           map[int32]*trInfo
	// work is the scratch state Seek rebuilds G1 into (a Record is not
	// safe for concurrent seeks).
	work []*g1State
	seq  int
	// lines and lastEnd: a live record's pass lines closed over the whole
	// run (kept or not) and the last one's end, for WriteWindow's message
	// on an empty window.
	lines   int
	lastEnd vtime.Time
	// BlockSize is the engine block size in tokens.
	BlockSize int
	// window is the --capture-window of a decoded windowed record.
	window string
}

type trInfo struct {
	kind    uint8 // 0 store, 1 load
	req     int32
	blocks  []int32
	indices []int32
}

type rankLog struct {
	g1       chunks[g1Delta]
	passes   []passEntry
	events   chunks[rawEvent]
	ckpts    []g1Ckpt
	lastCkpt int
	// first is the first pass a decoded windowed record holds (0 or 1:
	// all); the passes before it are empty placeholders.
	first int
	// ran counts the passes the rank ran, stored or not (a live windowed
	// record stores none after its window).
	ran int
	// skipped is how many placeholders before the window are not kept:
	// passes[i] is pass skipped+i+1. Only the last placeholder is read
	// (the base line's ends), so a window at pass 200,000 keeps one
	// entry before it rather than 199,999 of 80 bytes.
	skipped int
}

// lines is the rank's passes, placeholders included.
func (rl *rankLog) lines() int { return rl.skipped + len(rl.passes) }

// eventSpan is where pass p's events are in rl.events: [from, to).
func (rl *rankLog) eventSpan(p int) (from, to int) {
	if p > 1 {
		from = rl.pass(p - 1).evEnd
	}
	return from, rl.pass(p).evEnd
}

// pass is pass p's entry (from 1). A placeholder not kept reads as the
// one kept after it: the same ends, so nothing happened between them (as
// a decoded windowed record has it).
func (rl *rankLog) pass(p int) *passEntry {
	if p <= rl.skipped {
		return &rl.passes[0]
	}
	return &rl.passes[p-1-rl.skipped]
}

type passEntry struct {
	start, computeStart, end vtime.Time
	schedOff, schedLen       int32 // scheduled requests in Record.sched
	g1End, g2End, evEnd      int
	final                    bool
	bound                    timing.Bound // step models only
	seq                      int          // global order of pass ends (line order)
}

type schedRaw struct{ req, tokens, prefill int32 }

// schedLog holds every pass's scheduled requests as one stream of int32: a
// decode step (one token, no prefill; most entries of a run) is its request
// index alone, anything else is ^request, tokens, prefill. A pass keeps its
// offset in the stream and its number of entries.
type schedLog struct{ s chunks[int32] }

func (l *schedLog) add(x schedRaw) {
	if x.tokens == 1 && x.prefill == 0 {
		l.s.add(x.req)
		return
	}
	l.s.add(^x.req)
	l.s.add(x.tokens)
	l.s.add(x.prefill)
}

// len is the stream's length: the offset of the next pass's entries.
func (l *schedLog) len() int { return l.s.len() }

// entries yields the n entries that start at off.
func (l *schedLog) entries(off, n int32) iter.Seq[schedRaw] {
	return func(yield func(schedRaw) bool) {
		for i := int(off); n > 0; n-- {
			x := schedRaw{req: l.s.at(i), tokens: 1}
			i++
			if x.req < 0 {
				x.req, x.tokens, x.prefill = ^x.req, l.s.at(i), l.s.at(i+1)
				i += 2
			}
			if !yield(x) {
				return
			}
		}
	}
}

type g1Ckpt struct {
	pass int // state after this pass (0: before the first)
	pos  int // g1 log length then
	st   g1Compact
}

type domLog struct {
	ops      chunks[g2Op]
	ckpts    []g2Ckpt
	lastCkpt int
}

type g2Ckpt struct {
	pos int
	st  *g2State
}

// Block returns block b's human name and origin.
func (r *Record) Block(b int32) Block {
	if b < 0 {
		return Block{}
	}
	if r.names != nil {
		blk := parseName(r.names[b])
		blk.Session = r.blockSessions[b]
		return blk
	}
	o := r.origins.Of(identity.ID(b))
	req := r.Requests[o.Request]
	return Block{Name: req + "#" + strconv.Itoa(int(o.Block)), Request: req, Index: int(o.Block), Session: r.Sessions[o.Request]}
}

func parseName(name string) Block {
	b := Block{Name: name, Request: name}
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == '#' {
			b.Request = name[:i]
			b.Index, _ = strconv.Atoi(name[i+1:])
			break
		}
	}
	return b
}

// BlockName returns block b's name ("" for -1).
func (r *Record) BlockName(b int32) string { return r.Block(b).Name }

// Request returns request i's id ("" for -1).
func (r *Record) Request(i int32) string {
	if i < 0 || int(i) >= len(r.Requests) {
		return ""
	}
	return r.Requests[i]
}

// NumPasses is the number of passes rank ran (passes count from 1).
func (r *Record) NumPasses(rank int) int {
	n := r.ranks[rank].lines()
	if n > 0 && r.ranks[rank].pass(n).final {
		n--
	}
	return n
}

// RunPasses is how many passes rank ran in the run: NumPasses, or more in
// a record that a window cut at capture time (NewWindowRecorder).
func (r *Record) RunPasses(rank int) int {
	return max(r.ranks[rank].ran, r.NumPasses(rank))
}

// NumLines is NumPasses plus one when changes trail the rank's last pass
// (its passes.jsonl then ends with a "final" line for the run end).
func (r *Record) NumLines(rank int) int { return r.ranks[rank].lines() }

// RankIndex returns the index of (worker, rank), or -1.
func (r *Record) RankIndex(worker, rank int) int {
	for i, id := range r.Ranks {
		if id.Worker == worker && id.Rank == rank {
			return i
		}
	}
	return -1
}

// Events returns the events of one pass without rebuilding any state (the
// cheap way to index a timeline).
func (r *Record) Events(rank, pass int) ([]Event, error) {
	if err := r.checkPass(rank, pass); err != nil {
		return nil, err
	}
	return r.events(rank, pass), nil
}

// Info returns one pass's timing and scheduled work without rebuilding any
// state.
func (r *Record) Info(rank, pass int) (PassInfo, error) {
	if err := r.checkPass(rank, pass); err != nil {
		return PassInfo{}, err
	}
	return r.info(rank, pass), nil
}

// EventKinds appends the kinds of one pass's events to out, allocating
// nothing else (timeline markers).
func (r *Record) EventKinds(rank, pass int, out []string) []string {
	rl := r.ranks[rank]
	from, to := rl.eventSpan(pass)
	for i := from; i < to; i++ {
		e := rl.events.at(i)
		if e.kind&kindDecoded != 0 {
			out = append(out, r.pub[e.a].Kind)
		} else {
			out = append(out, kindNames[e.kind])
		}
	}
	return out
}

// A Copy is one pass's submission or completion of a copy between G1
// and G2: what Events says of it, without naming its blocks.
type Copy struct {
	Kind     string // d2h_submit, h2d_submit, d2h_complete or h2d_complete
	Transfer int
	Blocks   int
	// AtMs and DeadlineMs are NaN where the event has none.
	AtMs, DeadlineMs float64
}

// Copies appends one pass's copy submissions and completions to out, in
// event order (the timeline's transfer lanes): Events would name every
// block of every copy, which the lanes only count.
func (r *Record) Copies(rank, pass int, out []Copy) []Copy {
	rl := r.ranks[rank]
	from, to := rl.eventSpan(pass)
	for i := from; i < to; i++ {
		e := rl.events.at(i)
		switch {
		case e.kind&kindDecoded != 0:
			if ev := &r.pub[e.a]; copyKind(ev.Kind) {
				out = append(out, Copy{Kind: ev.Kind, Transfer: ev.Transfer, Blocks: len(ev.Blocks), AtMs: orNaN(ev.AtMs), DeadlineMs: orNaN(ev.DeadlineMs)})
			}
		case e.kind == evD2HSubmit || e.kind == evH2DSubmit || e.kind == evD2HComplete || e.kind == evH2DComplete:
			c := Copy{Kind: kindNames[e.kind], Transfer: int(e.a), Blocks: len(r.trs[e.a].blocks), AtMs: float64(e.t1), DeadlineMs: math.NaN()}
			if e.flag && (e.kind == evD2HSubmit || e.kind == evH2DSubmit) {
				c.DeadlineMs = float64(e.t2())
			}
			out = append(out, c)
		}
	}
	return out
}

func copyKind(k string) bool {
	return k == "d2h_submit" || k == "h2d_submit" || k == "d2h_complete" || k == "h2d_complete"
}

func orNaN(t *vtime.Time) float64 {
	if t == nil {
		return math.NaN()
	}
	return float64(*t)
}

// Seek rebuilds rank's state at the end of pass (1-based; NumLines(rank)
// gives the run's final state) with that pass's events.
func (r *Record) Seek(rank, pass int) (*Snapshot, error) {
	if err := r.checkPass(rank, pass); err != nil {
		return nil, err
	}
	snap := &Snapshot{}
	r.seekInto(rank, pass, snap)
	return snap, nil
}

// SeekInto is Seek reusing snap's slices (for scrubbing without garbage).
func (r *Record) SeekInto(rank, pass int, snap *Snapshot) error {
	if err := r.checkPass(rank, pass); err != nil {
		return err
	}
	r.seekInto(rank, pass, snap)
	return nil
}

func (r *Record) seekInto(rank, pass int, snap *Snapshot) {
	pe := r.ranks[rank].pass(pass)
	snap.Info = r.info(rank, pass)
	snap.G1 = r.g1At(rank, pass).slots(snap.G1)
	snap.Events = r.events(rank, pass)
	snap.G2 = nil
	if d := r.Domain[rank]; d >= 0 {
		snap.G2 = r.g2At(d, pe.g2End).entries()
	}
}

func (r *Record) info(rank, pass int) PassInfo {
	pe := r.ranks[rank].pass(pass)
	var sc []Scheduled
	for x := range r.sched.entries(pe.schedOff, pe.schedLen) {
		sc = append(sc, Scheduled{Request: r.Request(x.req), Tokens: int(x.tokens), Prefill: int(x.prefill)})
	}
	return PassInfo{Pass: pass, Rank: r.Ranks[rank], StartMs: pe.start, ComputeStartMs: pe.computeStart,
		EndMs: pe.end, Bound: pe.bound.String(), Scheduled: sc, Final: pe.final}
}

// g1At rebuilds rank's G1 after pass.
func (r *Record) g1At(rank, pass int) *g1State {
	rl := r.ranks[rank]
	k := 0
	for i, c := range rl.ckpts {
		if c.pass <= pass {
			k = i
		}
	}
	c := &rl.ckpts[k]
	for len(r.work) <= rank {
		r.work = append(r.work, nil)
	}
	if r.work[rank] == nil {
		r.work[rank] = newG1State(r.G1Capacity[rank])
	}
	st := r.work[rank]
	st.restore(&c.st)
	pos := c.pos
	for p := c.pass + 1; p <= pass; p++ {
		end := rl.pass(p).g1End
		for ; pos < end; pos++ {
			st.apply(rl.g1.at(pos), int32(p))
		}
	}
	return st
}

// g2At rebuilds domain d at log position pos.
func (r *Record) g2At(d, pos int) *g2State {
	dl := r.domains[d]
	k := 0
	for i, c := range dl.ckpts {
		if c.pos <= pos {
			k = i
		}
	}
	c := dl.ckpts[k]
	st := c.st.clone()
	for i := c.pos; i < pos; i++ {
		st.apply(dl.ops.at(i))
	}
	return st
}

// Stats describes the record's memory use.
type Stats struct {
	Passes       int
	Changes      int   // G1 slot changes + G2 operations
	Bytes        int64 // delta logs and checkpoints
	BytesPerChng float64
}

// Stats measures the record.
func (r *Record) Stats() Stats {
	var s Stats
	for _, rl := range r.ranks {
		s.Passes += rl.lines()
		s.Changes += rl.g1.len()
		s.Bytes += int64(rl.g1.len()) * 12
		for _, c := range rl.ckpts {
			s.Bytes += int64(len(c.st.code))*(1+4*3) + int64(len(c.st.queue))*4
		}
	}
	for _, dl := range r.domains {
		s.Changes += dl.ops.len()
		s.Bytes += int64(dl.ops.len()) * 8
		for _, c := range dl.ckpts {
			s.Bytes += int64(len(c.st.blocks))*(4+1+4+4+1+8) + int64(len(c.st.byBlock.keys))*8
		}
	}
	if s.Changes > 0 {
		s.BytesPerChng = float64(s.Bytes) / float64(s.Changes)
	}
	return s
}
