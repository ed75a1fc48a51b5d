package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestIndexTime measures, three times, how long the worker takes to index
// the timeline of the default page (§A (docs/model/cases.md) at 192 blocks, three connectors):
// its own step time (data-index-ms) and the wall time from Run to an
// indexed timeline as the page sees it. docs/ui.md quotes the figures.
func TestIndexTime(t *testing.T) {
	tb := newTab(t)
	tb.open("")
	tb.pvReady(0)
	var worker, wall []string
	for i := 0; i < 3; i++ {
		tb.wait("Run enabled", `!document.querySelector('#run').disabled`, 30*time.Second)
		ms := eval[float64](tb, `new Promise((resolve, reject) => {
			const before = +(document.querySelector('#status')?.dataset.runs ?? 0);
			const t0 = performance.now();
			document.querySelector('#run').click();
			const check = () => {
				const s = document.querySelector('#status');
				if (s && +s.dataset.runs > before && document.querySelector('#passview[data-indexed]')) resolve(performance.now() - t0);
				else setTimeout(check, 2);
			};
			check();
			setTimeout(() => reject(new Error('not indexed within 60 s')), 60000);
		})`)
		w, _ := strconv.ParseFloat(eval[string](tb, `document.getElementById('passview').dataset.indexMs ?? ''`), 64)
		worker = append(worker, fmt.Sprintf("%.0f", w))
		wall = append(wall, fmt.Sprintf("%.0f", ms))
	}
	t.Logf("§A × 3 connectors: index steps %s ms in the worker; Run to indexed timeline %s ms", strings.Join(worker, ", "), strings.Join(wall, ", "))
	writeMeasure(t, "index_A3", fmt.Sprintf("worker steps %s ms; run to indexed %s ms", strings.Join(worker, ", "), strings.Join(wall, ", ")))
}
