package record

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"

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
func (r *Record) WriteJSONL(w io.Writer) error {
	var order []lineRef
	for ri, rl := range r.ranks {
		for p := range rl.passes {
			order = append(order, lineRef{ri, p + 1})
		}
	}
	sort.Slice(order, func(i, j int) bool {
		return r.ranks[order[i].rank].passes[order[i].pass-1].seq < r.ranks[order[j].rank].passes[order[j].pass-1].seq
	})
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	st := make([]*g1State, len(r.ranks))
	pos := make([]int, len(r.ranks))
	dst := make([]*g2State, len(r.domains))
	dpos := make([]int, len(r.domains))
	for d := range r.domains {
		dst[d] = newG2State()
	}
	reqIdx := make(map[string]int32, len(r.Requests))
	for i, q := range r.Requests {
		reqIdx[q] = int32(i)
	}
	seenBlock := map[string]bool{}
	seenReq := map[string]bool{}
	for _, ref := range order {
		ri, p := ref.rank, ref.pass
		rl := r.ranks[ri]
		pe := &rl.passes[p-1]
		if st[ri] == nil {
			st[ri] = newG1State(r.G1Capacity[ri])
		}
		info := r.info(ri, p)
		ln := line{Pass: p, Worker: info.Rank.Worker, Rank: info.Rank.Rank, Role: info.Rank.Role, Final: pe.final,
			StartMs: pe.start, ComputeStartMs: pe.computeStart, EndMs: pe.end, Bound: pe.bound.String(), Scheduled: info.Scheduled,
			Events: r.events(ri, p)}
		if ln.Scheduled == nil {
			ln.Scheduled = []Scheduled{}
		}
		noteReqName := func(q string) {
			if q != "" && !seenReq[q] {
				seenReq[q] = true
				ln.NewRequests = append(ln.NewRequests, [2]string{q, r.Sessions[reqIdx[q]]})
			}
		}
		noteReq := func(q int32) { noteReqName(r.Request(q)) }
		noteBlockName := func(name, session string) {
			if name != "" && !seenBlock[name] {
				seenBlock[name] = true
				ln.NewBlocks = append(ln.NewBlocks, [2]string{name, session})
			}
		}
		noteBlock := func(b int32) string {
			if b < 0 {
				return ""
			}
			blk := r.Block(b)
			noteBlockName(blk.Name, blk.Session)
			return blk.Name
		}
		for x := range r.sched.entries(pe.schedOff, pe.schedLen) {
			noteReq(x.req)
		}
		for i := pos[ri]; i < pe.g1End; i++ {
			d := rl.g1.at(i)
			noteReq(d.owner)
			ln.G1Changes = append(ln.G1Changes, [4]any{d.slot(), string(stateChars[d.code()]), noteBlock(d.block), r.Request(d.owner)})
			st[ri].apply(d, int32(p))
		}
		changed := pe.g1End > pos[ri]
		pos[ri] = pe.g1End
		ln.G1 = summarizeG1(r, st[ri], changed)
		if p == 1 || r.isCheckpoint(ri, p) {
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
			dch := pe.g2End > dpos[d]
			for i := dpos[d]; i < pe.g2End; i++ {
				o := dl.ops.at(i)
				ln.G2Changes = append(ln.G2Changes, [2]string{opNames[o.op], noteBlock(o.block)})
				dst[d].apply(o)
			}
			if pe.g2End > dpos[d] {
				dpos[d] = pe.g2End
			}
			ln.G2 = summarizeG2(r, dst[d], dch || ln.Checkpoint)
		}
		for _, ev := range ln.Events {
			noteReqName(ev.Request)
			noteBlockName(ev.Block, r.sessionOfBlock(ev.Block))
			for _, b := range ev.Blocks {
				noteBlockName(b, r.sessionOfBlock(b))
			}
		}
		if err := enc.Encode(&ln); err != nil {
			return err
		}
	}
	return bw.Flush()
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
		if ln.Pass != len(rl.passes)+1 {
			return nil, fmt.Errorf("passes.jsonl:%d: worker %d rank %d: pass %d follows pass %d", n, ln.Worker, ln.Rank, ln.Pass, len(rl.passes))
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
				op := -1
				for i, name := range opNames {
					if name == c[0] {
						op = i
					}
				}
				b, ok := rec.blockOf[c[1]]
				if op < 0 || !ok {
					return nil, fmt.Errorf("passes.jsonl:%d: g2_changes: bad change %q", n, c)
				}
				dl.ops.add(g2Op{block: b, op: uint8(op)})
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
		pos := 0
		for p := 1; p <= len(rl.passes); p++ {
			for ; pos < rl.passes[p-1].g1End; pos++ {
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
