package e2e

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/traces"
	"github.com/kvsim/kvsim/ui/state"
)

// writeGzip writes src gzipped (best compression, no name or time in the
// header) as build_ui's gzip -9 -n does.
func writeGzip(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		return err
	}
	os.MkdirAll(filepath.Dir(dst), 0o755)
	return os.WriteFile(dst, buf.Bytes(), 0o644)
}

// The test server's behaviour for the Mooncake trace's path: traceFail
// requests answer 404, traceStall requests send the headers and 4 KiB and
// then nothing; traceGets counts the requests.
var traceFail, traceStall, traceGets atomic.Int32

func mooncakeHandler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/"+traces.MooncakeTraceGz {
			next.ServeHTTP(w, r)
			return
		}
		traceGets.Add(1)
		if traceFail.Load() > 0 {
			traceFail.Add(-1)
			http.NotFound(w, r)
			return
		}
		if traceStall.Load() > 0 {
			traceStall.Add(-1)
			w.Header().Set("Content-Length", "788651")
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusOK)
			w.Write(make([]byte, 4096))
			w.(http.Flusher).Flush()
			<-r.Context().Done() // the page aborts the fetch
			return
		}
		// each test fetches the trace itself: without this the browser's
		// heuristic cache answers a later test's fetch (CI ran
		// TestMooncakeBuiltin first and TestMooncakeFetchFails never saw
		// its 404)
		w.Header().Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// pickMooncake chooses the Mooncake trace in the picker.
func (tb *tab) pickMooncake() {
	tb.t.Helper()
	tb.do(chromedp.SetValue(chromedp.ID("f-trace"), state.MooncakeTrace))
	tb.do(chromedp.Evaluate[chromedp.Void](`document.getElementById('f-trace').dispatchEvent(new Event('change', {bubbles: true}))`))
}

// mooncakeCards runs cfg natively over the Mooncake trace and returns the
// run view's cards as the page writes them: restored, recomputed, TTFT
// p50 / p99.
func mooncakeCards(t *testing.T, cfg string) (cards [3]string, requests int) {
	t.Helper()
	trace, err := os.ReadFile(filepath.Join(repoRoot, "traces", "mooncake", traces.MooncakeTrace))
	if err != nil {
		t.Fatal(err)
	}
	out, err := replay.Run(replay.Job{Name: "config.yaml", Config: []byte(cfg),
		Traces: replay.Traces{Texts: map[string][]byte{traces.MooncakeTrace: trace}}})
	if err != nil {
		t.Fatal(err)
	}
	s := out.Summary
	return [3]string{state.Thousands(s.FirstAdmissionHostTokens), state.Thousands(s.CommittedPrefillTokens),
		state.Ms(s.TTFT.Median) + " / " + state.Ms(s.TTFT.P99) + " ms"}, s.NumRequests
}

// pageCards reads the run view's cards.
func (tb *tab) pageCards() [3]string {
	return [3]string{tb.text("#card-restored .v"), tb.text("#card-recomputed .v"), tb.text("#card-ttft .v")}
}

// TestMooncakeBuiltin picks "Mooncake conversation" in the trace picker:
// the page fetches the gzipped trace (Run off meanwhile, progress in bytes),
// loads the preset (the §A (docs/model/cases.md) example box goes, the connector compare turns
// off: the preset has no G2 tier), says the run is cut, and its
// run's cards equal a native replay.Run of the preset over the same trace;
// the pass view shows the first 2,000 passes of each rank, says so, and
// scrubs to pass 1,999.
func TestMooncakeBuiltin(t *testing.T) {
	tb := newTab(t)
	tb.open("") // the §A example, comparing connectors: the pick makes it one run
	if tb.text("#example-box") == "" {
		t.Fatal("no example box on the default page")
	}
	gets := traceGets.Load()
	// watch Run and the progress line from the page, from the pick on
	tb.do(chromedp.Evaluate[chromedp.Void](`window.__mc = {runOn: false, progress: []};
		new MutationObserver(() => {
			const p = document.getElementById('mooncake-progress'), r = document.getElementById('run');
			if (p) { window.__mc.progress.push(p.textContent); if (r && !r.disabled) window.__mc.runOn = true; }
		}).observe(document.body, {subtree: true, childList: true, characterData: true, attributes: true})`))
	start := time.Now()
	tb.pickMooncake()
	tb.wait("the fetched trace", `!!document.getElementById('mooncake-note') && !document.getElementById('mooncake-progress') && !document.getElementById('run').disabled`, 30*time.Second)
	fetchMs := time.Since(start).Milliseconds()
	if n := traceGets.Load() - gets; n != 1 {
		t.Errorf("%d requests for the trace", n)
	}
	if eval[bool](tb, `window.__mc.runOn`) {
		t.Error("Run was enabled while the trace was being fetched")
	}
	progress := eval[[]string](tb, `window.__mc.progress`)
	t.Logf("progress lines: %q", progress)
	if len(progress) == 0 || !strings.Contains(progress[len(progress)-1], "Fetching the Mooncake trace:") {
		t.Errorf("no progress line seen: %q", progress)
	}
	if e := tb.text("#mooncake-error"); e != "" {
		t.Fatalf("fetch error %q", e)
	}
	if tb.text("#example-box") != "" {
		t.Error("the §A example box is still shown")
	}
	if eval[bool](tb, `!!document.querySelector('#compare-setup')`) {
		t.Error("still in compare mode")
	}
	if note := tb.text("#mooncake-note"); !strings.Contains(note, "300 s of virtual time") || !strings.Contains(note, "delete the stop: line") {
		t.Errorf("cut note %q", note)
	}
	yaml := eval[string](tb, `document.getElementById('yaml').value`)
	if yaml != state.MooncakePreset() {
		t.Errorf("the YAML is not the preset:\n%s", yaml)
	}
	runMs := tb.clickRun().Milliseconds()
	want, n := mooncakeCards(t, yaml)
	if got := tb.pageCards(); got != want {
		t.Errorf("page cards %q, native %q", got, want)
	}
	if e := tb.text("#run-error"); e != "" {
		t.Errorf("run error %q", e)
	}
	// Its four replicas routed round robin split: on this machine's cores
	// (2 or more in CI) the run ran as parts in the sweep's workers, and
	// the cards above are the merge's (docs/ui.md, "Compared long runs").
	if st := tb.text("#status"); !strings.Contains(st, " parts at once)") && eval[int](tb, `navigator.hardwareConcurrency`) >= 2 {
		t.Errorf("status %q: the run did not split", st)
	}
	// The trace's 12,031 requests are over the whole record's 5,000: the
	// pass view keeps each rank's first 2,000 passes and says so.
	tb.pvReady(0)
	if st := tb.text("#pv-status"); !strings.Contains(st, "so only passes 1 to 2,000 of each rank are kept") {
		t.Errorf("pass view status %q", st)
	}
	if max := eval[string](tb, `document.getElementById('pv-scrub').max`); max != "2000" {
		t.Errorf("the scrubber ends at pass %s; want 2000", max)
	}
	tb.do(chromedp.Evaluate[chromedp.Void](`(() => { const s = document.getElementById('pv-scrub'); s.value = '1999'; s.dispatchEvent(new Event('input', {bubbles: true})); })()`))
	tb.pvReady(1999)
	scrub := tb.scrubTimes(1, 2000, 20, 1)
	if cells := eval[int](tb, `document.getElementById('pv-canvas-0') ? 1 : 0`); cells != 1 {
		t.Error("no canvas at pass 1,999")
	}
	// "show passes from": a pass no rank reached is refused in place; a
	// later window runs the config again and opens at its first pass.
	for _, bad := range []string{"ten", "999999999"} {
		tb.typeInto("pv-from", bad)
		tb.do(chromedp.Click(chromedp.ID("pv-from-go")))
		tb.wait("the from message", `!!document.getElementById('err-pv-from')`, 5*time.Second)
		if msg := tb.text("#err-pv-from"); !strings.HasPrefix(msg, "Give a pass from 1 to ") {
			t.Errorf("from %q: %q", bad, msg)
		}
	}
	runs := tb.runs()
	tb.typeInto("pv-from", "10,000")
	click := time.Now()
	tb.do(chromedp.Click(chromedp.ID("pv-from-go")))
	tb.wait("the second run", fmt.Sprintf(`+(document.querySelector('#status')?.dataset.runs ?? -1) > %d`, runs), 60*time.Second)
	tb.pvReady(10000)
	moveMs := time.Since(click).Milliseconds()
	if st := tb.text("#pv-status"); !strings.Contains(st, "so only passes 10,000 to 11,999 of each rank are kept") {
		t.Errorf("pass view status after the window move %q", st)
	}
	if lo, hi := eval[string](tb, `document.getElementById('pv-scrub').min`), eval[string](tb, `document.getElementById('pv-scrub').max`); lo != "10000" || hi != "11999" {
		t.Errorf("the scrubber spans passes %s to %s; want 10000 to 11999", lo, hi)
	}
	if got := tb.pageCards(); got != want {
		t.Errorf("page cards after the window move %q, native %q", got, want)
	}
	tb.do(chromedp.Click(chromedp.ID("pv-first")))
	tb.pvReady(10000)
	scrub = append(scrub, tb.scrubTimes(10000, 11999, 20, 2)...)
	// The whole-run scrubber: released inside the kept passes it only
	// seeks; elsewhere the window moves so that the pass is a tenth of the
	// way in and the view opens there.
	runTo := func(p int) {
		tb.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const s = document.getElementById('pv-run'); s.value = '%d'; s.dispatchEvent(new Event('change', {bubbles: true})); })()`, p)))
	}
	most := eval[int](tb, `+document.getElementById('pv-run').max`)
	if most < 14000 { // the preset stops at 300 s: 18,319 passes
		t.Fatalf("the whole-run scrubber ends at %d", most)
	}
	// dragging (input events) only relabels it, without a render
	renders := eval[int](tb, `window.kvsimRenders`)
	tb.do(chromedp.Evaluate[chromedp.Void](`(() => { const s = document.getElementById('pv-run'); s.value = '4321'; s.dispatchEvent(new Event('input', {bubbles: true})); })()`))
	if l := tb.text("#pv-run-label"); !strings.HasPrefix(l, "release to show pass 4,321 of ") || eval[int](tb, `window.kvsimRenders`) != renders {
		t.Errorf("dragging the whole-run scrubber: label %q, %d renders", l, eval[int](tb, `window.kvsimRenders`)-renders)
	}
	runs = tb.runs()
	runTo(11500)
	tb.pvReady(11500)
	if tb.runs() != runs {
		t.Error("the whole-run scrubber ran the config again for a kept pass")
	}
	to := most / 2
	click = time.Now()
	runTo(to)
	tb.wait("the whole-run scrubber's move", fmt.Sprintf(`+(document.querySelector('#status')?.dataset.runs ?? -1) > %d`, runs), 60*time.Second)
	tb.pvReady(to)
	runMoveMs := time.Since(click).Milliseconds()
	if lo, hi := eval[string](tb, `document.getElementById('pv-scrub').min`), eval[string](tb, `document.getElementById('pv-scrub').max`); lo != strconv.Itoa(to-200) || hi != strconv.Itoa(to+1799) {
		t.Errorf("after the whole-run scrubber to %d the scrubber spans %s to %s; want %d to %d", to, lo, hi, to-200, to+1799)
	}
	if label := tb.text("#pv-run-label"); !strings.Contains(label, "pass "+state.Thousands(int64(to))+" of "+state.Thousands(int64(most))) {
		t.Errorf("the whole-run scrubber's label %q", label)
	}
	t.Logf("the whole-run scrubber to pass %d of %d: shown %d ms after the release", to, most, runMoveMs)
	t.Logf("pick → fetched %d ms; Run → summary %d ms (%d requests); cards %q; passes from 10,000 shown %d ms after the click; scrub to 40 random passes of the two windows: median %v, slowest %v",
		fetchMs, runMs, n, want, moveMs, median(scrub).Round(time.Millisecond), slices.Max(scrub).Round(time.Millisecond))
	writeMeasure(t, "mooncake preset", fmt.Sprintf("pick → trace here %d ms, Run → summary %d ms, window move to 10,000 → shown %d ms, scrub median %d ms (40 random passes), slowest %d ms",
		fetchMs, runMs, moveMs, median(scrub).Milliseconds(), slices.Max(scrub).Milliseconds()))
	if median(scrub) > 2*time.Second {
		t.Errorf("scrubbing took %v (median of 40 passes)", median(scrub))
	}
	tb.shot("mooncake")
}

// TestMooncakeCompareWindow: the Mooncake preset with a 20,000-block G2
// tier compared across the three connectors (each run keeps a window of
// its passes, so the runs fan out to workers of their own: a Cancel stops
// them, and the next compare's rows equal each connector's native run):
// the pass view indexes and compares the runs (record.Diff per rank) in
// bounded time, moves to passes 5,000 to 6,999 for all three
// runs, and says that the runs already differ at that window's first pass
// rather than that they first differ there.
func TestMooncakeCompareWindow(t *testing.T) {
	tb := newTab(t)
	tb.open("")
	tb.pickMooncake()
	tb.wait("the fetched trace", `!!document.getElementById('mooncake-note') && !document.getElementById('mooncake-progress') && !document.getElementById('run').disabled`, 30*time.Second)
	tb.setYAML(strings.Replace(state.MooncakePreset(), "        capacity: {type: fixed, blocks: 40000}\n",
		"        capacity: {type: fixed, blocks: 40000}\n        host_offload: {num_host_blocks: 20000, connector: simple_cpu_v0_32}\n", 1))
	tb.wait("the G2 tier", `document.getElementById('f-g2')?.value === '20000'`, 5*time.Second)
	if !eval[bool](tb, `!!document.querySelector('#compare-setup')`) {
		tb.do(chromedp.Click(chromedp.ID("compare-toggle")))
		tb.wait("compare set-up", `!!document.querySelector('#compare-setup')`, 5*time.Second)
	}
	for _, k := range []string{"offloading_v0_24", "offloading_v0_32", "simple_cpu_v0_32"} {
		if !eval[bool](tb, `document.getElementById('cmp-`+k+`').checked`) {
			tb.do(chromedp.Click(chromedp.ID("cmp-" + k)))
		}
	}
	tb.settle()
	// The runs fan out (docs/ui.md, "Compared long runs"): Cancel stops
	// them; the next Run's rows are each connector's native run.
	tb.do(chromedp.Click(chromedp.ID("run")))
	tb.wait("the runs fanned out", `(document.getElementById('progress-text')?.textContent ?? '').includes('3 runs at once')`, 30*time.Second)
	tb.do(chromedp.Click(chromedp.ID("cancel")))
	tb.wait("the cancelled compare", `document.getElementById('status')?.textContent === 'Run cancelled.'`, 10*time.Second)
	run := tb.clickRun()
	if st := tb.text("#status"); !strings.Contains(st, "(3 runs at once)") {
		t.Errorf("status %q: the compare did not fan out", st)
	}
	yaml := eval[string](tb, `document.getElementById('yaml').value`)
	rows := eval[[][]string](tb, `[...document.querySelectorAll('tr.cmp-row')].map(r => [...r.cells].map(c => c.textContent.trim()))`)
	for i, k := range []string{"offloading_v0_24", "offloading_v0_32", "simple_cpu_v0_32"} {
		want, _ := mooncakeCards(t, strings.Replace(yaml, "connector: simple_cpu_v0_32", "connector: "+k, 1))
		if i >= len(rows) || len(rows[i]) < 6 || [3]string{rows[i][1], rows[i][2], rows[i][4] + " / " + rows[i][5] + " ms"} != want {
			t.Errorf("%s: page row %q, native %q", k, rows[min(i, len(rows)-1)], want)
		}
	}
	start := time.Now()
	tb.pvReady(0)
	first := time.Since(start)
	// the whole-run scrubber says what a move of a compare runs
	if l := tb.text("#pv-run-label"); !strings.Contains(l, "each compared run runs again up to there") {
		t.Errorf("the whole-run scrubber of a compare says %q", l)
	}
	runs := tb.runs()
	tb.typeInto("pv-from", "5000")
	click := time.Now()
	tb.do(chromedp.Click(chromedp.ID("pv-from-go")))
	tb.wait("the second compare", fmt.Sprintf(`+(document.querySelector('#status')?.dataset.runs ?? -1) > %d`, runs), 60*time.Second)
	start = time.Now()
	tb.pvReady(5000)
	second := time.Since(start)
	move := time.Since(click)
	t.Logf("compare %v; pass view of passes 1-2,000 indexed in %v, of 5,000-6,999 in %v (%v after the click)", run.Round(time.Millisecond),
		first.Round(time.Millisecond), second.Round(time.Millisecond), move.Round(time.Millisecond))
	writeMeasure(t, "mooncake compare window", fmt.Sprintf("compare %.1f s, index 1-2000 %.1f s, 5000-6999 %.1f s (%.1f s after the click)",
		run.Seconds(), first.Seconds(), second.Seconds(), move.Seconds()))
	if lo := eval[string](tb, `document.getElementById('pv-scrub').min`); lo != "5000" {
		t.Errorf("the scrubber starts at %s", lo)
	}
	for v := range 3 {
		if !eval[bool](tb, fmt.Sprintf(`!!document.getElementById('pv-canvas-%d')`, v)) {
			t.Errorf("no canvas for run %d", v)
		}
	}
	divs := eval[[]string](tb, `[...document.querySelectorAll('.pv-diverge button')].map(b => b.textContent)`)
	if len(divs) != 2 || !strings.Contains(divs[0], "v0.32 already differs from v0.24 in pass 5000, the first kept") {
		t.Errorf("divergences %q", divs)
	}
	if s := tb.text("#pv-summary"); !strings.Contains(s, "already differs from v0.24 at pass 5000, the first pass kept") {
		t.Errorf("summary %q", s)
	}
	if first > 40*time.Second || second > 40*time.Second {
		t.Errorf("the pass view took %v and %v to index and compare", first, second)
	}
}

// TestMooncakeFetchFails: the server answers 404 for the trace, then
// stalls (the page's 30 s stall timer shortened to 1.5 s by wrapping
// kvsimFetchTrace from the test): each shows its message with Retry and
// Run stays off; the third try succeeds and Run comes on.
func TestMooncakeFetchFails(t *testing.T) {
	tb := newTab(t)
	tb.open("")
	tb.singleMode()
	traceFail.Store(1)
	traceStall.Store(1)
	defer traceFail.Store(0)
	defer traceStall.Store(0)
	tb.do(chromedp.Evaluate[chromedp.Void](`(() => { const f = globalThis.kvsimFetchTrace;
		globalThis.kvsimFetchTrace = (u, ms, p, d) => f(u, 1500, p, d); })()`))
	tb.pickMooncake()
	tb.wait("the 404 message", `!!document.getElementById('mooncake-error')`, 15*time.Second)
	msg := tb.text("#mooncake-error")
	if !strings.Contains(msg, "Could not fetch the Mooncake trace (traces/conversation_trace.jsonl.gz): the server answered HTTP 404") ||
		!strings.Contains(msg, "Retry") {
		t.Errorf("404 message %q", msg)
	}
	if !eval[bool](tb, `document.getElementById('run').disabled`) {
		t.Error("Run is on after the fetch failed")
	}
	if title := eval[string](tb, `document.getElementById('run').title`); !strings.Contains(title, "HTTP 404") {
		t.Errorf("Run's title %q", title)
	}
	tb.do(chromedp.Click(chromedp.ID("mooncake-retry")))
	tb.wait("the progress of the retry", `!!document.getElementById('mooncake-progress')`, 5*time.Second)
	tb.wait("the stall message", `!!document.getElementById('mooncake-error')`, 15*time.Second)
	if msg := tb.text("#mooncake-error"); !strings.Contains(msg, "no data arrived for 30 s") {
		t.Errorf("stall message %q", msg)
	}
	tb.do(chromedp.Click(chromedp.ID("mooncake-retry")))
	tb.wait("the fetched trace", `!document.getElementById('mooncake-error') && !document.getElementById('mooncake-progress') && !document.getElementById('run').disabled`, 30*time.Second)
	if traceFail.Load() != 0 || traceStall.Load() != 0 {
		t.Error("the failures were not all served")
	}
}

// TestMooncakeNotEmbedded: neither wasm file holds the trace (a line from
// its middle, or bytes of its gzip form); main.wasm does hold the preset,
// so the search itself works.
func TestMooncakeNotEmbedded(t *testing.T) {
	trace, err := os.ReadFile(filepath.Join(repoRoot, "traces", "mooncake", traces.MooncakeTrace))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(trace, []byte("\n"))
	line := lines[len(lines)/2]
	gz, err := os.ReadFile(filepath.Join(siteDir, traces.MooncakeTraceGz))
	if err != nil {
		t.Fatal(err)
	}
	chunk := gz[len(gz)/2 : len(gz)/2+64]
	for _, name := range []string{"main.wasm", "sim.wasm"} {
		b, err := os.ReadFile(filepath.Join(siteDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, line) || bytes.Contains(b, chunk) {
			t.Errorf("%s holds the Mooncake trace", name)
		}
		if name == "main.wasm" && !bytes.Contains(b, []byte(traces.MooncakeConfig)) {
			t.Error("main.wasm lacks the preset: the search finds nothing")
		}
		t.Logf("%s: %d bytes; the trace: %d bytes, gzipped %d", name, len(b), len(trace), len(gz))
	}
}

// TestMooncakeFull (opt-in, KVSIM_MOONCAKE=1) runs the whole trace in the
// page (the preset with its stop removed) and compares it with a native
// run; KVSIM_MOONCAKE_G2=N adds a SimpleCPU tier of N host blocks.
func TestMooncakeFull(t *testing.T) {
	if os.Getenv("KVSIM_MOONCAKE") != "1" {
		t.Skip("the whole Mooncake trace in the browser: set KVSIM_MOONCAKE=1")
	}
	tb := newTab(t)
	tb.open("")
	tb.singleMode()
	tb.pickMooncake()
	tb.wait("the fetched trace", `!!document.getElementById('mooncake-note') && !document.getElementById('run').disabled`, 60*time.Second)
	full := strings.Replace(state.MooncakePreset(), "  stop: {max_virtual_time_seconds: 300}\n", "", 1)
	if full == state.MooncakePreset() {
		t.Fatal("no stop line in the preset")
	}
	if g2 := os.Getenv("KVSIM_MOONCAKE_G2"); g2 != "" {
		const capLine = "        capacity: {type: fixed, blocks: 40000}\n"
		if !strings.Contains(full, capLine) {
			t.Fatal("no capacity line in the preset to add host_offload under")
		}
		full = strings.Replace(full, capLine, capLine+"        host_offload: {num_host_blocks: "+g2+", connector: simple_cpu_v0_32}\n", 1)
	}
	tb.setYAML(full)
	tb.wait("the whole-trace note", `document.getElementById('mooncake-note')?.textContent.includes('The whole trace')`, 5*time.Second)
	runMs := tb.clickRun().Milliseconds()
	summaryAt := time.Now()
	start := time.Now()
	want, n := mooncakeCards(t, full)
	native := time.Since(start).Milliseconds()
	if got := tb.pageCards(); got != want {
		t.Errorf("page cards %q, native %q", got, want)
	}
	mem0, _ := tb.workerMem()
	t.Logf("whole trace (%d requests): page Run → summary %d ms, native replay.Run %d ms; run worker %d MiB", n, runMs, native, mem0>>20)
	writeMeasure(t, "mooncake whole trace", "page "+strconv.FormatInt(runMs, 10)+" ms, native "+strconv.FormatInt(native, 10)+" ms")
	// Any pass: 20 random passes in the kept window, then windows at
	// random passes of the longest rank, each a run that stops after it.
	tb.pvReady(0)
	scrub := tb.scrubTimes(1, 2000, 20, 3)
	t.Logf("scrub times %v (the checkpoints warmed by then: %v)", scrub, eval[bool](tb, `!!document.querySelector("#passview[data-warmed]")`))
	// After the index the run worker warms its checkpoints: it runs the
	// run on to its end between seeks (docs/ui.md, "Window moves from
	// checkpoints"). The moves start once it is over.
	tb.wait("the checkpoints' warm-up", `!!document.querySelector('#passview[data-warmed]')`, 120*time.Second)
	warmed := time.Since(summaryAt).Round(time.Millisecond)
	tb.shot("29-mooncake-warmed")
	t.Logf("checkpoints warmed %v after the summary: %s kept; %q", warmed, eval[string](tb, `document.getElementById('passview').dataset.warmed`), tb.text("#pv-checkpoints"))
	rng := rand.New(rand.NewPCG(4, 1))
	var moves, drawn []time.Duration
	for range 8 {
		from := 1 + rng.IntN(200000) // the longest rank runs 215,667 passes
		runs := tb.runs()
		tb.typeInto("pv-from", strconv.Itoa(from))
		click := time.Now()
		tb.do(chromedp.Click(chromedp.ID("pv-from-go")))
		tb.wait("the window move", fmt.Sprintf(`+(document.querySelector('#status')?.dataset.runs ?? -1) > %d`, runs), 120*time.Second)
		// The pass is drawn before the timeline is indexed.
		tb.wait("the moved pass drawn", fmt.Sprintf(`!!document.querySelector('#passview[data-ready][data-pass="%d"]')`, from), 60*time.Second)
		drawn = append(drawn, time.Since(click))
		tb.pvReady(from)
		moves = append(moves, time.Since(click))
		if m, _ := tb.workerMem(); m > mem0 {
			mem0 = m
		}
	}
	// The first move takes the checkpoints the others start from
	// (docs/ui.md, "Window moves from checkpoints"); the worker keeps
	// them, so it is never retired between moves.
	_, retired := tb.workerMem()
	t.Logf("run worker during the moves: at most %d MiB, %d retired", mem0>>20, retired)
	if retired > 0 {
		t.Errorf("the run worker was retired during the window moves (%d MiB)", mem0>>20)
	}
	later := slices.Clone(moves[1:])
	t.Logf("scrub to 20 random passes of the window: median %v, slowest %v; window moves %v (after the first: median %v, slowest %v); the moved pass drawn after %v (after the first: median %v)",
		median(scrub).Round(time.Millisecond), slices.Max(scrub).Round(time.Millisecond), moves,
		median(later).Round(time.Millisecond), slices.Max(later).Round(time.Millisecond), drawn, median(drawn[1:]).Round(time.Millisecond))
	writeMeasure(t, "mooncake whole trace", fmt.Sprintf("scrub median %d ms (20 passes), checkpoints warmed %v after the summary, window moves %v, after the first median %d ms",
		median(scrub).Milliseconds(), warmed, moves, median(later).Milliseconds()))
	// Issue 21's measure: the whole-run scrubber released on 20 random
	// passes of the longest rank, each timed from the release to the
	// redraw (most are window moves).
	most := eval[int](tb, `+document.getElementById('pv-run').max`)
	any := tb.runScrubTimes(most, 20, 5)
	t.Logf("the whole-run scrubber on 20 random passes of %d: median %v, slowest %v (%v)", most,
		median(any).Round(time.Millisecond), slices.Max(any).Round(time.Millisecond), any)
	writeMeasure(t, "mooncake whole trace", fmt.Sprintf("any pass (whole-run scrubber, 20 random passes of %d): median %d ms, slowest %d ms",
		most, median(any).Milliseconds(), slices.Max(any).Milliseconds()))
	if median(any) > 20*time.Second {
		t.Errorf("any pass redrawn in %v (median of 20)", median(any))
	}
}
