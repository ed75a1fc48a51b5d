package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/ui/state"
	"github.com/kvsim/kvsim/wasm/proto"
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
// request table has no prefill-time columns; after switching the §A (docs/model/cases.md)
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

// wekaCompareYAML is wekaProfileYAML (aisimulate's weka fixture on one
// aggregated worker with an 8-block G2) with one lane, snapshot seed 23,
// warmup and a 0.7 s profile without grace, as TestAgenticProfileReport
// sets them through the controls, and G2 links of 0.01 GB/s each way (a
// 1 MB block takes 100 ms), so that the barrier (which waits for the
// warmup's D2H) and the profile's requests differ between the rows.
var wekaCompareYAML = strings.NewReplacer("load: {type: trace_timestamps}",
	"load: {type: trace_timestamps, agentic_lanes: 1, agentic_snapshot: {seed: 23}, agentic_warmup: true,\n    agentic_profile: {duration_seconds: 0.7, response_grace_seconds: 0}}",
	"d2h_bandwidth_gbps: 1, h2d_bandwidth_gbps: 1", "d2h_bandwidth_gbps: 0.01, h2d_bandwidth_gbps: 0.01").Replace(wekaProfileYAML)

// TestCompareAgenticRows (issue 22): comparing runs of an agentic load,
// each compare row carries the agentic cards' figures (lanes, warmup
// done, barrier ms, successful / issued, plays started / completed,
// canceled / never issued, cutoff ms), and each row's cells are
// state.AgenticCompareRow of a native core/replay run of the same variant
// (the YAML the page shows, with the variant's --set overrides from
// state.Compare.Variants): a G2-size compare (8 and 2 blocks, none) and a
// connector compare (the three profiles), on the uploaded weka fixture.
// The G2-size rows differ (when this was written: 8 blocks barrier 202 ms,
// 4 / 4 successful, plays 2 / 1, never issued 3; 2 blocks 5 / 6, one
// canceled at the cutoff; no G2 barrier 22 ms, 9 / 9, plays 3 / 2), so a
// page showing one run's figures on every row fails; the three connectors
// give the same figures on this fixture. A single run shows no such
// columns.
func TestCompareAgenticRows(t *testing.T) {
	fixture := filepath.Join(repoRoot, "core", "trace", "testdata", "weka-g2-restore.jsonl")
	data, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	tb := newTab(t)
	tb.open("")
	tb.do(chromedp.Click(chromedp.CSS("details.upload summary")))
	for _, js := range []string{`(() => { const s = document.getElementById('up-format');
		s.value = 'weka'; s.dispatchEvent(new Event('change', {bubbles: true})); })()`,
		`(() => { const s = document.getElementById('up-block');
		s.value = '0'; s.dispatchEvent(new Event('change', {bubbles: true})); })()`} {
		tb.do(chromedp.Evaluate[chromedp.Void](js))
	}
	tb.do(chromedp.SetUploadFiles(chromedp.ID("upload"), []string{fixture}))
	tb.wait("the upload check", `document.getElementById('upload-note')?.textContent.includes('weka-g2-restore.jsonl:')`, 30*time.Second)
	tb.setYAML(wekaCompareYAML)
	tb.wait("the agentic controls", `!!document.getElementById('f-snapshot_seed')`, 5*time.Second)
	if !eval[bool](tb, `!!document.querySelector('#compare-setup')`) {
		tb.do(chromedp.Click(chromedp.ID("compare-toggle")))
		tb.wait("compare set-up", `!!document.querySelector('#compare-setup')`, 5*time.Second)
	}
	yaml := eval[string](tb, `document.getElementById('yaml').value`)
	cfg, err := config.Parse("config.yaml", ".", []byte(yaml), nil)
	if err != nil {
		t.Fatalf("the page's YAML: %v\n%s", err, yaml)
	}
	check := func(what string, cmp state.Compare, differ bool) {
		t.Helper()
		head := eval[[]string](tb, `[...document.querySelectorAll('#compare-rows th.ag')].map(c => c.textContent.trim())`)
		if strings.Join(head, "|") != strings.Join(state.AgenticCompareColumns, "|") {
			t.Errorf("%s: agentic headers %q", what, head)
		}
		rows := eval[[]string](tb, `[...document.querySelectorAll('tr.cmp-row')].map(r => r.dataset.label + '|' + [...r.querySelectorAll('td.ag')].map(c => c.textContent.trim()).join('|'))`)
		vs := cmp.Variants(cfg)
		distinct := map[string]bool{}
		for _, r := range rows {
			_, cells, _ := strings.Cut(r, "|")
			distinct[cells] = true
		}
		if differ && len(distinct) < 2 {
			t.Errorf("%s: every row has the same agentic figures %q; the case should tell the rows apart", what, rows)
		}
		if len(rows) != len(vs) {
			t.Fatalf("%s: %d rows %q; want %d", what, len(rows), rows, len(vs))
		}
		for i, v := range vs {
			out, err := replay.Run(replay.Job{Name: "config.yaml", Config: []byte(yaml), Sets: v.Sets,
				Traces: replay.Traces{Texts: map[string][]byte{"weka-g2-restore.jsonl": data}}})
			if err != nil {
				t.Fatalf("%s: native %s: %v", what, v.Label, err)
			}
			var doc struct {
				Lanes   []proto.AgenticLane   `json:"agentic_snapshots"`
				Warmup  *proto.AgenticWarmup  `json:"agentic_phases"`
				Profile *proto.AgenticProfile `json:"agentic_profile"`
			}
			if err := json.Unmarshal(out.Prediction, &doc); err != nil {
				t.Fatal(err)
			}
			if len(doc.Lanes) != 1 || doc.Warmup == nil || doc.Profile == nil || doc.Profile.Successful == 0 {
				t.Fatalf("%s: native %s agentic sections %+v %+v %+v", what, v.Label, doc.Lanes, doc.Warmup, doc.Profile)
			}
			want := v.Label + "|" + strings.Join(state.AgenticCompareRow(&proto.Agentic{Seed: 23, Lanes: doc.Lanes, Warmup: doc.Warmup, Profile: doc.Profile}), "|")
			if rows[i] != want {
				t.Errorf("%s row %d:\n page   %s\n native %s", what, i, rows[i], want)
			}
			t.Logf("%s: %s", what, rows[i])
		}
	}

	tb.do(chromedp.SetValue(chromedp.ID("cmp-axis"), "g2"))
	tb.do(chromedp.Evaluate[chromedp.Void](`document.getElementById('cmp-axis').dispatchEvent(new Event('change', {bubbles: true}))`))
	tb.typeInto("cmp-g2", "8, 2, none")
	tb.clickRun()
	check("G2 sizes", state.Compare{Axis: state.AxisG2, Values: []string{"8", "2", "none"}}, true)
	tb.shot("22-compare-agentic-g2")

	tb.do(chromedp.SetValue(chromedp.ID("cmp-axis"), "connector"))
	tb.do(chromedp.Evaluate[chromedp.Void](`document.getElementById('cmp-axis').dispatchEvent(new Event('change', {bubbles: true}))`))
	conns := []string{"offloading_v0_24", "offloading_v0_32", "simple_cpu_v0_32"}
	for _, k := range conns {
		if !eval[bool](tb, fmt.Sprintf(`document.getElementById('cmp-%s').checked`, k)) {
			tb.do(chromedp.Click(chromedp.ID("cmp-" + k)))
		}
	}
	tb.clickRun()
	check("connectors", state.Compare{Axis: state.AxisConnector, Values: conns}, false)

	tb.do(chromedp.Click(chromedp.ID("compare-toggle")))
	tb.wait("single mode", `!document.querySelector('#compare-setup')`, 5*time.Second)
	tb.clickRun()
	if n := eval[int](tb, `document.querySelectorAll('#compare-rows th.ag').length`); n != 0 {
		t.Errorf("a single run shows %d agentic compare columns", n)
	}
}
