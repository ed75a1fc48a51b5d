package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestPDRestore turns P/D on for the §B (docs/model/cases.md) example: the run restores the
// same 8 tokens from G2, the request table names each request's prefill
// and decode worker, and the pass view offers the prefill and the decode
// rank.
func TestPDRestore(t *testing.T) {
	tb := newTab(t)
	tb.open("#ex=B")
	tb.do(chromedp.Click(chromedp.ID("f-pd")))
	tb.wait("the P/D config", `document.getElementById('yaml').value.includes('mode: disaggregated')`, 5*time.Second)
	if errs := eval[[]string](tb, `[...document.querySelectorAll('.err')].map(e => e.textContent)`); len(errs) != 0 {
		t.Fatalf("errors after P/D on: %q", errs)
	}
	for _, id := range []string{"f-decode_replicas", "f-kv_bw"} {
		if !eval[bool](tb, `!!document.getElementById('`+id+`')`) {
			t.Errorf("no #%s", id)
		}
	}
	tb.clickRun()
	if got := tb.cardValue("card-restored"); got != "8" {
		t.Errorf("P/D §B restored %q, want 8", got)
	}
	head := eval[[]string](tb, `[...document.querySelectorAll('#requests table.reqs th')].map(c => c.textContent.trim())`)
	if len(head) == 0 || !strings.HasPrefix(head[len(head)-1], "prefill → decode") {
		t.Errorf("table header %q", head)
	}
	rows := eval[[]string](tb, `[...document.querySelectorAll('#requests table.reqs tbody tr')].map(r => [...r.cells].map(c => c.textContent.trim()).join('|'))`)
	found := false
	for _, r := range rows {
		c := strings.Split(r, "|")
		if c[0] == "restore" {
			found = true
			if c[5] != "8" || c[len(c)-1] != "P0 → D0" {
				t.Errorf("restore row %q: want restored 8 and P0 → D0", r)
			}
		}
	}
	if !found {
		t.Errorf("no restore row in %q", rows)
	}
	tb.pvReady(0)
	ranks := eval[[]string](tb, `[...document.querySelectorAll('#pv-rank option')].map(o => o.textContent)`)
	if len(ranks) != 2 || !strings.HasPrefix(ranks[0], "prefill 0") || !strings.HasPrefix(ranks[1], "decode 0") {
		t.Errorf("rank picker %q", ranks)
	}
	tb.shot("17-pd-B-restore")
}

// TestPDExample opens the guided P/D example (traces/g2-restore-pd.yaml):
// it opens at the restore pass of the prefill rank; the decode rank shows
// the transferred prompts.
func TestPDExample(t *testing.T) {
	tb := newTab(t)
	tb.open("#ex=BPD")
	if got := tb.cardValue("card-restored"); got != "8" {
		t.Errorf("restored %q, want 8", got)
	}
	if !strings.Contains(tb.text("#example-box"), "prefill and decode") {
		t.Error("no example text")
	}
	if !eval[bool](tb, `document.getElementById('f-pd').checked`) {
		t.Error("the P/D toggle is off for a P/D config")
	}
	tb.wait("the restore pass", `!!document.querySelector('#passview[data-ready][data-indexed]') && [...document.querySelectorAll('.pv-events li')].some(l => l.textContent.includes('restored to G1'))`, 30*time.Second)
	tb.shot("18-pd-example-prefill-restore")
	tb.do(chromedp.SetValue(chromedp.ID("pv-rank"), "1"))
	tb.do(chromedp.Evaluate[chromedp.Void](`document.getElementById('pv-rank').dispatchEvent(new Event('change', {bubbles: true}))`))
	tb.do(chromedp.Evaluate[chromedp.Void](`document.getElementById('pv-first').click()`))
	tb.pvReady(1)
	if ev := eval[[]string](tb, `[...document.querySelectorAll('.pv-events li')].map(l => l.textContent)`); len(ev) == 0 || !strings.Contains(strings.Join(ev, " "), "admitted") {
		t.Errorf("decode rank, pass 1 events %q", ev)
	}
	tb.shot("19-pd-example-decode-rank")
}

// TestPDRejectsDeltaTrace: §A's mooncake-delta trace only runs
// aggregated; turning P/D on shows the validator's message next to the
// toggle (and the trace picker) and disables Run; turning it off again
// brings Run back.
func TestPDRejectsDeltaTrace(t *testing.T) {
	tb := newTab(t)
	tb.open("")
	tb.singleMode()
	tb.do(chromedp.Click(chromedp.ID("conn-offloading_v0_24")))
	tb.do(chromedp.Click(chromedp.ID("f-pd")))
	tb.wait("the P/D error", `!!document.getElementById('err-pd')`, 5*time.Second)
	for _, id := range []string{"#err-pd", "#err-trace"} {
		if msg := tb.text(id); !strings.Contains(msg, "traffic.source.format: mooncake-delta requires engine.mode aggregated") {
			t.Errorf("%s: %q", id, msg)
		}
	}
	if !eval[bool](tb, `document.getElementById('run').disabled`) {
		t.Error("Run enabled with P/D and a mooncake-delta trace")
	}
	tb.shot("20-pd-delta-rejected")
	tb.do(chromedp.Click(chromedp.ID("f-pd")))
	tb.wait("no error", `!document.getElementById('err-pd') && !document.getElementById('run').disabled`, 5*time.Second)
}
