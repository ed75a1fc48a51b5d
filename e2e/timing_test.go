package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// selectOption chooses value in the select id and fires change, as a user
// picking from the list does.
func (tb *tab) selectOption(id, value string) {
	tb.t.Helper()
	tb.do(chromedp.SetValue(chromedp.ID(id), value))
	tb.do(chromedp.Evaluate[chromedp.Void](`document.getElementById(` + "'" + id + "'" + `).dispatchEvent(new Event('change', {bubbles: true}))`))
}

// TestTimingControls (issue 20): the timing type, model and GPU are
// picked on the page, go through the YAML like every control, and a
// modelled timing shows no fixed pass times; the run's restores are §A's (docs/model/cases.md)
// G2 at 192 blocks under roofline timing.
func TestTimingControls(t *testing.T) {
	tb := newTab(t)
	tb.open("")
	tb.singleMode()
	tb.selectOption("f-timing", "roofline")
	yaml := eval[string](tb, `document.getElementById('yaml').value`)
	if !strings.Contains(yaml, "timing: {type: roofline}") || strings.Contains(yaml, "prefill_ms") {
		t.Errorf("YAML after roofline:\n%s", yaml)
	}
	if eval[bool](tb, `!!document.getElementById('f-prefill_ms')`) {
		t.Error("the fixed prefill time is still offered under roofline timing")
	}
	if got := eval[string](tb, `document.getElementById('f-model').value`); got != "Llama-3.1-8B" {
		t.Errorf("model %q; want Llama-3.1-8B (the catalog's first, for the example's tiny)", got)
	}
	tb.selectOption("f-hardware", "B200")
	if !strings.Contains(eval[string](tb, `document.getElementById('yaml').value`), "hardware: B200") {
		t.Error("the YAML does not show hardware: B200")
	}
	tb.clickRun()
	if got := tb.cardValue("card-restored"); got == "" || got == "0" {
		t.Errorf("restored %q under roofline", got)
	}
	tb.shot("20-roofline-timing")
	tb.selectOption("f-timing", "fixed")
	if !eval[bool](tb, `!!document.getElementById('f-prefill_ms')`) {
		t.Error("no fixed prefill time after going back to fixed timing")
	}
}
