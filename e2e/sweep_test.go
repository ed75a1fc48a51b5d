package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// sweepRow reads a point row of the sweep table by its values.
func (tb *tab) sweepRow(key string) []string {
	tb.t.Helper()
	return eval[[]string](tb, fmt.Sprintf(`[...(document.querySelector('#sweep-points tr[data-key=%q]')?.cells ?? [])].map(c => c.textContent.trim())`, key))
}

// TestSweepView runs the default sweep (§A (docs/model/cases.md), 8 G2 sizes × 3 connectors) in
// the sweep view's Web Workers, reads two §A points from the table, checks
// that the plot has one line colour per connector, and downloads
// sweep.csv and sweep.json, which must be the bytes `kvsim sweep` writes.
func TestSweepView(t *testing.T) {
	tb := newTab(t)
	tb.open("")
	tb.do(chromedp.Click(chromedp.ID("view-sweep")))
	tb.wait("the sweep view", `!!document.getElementById('sweep-run') && !document.getElementById('sweep-run').disabled`, 10*time.Second)
	if !strings.Contains(eval[string](tb, `location.hash`), "view=sweep") {
		t.Error("the link does not hold the sweep view")
	}
	tb.do(chromedp.Click(chromedp.ID("sweep-run")))
	tb.wait("the finished sweep", `!!document.querySelector('#sweep[data-finished]')`, 120*time.Second)
	ms := eval[string](tb, `document.getElementById('sweep-status').dataset.ms`)
	status := tb.text("#sweep-status")
	cores := eval[int](tb, `navigator.hardwareConcurrency`)
	t.Logf("default sweep: %s (%s ms; hardwareConcurrency %d)", status, ms, cores)
	writeMeasure(t, "sweep_default", status)
	if want := fmt.Sprintf("with %d workers", max(1, min(cores, 4))); !strings.Contains(status, "24 points") || !strings.Contains(status, want) {
		t.Errorf("status %q, want 24 points %s", status, want)
	}
	for key, want := range map[string][2]string{
		"192|offloading_v0_24":  {"11,488", "8,800"},
		"2048|simple_cpu_v0_32": {"15,568", "5,248"},
		"192|offloading_v0_32":  {"14,144", "6,544"},
	} {
		row := tb.sweepRow(key)
		if len(row) < 4 || row[2] != want[0] || row[3] != want[1] {
			t.Errorf("point %s: row %q, want restored %s recomputed %s", key, row, want[0], want[1])
		}
	}
	// one line colour per connector on the plot, and no other palette colour
	counts := eval[map[string]int](tb, `(() => {
		const c = document.getElementById('sweep-plot');
		const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
		const pal = {blue: [0x00, 0x72, 0xB2], vermillion: [0xD5, 0x5E, 0x00], green: [0x00, 0x9E, 0x73],
			purple: [0xCC, 0x79, 0xA7], orange: [0xE6, 0x9F, 0x00], sky: [0x56, 0xB4, 0xE9], yellow: [0xF0, 0xE4, 0x42]};
		const n = {};
		for (const k in pal) n[k] = 0;
		for (let i = 0; i < d.length; i += 4)
			for (const k in pal) if (d[i] === pal[k][0] && d[i+1] === pal[k][1] && d[i+2] === pal[k][2]) n[k]++;
		return n;
	})()`)
	t.Logf("plot pixels by colour: %v", counts)
	for _, k := range []string{"blue", "vermillion", "green"} {
		if counts[k] < 300 {
			t.Errorf("the plot has %d %s pixels: a connector's line is missing", counts[k], k)
		}
	}
	for _, k := range []string{"purple", "orange", "sky", "yellow"} {
		if counts[k] > 0 {
			t.Errorf("the plot has %d %s pixels: more lines than connectors", counts[k], k)
		}
	}
	legend := eval[bool](tb, `document.getElementById('sweep-plot').width > 0`)
	if !legend {
		t.Error("no plot canvas")
	}
	tb.shot("21-sweep-default")

	// again, with the workers started
	tb.do(chromedp.Click(chromedp.ID("sweep-run")))
	tb.wait("the second sweep", `!!document.querySelector('#sweep[data-finished]') && document.getElementById('sweep-status').dataset.ms !== '`+ms+`'`, 120*time.Second)
	again := tb.text("#sweep-status")
	t.Logf("second sweep: %s", again)
	writeMeasure(t, "sweep_default_again", again)

	// downloads equal `kvsim sweep`'s files
	dir := t.TempDir()
	if _, err := chromedp.CallBrowser(tb.ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir}); err != nil {
		t.Fatal(err)
	}
	tb.do(chromedp.Click(chromedp.ID("dl-sweep-csv")))
	tb.do(chromedp.Click(chromedp.ID("dl-sweep-json")))
	cli := t.TempDir()
	cmd := exec.Command("go", "run", "./cmd/kvsim", "sweep", "--output-dir", filepath.Join(cli, "out"))
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kvsim sweep: %v\n%s", err, out)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, name := range []string{"sweep.csv", "sweep.json"} {
		var got []byte
		for {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err == nil && len(b) > 0 {
				got = b
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s was not downloaded", name)
			}
			time.Sleep(50 * time.Millisecond)
		}
		want, err := os.ReadFile(filepath.Join(cli, "out", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("downloaded %s (%d bytes) differs from kvsim sweep's (%d bytes)", name, len(got), len(want))
		}
	}
}

// TestSweepCancel starts a larger grid and cancels it: the workers stop,
// the points evaluated so far stay, and a new sweep can start.
func TestSweepCancel(t *testing.T) {
	tb := newTab(t)
	tb.open("#view=sweep")
	tb.wait("the sweep view", `!!document.getElementById('sweep-run') && !document.getElementById('sweep-run').disabled`, 10*time.Second)
	grid := "host_offload.num_host_blocks=64,128,192,256,384,512,1024,2048\nconnector=offloading_v0_24,offloading_v0_32,simple_cpu_v0_32\ntraffic.load.concurrency=1,2,3,4,5,6,7,8"
	tb.do(chromedp.SetValue(chromedp.ID("sweep-vary"), grid))
	tb.do(chromedp.Evaluate[chromedp.Void](`document.getElementById('sweep-vary').dispatchEvent(new Event('change', {bubbles: true}))`))
	tb.do(chromedp.Click(chromedp.ID("sweep-run")))
	tb.wait("some points", `+(document.getElementById('sweep')?.dataset.done ?? 0) >= 4`, 60*time.Second)
	tb.shot("22-sweep-running")
	tb.do(chromedp.Click(chromedp.ID("sweep-cancel")))
	tb.wait("the cancelled sweep", `document.getElementById('sweep-status').textContent.includes('cancelled')`, 10*time.Second)
	done := eval[int](tb, `+document.getElementById('sweep').dataset.done`)
	if done >= 192 || done < 4 {
		t.Errorf("%d of 192 points done at the cancel", done)
	}
	time.Sleep(300 * time.Millisecond)
	if after := eval[int](tb, `+document.getElementById('sweep').dataset.done`); after != done {
		t.Errorf("points still arrive after the cancel (%d → %d)", done, after)
	}
	if eval[bool](tb, `document.getElementById('sweep-run').disabled`) {
		t.Error("Run sweep disabled after the cancel")
	}
	// a bad --vary: the core's message
	tb.do(chromedp.SetValue(chromedp.ID("sweep-vary"), "num_host_blockz=1,2"))
	tb.do(chromedp.Evaluate[chromedp.Void](`document.getElementById('sweep-vary').dispatchEvent(new Event('change', {bubbles: true}))`))
	tb.do(chromedp.Click(chromedp.ID("sweep-run")))
	tb.wait("the grid error", `!!document.getElementById('sweep-error')`, 30*time.Second)
	if msg := tb.text("#sweep-error"); !strings.HasPrefix(msg, "--vary num_host_blockz=1,2: unknown path") {
		t.Errorf("error %q", msg)
	}
}

// TestSweepNarrow: on a phone-sized screen the sweep's panels stack and
// the page does not scroll sideways.
func TestSweepNarrow(t *testing.T) {
	tb := newTab(t)
	tb.do(chromedp.EmulateViewport(420, 900))
	tb.open("#view=sweep")
	tb.wait("the sweep view", `!!document.getElementById('sweep-run') && !document.getElementById('sweep-run').disabled`, 10*time.Second)
	tb.do(chromedp.Click(chromedp.ID("sweep-run")))
	tb.wait("the finished sweep", `!!document.querySelector('#sweep[data-finished]')`, 120*time.Second)
	if w := eval[int](tb, `document.documentElement.scrollWidth`); w > 440 {
		t.Errorf("the sweep view is %d px wide on a 420 px screen", w)
	}
	if h := eval[int](tb, `document.getElementById('sweep-plot').height`); h < 600 {
		t.Errorf("the plot is %d px high: the panels do not stack", h)
	}
	tb.shot("23-sweep-narrow")
}

// TestSweepPointOpens: Web Workers 0, 100 and -1 are refused with a
// message (not reset); a small grid survives a reload of its link; a
// finished point opens in the run view with its config in the panel and
// gives the sweep's numbers there.
func TestSweepPointOpens(t *testing.T) {
	tb := newTab(t)
	tb.open("#view=sweep")
	for _, bad := range []string{"0", "100", "-1"} {
		tb.typeInto("sweep-workers", bad)
		tb.wait("the workers message", `!!document.getElementById('err-sweep-workers')`, 5*time.Second)
		if v := eval[string](tb, `document.getElementById('sweep-workers').value`); v != bad {
			t.Errorf("Web Workers %s: the field shows %q", bad, v)
		}
		if !eval[bool](tb, `document.getElementById('sweep-run').disabled`) {
			t.Errorf("Web Workers %s: Run sweep enabled", bad)
		}
	}
	tb.typeInto("sweep-workers", "2")
	tb.wait("no workers message", `!document.getElementById('err-sweep-workers')`, 5*time.Second)
	grid := "host_offload.num_host_blocks=192,2048\nconnector=simple_cpu_v0_32"
	tb.do(chromedp.SetValue(chromedp.ID("sweep-vary"), grid))
	tb.do(chromedp.Evaluate[chromedp.Void](`document.getElementById('sweep-vary').dispatchEvent(new Event('change', {bubbles: true}))`))
	link := eval[string](tb, `location.href`)
	// A fresh load: navigating between fragments of one URL keeps the
	// document, which would not test that the link alone restores the grid.
	tb.do(chromedp.Navigate("about:blank"))
	tb.open(link[len(siteURL):])
	tb.wait("the sweep view", `!!document.getElementById('sweep-vary')`, 30*time.Second)
	if v := eval[string](tb, `document.getElementById('sweep-vary').value`); v != grid {
		t.Fatalf("the sweep link restores the grid %q", v)
	}
	tb.do(chromedp.Click(chromedp.ID("sweep-run")))
	tb.wait("the finished sweep", `!!document.querySelector('#sweep[data-finished]')`, 120*time.Second)
	want := tb.sweepRow("2048|simple_cpu_v0_32")
	if len(want) < 4 {
		t.Fatalf("row %q", want)
	}
	runs := tb.runs()
	tb.do(chromedp.Click(chromedp.CSS(`#sweep-points tr[data-key="2048|simple_cpu_v0_32"] button.open-point`)))
	tb.wait("the point's run", fmt.Sprintf(`+(document.querySelector('#status')?.dataset.runs ?? -1) > %d`, runs), 60*time.Second)
	yaml := eval[string](tb, `document.getElementById('yaml').value`)
	if !strings.Contains(yaml, "num_host_blocks: 2048") || !strings.Contains(yaml, "simple_cpu_v0_32") {
		t.Errorf("the point's YAML:\n%s", yaml)
	}
	if got := tb.cardValue("card-restored"); got != want[2] {
		t.Errorf("the point in the run view restores %q; the sweep said %q", got, want[2])
	}
	tb.shot("28-sweep-point-opened")
}
