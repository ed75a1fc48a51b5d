package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/ui/state"
)

// nativeRequest is what the request table's prefill-time columns show of
// one line of requests.jsonl.
type nativeRequest struct {
	ID        string   `json:"request_id"`
	Passes    *int     `json:"prefill_passes"`
	ComputeMs *float64 `json:"prefill_compute_bound_ms"`
	MemoryMs  *float64 `json:"prefill_memory_bound_ms"`
}

// nativeRequests runs yaml natively (built-in traces) with requests.jsonl
// captured and returns its lines by request id.
func nativeRequests(t *testing.T, yaml string) map[string]nativeRequest {
	t.Helper()
	out, err := replay.Run(replay.Job{Name: "config.yaml", Config: []byte(yaml), Traces: replay.Traces{Builtin: true},
		Capture: replay.Capture{Requests: true}})
	if err != nil {
		t.Fatal(err)
	}
	reqs := map[string]nativeRequest{}
	sc := bufio.NewScanner(bytes.NewReader(out.Requests))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r nativeRequest
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		reqs[r.ID] = r
	}
	return reqs
}

// tableRows is the request table's visible rows, cells by column header.
func (tb *tab) tableRows() (head []string, rows [][]string) {
	head = eval[[]string](tb, `[...document.querySelectorAll('#requests table.reqs th')].map(c => c.textContent.replace(/ [▲▼]$/, '').trim())`)
	for _, r := range eval[[]string](tb, `[...document.querySelectorAll('#requests table.reqs tbody tr')].map(r => [...r.cells].map(c => c.textContent.trim()).join('|'))`) {
		rows = append(rows, strings.Split(r, "|"))
	}
	return head, rows
}

// TestRequestTablePrefillTime (issue 20: "the per-request report shows
// each pass's duration and what bounds it"): under fixed timing the
// request table has no prefill-time columns; after switching the §A
// example to roofline timing (Llama-3.1-8B on H200, the page's defaults)
// it shows "prefill passes", "compute-bound ms" and "memory-bound ms",
// and every visible row's cells are those of a native core/replay run of
// the YAML the page shows (requests.jsonl's prefill_passes,
// prefill_compute_bound_ms and prefill_memory_bound_ms), in request order
// and again sorted by compute-bound ms.
func TestRequestTablePrefillTime(t *testing.T) {
	tb := newTab(t)
	tb.open("")
	tb.singleMode()
	tb.clickRun()
	if head, _ := tb.tableRows(); strings.Contains(strings.Join(head, "|"), "prefill passes") {
		t.Errorf("fixed timing shows prefill-time columns: %q", head)
	}
	tb.selectOption("f-timing", "roofline")
	yaml := eval[string](tb, `document.getElementById('yaml').value`)
	if !strings.Contains(yaml, "timing: {type: roofline}") {
		t.Fatalf("YAML after roofline:\n%s", yaml)
	}
	tb.clickRun()
	native := nativeRequests(t, yaml)
	check := func(what string) (compute, memory int) {
		head, rows := tb.tableRows()
		col := map[string]int{}
		for i, h := range head {
			col[h] = i
		}
		for _, h := range []string{"request", "prefill passes", "compute-bound ms", "memory-bound ms"} {
			if _, ok := col[h]; !ok {
				t.Fatalf("%s: no %q column in %q", what, h, head)
			}
		}
		if len(rows) < 8 {
			t.Fatalf("%s: %d rows", what, len(rows))
		}
		for _, c := range rows {
			n, ok := native[c[col["request"]]]
			if !ok || n.Passes == nil || n.ComputeMs == nil || n.MemoryMs == nil {
				t.Fatalf("%s: row %q has no native prefill time (%+v)", what, c, n)
			}
			want := []string{state.Thousands(int64(*n.Passes)), state.Ms(*n.ComputeMs), state.Ms(*n.MemoryMs)}
			got := []string{c[col["prefill passes"]], c[col["compute-bound ms"]], c[col["memory-bound ms"]]}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("%s: %s: page %q, native %q", what, n.ID, got, want)
			}
			if *n.ComputeMs > 0 {
				compute++
			}
			if *n.MemoryMs > 0 {
				memory++
			}
		}
		t.Logf("%s: %d rows, first %q; %d with compute-bound, %d with memory-bound time", what, len(rows), rows[0], compute, memory)
		return compute, memory
	}
	if c, _ := check("request order"); c == 0 {
		t.Error("no visible row has compute-bound prefill time")
	}
	tb.do(chromedp.Click(chromedp.CSS("th.sort.compute")))
	tb.do(chromedp.Click(chromedp.CSS("th.sort.compute")))
	tb.settle()
	if c, _ := check("by compute-bound ms, descending"); c == 0 {
		t.Error("sorted by compute-bound ms, no visible row has compute-bound prefill time")
	}
	tb.shot("20-request-prefill-time")
}
