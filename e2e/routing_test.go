package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestRoutingExample opens the guided example R4 (four workers, round
// robin against the KV router): two result rows with their restored and
// recomputed tokens, the request table's worker column; then the routing
// picker writes engine.routing into the YAML.
func TestRoutingExample(t *testing.T) {
	tb := newTab(t)
	tb.open("#ex=R4")
	tb.wait("two results", `document.querySelectorAll('tr.cmp-row').length === 2`, 60*time.Second)
	tb.idle()
	rows := eval[[]string](tb, `[...document.querySelectorAll('tr.cmp-row')].map(r => [...r.cells].map(c => c.textContent.trim()).join('|'))`)
	want := []string{"round robin|10,496|11,776", "KV router|3,936|7,010"}
	for i, w := range want {
		if i >= len(rows) || !strings.HasPrefix(rows[i], w) {
			t.Errorf("rows %q; want row %d to start %q", rows, i, w)
		}
	}
	head := eval[[]string](tb, `[...document.querySelectorAll('#requests table.reqs th')].map(c => c.textContent.trim())`)
	if len(head) == 0 || !strings.HasPrefix(head[len(head)-1], "worker") {
		t.Errorf("table header %q", head)
	}
	cells := eval[[]string](tb, `[...document.querySelectorAll('#requests table.reqs tbody tr')].map(r => r.cells[r.cells.length-1].textContent.trim())`)
	for _, c := range cells {
		if len(c) != 2 || c[0] != 'W' || c[1] < '0' || c[1] > '3' {
			t.Errorf("worker cells %q", cells)
			break
		}
	}
	// Where each session went: 8 sessions × 6 turns, each cell a worker
	// with its tint; round robin moves session s0 between workers.
	place := eval[[]string](tb, `[...document.querySelectorAll('#placement tbody tr')].map(r => [...r.cells].map(c => c.textContent.trim()).join('|'))`)
	if len(place) != 8 || !strings.HasPrefix(place[0], "s0|W") || strings.Count(place[0], "|") != 6 {
		t.Errorf("placement rows %q", place)
	}
	if !eval[bool](tb, `document.querySelector('#placement tbody td.pd').style.background !== ''`) {
		t.Error("placement cells have no worker tint")
	}
	tb.shot("21-routing-example-R4")
	tb.singleMode()
	tb.do(chromedp.Click(chromedp.ID("routing-least_loaded")))
	tb.wait("engine.routing in the YAML", `document.getElementById('yaml').value.includes('routing: least_loaded')`, 5*time.Second)
}
