package e2e

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/traces"
)

// bigSessions is the larger workload of the responsiveness and speed
// tests: synthetic sessions of the §A (docs/model/cases.md) shape.
const bigSessions = 1500

// useGenerator switches the trace picker to the synthetic-session
// generator and sets its session count.
func (tb *tab) useGenerator(sessions int) {
	tb.t.Helper()
	tb.do(chromedp.SetValue(chromedp.ID("f-trace"), "gen"))
	tb.do(chromedp.Evaluate[chromedp.Void](`document.getElementById('f-trace').dispatchEvent(new Event('change', {bubbles: true}))`))
	tb.wait("the generator", `!!document.getElementById('gen-sessions')`, 5*time.Second)
	tb.typeInto("gen-sessions", strconv.Itoa(sessions))
	tb.wait("the generated traffic", fmt.Sprintf(`document.getElementById('yaml').value.includes('sessions: %d}')`, sessions), 5*time.Second)
}

// TestResponsiveDuringLongRun counts 10 ms timer ticks on the page while
// the worker replays a larger workload: the UI thread must keep ticking
// (the core runs only in the Web Worker) and the progress bar must move.
func TestResponsiveDuringLongRun(t *testing.T) {
	tb := newTab(t)
	tb.open("")
	tb.singleMode()
	tb.useGenerator(bigSessions)
	res := eval[map[string]float64](tb, `new Promise((resolve, reject) => {
		const before = +document.querySelector('#status').dataset.runs;
		let ticks = 0, last = performance.now(), maxGap = 0, progress = 0, lastWidth = '', renderMax = 0;
		const iv = setInterval(() => {
			const now = performance.now();
			maxGap = Math.max(maxGap, now - last); last = now; ticks++;
			const bar = document.querySelector('#progress .bar');
			if (bar && bar.style.width !== lastWidth) { lastWidth = bar.style.width; progress++; }
			renderMax = Math.max(renderMax, window.kvsimRenderMs || 0);
		}, 10);
		const t0 = performance.now();
		document.querySelector('#run').click();
		const check = setInterval(() => {
			const s = document.querySelector('#status');
			if (s && +s.dataset.runs > before) {
				clearInterval(iv); clearInterval(check);
				const ms = performance.now() - t0;
				resolve({ms, ticks, maxGap, progress, sim: +s.dataset.simMs, renderMax, lastRender: window.kvsimRenderMs});
			}
		}, 5);
		setTimeout(() => reject(new Error('no result in 120 s')), 120000);
	})`)
	ms, ticks := res["ms"], res["ticks"]
	expected := ms / 10
	t.Logf("run of %d sessions: %.0f ms on the page (%.0f ms in the worker), %.0f timer ticks of ~%.0f possible, longest gap %.0f ms, %.0f progress updates, renders up to %.1f ms (last %.1f)",
		bigSessions, ms, res["sim"], ticks, expected, res["maxGap"], res["progress"], res["renderMax"], res["lastRender"])
	writeMeasure(t, "responsiveness", fmt.Sprintf("%d sessions: run %.0f ms, ticks %.0f/%.0f, longest gap %.0f ms, progress updates %.0f",
		bigSessions, ms, ticks, expected, res["maxGap"], res["progress"]))
	if ms < 300 {
		t.Fatalf("the run took only %.0f ms; the test needs a longer one", ms)
	}
	if ticks < expected*0.6 {
		t.Errorf("the page ticked %.0f times in %.0f ms (want ≥ 60%% of %.0f): the UI thread was blocked", ticks, ms, expected)
	}
	// On a 2-core machine the browser shares the cores with the worker:
	// CI saw a 265 ms gap while renders took at most 22 ms, so the gap
	// limit is what a user would call a freeze, and the tick count above
	// is the test of steady responsiveness.
	if res["maxGap"] > 500 {
		t.Errorf("the UI thread stalled for %.0f ms", res["maxGap"])
	}
	if res["progress"] < 2 {
		t.Errorf("the progress bar moved %v times", res["progress"])
	}
	tb.shot("11-generated-sessions")
}

// TestCancel stops a long run; the page keeps working.
func TestCancel(t *testing.T) {
	tb := newTab(t)
	tb.open("")
	tb.singleMode()
	tb.useGenerator(3 * bigSessions)
	tb.do(chromedp.Click(chromedp.ID("run")))
	tb.wait("progress", `!!document.getElementById('cancel')`, 10*time.Second)
	tb.shot("12-running-with-progress")
	tb.do(chromedp.Click(chromedp.ID("cancel")))
	tb.wait("cancelled", `document.getElementById('status')?.textContent === 'Run cancelled.'`, 5*time.Second)
	tb.typeInto("gen-sessions", "8")
	tb.clickRun()
	if v := tb.cardValue("card-recomputed"); v == "" {
		t.Error("no result after a cancel")
	}
}

// TestWasmSpeed compares the worker's replay time in Chromium with a
// native replay.Run of the same config (docs/ui.md records both). The
// budget of 1.5× is reported, not enforced: see docs/ui.md.
func TestWasmSpeed(t *testing.T) {
	tb := newTab(t)
	tb.open("")
	tb.singleMode()
	tb.useGenerator(bigSessions)
	yaml := eval[string](tb, `document.getElementById('yaml').value`)
	var sims []float64
	for range 3 {
		tb.clickRun()
		sims = append(sims, eval[float64](tb, `+document.querySelector('#status').dataset.simMs`))
	}
	native := nativeRun(t, yaml, 3)
	best := min(sims[0], sims[1], sims[2])
	t.Logf("%d sessions: wasm in Chromium %v ms (best %.0f), native %.0f ms (best of 3): ratio %.2f", bigSessions, sims, best, native, best/native)
	writeMeasure(t, "wasm_vs_native", fmt.Sprintf("%d sessions: wasm %.0f ms (best of %v), native %.0f ms, ratio %.2f", bigSessions, best, sims, native, best/native))
	_ = traces.Names
}

// nativeRun is the best of n native replays of the config text.
func nativeRun(t *testing.T, yaml string, n int) float64 {
	best := 0.0
	for range n {
		start := time.Now()
		if _, err := replay.Run(replay.Job{Name: "config.yaml", Config: []byte(yaml), Traces: replay.Traces{Builtin: true}}); err != nil {
			t.Fatal(err)
		}
		d := float64(time.Since(start).Microseconds()) / 1000
		if best == 0 || d < best {
			best = d
		}
	}
	return best
}
