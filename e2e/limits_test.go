package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/core/replay/replaytest"
)

// setYAML replaces the config text the way typing does (an input event).
func (tb *tab) setYAML(text string) {
	tb.t.Helper()
	b, _ := json.Marshal(text)
	tb.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const y = document.getElementById('yaml');
		y.value = %s; y.dispatchEvent(new Event('input', {bubbles: true})); })()`, b)))
}

// TestOversizedJobsAreRefused: the jobs the CLI and the worker API refuse
// (replaytest.Oversized) are refused by the page with the same message,
// core/replay's, for a single run and for every row of a compare; the page
// then runs a normal config (its Web Worker survived).
func TestOversizedJobsAreRefused(t *testing.T) {
	tb := newTab(t)
	tb.open("")
	base := eval[string](tb, `document.getElementById('yaml').value`)
	check := func(what, yaml string, rows int) {
		t.Helper()
		want := replay.Check(replay.Job{Name: "config.yaml", Config: []byte(yaml)})
		if want == nil {
			t.Fatalf("%s: replay.Check accepts the page's config", what)
		}
		tb.clickRun()
		var got []string
		if rows == 1 {
			got = []string{tb.text("#variant-error")}
		} else {
			got = eval[[]string](tb, `[...document.querySelectorAll('td.err')].map(e => e.textContent.trim())`)
		}
		if len(got) != rows {
			t.Fatalf("%s: %d error rows %q; want %d", what, len(got), got, rows)
		}
		for _, g := range got {
			if g != want.Error() {
				t.Errorf("%s: the page shows %q; want %q", what, g, want.Error())
			}
		}
	}

	// G1 = 10,000,000 blocks, typed into its field, in the opening compare
	// of three connectors and in a single run.
	sets := replaytest.Oversized["G1 of 10,000,000 blocks"]
	if len(sets) != 1 || !strings.HasSuffix(sets[0], "=10000000") {
		t.Fatalf("replaytest.Oversized changed: %q", sets)
	}
	tb.typeInto("f-g1", "10000000")
	check("G1 of 10,000,000 blocks, compare", eval[string](tb, `document.getElementById('yaml').value`), 3)
	tb.shot("24-oversized-compare")
	tb.singleMode()
	check("G1 of 10,000,000 blocks", eval[string](tb, `document.getElementById('yaml').value`), 1)

	// G2 = 99,999,999,999 blocks in a G2-size compare: the row says which
	// limit (once a "makeslice: len out of range" banner)
	tb.do(chromedp.Click(chromedp.ID("compare-toggle")))
	tb.wait("compare set-up", `!!document.querySelector('#compare-setup')`, 5*time.Second)
	tb.do(chromedp.SetValue(chromedp.ID("cmp-axis"), "g2"))
	tb.do(chromedp.Evaluate[chromedp.Void](`document.getElementById('cmp-axis').dispatchEvent(new Event('change', {bubbles: true}))`))
	tb.typeInto("f-g1", "128")
	tb.typeInto("cmp-g2", "192, 99999999999")
	tb.clickRun()
	rows := eval[[]string](tb, `[...document.querySelectorAll('tr.cmp-row')].map(r => r.textContent.trim())`)
	if len(rows) != 2 || !strings.Contains(rows[1], "99,999,999,999 host blocks exceed the limit of 16,777,216 per G2 tier") ||
		strings.Contains(strings.Join(rows, " "), "makeslice") {
		t.Errorf("G2 of 99,999,999,999 in a compare: rows %q", rows)
	}
	tb.singleMode()

	// 10^9 synthetic sessions, written into the YAML as the other front
	// ends' tests set them.
	synth := strings.Replace(base, "traffic:\n", "traffic:\n  stop: {sessions: 1000000000}\n", 1)
	lines := strings.Split(synth, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "  source:") {
			lines[i] = "  source: {type: synthetic-session, new_input_tokens_per_turn: 500, output_tokens_per_turn: 50, session: {turns: 8}}"
		}
	}
	synth = strings.Join(lines, "\n")
	tb.setYAML(synth)
	check("10^9 synthetic sessions", eval[string](tb, `document.getElementById('yaml').value`), 1)

	// Back to the opening config: the page runs it.
	tb.setYAML(base)
	tb.clickRun()
	if got := tb.text("#variant-error"); got != "" {
		t.Errorf("after the oversized jobs the page shows %q", got)
	}
	if got := tb.cardValue("card-recomputed"); got == "" || got == "–" {
		t.Errorf("recomputed %q after the oversized jobs: the Web Worker did not survive them", got)
	}
}

// TestInvalidFieldBlocksRun: with G1 = "abc" the field is marked, Run is
// disabled (it would run the YAML's last good G1), the shown results are
// marked stale and stay so; a valid value enables Run again.
func TestInvalidFieldBlocksRun(t *testing.T) {
	tb := newTab(t)
	tb.open("")
	tb.singleMode()
	tb.clickRun()
	tb.typeInto("f-g1", "abc")
	tb.wait("the G1 error", `!!document.getElementById('err-g1')`, 5*time.Second)
	if !eval[bool](tb, `document.getElementById('run').disabled`) {
		t.Error(`Run is enabled with G1 = "abc"`)
	}
	if eval[string](tb, `document.getElementById('f-g1').value`) != "abc" {
		t.Error("the field lost what was typed")
	}
	for range 2 { // a render in between keeps the notice
		if !strings.Contains(tb.text("#stale"), "error") {
			t.Errorf("stale notice %q", tb.text("#stale"))
		}
		tb.do(chromedp.Click(chromedp.ID("view-run")))
	}
	tb.typeInto("f-g1", "256")
	tb.wait("Run enabled", `!document.getElementById('run').disabled`, 5*time.Second)
	if !strings.Contains(eval[string](tb, `document.getElementById('yaml').value`), "blocks: 256") {
		t.Error("the YAML does not hold G1 = 256")
	}
}

// TestLongInputs: a config of 27 KB (over vugu's 16 KB render
// instruction) runs, and 20 KB typed into a number field is refused with a
// clipped message; the page's Go program survives both (it once ended:
// "requested instruction does not fit in the buffer").
func TestLongInputs(t *testing.T) {
	tb := newTab(t)
	tb.open("")
	tb.singleMode()
	base := eval[string](tb, `document.getElementById('yaml').value`)
	tb.setYAML(base + strings.Repeat("# a long comment line to make the config big\n", 600))
	tb.clickRun()
	if got := tb.cardValue("card-recomputed"); got == "" || got == "–" {
		t.Errorf("a 27 KB config: recomputed %q", got)
	}
	long := strings.Repeat("9x", 10000)
	tb.do(chromedp.Evaluate[chromedp.Void](`(() => { const f = document.getElementById('f-g1'); f.value = '` + long + `';
		f.dispatchEvent(new Event('input', {bubbles: true})); f.dispatchEvent(new Event('change', {bubbles: true})); })()`))
	tb.wait("the G1 error", `!!document.getElementById('err-g1')`, 5*time.Second)
	if n := len(tb.text("#err-g1")); n > 5000 {
		t.Errorf("the G1 message is %d bytes", n)
	}
	tb.setYAML(base)
	tb.clickRun()
	if got := tb.cardValue("card-recomputed"); got == "" || got == "–" {
		t.Errorf("after the long inputs: recomputed %q", got)
	}
}
