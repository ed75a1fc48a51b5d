package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// cardValue is a summary card's big number.
func (tb *tab) cardValue(id string) string { return tb.text("#" + id + " .v") }

// singleMode turns compare mode off if it is on.
func (tb *tab) singleMode() {
	tb.t.Helper()
	if eval[bool](tb, `!!document.querySelector('#compare-setup')`) {
		tb.do(chromedp.Click(chromedp.ID("compare-toggle")))
		tb.wait("single mode", `!document.querySelector('#compare-setup')`, 5*time.Second)
	}
}

// TestSimpleCPU2048 is
// docs/model/cases.md ("Case A: connector comparison")'s SimpleCPU row
// driven from the controls: pick simple_cpu_v0_32 and 2,048 host blocks, run,
// read the numbers. It also checks that the summary shows within 1 s of Run.
func TestSimpleCPU2048(t *testing.T) {
	tb := newTab(t)
	tb.open("")
	tb.shot("01-default-A192-compare")
	tb.singleMode()
	tb.do(chromedp.Click(chromedp.ID("conn-offloading_v0_24")))
	tb.do(chromedp.Click(chromedp.ID("conn-simple_cpu_v0_32")))
	tb.typeInto("f-g2", "2048")
	if v := eval[string](tb, `document.getElementById('f-g2').value`); v != "2048" {
		t.Fatalf("G2 field shows %q", v)
	}
	if !strings.Contains(eval[string](tb, `document.getElementById('yaml').value`), "num_host_blocks: 2048") {
		t.Error("the YAML view does not show num_host_blocks: 2048")
	}
	d := tb.clickRun()
	if got := tb.cardValue("card-restored"); got != "15,568" {
		t.Errorf("restored %q, want 15,568", got)
	}
	if got := tb.cardValue("card-recomputed"); got != "5,248" {
		t.Errorf("recomputed %q, want 5,248", got)
	}
	t.Logf("§A (SimpleCPU, 2,048 blocks): summary %v after Run", d.Round(time.Millisecond))
	if d > time.Second {
		t.Errorf("summary took %v after Run (budget 1 s)", d)
	}
	// a second run, now warm
	d2 := tb.clickRun()
	t.Logf("second run: %v", d2.Round(time.Millisecond))
	// the table sorts
	tb.do(chromedp.Click(chromedp.CSS("th.sort.ttft")))
	tb.do(chromedp.Click(chromedp.CSS("th.sort.ttft")))
	first := tb.text("#requests table.reqs tbody tr td")
	if first == "" {
		t.Error("empty request table")
	}
	// the chart survives later renders (vugu resets canvas attributes)
	counts := chartColours(tb)
	if counts["restored"] < 200 || counts["recomputed"] < 50 || counts["g1"] < 200 {
		t.Errorf("chart pixels by series: %v", counts)
	}
	tb.shot("02-single-simple_cpu-2048")
	writeMeasure(t, "summary_after_run_ms", fmt.Sprintf("%.1f (second run %.1f)", ms(d), ms(d2)))
}

// TestCompareThree opens compare mode with the three connector profiles.
func TestCompareThree(t *testing.T) {
	tb := newTab(t)
	tb.open("")
	tb.singleMode()
	tb.do(chromedp.Click(chromedp.ID("compare-toggle")))
	tb.wait("compare set-up", `!!document.querySelector('#compare-setup')`, 5*time.Second)
	for _, k := range []string{"offloading_v0_24", "offloading_v0_32", "simple_cpu_v0_32"} {
		if !eval[bool](tb, fmt.Sprintf(`document.getElementById('cmp-%s').checked`, k)) {
			tb.do(chromedp.Click(chromedp.ID("cmp-" + k)))
		}
	}
	tb.clickRun()
	rows := eval[[]string](tb, `[...document.querySelectorAll('tr.cmp-row')].map(r => [...r.cells].map(c => c.textContent.trim()).join('|'))`)
	if len(rows) != 3 {
		t.Fatalf("%d result rows: %q", len(rows), rows)
	}
	want := []string{"offloading v0.24|11,488|8,800", "offloading v0.32|14,144|6,544", "SimpleCPU v0.32|12,432|8,368"}
	for i, w := range want {
		if !strings.HasPrefix(rows[i], w) {
			t.Errorf("row %d = %q, want prefix %q", i, rows[i], w)
		}
	}
	tb.do(chromedp.Click(chromedp.CSS(`tr.cmp-row[data-label="SimpleCPU v0.32"]`)))
	if !strings.Contains(tb.text("#requests h3"), "SimpleCPU") {
		t.Error("selecting a row does not switch the request table")
	}
	tb.shot("03-compare-three-connectors")

	// G2 sizes axis
	tb.do(chromedp.SetValue(chromedp.ID("cmp-axis"), "g2"))
	tb.do(chromedp.Evaluate[chromedp.Void](`document.getElementById('cmp-axis').dispatchEvent(new Event('change', {bubbles: true}))`))
	tb.typeInto("cmp-g2", "192, 2048, none")
	tb.clickRun()
	rows = eval[[]string](tb, `[...document.querySelectorAll('tr.cmp-row')].map(r => [...r.cells].map(c => c.textContent.trim()).join('|'))`)
	if len(rows) != 3 || !strings.HasPrefix(rows[2], "no G2|0|20,320") || !strings.HasPrefix(rows[1], "SimpleCPU v0.32, G2 2048 blocks|15,568|5,248") {
		t.Errorf("G2 compare rows %q", rows)
	}
	tb.shot("04-compare-g2-sizes")
}

// TestShareReload edits the config, then reloads the shared URL in a new
// tab and gets the same config (and compare set-up) back.
func TestShareReload(t *testing.T) {
	tb := newTab(t)
	tb.open("")
	tb.singleMode()
	tb.do(chromedp.Click(chromedp.ID("conn-offloading_v0_32")))
	tb.typeInto("f-g1", "256")
	tb.typeInto("f-max_seqs", "3")
	tb.typeInto("f-prefill_ms", "2.5")
	yaml := eval[string](tb, `document.getElementById('yaml').value`)
	url := eval[string](tb, `location.href`)
	if !strings.Contains(url, "#") || !strings.Contains(url, "y=") {
		t.Fatalf("URL %q does not hold the config", url)
	}
	other := newTab(t)
	other.open(strings.TrimPrefix(url, siteURL))
	if got := eval[string](other, `document.getElementById('yaml').value`); got != yaml {
		t.Errorf("reloaded YAML differs:\n%s\nwant\n%s", got, yaml)
	}
	for id, want := range map[string]string{"f-g1": "256", "f-max_seqs": "3", "f-prefill_ms": "2.5", "f-g2": "192"} {
		if got := eval[string](other, fmt.Sprintf(`document.getElementById(%q).value`, id)); got != want {
			t.Errorf("%s = %q after reload, want %q", id, got, want)
		}
	}
	if !eval[bool](other, `document.getElementById('conn-offloading_v0_32').checked`) {
		t.Error("connector not restored")
	}
	if eval[bool](other, `!!document.querySelector('#compare-setup')`) {
		t.Error("compare mode came back on")
	}
	// a plain reload of the same tab as well
	tb.do(chromedp.Reload())
	tb.wait("the app", `document.querySelector('#run') !== null`, 30*time.Second)
	tb.idle()
	if got := eval[string](tb, `document.getElementById('yaml').value`); got != yaml {
		t.Error("reload lost the config")
	}
	other.shot("05-shared-link-reloaded")
}

// TestUpload uploads the §A trace as a file and runs it; the numbers
// equal the built-in trace's. The link then names the upload's hash.
func TestUpload(t *testing.T) {
	tb := newTab(t)
	tb.open("")
	tb.singleMode()
	tb.do(chromedp.Click(chromedp.CSS("details.upload summary")))
	tb.do(chromedp.SetUploadFiles(chromedp.ID("upload"), []string{filepath.Join(repoRoot, "traces", "delta-sessions.jsonl")}))
	tb.wait("the upload check", `document.getElementById('upload-note')?.textContent.includes('8 sessions')`, 30*time.Second)
	if v := eval[string](tb, `document.getElementById('f-trace').value`); v != "delta-sessions.jsonl" {
		t.Errorf("trace picker shows %q", v)
	}
	if !strings.Contains(eval[string](tb, `location.hash`), "t=delta-sessions.jsonl%3A") {
		t.Errorf("link %q does not name the uploaded trace", eval[string](tb, `location.hash`))
	}
	tb.clickRun()
	if got := tb.cardValue("card-restored"); got != "12,432" { // §A default config: SimpleCPU at 192 blocks
		t.Errorf("restored %q with the uploaded trace, want 12,432", got)
	}
	tb.shot("06-uploaded-trace")
}

// TestMalformedUpload: a broken trace shows the reader's error (with its
// line) next to the upload, the config is untouched and runs still work.
func TestMalformedUpload(t *testing.T) {
	tb := newTab(t)
	tb.open("")
	tb.singleMode()
	bad := filepath.Join(t.TempDir(), "broken.jsonl")
	os.WriteFile(bad, []byte(`{"request_id": "a", "session_id": "s", "input_length": 16, "output_length": 1, "hash_ids": [1]}`+"\n"+`{"request_id": "b", oops}`+"\n"), 0o644)
	yaml := eval[string](tb, `document.getElementById('yaml').value`)
	tb.do(chromedp.Click(chromedp.CSS("details.upload summary")))
	tb.do(chromedp.SetUploadFiles(chromedp.ID("upload"), []string{bad}))
	tb.wait("the upload error", `!!document.getElementById('err-upload')`, 30*time.Second)
	msg := tb.text("#err-upload")
	if !strings.HasPrefix(msg, "broken.jsonl:2:") {
		t.Errorf("upload error %q does not point at line 2", msg)
	}
	if eval[string](tb, `document.getElementById('yaml').value`) != yaml {
		t.Error("a failed upload changed the config")
	}
	tb.shot("07-malformed-upload")
	tb.clickRun()
	if got := tb.cardValue("card-restored"); got != "12,432" {
		t.Errorf("after a bad upload, restored %q", got)
	}
}

// TestConfigErrors: a rejected value shows the CLI's message next to its
// control, a YAML syntax error shows next to the YAML, and fixing them
// brings Run back.
func TestConfigErrors(t *testing.T) {
	tb := newTab(t)
	tb.open("")
	tb.singleMode()
	tb.typeInto("f-g1", "0")
	msg := tb.text("#err-g1")
	if !strings.Contains(msg, "engine.workers.aggregated.kv_cache.capacity.blocks") || !strings.HasPrefix(msg, "config.yaml:") {
		t.Errorf("G1 error %q", msg)
	}
	if !eval[bool](tb, `document.getElementById('run').disabled`) {
		t.Error("Run enabled with a bad config")
	}
	tb.shot("08-config-error")
	tb.typeInto("f-g1", "128")
	if tb.text("#err-g1") != "" {
		t.Error("error stays after the fix")
	}
	// break the YAML itself
	tb.do(chromedp.Evaluate[chromedp.Void](`(() => { const y = document.getElementById('yaml'); y.focus(); y.setSelectionRange(0, 0); })()`))
	tb.do(chromedp.SendKeys(chromedp.ID("yaml"), "engine: [\n"))
	tb.wait("the YAML error", `!!document.getElementById('err-yaml')`, 5*time.Second)
	if m := tb.text("#err-yaml"); !strings.HasPrefix(m, "config.yaml:") {
		t.Errorf("YAML error %q", m)
	}
	tb.shot("09-yaml-error")
}

// TestExampleB opens the §B restore example from the header.
func TestExampleB(t *testing.T) {
	tb := newTab(t)
	tb.open("#ex=B")
	if got := tb.cardValue("card-restored"); got != "8" {
		t.Errorf("§B restored %q, want 8", got)
	}
	if got := tb.cardValue("card-recomputed"); got != "28" {
		t.Errorf("§B recomputed %q, want 28", got)
	}
	if !strings.Contains(tb.text("#example-box"), "restore") {
		t.Error("no example text")
	}
	tb.shot("10-example-B-restore")
}

// chartColours counts the chart's pixels of each series colour.
func chartColours(tb *tab) map[string]int {
	return eval[map[string]int](tb, `(() => {
		const c = document.getElementById('chart');
		const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
		const n = {g1: 0, restored: 0, recomputed: 0};
		for (let i = 0; i < d.length; i += 4) {
			const [r, g, b] = [d[i], d[i+1], d[i+2]];
			if (r === 0x00 && g === 0x9E && b === 0x73) n.g1++;
			else if (r === 0x00 && g === 0x72 && b === 0xB2) n.restored++;
			else if (r === 0xD5 && g === 0x5E && b === 0x00) n.recomputed++;
		}
		return n;
	})()`)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// writeMeasure records a measurement in build/e2e-measures.txt (docs/ui.md
// quotes them).
func writeMeasure(t *testing.T, key, value string) {
	dir := filepath.Join(repoRoot, "build")
	os.MkdirAll(dir, 0o755)
	f, err := os.OpenFile(filepath.Join(dir, "e2e-measures.txt"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Log(err)
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s %s: %s\n", time.Now().Format(time.RFC3339), key, value)
}

// TestNarrowScreen: on a phone-sized screen the panels stack and the
// page still runs (screenshot for review).
func TestNarrowScreen(t *testing.T) {
	tb := newTab(t)
	tb.do(chromedp.EmulateViewport(420, 900))
	tb.open("#ex=B")
	tb.pvReady(0)
	if w := eval[int](tb, `document.documentElement.scrollWidth`); w > 440 {
		wide := eval[[]string](tb, `[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > 425).slice(0, 8).map(e => e.tagName + '#' + e.id + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))`)
		t.Errorf("the page is %d px wide on a 420 px screen: %v", w, wide)
	}
	if run, panel := eval[float64](tb, `document.getElementById('run').getBoundingClientRect().top`),
		eval[float64](tb, `document.getElementById('config').getBoundingClientRect().top`); run > panel {
		t.Errorf("on a 420 px screen Run sits at %.0f px, under the config panel at %.0f px", run, panel)
	}
	tb.shot("16-narrow-screen")
}
