package record

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"

	"github.com/kvsim/kvsim/core/numfmt"
	"github.com/kvsim/kvsim/core/timing"
	"github.com/kvsim/kvsim/core/vtime"
)

// line is one passes.jsonl object. Fields beyond docs/model/record.md's are
// what Decode needs to rebuild the record exactly: the slot and entry changes
// of the pass, and the names of blocks and requests seen for the first time.
type line struct {
	Pass           int        `json:"pass"`
	Worker         int        `json:"worker"`
	Rank           int        `json:"rank"`
	Role           string     `json:"role"`
	Final          bool       `json:"final,omitempty"`
	StartMs        vtime.Time `json:"start_ms"`
	ComputeStartMs vtime.Time `json:"compute_start_ms"`
	EndMs          vtime.Time `json:"end_ms"`
	// Bound is what limited a roofline or trained_physics pass: compute or
	// memory (absent with fixed and polynomial timing).
	Bound     string      `json:"bound,omitempty"`
	Scheduled []Scheduled `json:"scheduled"`
	Events    []Event     `json:"events"`
	G1        *g1Summary  `json:"g1"`
	G2        *g2Summary  `json:"g2,omitempty"`
	// Checkpoint lines (each rank's first line and every line where the
	// record keeps a checkpoint) carry capacities and the full slot map.
	Checkpoint bool `json:"checkpoint,omitempty"`
	G1Capacity int  `json:"g1_capacity,omitempty"`
	G2Capacity int  `json:"g2_capacity,omitempty"`
	Domain     *int `json:"g2_domain,omitempty"`
	BlockSize  int  `json:"block_size,omitempty"`
	// NewBlocks names blocks first mentioned on this line: [name, session].
	NewBlocks [][2]string `json:"new_blocks,omitempty"`
	// NewRequests names requests first mentioned: [id, session].
	NewRequests [][2]string `json:"new_requests,omitempty"`
	// G1Changes are [slot, state, block, owner] in order.
	G1Changes [][4]any `json:"g1_changes,omitempty"`
	// G2Changes are [op, block] in order (op: pending, resident, pinned,
	// in, out, evict).
	G2Changes [][2]string `json:"g2_changes,omitempty"`
	// A windowed record's base line (the first line of each rank) gives
	// the window and the rank's state before its first pass in the
	// window: G1Changes (and G2Changes for a domain not given yet) rebuild
	// it from empty pools, G1Since is each slot's Since.
	Window  string  `json:"window,omitempty"`
	Base    bool    `json:"base,omitempty"`
	G1Since []int32 `json:"g1_since,omitempty"`
}

type g1Summary struct {
	Unchanged     bool     `json:"unchanged,omitempty"`
	Free          *int     `json:"free,omitempty"`
	Active        *int     `json:"active,omitempty"`
	IdleHeadFirst []string `json:"idle_head_first,omitempty"`
	Slots         string   `json:"slots,omitempty"`
	Owners        []string `json:"owners,omitempty"`
}

type g2Summary struct {
	Unchanged       bool     `json:"unchanged,omitempty"`
	OrderEvictFirst []string `json:"order_evict_first,omitempty"`
	Pending         []string `json:"pending,omitempty"`
	Pinned          []string `json:"pinned,omitempty"`
}

type lineRef struct{ rank, pass int }

// WriteJSONL writes passes.jsonl: one object per pass per rank, in the
// order the passes ended (docs/model/record.md).
func (r *Record) WriteJSONL(w io.Writer) error { return r.WriteWindow(w, Window{}) }

// WriteWindow writes passes.jsonl keeping only the lines in win
// (docs/record.md, "Windowed records"): each rank's first line is then a
// base line that names the window and gives the rank's state before its
// first pass in it, and the lines that follow are those of the whole
// record (a line's new_blocks, new_requests and g2_changes also carry what
// lines left out of the window between two kept lines introduced). The
// zero Window writes every line.
func (r *Record) WriteWindow(w io.Writer, win Window) error {
	if r.window != "" && win.Spec != r.window {
		return fmt.Errorf("this record keeps only the window %s (--capture-window); it cannot write %s", r.window, wholeOr(win.Spec))
	}
	var order []lineRef
	for ri, rl := range r.ranks {
		for p := rl.skipped + 1; p <= rl.lines(); p++ {
			order = append(order, lineRef{ri, p})
		}
	}
	sort.Slice(order, func(i, j int) bool {
		return r.ranks[order[i].rank].pass(order[i].pass).seq < r.ranks[order[j].rank].pass(order[j].pass).seq
	})
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	// Each rank and domain starts from its first checkpoint: the empty
	// pools, or in a windowed record the state before its window.
	st := make([]*g1State, len(r.ranks))
	pos := make([]int, len(r.ranks))
	for ri, rl := range r.ranks {
		st[ri] = newG1State(r.G1Capacity[ri])
		st[ri].restore(&rl.ckpts[0].st)
		pos[ri] = rl.ckpts[0].pos
	}
	dst := make([]*g2State, len(r.domains))
	dpos := make([]int, len(r.domains))
	for d, dl := range r.domains {
		dst[d], dpos[d] = dl.ckpts[0].st.clone(), dl.ckpts[0].pos
	}
	reqIdx := make(map[string]int32, len(r.Requests))
	for i, q := range r.Requests {
		reqIdx[q] = int32(i)
	}
	// names collects the names a line uses that the file has not given
	// yet, in the order the line uses them; the line gives them.
	names := newNameList(r, reqIdx)
	// wdpos: the G2 log position of each domain the file has given
	// (-1: its state not given yet); based: ranks whose base line is out.
	wdpos := make([]int, len(r.domains))
	based := make([]bool, len(r.ranks))
	kept := 0
	past := make([]bool, len(r.ranks))
	npast := 0
	if !win.Whole() {
		for d := range wdpos {
			wdpos[d] = -1
		}
	}
	for _, ref := range order {
		ri, p := ref.rank, ref.pass
		rl := r.ranks[ri]
		pe := rl.pass(p)
		in := win.has(pe, p) && p >= r.FirstPass(ri)
		if !in && win.past(pe, p) {
			// This rank's later passes are all past the window too.
			if !past[ri] {
				past[ri] = true
				npast++
			}
			if npast == len(r.ranks) {
				break
			}
			continue
		}
		if in && !win.Whole() && !based[ri] {
			based[ri] = true
			if err := enc.Encode(r.baseLine(ri, p-1, win, st[ri], dst, dpos, wdpos, names)); err != nil {
				return err
			}
		}
		var ln line
		if in {
			info := r.info(ri, p)
			ln = line{Pass: p, Worker: info.Rank.Worker, Rank: info.Rank.Rank, Role: info.Rank.Role, Final: pe.final,
				StartMs: pe.start, ComputeStartMs: pe.computeStart, EndMs: pe.end, Bound: pe.bound.String(), Scheduled: info.Scheduled}
			if ln.Scheduled == nil {
				ln.Scheduled = []Scheduled{}
			}
			for x := range r.sched.entries(pe.schedOff, pe.schedLen) {
				names.req(x.req)
			}
		}
		for i := pos[ri]; i < pe.g1End; i++ {
			d := rl.g1.at(i)
			if in {
				names.req(d.owner)
				ln.G1Changes = append(ln.G1Changes, [4]any{d.slot(), string(stateChars[d.code()]), names.block(d.block), r.Request(d.owner)})
			}
			st[ri].apply(d, int32(p))
		}
		changed := pe.g1End > pos[ri]
		pos[ri] = max(pos[ri], pe.g1End)
		if in {
			ln.G1 = summarizeG1(r, st[ri], changed)
		}
		if in && (p == 1 || r.isCheckpoint(ri, p)) {
			ln.Checkpoint, ln.G1Capacity, ln.BlockSize = true, r.G1Capacity[ri], r.BlockSize
			d := r.Domain[ri]
			ln.Domain = &d
			if d >= 0 {
				ln.G2Capacity = r.G2Capacity[d]
			}
			ln.G1.Slots, ln.G1.Owners = slotMap(r, st[ri])
			ln.G1.Unchanged = false
		}
		if d := r.Domain[ri]; d >= 0 {
			dl := r.domains[d]
			for i := dpos[d]; i < pe.g2End; i++ {
				dst[d].apply(dl.ops.at(i))
			}
			if pe.g2End > dpos[d] {
				dpos[d] = pe.g2End
			}
			if in {
				// The file has given the domain up to wdpos[d] (dpos[d]
				// before this line when the window is whole).
				from := wdpos[d]
				for i := from; i < pe.g2End; i++ {
					o := dl.ops.at(i)
					ln.G2Changes = append(ln.G2Changes, [2]string{opNames[o.op], names.block(o.block)})
				}
				dch := pe.g2End > from
				if from < pe.g2End {
					wdpos[d] = pe.g2End
				}
				ln.G2 = summarizeG2(r, dst[d], dch || ln.Checkpoint)
			}
		}
		if !in {
			continue
		}
		ln.Events = r.events(ri, p)
		for _, ev := range ln.Events {
			names.reqName(ev.Request)
			names.blockName(ev.Block, r.sessionOfBlock(ev.Block))
			for _, b := range ev.Blocks {
				names.blockName(b, r.sessionOfBlock(b))
			}
		}
		ln.NewBlocks, ln.NewRequests = names.take()
		if err := enc.Encode(&ln); err != nil {
			return err
		}
		kept++
	}
	if kept == 0 && (len(order) > 0 || r.lines > 0) {
		lines, last := r.lines, r.lastEnd
		if lines == 0 {
			lines, last = len(order), r.ranks[order[len(order)-1].rank].pass(order[len(order)-1].pass).end
		}
		return fmt.Errorf("the window %s holds no pass of the run (%s passes, the last ending at %v ms)",
			win.Spec, numfmt.Thousands(int64(lines)), float64(last))
	}
	return bw.Flush()
}

func wholeOr(spec string) string {
	if spec == "" {
		return "the whole run"
	}
	return "the window " + spec
}

// A nameList is what a windowed passes.jsonl has named so far, and the
// names the line being written uses that it has not: that line gives them
// in new_blocks and new_requests.
type nameList struct {
	r                *Record
	reqIdx           map[string]int32
	seenBlock        map[string]bool
	seenReq          map[string]bool
	newBlock, newReq [][2]string
}

func newNameList(r *Record, reqIdx map[string]int32) *nameList {
	return &nameList{r: r, reqIdx: reqIdx, seenBlock: map[string]bool{}, seenReq: map[string]bool{}}
}

func (n *nameList) reqName(q string) {
	if q != "" && !n.seenReq[q] {
		n.seenReq[q] = true
		n.newReq = append(n.newReq, [2]string{q, n.r.Sessions[n.reqIdx[q]]})
	}
}

func (n *nameList) req(q int32) { n.reqName(n.r.Request(q)) }

func (n *nameList) blockName(name, session string) {
	if name != "" && !n.seenBlock[name] {
		n.seenBlock[name] = true
		n.newBlock = append(n.newBlock, [2]string{name, session})
	}
}

// block notes block b and returns its name ("" for none).
func (n *nameList) block(b int32) string {
	if b < 0 {
		return ""
	}
	blk := n.r.Block(b)
	n.blockName(blk.Name, blk.Session)
	return blk.Name
}

// take returns the names noted since the last take (nil when none).
func (n *nameList) take() (blocks, reqs [][2]string) {
	blocks, reqs = n.newBlock, n.newReq
	n.newBlock, n.newReq = nil, nil
	return blocks, reqs
}

// baseLine is rank ri's base line in a windowed record: the state after
// pass p (its last pass before the window), the state of the rank's G2
// domain when the file has not given it yet, and the names these use that
// the file has not given.
func (r *Record) baseLine(ri, p int, win Window, st *g1State, dst []*g2State, dpos, wdpos []int, names *nameList) *line {
	id := r.Ranks[ri]
	d := r.Domain[ri]
	ln := &line{Pass: p, Worker: id.Worker, Rank: id.Rank, Role: id.Role, Scheduled: []Scheduled{}, Events: []Event{},
		Window: win.Spec, Base: true, Checkpoint: true, G1Capacity: r.G1Capacity[ri], Domain: &d, BlockSize: r.BlockSize,
		G1Changes: baseG1(r, st, names), G1Since: slices.Clone(st.since)}
	ln.G1 = summarizeG1(r, st, true)
	ln.G1.Slots, ln.G1.Owners = slotMap(r, st)
	if d >= 0 {
		ln.G2Capacity = r.G2Capacity[d]
		if wdpos[d] < 0 {
			for _, o := range dst[d].baseOps() {
				ln.G2Changes = append(ln.G2Changes, [2]string{opNames[o.op], names.block(o.block)})
			}
			wdpos[d] = dpos[d]
		}
		// The domain's summary may name entries whose operations the
		// file gives only with the rank's first kept line.
		for _, e := range dst[d].entries() {
			names.block(e.Block)
		}
		ln.G2 = summarizeG2(r, dst[d], true)
	}
	ln.NewBlocks, ln.NewRequests = names.take()
	return ln
}

// sessionOfBlock is the session of a block named in an event.
func (r *Record) sessionOfBlock(name string) string {
	if name == "" {
		return ""
	}
	if r.blockOf != nil {
		return r.blockSessions[r.blockOf[name]]
	}
	b := parseName(name)
	for i, q := range r.Requests {
		if q == b.Request {
			return r.Sessions[i]
		}
	}
	return ""
}

func (r *Record) isCheckpoint(rank, pass int) bool {
	for _, c := range r.ranks[rank].ckpts {
		if c.pass == pass {
			return true
		}
	}
	return false
}

func summarizeG1(r *Record, st *g1State, changed bool) *g1Summary {
	if !changed {
		return &g1Summary{Unchanged: true}
	}
	free, active := 0, 0
	for _, c := range st.code {
		switch c {
		case codeFree:
			free++
		case codeActive:
			active++
		}
	}
	s := &g1Summary{Free: &free, Active: &active, IdleHeadFirst: []string{}}
	for q := st.head; q >= 0; q = st.next[q] {
		s.IdleHeadFirst = append(s.IdleHeadFirst, r.BlockName(st.block[q]))
	}
	return s
}

func slotMap(r *Record, st *g1State) (string, []string) {
	b := make([]byte, len(st.code))
	var owners []string
	for i, c := range st.code {
		b[i] = stateChars[c]
		if c != codeFree {
			owners = append(owners, r.BlockName(st.block[i]))
		}
	}
	return string(b), owners
}

func summarizeG2(r *Record, st *g2State, changed bool) *g2Summary {
	if !changed {
		return &g2Summary{Unchanged: true}
	}
	s := &g2Summary{OrderEvictFirst: []string{}, Pending: []string{}, Pinned: []string{}}
	for _, e := range st.entries() {
		name := r.BlockName(e.Block)
		switch e.State {
		case EntryPending:
			s.Pending = append(s.Pending, name)
		case EntryPinned:
			s.Pinned = append(s.Pinned, name)
		default:
			if e.Order >= 0 {
				s.OrderEvictFirst = append(s.OrderEvictFirst, name)
			}
		}
	}
	return s
}

// Decode reads passes.jsonl back into a Record whose Seek gives the same
// snapshots as the record that wrote it.
func Decode(rd io.Reader) (*Record, error) {
	rec := &Record{trs: map[int32]*trInfo{}, blockOf: map[string]int32{}, names: []string{}}
	reqOf := map[string]int32{}
	rankOf := map[[2]int]int{}
	sessionOf := map[string]string{}
	based := map[int]bool{} // G2 domains whose base state was read
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	n := 0
	for sc.Scan() {
		n++
		var ln line
		if err := json.Unmarshal(sc.Bytes(), &ln); err != nil {
			return nil, fmt.Errorf("passes.jsonl:%d: %v", n, err)
		}
		for _, nb := range ln.NewBlocks {
			if _, ok := rec.blockOf[nb[0]]; !ok {
				rec.blockOf[nb[0]] = int32(len(rec.names))
				rec.names = append(rec.names, nb[0])
				sessionOf[nb[0]] = nb[1]
			}
		}
		for _, nr := range ln.NewRequests {
			if _, ok := reqOf[nr[0]]; !ok {
				reqOf[nr[0]] = int32(len(rec.Requests))
				rec.Requests = append(rec.Requests, nr[0])
				rec.Sessions = append(rec.Sessions, nr[1])
			}
		}
		key := [2]int{ln.Worker, ln.Rank}
		ri, ok := rankOf[key]
		if ln.Base {
			if ok {
				return nil, fmt.Errorf("passes.jsonl:%d: worker %d rank %d: a base line after its first line", n, ln.Worker, ln.Rank)
			}
			if ln.Window == "" || (rec.window != "" && ln.Window != rec.window) {
				return nil, fmt.Errorf("passes.jsonl:%d: a base line without the window %q", n, rec.window)
			}
			rec.window = ln.Window
		} else if !ok && rec.window != "" {
			return nil, fmt.Errorf("passes.jsonl:%d: worker %d rank %d starts without a base line in a windowed record", n, ln.Worker, ln.Rank)
		}
		if !ok {
			if !ln.Checkpoint || ln.G1Capacity <= 0 || ln.Domain == nil {
				return nil, fmt.Errorf("passes.jsonl:%d: the first line of worker %d rank %d lacks its capacities", n, ln.Worker, ln.Rank)
			}
			ri = len(rec.ranks)
			rankOf[key] = ri
			rec.Ranks = append(rec.Ranks, RankID{Worker: ln.Worker, Rank: ln.Rank, Role: ln.Role})
			rec.G1Capacity = append(rec.G1Capacity, ln.G1Capacity)
			rec.Domain = append(rec.Domain, *ln.Domain)
			rec.BlockSize = ln.BlockSize
			rl := &rankLog{}
			rl.ckpts = append(rl.ckpts, g1Ckpt{st: newG1State(ln.G1Capacity).compact()})
			rec.ranks = append(rec.ranks, rl)
			if d := *ln.Domain; d >= 0 {
				for len(rec.domains) <= d {
					dl := &domLog{}
					dl.ckpts = append(dl.ckpts, g2Ckpt{st: newG2State()})
					rec.domains = append(rec.domains, dl)
					rec.G2Capacity = append(rec.G2Capacity, 0)
				}
				rec.G2Capacity[d] = ln.G2Capacity
			}
		}
		rl := rec.ranks[ri]
		if ln.Base {
			if err := rec.decodeBase(ri, &ln, reqOf, based); err != nil {
				return nil, fmt.Errorf("passes.jsonl:%d: base line: %v", n, err)
			}
			continue
		}
		if ln.Pass != rl.lines()+1 {
			return nil, fmt.Errorf("passes.jsonl:%d: worker %d rank %d: pass %d follows pass %d", n, ln.Worker, ln.Rank, ln.Pass, rl.lines())
		}
		for _, c := range ln.G1Changes {
			d, err := rec.decodeSlot(c, reqOf)
			if err != nil {
				return nil, fmt.Errorf("passes.jsonl:%d: g1_changes: %v", n, err)
			}
			if int(d.slot()) >= rec.G1Capacity[ri] {
				return nil, fmt.Errorf("passes.jsonl:%d: g1_changes: slot %d beyond capacity %d", n, d.slot(), rec.G1Capacity[ri])
			}
			rl.g1.add(d)
		}
		pe := passEntry{start: ln.StartMs, computeStart: ln.ComputeStartMs, end: ln.EndMs, final: ln.Final, bound: timing.BoundOf(ln.Bound), seq: rec.seq,
			schedOff: int32(rec.sched.len()), schedLen: int32(len(ln.Scheduled))}
		rec.seq++
		for _, s := range ln.Scheduled {
			q, ok := reqOf[s.Request]
			if !ok {
				return nil, fmt.Errorf("passes.jsonl:%d: scheduled: unknown request %q", n, s.Request)
			}
			rec.sched.add(schedRaw{req: q, tokens: int32(s.Tokens), prefill: int32(s.Prefill)})
		}
		if d := rec.Domain[ri]; d >= 0 {
			dl := rec.domains[d]
			for _, c := range ln.G2Changes {
				o, err := rec.decodeOp(c)
				if err != nil {
					return nil, fmt.Errorf("passes.jsonl:%d: g2_changes: %v", n, err)
				}
				dl.ops.add(o)
			}
			pe.g2End = dl.ops.len()
		}
		for i := range ln.Events {
			ev := ln.Events[i]
			k, ok := kindOf(ev.Kind)
			if !ok {
				return nil, fmt.Errorf("passes.jsonl:%d: unknown event kind %q", n, ev.Kind)
			}
			rl.events.add(rawEvent{kind: k | kindDecoded, req: -1, a: int32(len(rec.pub))})
			rec.pub = append(rec.pub, ev)
		}
		pe.g1End, pe.evEnd = rl.g1.len(), rl.events.len()
		rl.passes = append(rl.passes, pe)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(rec.ranks) == 0 {
		return nil, fmt.Errorf("passes.jsonl: no passes")
	}
	rec.blockSessions = make([]string, len(rec.names))
	for i, name := range rec.names {
		rec.blockSessions[i] = sessionOf[name]
	}
	rec.buildCheckpoints()
	return rec, nil
}

// decodeBase reads rank ri's base line: its state before the window
// becomes the rank's first checkpoint (after pass ln.Pass), the passes
// before the window are empty placeholders, and the rank's G2 domain
// starts from the line's g2_changes unless another rank's base gave it.
func (rec *Record) decodeBase(ri int, ln *line, reqOf map[string]int32, based map[int]bool) error {
	if ln.Pass < 0 {
		return fmt.Errorf("pass %d", ln.Pass)
	}
	capacity := rec.G1Capacity[ri]
	st := newG1State(capacity)
	for _, c := range ln.G1Changes {
		d, err := rec.decodeSlot(c, reqOf)
		if err != nil {
			return fmt.Errorf("g1_changes: %v", err)
		}
		if int(d.slot()) >= capacity {
			return fmt.Errorf("g1_changes: slot %d beyond capacity %d", d.slot(), capacity)
		}
		st.apply(d, int32(ln.Pass))
	}
	if len(ln.G1Since) != 0 {
		if len(ln.G1Since) != capacity {
			return fmt.Errorf("g1_since has %d slots, not %d", len(ln.G1Since), capacity)
		}
		copy(st.since, ln.G1Since)
	}
	rl := rec.ranks[ri]
	rl.first = ln.Pass + 1
	rl.ckpts = []g1Ckpt{{pass: ln.Pass, st: st.compact()}}
	g2End := 0
	if d := rec.Domain[ri]; d >= 0 {
		dl := rec.domains[d]
		if !based[d] {
			based[d] = true
			g2 := newG2State()
			for _, c := range ln.G2Changes {
				o, err := rec.decodeOp(c)
				if err != nil {
					return fmt.Errorf("g2_changes: %v", err)
				}
				g2.apply(o)
			}
			dl.ckpts = []g2Ckpt{{st: g2}}
		}
		g2End = dl.ops.len()
	}
	if ln.Pass > 0 && rl.lines() == 0 {
		// Only the last placeholder is read (rankLog.skipped).
		rl.skipped = ln.Pass - 1
		rl.passes = append(rl.passes, passEntry{g2End: g2End, seq: -1})
		return nil
	}
	for range ln.Pass {
		rl.passes = append(rl.passes, passEntry{g2End: g2End, seq: -1})
	}
	return nil
}

// decodeOp reads one g2_changes entry [op, block].
func (rec *Record) decodeOp(c [2]string) (g2Op, error) {
	op := -1
	for i, name := range opNames {
		if name == c[0] {
			op = i
		}
	}
	b, ok := rec.blockOf[c[1]]
	if op < 0 || !ok {
		return g2Op{}, fmt.Errorf("bad change %q", c)
	}
	return g2Op{block: b, op: uint8(op)}, nil
}

func (rec *Record) decodeSlot(c [4]any, reqOf map[string]int32) (g1Delta, error) {
	slot, ok := c[0].(float64)
	state, ok2 := c[1].(string)
	block, ok3 := c[2].(string)
	owner, ok4 := c[3].(string)
	if !ok || !ok2 || !ok3 || !ok4 || len(state) != 1 || slot < 0 {
		return g1Delta{}, fmt.Errorf("bad change %v", c)
	}
	code, ok := codeOf(state[0])
	if !ok {
		return g1Delta{}, fmt.Errorf("unknown slot state %q", state)
	}
	b := int32(-1)
	if block != "" {
		if b, ok = rec.blockOf[block]; !ok {
			return g1Delta{}, fmt.Errorf("unknown block %q", block)
		}
	}
	o := int32(-1)
	if owner != "" {
		if o, ok = reqOf[owner]; !ok {
			return g1Delta{}, fmt.Errorf("unknown request %q", owner)
		}
	}
	return mkDelta(int32(slot), code, b, o), nil
}

// buildCheckpoints cuts a decoded record's checkpoints by the same rule the
// recorder uses.
func (rec *Record) buildCheckpoints() {
	for ri, rl := range rec.ranks {
		st := newG1State(rec.G1Capacity[ri])
		st.restore(&rl.ckpts[0].st)
		pos := 0
		for p := rl.ckpts[0].pass + 1; p <= rl.lines(); p++ {
			for ; pos < rl.pass(p).g1End; pos++ {
				st.apply(rl.g1.at(pos), int32(p))
			}
			if pos-rl.lastCkpt >= checkpointEvery*rec.G1Capacity[ri] {
				rl.ckpts = append(rl.ckpts, g1Ckpt{pass: p, pos: pos, st: st.compact()})
				rl.lastCkpt = pos
			}
		}
	}
	for d, dl := range rec.domains {
		st := dl.ckpts[0].st.clone()
		for i := 0; i < dl.ops.len(); i++ {
			st.apply(dl.ops.at(i))
			if i+1-dl.lastCkpt >= checkpointEvery*max(rec.G2Capacity[d], 1) {
				dl.ckpts = append(dl.ckpts, g2Ckpt{pos: i + 1, st: st.clone()})
				dl.lastCkpt = i + 1
			}
		}
	}
}
