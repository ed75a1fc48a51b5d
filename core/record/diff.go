package record

import (
	"fmt"
	"io"
	"sort"

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
// size, G1 capacity and requests).
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
	case len(a.Requests) != len(b.Requests):
		return why("%s requests against %s", numfmt.Thousands(int64(len(a.Requests))), numfmt.Thousands(int64(len(b.Requests))))
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
	for i, id := range a.Requests {
		if id != b.Requests[i] {
			return why("request %d is %q against %q", i+1, id, b.Requests[i])
		}
	}
	return nil
}

// Diff walks two records pass by pass on one rank. It refuses records
// that Comparable refuses.
func Diff(a, b *Record, rank int) (*DiffResult, error) {
	if err := Comparable(a, b, rank); err != nil {
		return nil, err
	}
	res := &DiffResult{Rank: rank, BlockSize: a.BlockSize}
	w := differ{a: a, b: b, rank: rank}
	n := min(a.NumLines(rank), b.NumLines(rank))
	for p := 1; p <= n; p++ {
		w.pass(p)
		if res.FirstDivergent == 0 {
			w.hold()
			if !w.ha.same(&w.hb) {
				res.FirstDivergent = p
				res.HeldOnlyA, res.HeldOnlyB = w.ha.minus(&w.hb), w.hb.minus(&w.ha)
			}
		}
		onlyA, onlyB := w.unmatched()
		if len(onlyA)+len(onlyB) == 0 {
			continue
		}
		w.hold()
		pd := PassDiff{Pass: p, EvictedByAKeptByB: w.hb.filter(onlyA), EvictedByBKeptByA: w.ha.filter(onlyB)}
		if len(pd.EvictedByAKeptByB)+len(pd.EvictedByBKeptByA) > 0 {
			res.Passes = append(res.Passes, pd)
		}
	}
	ra, rb := restores(a, rank), restores(b, rank)
	res.OnlyA, res.OnlyB = minus(ra, rb), minus(rb, ra)
	return res, nil
}

// differ holds one pass of both runs: their evictions, and (built only
// when asked, see hold) what each holds at the pass end.
type differ struct {
	a, b       *Record
	rank, p    int
	ea, eb     []TierBlock
	held       bool
	ha, hb     holdings
	snapA, sbB Snapshot
}

func (w *differ) pass(p int) {
	w.p, w.held = p, false
	w.ea = evictions(w.a, w.rank, p, w.ea[:0])
	w.eb = evictions(w.b, w.rank, p, w.eb[:0])
}

// hold builds both runs' holdings at the end of the current pass, once.
func (w *differ) hold() {
	if w.held {
		return
	}
	w.held = true
	w.ha.of(w.a, w.rank, w.p, &w.snapA)
	w.hb.of(w.b, w.rank, w.p, &w.sbB)
}

// unmatched is each run's evictions of the pass that the other run did
// not make.
func (w *differ) unmatched() (onlyA, onlyB []TierBlock) {
	if len(w.ea) == 0 && len(w.eb) == 0 {
		return nil, nil
	}
	return subtract(w.ea, w.eb), subtract(w.eb, w.ea)
}

func subtract(x, y []TierBlock) []TierBlock {
	var out []TierBlock
	for _, tb := range x {
		found := false
		for _, o := range y {
			if o == tb {
				found = true
				break
			}
		}
		if !found {
			out = append(out, tb)
		}
	}
	return out
}

// evictions appends the G1 and G2 evictions of one pass, in event order.
func evictions(r *Record, rank, pass int, out []TierBlock) []TierBlock {
	rl := r.ranks[rank]
	from := 0
	if pass > 1 {
		from = rl.passes[pass-2].evEnd
	}
	for i := from; i < rl.passes[pass-1].evEnd; i++ {
		e := rl.events.at(i)
		kind, block := e.kind, ""
		if kind&kindDecoded != 0 {
			pe := &r.pub[e.a]
			k, _ := kindOf(pe.Kind)
			kind, block = k, pe.Block
		} else if kind == evG1Evict || kind == evG2Evict {
			block = r.BlockName(e.a)
		}
		switch kind {
		case evG1Evict:
			out = append(out, TierBlock{"g1", block})
		case evG2Evict:
			out = append(out, TierBlock{"g2", block})
		}
	}
	return out
}

// holdings are the blocks a run holds at a pass end: cached G1 copies and
// G2 entries, by name.
type holdings struct {
	g1, g2 map[string]bool
}

func (h *holdings) of(r *Record, rank, pass int, snap *Snapshot) {
	if h.g1 == nil {
		h.g1, h.g2 = map[string]bool{}, map[string]bool{}
	}
	clear(h.g1)
	clear(h.g2)
	pe := &r.ranks[rank].passes[pass-1]
	snap.G1 = r.g1At(rank, pass).slots(snap.G1)
	for _, sl := range snap.G1 {
		if sl.Block >= 0 && sl.State != SlotPrivate && sl.State != SlotFree {
			h.g1[r.BlockName(sl.Block)] = true
		}
	}
	if d := r.Domain[rank]; d >= 0 {
		for _, e := range r.g2At(d, pe.g2End).entries() {
			h.g2[r.BlockName(e.Block)] = true
		}
	}
}

func (h *holdings) has(tb TierBlock) bool {
	if tb.Tier == "g1" {
		return h.g1[tb.Block]
	}
	return h.g2[tb.Block]
}

func (h *holdings) same(o *holdings) bool {
	return sameSet(h.g1, o.g1) && sameSet(h.g2, o.g2)
}

// filter keeps the blocks h holds.
func (h *holdings) filter(tbs []TierBlock) []TierBlock {
	var out []TierBlock
	for _, tb := range tbs {
		if h.has(tb) {
			out = append(out, tb)
		}
	}
	return out
}

// minus lists the blocks h holds and o does not, by tier and name.
func (h *holdings) minus(o *holdings) []TierBlock {
	var out []TierBlock
	for _, t := range []struct {
		tier string
		a, b map[string]bool
	}{{"g1", h.g1, o.g1}, {"g2", h.g2, o.g2}} {
		var names []string
		for n := range t.a {
			if !t.b[n] {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		for _, n := range names {
			out = append(out, TierBlock{t.tier, n})
		}
	}
	return out
}

func sameSet(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// restores lists every (request, block) a rank loaded from G2.
func restores(r *Record, rank int) map[Restore]bool {
	m := map[Restore]bool{}
	for p := 1; p <= r.NumLines(rank); p++ {
		for _, e := range r.events(rank, p) {
			if e.Kind == "h2d_complete" {
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
