package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestFormFollowsYAML: the controls stay in step with the YAML in every
// mode, the example box retires once the config is no longer the
// example's, and a compare that cannot run is disabled with its reason.
func TestFormFollowsYAML(t *testing.T) {
	tb := newTab(t)
	tb.open("")
	if tb.text("#example-box") == "" {
		t.Fatal("no example box on the default page")
	}
	// the example box retires on an edit
	tb.typeInto("f-g1", "256")
	tb.wait("the example box gone", `!document.getElementById('example-box')`, 5*time.Second)
	if v := eval[string](tb, `document.getElementById('example').value`); v != "" {
		t.Errorf("the example picker still shows %q", v)
	}
	// P/D on with the connector compare open: not runnable, with the reason
	tb.do(chromedp.Click(chromedp.ID("f-pd")))
	tb.wait("the compare's reason", `!!document.getElementById('err-compare')`, 5*time.Second)
	if msg := tb.text("#err-compare"); !strings.Contains(msg, "not available with P/D") {
		t.Errorf("compare message %q", msg)
	}
	if !eval[bool](tb, `document.getElementById('run').disabled`) {
		t.Error("Run enabled for a connector compare with P/D")
	}
	// the radios follow each click, even while the config does not parse
	for _, k := range []string{"offloading_v0_32", "offloading_v0_24"} {
		tb.do(chromedp.Click(chromedp.ID("conn-" + k)))
		tb.wait(k+" checked", `document.getElementById('conn-`+k+`').checked`, 5*time.Second)
		if !strings.Contains(eval[string](tb, `document.getElementById('yaml').value`), "connector: "+k) {
			t.Errorf("clicked %s: the YAML does not say so", k)
		}
	}
	tb.shot("27-pd-connector-compare")
}
