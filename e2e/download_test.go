package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/kvsim/kvsim/core/replay"
)

// TestDownloadsMatchNative downloads prediction.json, requests.jsonl and
// passes.jsonl from the page (SimpleCPU at 2,048 blocks) and compares them
// byte for byte with a native replay.Run of the config the page shows.
func TestDownloadsMatchNative(t *testing.T) {
	tb := newTab(t)
	tb.open("")
	tb.singleMode()
	tb.do(chromedp.Click(chromedp.ID("conn-simple_cpu_v0_32")))
	tb.typeInto("f-g2", "2048")
	tb.clickRun()
	yaml := eval[string](tb, `document.getElementById('yaml').value`)

	dir := t.TempDir()
	if _, err := chromedp.CallBrowser(tb.ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir}); err != nil {
		t.Fatal(err)
	}
	tb.pvReady(0)
	tb.do(chromedp.Click(chromedp.ID("dl-prediction")))
	tb.do(chromedp.Click(chromedp.ID("dl-requests")))
	tb.wait("requests.jsonl", `!document.getElementById('status').textContent.startsWith('preparing')`, 20*time.Second)
	tb.do(chromedp.Click(chromedp.ID("dl-passes")))
	got := map[string][]byte{}
	deadline := time.Now().Add(30 * time.Second)
	for _, name := range []string{"prediction.json", "requests.jsonl", "passes.jsonl"} {
		for {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err == nil && len(b) > 0 {
				got[name] = b
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s was not downloaded", name)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	res, err := replay.Run(replay.Job{Name: "config.yaml", Config: []byte(yaml), Traces: replay.Traces{Builtin: true},
		Capture: replay.Capture{Requests: true, Passes: true}})
	if err != nil {
		t.Fatal(err)
	}
	var passes bytes.Buffer
	if err := res.Record.WriteJSONL(&passes); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got["passes.jsonl"], passes.Bytes()) {
		t.Errorf("downloaded passes.jsonl (%d bytes) differs from the native record's (%d bytes)", len(got["passes.jsonl"]), passes.Len())
	}
	if !bytes.Equal(got["prediction.json"], res.Prediction) {
		t.Error("downloaded prediction.json differs from the native run")
	}
	if !bytes.Equal(got["requests.jsonl"], res.Requests) {
		t.Error("downloaded requests.jsonl differs from the native run")
	}
}
