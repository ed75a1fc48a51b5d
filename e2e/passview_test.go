package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/kvsim/kvsim/core/record"
	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/traces"
)

// nativeRecord replays an example config natively with the per-pass
// record.
func nativeRecord(t *testing.T, name string, sets []string) *record.Record {
	t.Helper()
	data, err := traces.Read(name)
	if err != nil {
		t.Fatal(err)
	}
	out, err := replay.Run(replay.Job{Name: name, Config: data, Sets: sets, Traces: replay.Traces{Builtin: true},
		Capture: replay.Capture{Passes: true}})
	if err != nil {
		t.Fatal(err)
	}
	return out.Record
}

// pvReady waits until the pass view shows pass p (0: any) with its frames
// and its timeline index.
func (tb *tab) pvReady(p int) {
	tb.t.Helper()
	sel := `#passview[data-ready][data-indexed]`
	if p > 0 {
		sel = fmt.Sprintf(`#passview[data-ready][data-indexed][data-pass="%d"]`, p)
	}
	tb.wait("the pass view at "+strconv.Itoa(p), fmt.Sprintf(`!!document.querySelector('%s')`, sel), 60*time.Second)
}

func (tb *tab) pvPass() int {
	tb.t.Helper()
	return eval[int](tb, `+document.getElementById('passview').dataset.pass`)
}

type gridLayout struct {
	Cell, Cols, G1y, G2y, X0, Gap, Per int
}

// cellColour reads the colour of G1 slot i's top-left inner pixel on run
// v's canvas.
func (tb *tab) cellColour(v, i int) [3]int {
	tb.t.Helper()
	var L gridLayout
	raw := eval[string](tb, fmt.Sprintf(`document.getElementById('pv-canvas-%d').dataset.layout`, v))
	if err := json.Unmarshal([]byte(raw), &L); err != nil {
		tb.t.Fatalf("layout %q: %v", raw, err)
	}
	i /= max(L.Per, 1) // a binned grid's cell holds Per slots
	x := L.X0 + (i%L.Cols)*L.Cell + 2
	y := L.G1y + (i/L.Cols)*L.Cell + 1
	c := eval[[]int](tb, fmt.Sprintf(`(() => { const c = document.getElementById('pv-canvas-%d');
		const d = c.getContext('2d').getImageData(%d, %d, 1, 1).data; return [d[0], d[1], d[2]]; })()`, v, x, y))
	return [3]int{c[0], c[1], c[2]}
}

// TestRestorePass scrubs to
// docs/model/cases.md ("Case B: restore from G2")'s restore pass and
// checks the colour of the restored blocks on the canvas: the G1 slots that
// hold the blocks the H2D copy brought back flash blue, the others do not.
func TestRestorePass(t *testing.T) {
	rec := nativeRecord(t, "g2-restore.yaml", nil)
	restore := 0
	var slots []int
	for p := 1; p <= rec.NumLines(0) && restore == 0; p++ {
		s, err := rec.Seek(0, p)
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, e := range s.Events {
			if e.Kind == "h2d_complete" {
				for _, b := range e.Blocks {
					names[b] = true
				}
			}
		}
		if len(names) == 0 {
			continue
		}
		restore = p
		for i, sl := range s.G1 {
			if sl.Block >= 0 && names[rec.BlockName(sl.Block)] {
				slots = append(slots, i)
			}
		}
	}
	if restore == 0 || len(slots) == 0 {
		t.Fatal("the native §B record has no restore")
	}

	tb := newTab(t)
	// the guided example opens at the restore pass by itself
	tb.open("#ex=B")
	tb.pvReady(restore)

	// a link at pass 1, then the scrubber's "next restore" button
	tb.open("#ex=B&pass=1")
	tb.pvReady(1)
	tb.do(chromedp.SetValue(chromedp.ID("pv-kind"), "3"))
	tb.do(chromedp.Evaluate[chromedp.Void](`document.getElementById('pv-kind').dispatchEvent(new Event('change', {bubbles: true}))`))
	tb.do(chromedp.Click(chromedp.ID("pv-next-ev")))
	tb.pvReady(restore)
	if got := tb.pvPass(); got != restore {
		t.Fatalf("next restore went to pass %d, want %d", got, restore)
	}
	blue := [3]int{0x00, 0x72, 0xB2}
	for _, i := range slots {
		if c := tb.cellColour(0, i); c != blue {
			t.Errorf("restored slot %d has colour %v, want %v", i, c, blue)
		}
	}
	for i := 0; i < rec.G1Capacity[0]; i++ {
		if !slices.Contains(slots, i) && tb.cellColour(0, i) == blue {
			t.Errorf("slot %d is blue but holds no restored block", i)
		}
	}
	if !eval[bool](tb, `[...document.querySelectorAll('.pv-events li')].some(l => l.textContent.includes('restored to G1'))`) {
		t.Error("the event list does not show the restore")
	}
	tb.shot("13-pass-view-B-restore")

	// the keyboard: back one pass, forward one, previous/next restore
	tb.do(chromedp.KeyEvent(kb.ArrowLeft))
	tb.pvReady(restore - 1)
	tb.do(chromedp.KeyEvent(kb.ArrowRight))
	tb.pvReady(restore)
	tb.do(chromedp.KeyEvent(kb.Home))
	tb.pvReady(1)
	tb.do(chromedp.KeyEvent(kb.ArrowRight, chromedp.KeyModifiers(chromedp.ModifierShift)))
	tb.pvReady(restore)
	if !eval[bool](tb, `location.hash.includes('pass=`+strconv.Itoa(restore)+`')`) {
		t.Errorf("the link %q does not hold the pass", eval[string](tb, `location.hash`))
	}
}

// TestComparePassView: §A at 192 blocks, three connectors synchronised by
// pass; the view opens at the first pass where v0.32's blocks differ from
// v0.24's (as record.Diff finds it), outlines the differing cells and
// shows a hover card.
func TestComparePassView(t *testing.T) {
	hs := "engine.workers.aggregated.kv_cache.host_offload."
	a := nativeRecord(t, "connectors.yaml", []string{hs + "num_host_blocks=192", hs + "connector=offloading_v0_24"})
	b := nativeRecord(t, "connectors.yaml", []string{hs + "num_host_blocks=192", hs + "connector=offloading_v0_32"})
	d, err := record.Diff(a, b, 0)
	if err != nil || d.FirstDivergent == 0 {
		t.Fatalf("native diff: %+v %v", d, err)
	}
	tb := newTab(t)
	tb.open("")
	tb.pvReady(d.FirstDivergent)
	if n := eval[int](tb, `document.querySelectorAll('canvas[id^=pv-canvas-]').length`); n != 3 {
		t.Fatalf("%d pass canvases", n)
	}
	if txt := tb.text("#pv-diverge-1"); txt != fmt.Sprintf("v0.32 first differs from v0.24 in pass %d", d.FirstDivergent) {
		t.Errorf("divergence note %q", txt)
	}
	outlined := eval[int](tb, `(() => { const c = document.getElementById('pv-canvas-1');
		const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; let n = 0;
		for (let i = 0; i < d.length; i += 4) if (d[i] === 0x11 && d[i+1] === 0x11 && d[i+2] === 0x11) n++;
		return n; })()`)
	if outlined == 0 {
		t.Error("no differing cell outlined at the first divergence")
	}
	// click a G1 cell of the second run: its card pins and names the block
	var L gridLayout
	json.Unmarshal([]byte(eval[string](tb, `document.getElementById('pv-canvas-1').dataset.layout`)), &L)
	pt := eval[[]float64](tb, fmt.Sprintf(`(() => { const c = document.getElementById('pv-canvas-1'); c.scrollIntoView({block: 'center'});
		const r = c.getBoundingClientRect(); const s = r.width / c.width;
		return [r.left + (%d + %d/2) * s, r.top + (%d + %d/2) * s]; })()`, L.X0, L.Cell, L.G1y, L.Cell))
	tb.do(chromedp.MouseClickXY(pt[0], pt[1]))
	tb.wait("the hover card", `!!document.querySelector('.pv-card')`, 5*time.Second)
	card := tb.text(".pv-card")
	if !containsAll(card, "G1 slot 0", "offloading v0.24:", "offloading v0.32:", "SimpleCPU v0.32:", "#") {
		t.Errorf("card %q", card)
	}
	tb.shot("14-compare-pass-view-card")
	// step on with the keyboard, all three runs follow
	tb.do(chromedp.Click(chromedp.ID("pv-next")))
	tb.pvReady(d.FirstDivergent + 1)
	subs := eval[[]string](tb, `[...document.querySelectorAll('canvas[id^=pv-canvas-]')].map(c => c.id)`)
	if len(subs) != 3 {
		t.Errorf("canvases %v", subs)
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !contains(s, p) {
			return false
		}
	}
	return true
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// TestPassViewRedraw16k measures, in the browser, the time to show a new
// pass of a 16,384-slot G1 (decode, draw, one blit): the budget is one
// 16 ms frame.
func TestPassViewRedraw16k(t *testing.T) {
	tb := newTab(t)
	tb.open("")
	tb.singleMode()
	tb.typeInto("f-g1", "16384")
	tb.clickRun()
	tb.pvReady(0)
	tb.do(chromedp.KeyEvent(kb.Home))
	tb.pvReady(1)
	tb.do(chromedp.Click(chromedp.ID("pv-next"))) // move focus off the inputs
	tb.pvReady(2)
	var ms []float64
	var rt []float64
	for p := 3; p <= 42; p++ {
		d := eval[float64](tb, `new Promise(r => { const t0 = performance.now(); document.getElementById('pv-next').click();
			const check = () => document.querySelector('#passview[data-ready][data-pass="`+strconv.Itoa(p)+`"]') ? r(performance.now() - t0) : setTimeout(check, 1);
			check(); })`)
		rt = append(rt, d)
		tb.pvReady(p)
		f, _ := strconv.ParseFloat(eval[string](tb, `document.getElementById('passview').dataset.frameMs`), 64)
		ms = append(ms, f)
	}
	slices.Sort(ms)
	slices.Sort(rt)
	med, worst := ms[len(ms)/2], ms[len(ms)-1]
	t.Logf("16,384-slot G1: frame (decode+draw+blit) median %.2f ms, worst %.2f ms; step to screen (seek round trip + render) median %.1f ms, worst %.1f ms",
		med, worst, rt[len(rt)/2], rt[len(rt)-1])
	writeMeasure(t, "redraw_16k", fmt.Sprintf("frame median %.2f ms worst %.2f ms; step round trip median %.1f ms worst %.1f ms", med, worst, rt[len(rt)/2], rt[len(rt)-1]))
	// The aim is one 16 ms frame (the figure above); the test asserts a
	// generous bound (a shared 2-core machine in a slow stretch has
	// measured 14 ms), which a redraw per slot instead of per cell breaks.
	if med > redrawBoundMs {
		t.Errorf("redrawing a 16,384-slot pass takes %.1f ms (median), over %d ms", med, redrawBoundMs)
	}
	tb.shot("15-pass-view-16k-slots")
}

// redrawBoundMs is the redraw tests' bound on a median redraw: three
// frames, generous against the aim of one (16 ms), so that a slow stretch of
// a shared machine does not fail them and a redraw that grows with the slots
// still does.
const redrawBoundMs = 50

// TestHugeG1Redraws: a G1 pool of 1,000,000 slots per rank is drawn binned
// on a canvas no taller than a small pool's, and the median redraw (draw
// and blit, as the page measures it in data-draw-ms) over several passes
// is logged (the aim: one 16 ms frame) and held to redrawBoundMs.
func TestHugeG1Redraws(t *testing.T) {
	tb := newTab(t)
	tb.open("")
	tb.singleMode()
	tb.typeInto("f-g1", "1000000")
	tb.clickRun()
	if got := tb.text("#run-error") + tb.text("#variant-error"); got != "" {
		t.Fatalf("G1 of 1,000,000: %q", got)
	}
	tb.pvReady(0)
	var L gridLayout
	json.Unmarshal([]byte(eval[string](tb, `document.getElementById('pv-canvas-0').dataset.layout`)), &L)
	h := eval[int](tb, `document.getElementById('pv-canvas-0').height`)
	if L.Per < 2 || h > 600 {
		t.Errorf("a 1,000,000-slot G1: %d slots a cell, canvas %d px high", L.Per, h)
	}
	eval[chromedp.Void](tb, `document.activeElement?.blur()`) // keys reach the pass view
	var ms []float64
	for p := 2; p <= 12; p++ {
		tb.do(chromedp.KeyEvent(kb.ArrowRight))
		tb.pvReady(p)
		v, _ := strconv.ParseFloat(eval[string](tb, `document.getElementById('passview').dataset.drawMs`), 64)
		ms = append(ms, v)
	}
	slices.Sort(ms)
	med := ms[len(ms)/2]
	t.Logf("1,000,000-slot G1 (%d slots a cell): redraws %v ms, median %.1f ms", L.Per, ms, med)
	writeMeasure(t, "huge_g1_redraw_median_ms", fmt.Sprintf("%.1f (1,000,000 slots, %d a cell)", med, L.Per))
	if med > redrawBoundMs { // the aim is 16 ms; see TestPassViewRedraw16k
		t.Errorf("median redraw %.1f ms (bound %d ms)", med, redrawBoundMs)
	}
	tb.shot("26-huge-g1")
}

// scrubTimes moves the scrubber to n passes drawn at random (seeded) from
// lo to hi and returns, for each, the time from the input event to the
// pass view showing that pass's frames (data-ready at data-pass), plus the
// next animation frame: the redraw a user waits for.
func (tb *tab) scrubTimes(lo, hi, n int, seed uint64) []time.Duration {
	tb.t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	var out []time.Duration
	for range n {
		out = append(out, tb.redrawTime("pv-scrub", "input", lo+rng.IntN(hi-lo+1), 30))
	}
	return out
}

// runScrubTimes releases the whole-run scrubber (#pv-run) on n random
// passes from 1 to most and times each as scrubTimes does: a seek inside
// the kept window, a window move elsewhere.
func (tb *tab) runScrubTimes(most, n int, seed uint64) []time.Duration {
	tb.t.Helper()
	rng := rand.New(rand.NewPCG(seed, 2))
	var out []time.Duration
	for range n {
		out = append(out, tb.redrawTime("pv-run", "change", 1+rng.IntN(most), 60))
	}
	return out
}

// redrawTime sets the range input id to pass p, dispatches event on it and
// times, in the page, until the pass view shows that pass's frames plus
// the next animation frame (failing after limitS seconds).
func (tb *tab) redrawTime(id, event string, p, limitS int) time.Duration {
	tb.t.Helper()
	ms := eval[float64](tb, fmt.Sprintf(`new Promise((resolve, reject) => {
		const s = document.getElementById('%s');
		const t0 = performance.now();
		s.value = '%d';
		s.dispatchEvent(new Event('%s', {bubbles: true}));
		const check = () => {
			if (document.querySelector('#passview[data-ready][data-pass="%d"]')) {
				requestAnimationFrame(() => resolve(performance.now() - t0));
			} else if (performance.now() - t0 > %d000) {
				reject(new Error('pass %d not shown within %d s'));
			} else {
				requestAnimationFrame(check);
			}
		};
		check();
	})`, id, p, event, p, limitS, p, limitS))
	return time.Duration(ms * float64(time.Millisecond))
}

// median is the middle of ds (the mean of the two middle ones).
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return (s[(len(s)-1)/2] + s[len(s)/2]) / 2
}

// TestScrubRewritesOnlyThePassView: moving the scrubber of the default
// page (a compare with results, request table, config form and placement
// table on the page) changes the DOM inside the pass view only. vugu
// rewrites every text, attribute and inner HTML of the page on every
// render; public/quiet-render.js keeps it from writing what did not
// change (on the Mooncake trace a scrub rewrote about 2,000 nodes, and
// took 104–150 ms instead of 63–82).
func TestScrubRewritesOnlyThePassView(t *testing.T) {
	tb := newTab(t)
	tb.open("")
	tb.pvReady(0)
	eval[bool](tb, `(() => { window.__outside = []; new MutationObserver(ms => { for (const m of ms) {
		const el = m.target.nodeType === 1 ? m.target : m.target.parentElement;
		if (el && (el.closest('#passview') || (m.attributeName || '').startsWith('data-worker'))) continue;
		window.__outside.push(m.type + ' ' + (el?.closest('[id]')?.id || el?.tagName) + ' ' + (m.attributeName || ''));
	} }).observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true}); return true })()`)
	times := tb.scrubTimes(2, 1900, 6, 5)
	outside := eval[[]string](tb, `window.__outside`)
	if len(outside) > 0 {
		t.Errorf("%d changes outside the pass view over %d scrubs: %v", len(outside), len(times), outside[:min(len(outside), 12)])
	}
	if eval[int](tb, `document.querySelectorAll('#requests td, #config input').length`) == 0 {
		t.Error("no request table or config form on the page: the test shows nothing")
	}
}
