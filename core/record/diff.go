package record

import (
	"fmt"
	"io"
	"maps"
	"math/bits"
	"sort"

	"github.com/kvsim/kvsim/core/identity"
	"github.com/kvsim/kvsim/core/numfmt"
)

// PassDiff is one pass where two runs evicted different blocks.
type PassDiff struct {
	Pass int
	// EvictedByAKeptByB are blocks run A evicted in this pass (from G1 or
	// G2) that run B did not evict in this pass and still holds in the same
	// tier at its end; EvictedByBKeptByA the reverse. A block both runs
	// evicted from the same tier in the pass is no divergence, whatever the
	// order of the two eviction lists or the slot each evicted it from.
	EvictedByAKeptByB, EvictedByBKeptByA []TierBlock
}

// TierBlock is a block in a tier ("g1" or "g2").
type TierBlock struct {
	Tier, Block string
}

// Restore is one block a request loaded from G2.
type Restore struct {
	Request, Block string
}

// DiffResult compares two records of the same trace (kvsim diff).
type DiffResult struct {
	Rank int // rank index compared
	// FirstDivergent is the first pass whose cached G1 blocks or G2 entries
	// differ between the runs (0 when none does).
	FirstDivergent int
	Passes         []PassDiff
	// OnlyA and OnlyB are restores (request, block) that one run made and
	// the other did not: OnlyB are the restores A lost to its evictions.
	OnlyA, OnlyB []Restore
	// HeldOnlyA and HeldOnlyB are, at the end of the first divergent pass,
	// the blocks one run holds (in that tier) and the other does not,
	// sorted by tier and name.
	HeldOnlyA, HeldOnlyB []TierBlock
	// BlockSize is both runs' block size in tokens (Comparable checks they
	// share it).
	BlockSize int
}

// Tokens is n blocks in tokens, at the runs' block size.
func (d *DiffResult) Tokens(n int) int { return n * d.BlockSize }

// Comparable reports why two records cannot be compared pass by pass on
// rank, or nil: they must come from the same trace and the same config
// apart from the G2 connector and tier settings (the same ranks, block
// size and G1 capacity, and the sessions of one within the other's).
func Comparable(a, b *Record, rank int) error {
	why := func(format string, args ...any) error {
		return fmt.Errorf("the two runs do not share a trace and config apart from the connector and tier settings: "+format, args...)
	}
	switch {
	case rank < 0 || rank >= len(a.Ranks) || rank >= len(b.Ranks):
		return fmt.Errorf("rank index %d is not in both records (%d and %d ranks)", rank, len(a.Ranks), len(b.Ranks))
	case len(a.Ranks) != len(b.Ranks):
		return why("%d ranks against %d", len(a.Ranks), len(b.Ranks))
	case a.BlockSize != b.BlockSize:
		return why("block size %d tokens against %d", a.BlockSize, b.BlockSize)
	}
	if fa, fb := a.FirstPass(rank), b.FirstPass(rank); fa != fb {
		return fmt.Errorf("the records start at different passes of rank index %d (%d and %d: windowed records are compared when their windows start at the same pass; capture both with the same --capture-window of pass numbers)", rank, fa, fb)
	}
	for i, id := range a.Ranks {
		if id != b.Ranks[i] {
			return why("rank index %d is worker %d rank %d (%s) against worker %d rank %d (%s)",
				i, id.Worker, id.Rank, id.Role, b.Ranks[i].Worker, b.Ranks[i].Rank, b.Ranks[i].Role)
		}
		if a.G1Capacity[i] != b.G1Capacity[i] {
			return why("G1 of %s blocks against %s on rank index %d",
				numfmt.Thousands(int64(a.G1Capacity[i])), numfmt.Thousands(int64(b.G1Capacity[i])), i)
		}
	}
	// Requests are numbered in the order they were issued, which the
	// connector may change (a closed loop issues a session's next turn
	// when the last completes); a rejection ends its session, and a stop
	// rule may start fewer sessions. So the runs' sessions are compared as
	// sets, one within the other.
	sa, sb := sessionSet(a), sessionSet(b)
	if len(sa) > len(sb) {
		sa, sb = sb, sa
	}
	for s := range sa {
		if !sb[s] {
			return why("session %q is in one run only (%s sessions against %s)", s,
				numfmt.Thousands(int64(len(sessionSet(a)))), numfmt.Thousands(int64(len(sessionSet(b)))))
		}
	}
	return nil
}

func sessionSet(r *Record) map[string]bool {
	m := make(map[string]bool, len(r.Sessions))
	for _, s := range r.Sessions {
		m[s] = true
	}
	return m
}

// Diff walks two records pass by pass on one rank. It refuses records
// that Comparable refuses.
func Diff(a, b *Record, rank int) (*DiffResult, error) {
	if err := Comparable(a, b, rank); err != nil {
		return nil, err
	}
	res := &DiffResult{Rank: rank, BlockSize: a.BlockSize}
	w := &differ{a: newSide(a, rank), b: newSide(b, rank)}
	w.a.w, w.b.w = w, w
	w.matchRequests()
	n := min(a.NumLines(rank), b.NumLines(rank))
	// twins: at the end of the previous pass both runs held the same block
	// in every G1 slot and the same G2 entries, so a pass that changes both
	// in the same way leaves them so (sameChanges) and needs no look at
	// the holdings: the walk to the first divergence reads each change
	// once instead of every slot every pass.
	twins := false
	for p := a.FirstPass(rank); p <= n; p++ {
		w.pass(p)
		if res.FirstDivergent == 0 && (!twins || !w.sameChanges(p)) {
			w.hold()
			if !w.same() {
				res.FirstDivergent = p
				res.HeldOnlyA, res.HeldOnlyB = w.heldOnly(w.a, w.b), w.heldOnly(w.b, w.a)
				w.stopKeys()
			}
			twins = res.FirstDivergent == 0 && w.sameSlots()
		}
		onlyA, onlyB := w.unmatched()
		if len(onlyA)+len(onlyB) == 0 {
			continue
		}
		w.hold()
		pd := PassDiff{Pass: p, EvictedByAKeptByB: w.kept(onlyA, w.a, w.b), EvictedByBKeptByA: w.kept(onlyB, w.b, w.a)}
		if len(pd.EvictedByAKeptByB)+len(pd.EvictedByBKeptByA) > 0 {
			res.Passes = append(res.Passes, pd)
		}
	}
	ra, rb := restores(a, rank), restores(b, rank)
	res.OnlyA, res.OnlyB = minus(ra, rb), minus(rb, ra)
	return res, nil
}

// A tierIdx is a block of one record (its index) in G1 (1) or G2 (2).
type tierIdx struct {
	tier uint8
	b    int32
}

var tierNames = [3]string{"", "g1", "g2"}

// side is one run walked pass by pass: its G1 and G2 states are advanced
// incrementally (Diff visits the passes in order) and rebuilt nowhere;
// block names are built once each.
type side struct {
	r            *Record
	rank, pass   int
	g1           *g1State
	g1pos, g2pos int
	g2           *g2State
	dom          *domLog
	// held1 has block b's bit set while b is cached in G1, dup1 counts
	// the copies of a block beyond its first, and n1 counts the blocks:
	// a bit a block of the run, not a stamp (24 MB a side on the Mooncake
	// run, 258 MB allocated over one index of a compare's window). They
	// follow each slot change as advance applies it; rebuilding them from
	// every slot at every pass that evicts took 2.7 of the 3.6 s that a
	// deep Mooncake compare window took to index natively.
	held1  []uint64
	dup1   map[int32]int32
	n1     int
	names  map[int32]string
	byName map[string]int32
	ev     []tierIdx
	// toPeer maps this run's requests to the other run's (matchRequests;
	// nil: blocks are matched by name), births finds this run's blocks by
	// origin.
	toPeer []int32
	births *identity.Births
	// w is the diff walking this side: while it keeps keys, each block
	// that joins or leaves the side's holdings is tracked.
	w   *differ
	isB bool // the second run of the diff (key numbers requests as its)
}

func newSide(r *Record, rank int) *side {
	s := &side{r: r, rank: rank}
	if d := r.Domain[rank]; d >= 0 {
		s.dom = r.domains[d]
	}
	return s
}

func (s *side) numBlocks() int {
	if s.r.names != nil {
		return len(s.r.names)
	}
	return s.r.origins.Len()
}

// name is block b's name, built once. The names are kept by block, not in
// an array over every block of the run: a live record of the Mooncake run
// has 5.9 M, and a diff names only the blocks it reports (an array per
// side allocated 1 GB over one index of a compare's window, and took the
// page's worker to 608 MiB).
func (s *side) name(b int32) string {
	if s.names == nil {
		s.names = map[int32]string{}
	}
	n, ok := s.names[b]
	if !ok {
		n = s.r.BlockName(b)
		s.names[b] = n
	}
	return n
}

// index is the block named name in this record (-1: none).
func (s *side) index(name string) int32 {
	if s.byName == nil {
		s.byName = make(map[string]int32, s.numBlocks())
		for b := range s.numBlocks() {
			s.byName[s.name(int32(b))] = int32(b)
		}
	}
	if b, ok := s.byName[name]; ok {
		return b
	}
	return -1
}

// advance brings the states to the end of pass p.
func (s *side) advance(p int) {
	rl := s.r.ranks[s.rank]
	if s.g1 == nil {
		s.g1 = s.r.g1At(s.rank, p).clone()
		s.held1 = make([]uint64, (s.numBlocks()+63)/64)
		for i := range s.g1.code {
			s.add1(s.cached1(int32(i)))
		}
		s.g1pos = rl.pass(p).g1End
		if s.dom != nil {
			s.g2pos = rl.pass(p).g2End
			s.g2 = s.r.g2At(s.r.Domain[s.rank], s.g2pos)
			if s.tracked() {
				for _, k := range s.g2.byBlock.keys {
					if k >= 0 {
						s.w.track(s, 2, k, true)
					}
				}
			}
		}
		s.pass = p
		return
	}
	for q := s.pass + 1; q <= p; q++ {
		for end := rl.pass(q).g1End; s.g1pos < end; s.g1pos++ {
			d := rl.g1.at(s.g1pos)
			s.drop1(s.cached1(d.slot()))
			s.g1.apply(d, int32(q))
			s.add1(s.cached1(d.slot()))
		}
	}
	if s.dom != nil {
		for end := rl.pass(p).g2End; s.g2pos < end; s.g2pos++ {
			op := s.dom.ops.at(s.g2pos)
			if !s.tracked() {
				s.g2.apply(op)
				continue
			}
			_, had := s.g2.byBlock.get(op.block)
			s.g2.apply(op)
			if _, has := s.g2.byBlock.get(op.block); has != had {
				s.w.track(s, 2, op.block, has)
			}
		}
	}
	s.pass = p
}

// hold brings the side's holdings to the end of pass p.
func (s *side) hold(p int) {
	s.advance(p)
	if checkHoldings {
		s.checkHeld()
	}
}

// tracked tells whether the diff keeps the difference of the holdings.
func (s *side) tracked() bool { return s.w != nil && s.w.keys != nil }

// cached1 is the block slot i holds as a cached copy (-1: none).
func (s *side) cached1(i int32) int32 {
	if c := s.g1.code[i]; c == codeFree || c == codePrivate {
		return -1
	}
	return s.g1.block[i]
}

// add1 counts a cached copy of block b (none when b < 0).
func (s *side) add1(b int32) {
	switch {
	case b < 0:
	case s.held1[b>>6]&(1<<(b&63)) == 0:
		s.held1[b>>6] |= 1 << (b & 63)
		s.n1++
		if s.tracked() {
			s.w.track(s, 1, b, true)
		}
	default:
		if s.dup1 == nil {
			s.dup1 = map[int32]int32{}
		}
		s.dup1[b]++
	}
}

// drop1 uncounts a cached copy of block b (none when b < 0).
func (s *side) drop1(b int32) {
	if b < 0 {
		return
	}
	if len(s.dup1) > 0 {
		if k, ok := s.dup1[b]; ok {
			if k == 1 {
				delete(s.dup1, b)
			} else {
				s.dup1[b] = k - 1
			}
			return
		}
	}
	s.held1[b>>6] &^= 1 << (b & 63)
	s.n1--
	if s.tracked() {
		s.w.track(s, 1, b, false)
	}
}

// checkHoldings makes every hold compare the side's holdings with the
// slots (set by the package's tests).
var checkHoldings = false

// checkHeld panics when held1, dup1 and n1 are not what the slots hold.
func (s *side) checkHeld() {
	copies := map[int32]int32{}
	for i := range s.g1.code {
		if b := s.cached1(int32(i)); b >= 0 {
			copies[b]++
		}
	}
	set := 0
	for _, w := range s.held1 {
		set += bits.OnesCount64(w)
	}
	if set != len(copies) || s.n1 != len(copies) {
		panic(fmt.Sprintf("record: diff holdings: %d blocks marked, %d counted, %d cached", set, s.n1, len(copies)))
	}
	for b, n := range copies {
		if s.held1[b>>6]&(1<<(b&63)) == 0 || s.dup1[b] != n-1 {
			panic(fmt.Sprintf("record: diff holdings: block %d has %d copies, marked %v with %d more", b, n, s.held1[b>>6]&(1<<(b&63)) != 0, s.dup1[b]))
		}
	}
	visits := 0
	s.each(func(t tierIdx) {
		if t.tier == 1 {
			if copies[t.b] <= 0 {
				panic(fmt.Sprintf("record: diff holdings: each visits block %d twice or uncached", t.b))
			}
			copies[t.b], visits = 0, visits+1
		}
	})
	if visits != s.n1 {
		panic(fmt.Sprintf("record: diff holdings: each visits %d blocks of %d", visits, s.n1))
	}
}

func (s *side) holds(t tierIdx) bool {
	if t.b < 0 {
		return false
	}
	if t.tier == 1 {
		return s.held1[t.b>>6]&(1<<(t.b&63)) != 0
	}
	if s.g2 == nil {
		return false
	}
	_, ok := s.g2.byBlock.get(t.b)
	return ok
}

func (s *side) n2() int {
	if s.g2 == nil {
		return 0
	}
	return s.g2.byBlock.n
}

// each calls fn for every block the side holds at the last hold: G1's in
// slot order, once each, then G2's.
func (s *side) each(fn func(tierIdx)) {
	var seen map[int32]bool // blocks with several copies, visited
	for i := range s.g1.code {
		b := s.cached1(int32(i))
		if b < 0 {
			continue
		}
		if s.dup1[b] > 0 {
			if seen[b] {
				continue
			}
			if seen == nil {
				seen = map[int32]bool{}
			}
			seen[b] = true
		}
		fn(tierIdx{1, b})
	}
	if s.g2 != nil {
		for _, k := range s.g2.byBlock.keys {
			if k >= 0 {
				fn(tierIdx{2, k})
			}
		}
	}
}

// evictions lists the G1 and G2 evictions of pass p, in event order.
func (s *side) evictions(p int) []tierIdx {
	s.ev = s.ev[:0]
	rl := s.r.ranks[s.rank]
	from, to := rl.eventSpan(p)
	for i := from; i < to; i++ {
		e := rl.events.at(i)
		kind, b := e.kind, e.a
		if kind&kindDecoded != 0 {
			pe := &s.r.pub[e.a]
			kind, _ = kindOf(pe.Kind)
			if kind == evG1Evict || kind == evG2Evict {
				b = s.index(pe.Block)
			}
		}
		switch kind {
		case evG1Evict:
			s.ev = append(s.ev, tierIdx{1, b})
		case evG2Evict:
			s.ev = append(s.ev, tierIdx{2, b})
		}
	}
	return s.ev
}

// differ holds one pass of both runs: their evictions, and (built only
// when asked, see hold) what each holds at the pass end.
type differ struct {
	a, b   *side
	p      int
	ea, eb []tierIdx
	held   bool
	// For live records, from the first pass where both runs hold as many
	// blocks in each tier until they part, the difference of their
	// holdings is kept as they change (track): keys[k] has bit 1 when a holds the block of
	// key k (tier and origin, in b's request numbers) and bit 2 when b
	// does, and odd counts the keys one run holds alone, plus a's blocks
	// whose request b does not have. same is then odd == 0, where it
	// compared every block either run held, at every pass where their
	// changes differed until they parted (2.2 of the 2.9 s that the index
	// of a Mooncake compare window where the runs part took natively).
	keys map[uint64]uint8
	odd  int
}

// track counts side s's block b joining (in) or leaving a tier's holdings.
func (w *differ) track(s *side, tier uint8, b int32, in bool) {
	k, ok := s.key(b)
	if !ok {
		if in {
			w.odd++
		} else {
			w.odd--
		}
		return
	}
	k |= uint64(tier-1) << 31 // a block index is below 1<<31
	bit := uint8(1)
	if s.isB {
		bit = 2
	}
	v := w.keys[k]
	was := v == 1 || v == 2
	if in {
		v |= bit
	} else {
		v &^= bit
	}
	switch now := v == 1 || v == 2; {
	case now && !was:
		w.odd++
	case was && !now:
		w.odd--
	}
	if v == 0 {
		delete(w.keys, k)
	} else {
		w.keys[k] = v
	}
}

func (w *differ) pass(p int) {
	w.p, w.held = p, false
	w.ea = w.a.evictions(p)
	w.eb = w.b.evictions(p)
}

// matchRequests maps each run's requests to the other's (by id), so that
// blocks are matched by origin (request and block index) instead of by
// name; only live records have origins (a decoded one names its blocks:
// they are matched by name, and sameChanges never holds).
func (w *differ) matchRequests() {
	if w.a.r.names != nil || w.b.r.names != nil {
		return
	}
	w.a.toPeer, w.b.toPeer = peerRequests(w.a.r, w.b.r), peerRequests(w.b.r, w.a.r)
	w.b.isB = true
}

// peerRequests is, for each request of x, its index in y (-1: none).
func peerRequests(x, y *Record) []int32 {
	idx := make(map[string]int32, len(y.Requests))
	for i, id := range y.Requests {
		idx[id] = int32(i)
	}
	out := make([]int32, len(x.Requests))
	for i, id := range x.Requests {
		if j, ok := idx[id]; ok {
			out[i] = j
		} else {
			out[i] = -1
		}
	}
	return out
}

// sameBlock tells whether block x of run A is block y of run B (both -1:
// no block).
func (w *differ) sameBlock(x, y int32) bool { return matches(w.a, x, w.b, y) }

// matches tells whether block x of side sx is block y of side sy: the same
// request's same block (key), or with names, the same name (both -1: no
// block).
func matches(sx *side, x int32, sy *side, y int32) bool {
	if x < 0 || y < 0 {
		return x == y
	}
	if sx.toPeer == nil {
		return sx.name(x) == sy.name(y)
	}
	kx, okx := sx.key(x)
	ky, oky := sy.key(y)
	return okx && oky && kx == ky
}

// sameSlots tells, after hold, whether both runs hold the same block in
// the same state in every G1 slot (their G2 entries are the same set when
// same holds).
func (w *differ) sameSlots() bool {
	if w.a.toPeer == nil || len(w.a.g1.code) != len(w.b.g1.code) {
		return false
	}
	for i, c := range w.a.g1.code {
		if c != w.b.g1.code[i] || !w.sameBlock(w.a.g1.block[i], w.b.g1.block[i]) {
			return false
		}
	}
	return true
}

// sameChanges tells whether pass p made the same G1 slot changes (slot,
// state, block) and the same G2 operations (operation, block) in both runs,
// in the same order.
func (w *differ) sameChanges(p int) bool {
	a, b := w.a.r.ranks[w.a.rank], w.b.r.ranks[w.b.rank]
	span := func(rl *rankLog, end func(*passEntry) int) (int, int) {
		from := 0
		if p > 1 {
			from = end(rl.pass(p - 1))
		}
		return from, end(rl.pass(p))
	}
	g1End := func(pe *passEntry) int { return pe.g1End }
	fa, ta := span(a, g1End)
	fb, tb := span(b, g1End)
	if ta-fa != tb-fb {
		return false
	}
	for i := range ta - fa {
		da, db := a.g1.at(fa+i), b.g1.at(fb+i)
		if da.slotState != db.slotState || !w.sameBlock(da.block, db.block) {
			return false
		}
	}
	if (w.a.dom == nil) != (w.b.dom == nil) {
		return false
	}
	if w.a.dom == nil {
		return true
	}
	g2End := func(pe *passEntry) int { return pe.g2End }
	fa, ta = span(a, g2End)
	fb, tb = span(b, g2End)
	if ta-fa != tb-fb {
		return false
	}
	for i := range ta - fa {
		oa, ob := w.a.dom.ops.at(fa+i), w.b.dom.ops.at(fb+i)
		if oa.op != ob.op || !w.sameBlock(oa.block, ob.block) {
			return false
		}
	}
	return true
}

// hold builds both runs' holdings at the end of the current pass, once.
func (w *differ) hold() {
	if w.held {
		return
	}
	w.held = true
	w.a.hold(w.p)
	w.b.hold(w.p)
	if checkHoldings && w.keys != nil {
		w.checkKeys()
	}
}

// startKeys builds keys and odd from both runs' holdings now, and keeps
// them up to date from here on.
func (w *differ) startKeys() {
	w.keys, w.odd = w.holdingKeys()
}

// stopKeys stops keeping keys (the runs have parted).
func (w *differ) stopKeys() {
	w.keys, w.odd = nil, 0
}

// checkKeys panics when keys and odd are not what both runs hold.
func (w *differ) checkKeys() {
	m, odd := w.holdingKeys()
	if odd != w.odd || !maps.Equal(m, w.keys) {
		panic(fmt.Sprintf("record: diff holdings: %d keys held by one run, %d counted (%d keys, %d kept)", odd, w.odd, len(m), len(w.keys)))
	}
	if (odd == 0) != w.sameByBlocks() {
		panic(fmt.Sprintf("record: diff holdings: %d keys held by one run, but same says %v", odd, w.sameByBlocks()))
	}
}

// holdingKeys is keys and odd for both runs' holdings now.
func (w *differ) holdingKeys() (map[uint64]uint8, int) {
	// sized for two runs holding the same blocks, which is when it is built
	m, odd := make(map[uint64]uint8, max(w.a.n1+w.a.n2(), w.b.n1+w.b.n2())), 0
	for bit, s := range []*side{w.a, w.b} {
		s.each(func(t tierIdx) {
			k, ok := s.key(t.b)
			if !ok {
				odd++
				return
			}
			m[k|uint64(t.tier-1)<<31] |= uint8(bit + 1)
		})
	}
	for _, v := range m {
		if v != 3 {
			odd++
		}
	}
	return m, odd
}

// other is x's block in the other side's record (-1: none).
func other(x tierIdx, from, to *side) tierIdx {
	if x.b < 0 {
		return tierIdx{x.tier, -1}
	}
	if from.toPeer == nil {
		return tierIdx{x.tier, to.index(from.name(x.b))}
	}
	o := from.r.origins.Of(identity.ID(x.b))
	if req := from.toPeer[o.Request]; req >= 0 {
		if to.births == nil {
			if to.r.births == nil { // the same for every diff of the run
				to.r.births = to.r.origins.Births()
			}
			to.births = to.r.births
		}
		if id, ok := to.births.Find(req, o.Block); ok {
			return tierIdx{x.tier, int32(id)}
		}
	}
	return tierIdx{x.tier, -1}
}

// same tells whether both runs hold the same blocks in the same tiers.
func (w *differ) same() bool {
	switch {
	case w.a.n1 != w.b.n1 || w.a.n2() != w.b.n2():
		return false
	case w.a.toPeer == nil: // no origins: by name
		return w.sameByBlocks()
	case w.keys == nil:
		// The first look compares block by block, which stops at the
		// first block one run holds alone (runs that differ at a window's
		// first pass); only runs still alike keep keys from here.
		if !w.sameByBlocks() {
			return false
		}
		w.startKeys()
	}
	return w.odd == 0
}

// sameByBlocks is same for records without origins: every block one run
// holds is looked for in the other's holdings.
func (w *differ) sameByBlocks() bool {
	if w.a.n1 != w.b.n1 || w.a.n2() != w.b.n2() {
		return false
	}
	ok := true
	w.a.each(func(x tierIdx) { ok = ok && w.b.holds(other(x, w.a, w.b)) })
	return ok
}

// heldOnly lists the blocks x holds and y does not, by tier and name.
func (w *differ) heldOnly(x, y *side) []TierBlock {
	var out []TierBlock
	x.each(func(t tierIdx) {
		if !y.holds(other(t, x, y)) {
			out = append(out, TierBlock{tierNames[t.tier], x.name(t.b)})
		}
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].Tier != out[j].Tier {
			return out[i].Tier < out[j].Tier
		}
		return out[i].Block < out[j].Block
	})
	return out
}

// unmatched is each run's evictions of the pass that the other run did
// not make (the same block from the same tier, by name).
func (w *differ) unmatched() (onlyA, onlyB []tierIdx) {
	if len(w.ea) == 0 && len(w.eb) == 0 {
		return nil, nil
	}
	return subtract(w.ea, w.eb, w.a, w.b), subtract(w.eb, w.ea, w.b, w.a)
}

func subtract(x, y []tierIdx, sx, sy *side) []tierIdx {
	if sx.toPeer != nil {
		return subtractByOrigin(x, y, sx, sy)
	}
	var out []tierIdx
	for _, t := range x {
		found := false
		for _, o := range y {
			if o.tier == t.tier && o.b >= 0 && t.b >= 0 && matches(sy, o.b, sx, t.b) {
				found = true
				break
			}
		}
		if !found {
			out = append(out, t)
		}
	}
	return out
}

// subtractByOrigin is subtract for live records, by origin: one pass over
// each list (a pass of a large tier can evict hundreds of blocks).
func subtractByOrigin(x, y []tierIdx, sx, sy *side) []tierIdx {
	type key struct {
		tier uint8
		k    uint64
	}
	in := make(map[key]bool, len(y))
	for _, o := range y {
		if k, ok := sy.key(o.b); ok {
			in[key{o.tier, k}] = true
		}
	}
	var out []tierIdx
	for _, t := range x {
		if k, ok := sx.key(t.b); !ok || !in[key{t.tier, k}] {
			out = append(out, t)
		}
	}
	return out
}

// key is block b's origin in run B's numbering of requests (a request of
// run A is mapped to B's; ok is false for -1 or a request B lacks).
func (s *side) key(b int32) (k uint64, ok bool) {
	if b < 0 {
		return 0, false
	}
	o := s.r.origins.Of(identity.ID(b))
	req := o.Request
	if !s.isB {
		if req = s.toPeer[req]; req < 0 {
			return 0, false
		}
	}
	return uint64(uint32(req))<<32 | uint64(uint32(o.Block)), true
}

// kept lists x's evictions that y holds at the pass end.
func (w *differ) kept(evicted []tierIdx, x, y *side) []TierBlock {
	var out []TierBlock
	for _, t := range evicted {
		if t.b >= 0 && y.holds(other(t, x, y)) {
			out = append(out, TierBlock{tierNames[t.tier], x.name(t.b)})
		}
	}
	return out
}

// restores lists every (request, block) a rank loaded from G2.
func restores(r *Record, rank int) map[Restore]bool {
	m := map[Restore]bool{}
	h2d, _ := kindOf("h2d_complete")
	rl := r.ranks[rank]
	for p := 1; p <= r.NumLines(rank); p++ {
		from, to := rl.eventSpan(p)
		for i := from; i < to; i++ {
			// only a load's completion (or a decoded event, whose kind is
			// its text) is turned into an Event: every event of a long
			// window was 400 MB allocated per index of a compare
			raw := rl.events.at(i)
			if raw.kind != h2d && raw.kind&kindDecoded == 0 {
				continue
			}
			if e := r.event(&raw); e.Kind == "h2d_complete" {
				for _, blk := range e.Blocks {
					m[Restore{e.Request, blk}] = true
				}
			}
		}
	}
	return m
}

func minus(a, b map[Restore]bool) []Restore {
	var out []Restore
	for k := range a {
		if !b[k] {
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Request != out[j].Request {
			return out[i].Request < out[j].Request
		}
		return out[i].Block < out[j].Block
	})
	return out
}

// Write renders the diff as text, with at most limit passes listed (0: all).
func (d *DiffResult) Write(w io.Writer, nameA, nameB string, limit int) {
	if d.FirstDivergent == 0 {
		fmt.Fprintf(w, "no divergence: every pass holds the same blocks in G1 and G2\n")
	} else {
		fmt.Fprintf(w, "first divergent pass: %d (rank index %d)\n", d.FirstDivergent, d.Rank)
	}
	for i, p := range d.Passes {
		if limit > 0 && i == limit {
			fmt.Fprintf(w, "… %d more passes differ\n", len(d.Passes)-limit)
			break
		}
		fmt.Fprintf(w, "pass %d:\n", p.Pass)
		for _, tb := range p.EvictedByAKeptByB {
			fmt.Fprintf(w, "  %s evicted %s from %s; %s kept it\n", nameA, tb.Block, tb.Tier, nameB)
		}
		for _, tb := range p.EvictedByBKeptByA {
			fmt.Fprintf(w, "  %s evicted %s from %s; %s kept it\n", nameB, tb.Block, tb.Tier, nameA)
		}
	}
	for _, x := range []struct {
		name string
		n    int
	}{{nameA, len(d.OnlyA)}, {nameB, len(d.OnlyB)}} {
		fmt.Fprintf(w, "restores only %s made: %s blocks (%s tokens)\n", x.name,
			numfmt.Thousands(int64(x.n)), numfmt.Thousands(int64(d.Tokens(x.n))))
	}
}
