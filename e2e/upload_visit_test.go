package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kvsim/kvsim/traces"
)

// TestUploadOneVisit (issue 21): with a config whose load is
// trace_timestamps (case B's), the upload section is opened once, the
// format and the block size are both set in it (it stays open after the
// format changes), and uploading a small mooncake trace keeps the load
// mode: the YAML reads the upload under trace_timestamps, not
// concurrency: 4.
func TestUploadOneVisit(t *testing.T) {
	tb := newTab(t)
	tb.open("")
	tb.singleMode()
	example, err := traces.Read("g2-restore.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tb.setYAML(string(example))
	tb.wait("case B's config", `document.getElementById('yaml').value.includes('trace_timestamps')`, 5*time.Second)
	tb.do(chromedp.Click(chromedp.CSS("details.upload summary")))
	tb.wait("the upload section", `document.getElementById('upload-panel').open`, 5*time.Second)
	tb.do(chromedp.Evaluate[chromedp.Void](`(() => { const s = document.getElementById('up-format');
		s.value = 'mooncake'; s.dispatchEvent(new Event('change', {bubbles: true})); })()`))
	time.Sleep(time.Second) // let the change's render land
	if !eval[bool](tb, `document.getElementById('upload-panel').open && document.getElementById('up-block').offsetParent !== null`) {
		t.Fatal("the upload section closed when the format changed")
	}
	tb.typeInto("up-block", "4")
	time.Sleep(500 * time.Millisecond)
	if !eval[bool](tb, `document.getElementById('upload-panel').open`) {
		t.Fatal("the upload section closed when the block size changed")
	}
	tb.do(chromedp.SetUploadFiles(chromedp.ID("upload"), []string{filepath.Join(repoRoot, "traces", "g2-restore.jsonl")}))
	tb.wait("the upload check", `document.getElementById('upload-note')?.textContent.includes('g2-restore.jsonl:')`, 30*time.Second)
	tb.wait("the upload in the YAML", `document.getElementById('yaml').value.includes('format: mooncake,')`, 5*time.Second)
	yaml := eval[string](tb, `document.getElementById('yaml').value`)
	if !strings.Contains(yaml, "load: {type: trace_timestamps}") || strings.Contains(yaml, "concurrency") ||
		!strings.Contains(yaml, "block_size: 4}") {
		t.Errorf("after the upload the YAML does not keep trace_timestamps with block size 4:\n%s", yaml)
	}
	if msg := eval[[]string](tb, `[...document.querySelectorAll('.err')].map(e => e.textContent)`); len(msg) != 0 {
		t.Errorf("errors after the upload: %q", msg)
	}
}
