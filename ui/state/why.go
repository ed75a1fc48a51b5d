package state

import (
	"fmt"
	"strings"

	"github.com/kvsim/kvsim/wasm/proto"
)

// The pass view's explanations of a compare: every figure comes from the
// runs (the worker's divergences, computed as kvsim diff computes them,
// and the connector policies built from the rules table), never from
// fixed text.

// Run names one compared run for the explanations: its label as the page
// shows it, its short form, and its connector's policy (nil without G2).
type Run struct {
	Label, Short string
	Policy       *proto.Policy
}

// PolicyOf finds a connector's policy among the worker's (nil if none).
func PolicyOf(policies []proto.Policy, connector string) *proto.Policy {
	for i := range policies {
		if policies[i].Connector == connector {
			return &policies[i]
		}
	}
	return nil
}

// Blocks names a few blocks, or the first and last of many with their
// count.
func Blocks(tbs []proto.TierBlock) string {
	switch len(tbs) {
	case 0:
		return "none"
	case 1, 2, 3:
		var names []string
		for _, tb := range tbs {
			names = append(names, tb.Block)
		}
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s … %s (%d blocks)", tbs[0].Block, tbs[len(tbs)-1].Block, len(tbs))
}

// tierName is "G1" or "G2" for the tiers of tbs (both: "G1 and G2").
func tierName(tbs []proto.TierBlock) string {
	g1, g2 := false, false
	for _, tb := range tbs {
		g1, g2 = g1 || tb.Tier == "g1", g2 || tb.Tier == "g2"
	}
	switch {
	case g1 && g2:
		return "G1 and G2"
	case g1:
		return "G1"
	}
	return "G2"
}

// BlockTokens is n blocks and their tokens: "166 blocks (2,656 tokens)".
func BlockTokens(n, blockSize int) string {
	unit := "blocks"
	if n == 1 {
		unit = "block"
	}
	return fmt.Sprintf("%s %s (%s tokens)", Thousands(int64(n)), unit, Thousands(int64(n*blockSize)))
}

// Decisive is the pass that explains a divergence: the first pass at or
// after the first divergent one where the runs evicted different blocks
// (nil when they never did).
func Decisive(d *proto.Divergence) *proto.DivergentPass {
	for i := range d.Passes {
		if d.Passes[i].Pass >= d.Pass {
			return &d.Passes[i]
		}
	}
	return nil
}

// Summary is one compared run's divergence from the first in a paragraph:
// the first divergent pass, the decisive evictions of each run with the
// rule that chose them, and the consequence in restored tokens.
func Summary(first, this Run, d *proto.Divergence) string {
	if d.Refused != "" {
		return fmt.Sprintf("%s cannot be compared with %s pass by pass: %s.", this.Short, first.Short, d.Refused)
	}
	if d.Pass == 0 {
		return fmt.Sprintf("%s and %s hold the same blocks in every pass.", this.Short, first.Short)
	}
	var b strings.Builder
	if d.From > 1 && d.Pass == d.From {
		fmt.Fprintf(&b, "%s already differs from %s at pass %d, the first pass kept (it may have begun earlier)", this.Short, first.Short, d.Pass)
	} else {
		fmt.Fprintf(&b, "%s first differs from %s at pass %d", this.Short, first.Short, d.Pass)
	}
	dp := Decisive(d)
	switch {
	case dp != nil && dp.Pass == d.Pass:
		b.WriteString(" because " + evictions(first, this, dp))
	case dp != nil:
		fmt.Fprintf(&b, ", where %s; the evictions first differ at pass %d: %s", held(first, this, d), dp.Pass, evictions(first, this, dp))
	default:
		fmt.Fprintf(&b, ", where %s; no eviction of one run is kept by the other", held(first, this, d))
	}
	b.WriteString(". ")
	if dp != nil {
		b.WriteString(rules(first, this, dp))
	}
	b.WriteString(Consequence(first, this, d))
	return b.String()
}

// rules names the eviction rule of each run that evicted G2 blocks the
// other kept.
func rules(first, this Run, dp *proto.DivergentPass) string {
	var parts []string
	for _, x := range []struct {
		r   Run
		tbs []proto.TierBlock
	}{{first, dp.First}, {this, dp.This}} {
		if x.r.Policy != nil && len(x.tbs) > 0 && tierName(x.tbs) == "G2" {
			parts = append(parts, x.r.Short+" evicts "+x.r.Policy.Evicts)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "The rules: " + strings.Join(parts, "; ") + ". "
}

// evictions says what each run evicted in a divergent pass that the other
// kept, and the rule that chose it.
func evictions(first, this Run, dp *proto.DivergentPass) string {
	var parts []string
	add := func(r Run, other Run, tbs []proto.TierBlock) {
		if len(tbs) == 0 {
			return
		}
		parts = append(parts, fmt.Sprintf("%s evicts %s from %s, which %s keeps", r.Short, Blocks(tbs), tierName(tbs), other.Short))
	}
	add(first, this, dp.First)
	add(this, first, dp.This)
	return strings.Join(parts, ", and ")
}

// held says which blocks only one run holds at the first divergence.
func held(first, this Run, d *proto.Divergence) string {
	var parts []string
	if len(d.HeldOnlyFirst) > 0 {
		parts = append(parts, fmt.Sprintf("only %s holds %s in %s", first.Short, Blocks(d.HeldOnlyFirst), tierName(d.HeldOnlyFirst)))
	}
	if len(d.HeldOnlyThis) > 0 {
		parts = append(parts, fmt.Sprintf("only %s holds %s in %s", this.Short, Blocks(d.HeldOnlyThis), tierName(d.HeldOnlyThis)))
	}
	return strings.Join(parts, " and ")
}

// Consequence is the restores one run made that the other lost, in blocks
// and tokens.
func Consequence(first, this Run, d *proto.Divergence) string {
	a, b := d.RestoresOnlyFirst, d.RestoresOnlyThis
	switch {
	case a == 0 && b == 0:
		return "Both restore the same blocks from G2."
	case a == 0:
		return fmt.Sprintf("Consequence: %s restores %s from G2 that %s lost.", this.Short, BlockTokens(b, d.BlockSize), first.Short)
	case b == 0:
		return fmt.Sprintf("Consequence: %s restores %s from G2 that %s lost.", first.Short, BlockTokens(a, d.BlockSize), this.Short)
	}
	return fmt.Sprintf("Consequence: %s restores %s from G2 that %s lost, and %s restores %s that %s lost.",
		this.Short, BlockTokens(b, d.BlockSize), first.Short, first.Short, BlockTokens(a, d.BlockSize), this.Short)
}

// Fate is one run's block-fate difference at one pass against another
// run: the blocks it evicted that the other kept.
type Fate struct {
	Pass           int
	Evicted        []proto.TierBlock // this run evicted, the other kept
	Kept           []proto.TierBlock // the other evicted, this run kept
	Against, Short string
}

// FateAt is run v's fate difference at pass p (v > 0 against the first
// run; the first run against every other, from their divergences). Empty
// when the runs evicted the same blocks there.
func FateAt(divs []proto.Divergence, rank, v, p int, runs []Run) []Fate {
	var out []Fate
	if v >= len(runs) {
		return nil
	}
	for i := range divs {
		d := &divs[i]
		if d.Rank != rank || (v != 0 && d.Run != v) || d.Run >= len(runs) {
			continue
		}
		for _, dp := range d.Passes {
			if dp.Pass != p {
				continue
			}
			f := Fate{Pass: p, Against: runs[0].Short, Short: runs[v].Short, Evicted: dp.This, Kept: dp.First}
			if v == 0 {
				f.Against, f.Evicted, f.Kept = runs[d.Run].Short, dp.First, dp.This
			}
			out = append(out, f)
		}
	}
	return out
}

// Text says a fate difference in one sentence.
func (f Fate) Text() string {
	var parts []string
	if len(f.Evicted) > 0 {
		parts = append(parts, fmt.Sprintf("evicts %s from %s, which %s keeps", Blocks(f.Evicted), tierName(f.Evicted), f.Against))
	}
	if len(f.Kept) > 0 {
		parts = append(parts, fmt.Sprintf("keeps %s in %s, which %s evicts", Blocks(f.Kept), tierName(f.Kept), f.Against))
	}
	return f.Short + " " + strings.Join(parts, " and ") + "."
}

// NextDivergence is the next (dir +1) or previous (-1) pass after from
// where some compared run evicted blocks the other kept on rank (0: none).
func NextDivergence(divs []proto.Divergence, rank, from, dir int) int {
	best := 0
	for i := range divs {
		if divs[i].Rank != rank {
			continue
		}
		for _, dp := range divs[i].Passes {
			if (dir > 0 && dp.Pass > from && (best == 0 || dp.Pass < best)) || (dir < 0 && dp.Pass < from && dp.Pass > best) {
				best = dp.Pass
			}
		}
	}
	return best
}
