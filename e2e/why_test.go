package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kvsim/kvsim/core/numfmt"
	"github.com/kvsim/kvsim/core/record"
)

// nativeDiff is kvsim diff of §A's (docs/model/cases.md) v0_24 and v0_32 runs at g2 blocks.
func nativeDiff(t *testing.T, g2 int) *record.DiffResult {
	t.Helper()
	hs := "engine.workers.aggregated.kv_cache.host_offload."
	sets := func(c string) []string {
		return []string{hs + fmt.Sprintf("num_host_blocks=%d", g2), hs + "connector=" + c}
	}
	d, err := record.Diff(nativeRecord(t, "connectors.yaml", sets("offloading_v0_24")), nativeRecord(t, "connectors.yaml", sets("offloading_v0_32")), 0)
	if err != nil || d.FirstDivergent == 0 || len(d.Passes) == 0 {
		t.Fatalf("native diff at %d blocks: %+v %v", g2, d, err)
	}
	return d
}

// decisive is the native diff's first pass with different evictions at or
// after the first divergence.
func decisive(d *record.DiffResult) record.PassDiff {
	for _, p := range d.Passes {
		if p.Pass >= d.FirstDivergent {
			return p
		}
	}
	return record.PassDiff{}
}

// TestWhyDefaultCompare: the default page (§A, three connectors at 192 G2
// blocks) explains v0.32's divergence from v0.24 with figures computed from
// the runs: the summary names the first divergent pass, the decisive G2
// evictions of both runs and the restored tokens only v0.32 made (all as
// kvsim diff computes them natively); at that pass each run's "why" panel
// lists its differing evictions; every event of the pass is reachable
// (expand, filter); runs are lined up by virtual time.
func TestWhyDefaultCompare(t *testing.T) {
	d := nativeDiff(t, 192)
	p := decisive(d)
	tokens := numfmt.Thousands(int64(len(d.OnlyB) * d.BlockSize))
	tb := newTab(t)
	tb.open("")
	tb.pvReady(d.FirstDivergent)
	if s := eval[string](tb, `document.getElementById('pv-sync').value`); s != "time" {
		t.Errorf("sync by %q; want virtual time by default", s)
	}
	sum := tb.text("#pv-summary-1")
	want := []string{fmt.Sprintf("v0.32 first differs from v0.24 at pass %d", d.FirstDivergent),
		"v0.24 evicts " + p.EvictedByAKeptByB[0].Block, "v0.32 evicts " + p.EvictedByBKeptByA[0].Block,
		fmt.Sprintf("v0.32 restores %d blocks (%s tokens) from G2 that v0.24 lost", len(d.OnlyB), tokens)}
	for _, w := range want {
		if !strings.Contains(sum, w) {
			t.Errorf("summary %q lacks %q", sum, w)
		}
	}
	t.Logf("summary: %s", sum)
	if s2 := tb.text("#pv-summary-2"); !strings.Contains(s2, "SimpleCPU first differs from v0.24 at pass") {
		t.Errorf("SimpleCPU's summary %q", s2)
	}
	why0, why1 := tb.text("#pv-why-0"), tb.text("#pv-why-1")
	for _, tbk := range p.EvictedByAKeptByB {
		if !strings.Contains(why0, tbk.Block) && !strings.Contains(why0, "blocks)") {
			t.Errorf("v0.24's why panel %q does not name %s", why0, tbk.Block)
		}
	}
	if !strings.Contains(why0, "v0.24 evicts "+p.EvictedByAKeptByB[0].Block) || !strings.Contains(why1, "v0.32 evicts "+p.EvictedByBKeptByA[0].Block) {
		t.Errorf("why panels at pass %d:\n v0.24: %s\n v0.32: %s", p.Pass, why0, why1)
	}
	if !strings.Contains(why0, "next G2 victims") || !strings.Contains(why0, "least recently used") {
		t.Errorf("v0.24's why panel lacks its victims or policy: %s", why0)
	}
	// the example's closing paragraph quotes the same figures
	tb.wait("the example's paragraph", `!!document.getElementById('example-explain')`, 10*time.Second)
	if ex := tb.text("#example-explain"); !strings.Contains(ex, fmt.Sprintf("v0.32 restores %d blocks (%s tokens) from G2 that v0.24 lost", len(d.OnlyB), tokens)) ||
		!strings.Contains(ex, fmt.Sprintf("at pass %d", d.FirstDivergent)) {
		t.Errorf("example paragraph %q", ex)
	}
	tb.shot("18-why-summary")
	// every event of the pass is reachable
	n := eval[int](tb, `+document.getElementById('pv-events-0').dataset.n`)
	if n <= 6 {
		t.Fatalf("pass %d of v0.24 has %d events; want more than the 6 shown folded (scenario)", d.FirstDivergent, n)
	}
	tb.do(chromedp.Click(chromedp.ID("pv-more-0")))
	tb.wait("every event", fmt.Sprintf(`document.querySelectorAll('#pv-events-0 li.ev').length === %d`, n), 5*time.Second)
	// the G2 evictions that differ come first
	first := eval[string](tb, `document.querySelector('#pv-events-0 li.ev').className`)
	if !strings.Contains(first, "differs") {
		t.Errorf("the first event of v0.24 is %q; want one that differs from the other runs", first)
	}
	tb.typeInto("pv-filter", "g2_evict")
	tb.wait("the filter", `[...document.querySelectorAll('#pv-events-0 li.ev')].every(l => l.classList.contains('g2_evict'))`, 5*time.Second)
	if k := eval[int](tb, `document.querySelectorAll('#pv-events-0 li.ev').length`); k != len(p.EvictedByAKeptByB) {
		t.Errorf("%d G2 evictions listed for v0.24; want %d", k, len(p.EvictedByAKeptByB))
	}
	tb.shot("19-why-events-filtered")
	// next divergence goes past this pass
	tb.do(chromedp.Click(chromedp.ID("pv-next-div")))
	if len(d.Passes) > 1 {
		tb.pvReady(0)
		tb.wait("the next divergence", fmt.Sprintf(`+document.getElementById('passview').dataset.pass > %d`, p.Pass), 10*time.Second)
	}
}

// TestWhySummaryFollowsTheG2Size: with 160 G2 blocks instead of 192 the
// summary says what kvsim diff says of those runs.
func TestWhySummaryFollowsTheG2Size(t *testing.T) {
	d := nativeDiff(t, 160)
	tb := newTab(t)
	tb.open("")
	tb.pvReady(0)
	before := tb.text("#pv-summary-1")
	tb.typeInto("f-g2", "160")
	tb.clickRun()
	tb.pvReady(0)
	tb.wait("the new summary", `!!document.getElementById('pv-summary-1')`, 30*time.Second)
	after := tb.text("#pv-summary-1")
	want := fmt.Sprintf("v0.32 first differs from v0.24 at pass %d", d.FirstDivergent)
	tokens := fmt.Sprintf("(%s tokens)", numfmt.Thousands(int64(len(d.OnlyB)*d.BlockSize)))
	if after == before || !strings.Contains(after, want) || !strings.Contains(after, tokens) {
		t.Errorf("at 160 blocks the summary is %q (was %q); want %q and %q", after, before, want, tokens)
	}
}

// TestLegendColours: on the default page, every G1 block in a state with a
// plain legend swatch (free, cached in use, cached idle, reserved) is drawn
// in that swatch's colour (public/style.css), whatever its session.
func TestLegendColours(t *testing.T) {
	css, err := os.ReadFile(filepath.Join(repoRoot, "public", "style.css"))
	if err != nil {
		t.Fatal(err)
	}
	swatch := func(class string) [3]int {
		m := regexp.MustCompile(`\.sw\.` + class + ` \{[^}]*?#([0-9a-fA-F]{6}|[0-9a-fA-F]{3})\b`).FindSubmatch(css)
		if m == nil {
			t.Fatalf("no .sw.%s colour", class)
		}
		h := string(m[1])
		if len(h) == 3 {
			h = string([]byte{h[0], h[0], h[1], h[1], h[2], h[2]})
		}
		v, _ := strconv.ParseUint(h, 16, 32)
		return [3]int{int(v >> 16 & 0xff), int(v >> 8 & 0xff), int(v & 0xff)}
	}
	classes := map[byte]string{'.': "free", 'A': "active", 'i': "idle", 'r': "reserved"}
	tb := newTab(t)
	tb.open("")
	tb.pvReady(0)
	seen := map[byte]int{}
	for v := 0; v < 3; v++ {
		states := eval[string](tb, fmt.Sprintf(`document.getElementById('pv-canvas-%d').dataset.states`, v))
		var L gridLayout
		if err := json.Unmarshal([]byte(eval[string](tb, fmt.Sprintf(`document.getElementById('pv-canvas-%d').dataset.layout`, v))), &L); err != nil {
			t.Fatal(err)
		}
		pix := eval[[]int](tb, fmt.Sprintf(`(() => { const c = document.getElementById('pv-canvas-%d');
			return [...c.getContext('2d').getImageData(0, 0, c.width, c.height).data]; })()`, v))
		w := eval[int](tb, fmt.Sprintf(`document.getElementById('pv-canvas-%d').width`, v))
		for i := 0; i < len(states); i++ {
			class, ok := classes[states[i]]
			if !ok {
				continue
			}
			g := 1
			if L.Cell <= 4 {
				g = 0
			}
			x0, y0 := L.X0+(i%L.Cols)*L.Cell, L.G1y+(i/L.Cols)*L.Cell
			dx := L.Cell - g
			x, y := x0+dx*3/5, y0+dx/2
			o := (y*w + x) * 4
			got := [3]int{pix[o], pix[o+1], pix[o+2]}
			if want := swatch(class); got != want {
				t.Errorf("run %d slot %d (%c): drawn %v; legend .sw.%s is %v", v, i, states[i], got, class, want)
			}
			seen[states[i]]++
		}
	}
	if seen['A'] == 0 || seen['i'] == 0 {
		t.Errorf("states checked %v; want blocks in use and idle (scenario)", seen)
	}
	t.Logf("cells checked by state: %v", seen)
}
