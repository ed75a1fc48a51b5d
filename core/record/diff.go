package record

import (
	"fmt"
	"io"
	"sort"
)

// PassDiff is one pass where two runs evicted different blocks.
type PassDiff struct {
	Pass int
	// EvictedByAKeptByB are blocks run A evicted in this pass (from G1 or
	// G2) that run B still holds in the same tier at the end of the pass;
	// EvictedByBKeptByA the reverse.
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
	BlockSize    int
}

// Diff walks two records pass by pass on one rank.
func Diff(a, b *Record, rank int) (*DiffResult, error) {
	if rank >= len(a.Ranks) || rank >= len(b.Ranks) {
		return nil, fmt.Errorf("rank %d is not in both records", rank)
	}
	if a.Ranks[rank] != b.Ranks[rank] {
		return nil, fmt.Errorf("the records' rank %d are different ranks (%+v, %+v)", rank, a.Ranks[rank], b.Ranks[rank])
	}
	res := &DiffResult{Rank: rank, BlockSize: a.BlockSize}
	n := min(a.NumLines(rank), b.NumLines(rank))
	for p := 1; p <= n; p++ {
		sa, err := a.Seek(rank, p)
		if err != nil {
			return nil, err
		}
		sb, err := b.Seek(rank, p)
		if err != nil {
			return nil, err
		}
		ga, gb := cachedSet(a, sa), cachedSet(b, sb)
		if res.FirstDivergent == 0 && !sameSet(ga, gb) {
			res.FirstDivergent = p
		}
		pd := PassDiff{Pass: p, EvictedByAKeptByB: evictedKept(sa, gb), EvictedByBKeptByA: evictedKept(sb, ga)}
		if len(pd.EvictedByAKeptByB)+len(pd.EvictedByBKeptByA) > 0 {
			res.Passes = append(res.Passes, pd)
		}
	}
	ra, rb := restores(a, rank), restores(b, rank)
	res.OnlyA, res.OnlyB = minus(ra, rb), minus(rb, ra)
	return res, nil
}

// cachedSet is every block a snapshot holds, by tier.
func cachedSet(r *Record, s *Snapshot) map[TierBlock]bool {
	m := map[TierBlock]bool{}
	for _, sl := range s.G1 {
		if sl.Block >= 0 && sl.State != SlotPrivate && sl.State != SlotFree {
			m[TierBlock{"g1", r.BlockName(sl.Block)}] = true
		}
	}
	for _, e := range s.G2 {
		m[TierBlock{"g2", r.BlockName(e.Block)}] = true
	}
	return m
}

func sameSet(a, b map[TierBlock]bool) bool {
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

func evictedKept(s *Snapshot, other map[TierBlock]bool) []TierBlock {
	var out []TierBlock
	for _, e := range s.Events {
		var tb TierBlock
		switch e.Kind {
		case "g1_evict":
			tb = TierBlock{"g1", e.Block}
		case "g2_evict":
			tb = TierBlock{"g2", e.Block}
		default:
			continue
		}
		if other[tb] {
			out = append(out, tb)
		}
	}
	return out
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
	fmt.Fprintf(w, "restores only %s made: %d blocks (%d tokens)\n", nameA, len(d.OnlyA), len(d.OnlyA)*d.BlockSize)
	fmt.Fprintf(w, "restores only %s made: %d blocks (%d tokens)\n", nameB, len(d.OnlyB), len(d.OnlyB)*d.BlockSize)
}
