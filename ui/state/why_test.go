package state

import (
	"strings"
	"testing"

	"github.com/kvsim/kvsim/wasm/proto"
)

func g2Blocks(names ...string) []proto.TierBlock {
	var out []proto.TierBlock
	for _, n := range names {
		out = append(out, proto.TierBlock{Tier: "g2", Block: n})
	}
	return out
}

var whyRuns = []Run{
	{Label: "offloading v0.24", Short: "v0.24", Policy: &proto.Policy{Connector: "offloading_v0_24", Evicts: "the least recently used entries"}},
	{Label: "offloading v0.32", Short: "v0.32", Policy: &proto.Policy{Connector: "offloading_v0_32", Evicts: "the lowest-ranked entries"}},
}

var whyDiv = proto.Divergence{Run: 1, Pass: 658, BlockSize: 16, RestoresOnlyThis: 166,
	Passes: []proto.DivergentPass{
		{Pass: 658, First: g2Blocks("s2t3#39", "s2t3#38", "s2t2#33", "s2t2#32"), This: g2Blocks("s0t4#47", "s0t3#40")},
		{Pass: 663, First: g2Blocks("s2t2#31")},
	}}

// TestSummaryComesFromTheDivergence: the summary names the first divergent
// pass, both runs' decisive evictions with their rules, and the tokens.
func TestSummaryComesFromTheDivergence(t *testing.T) {
	got := Summary(whyRuns[0], whyRuns[1], &whyDiv)
	for _, want := range []string{
		"v0.32 first differs from v0.24 at pass 658 because v0.24 evicts s2t3#39 … s2t2#32 (4 blocks) from G2, which v0.32 keeps, and v0.32 evicts s0t4#47, s0t3#40 from G2, which v0.24 keeps.",
		"The rules: v0.24 evicts the least recently used entries; v0.32 evicts the lowest-ranked entries.",
		"Consequence: v0.32 restores 166 blocks (2,656 tokens) from G2 that v0.24 lost.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary %q lacks %q", got, want)
		}
	}
	d := whyDiv
	d.RestoresOnlyThis, d.Pass = 150, 600
	if got2 := Summary(whyRuns[0], whyRuns[1], &d); got2 == got || !strings.Contains(got2, "2,400 tokens") || !strings.Contains(got2, "pass 600") {
		t.Errorf("another divergence gives %q", got2)
	}
	// records that keep a window from pass 658: the runs already differ
	// there, and may have before
	d = whyDiv
	d.From = 658
	if got3 := Summary(whyRuns[0], whyRuns[1], &d); !strings.HasPrefix(got3, "v0.32 already differs from v0.24 at pass 658, the first pass kept (it may have begun earlier) because v0.24 evicts") {
		t.Errorf("a window's first pass gives %q", got3)
	}
	d.From = 600
	if got4 := Summary(whyRuns[0], whyRuns[1], &d); !strings.HasPrefix(got4, "v0.32 first differs from v0.24 at pass 658") {
		t.Errorf("a divergence inside the window gives %q", got4)
	}
}

func TestFateAndNavigation(t *testing.T) {
	divs := []proto.Divergence{whyDiv}
	f := FateAt(divs, 0, 1, 658, whyRuns)
	if len(f) != 1 || !strings.HasPrefix(f[0].Text(), "v0.32 evicts s0t4#47, s0t3#40 from G2, which v0.24 keeps and keeps s2t3#39") {
		t.Errorf("fate of v0.32 at 658: %+v", f)
	}
	f = FateAt(divs, 0, 0, 658, whyRuns)
	if len(f) != 1 || !strings.HasPrefix(f[0].Text(), "v0.24 evicts s2t3#39") {
		t.Errorf("fate of v0.24 at 658: %+v", f)
	}
	if n := NextDivergence(divs, 0, 1, 1); n != 658 {
		t.Errorf("next divergence after 1: %d", n)
	}
	if n := NextDivergence(divs, 0, 658, 1); n != 663 {
		t.Errorf("next divergence after 658: %d", n)
	}
	if n := NextDivergence(divs, 0, 663, -1); n != 658 {
		t.Errorf("previous divergence before 663: %d", n)
	}
	if n := NextDivergence(divs, 0, 663, 1); n != 0 {
		t.Errorf("next divergence after 663: %d", n)
	}
}
