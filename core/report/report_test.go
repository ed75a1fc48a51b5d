package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/kvsim/kvsim/core/vtime"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// TestPercentileRank is docs/model/report.md ("Percentiles"):
// rank = floor((n−1)·p/100 + 0.5), half rounding up.
func TestPercentileRank(t *testing.T) {
	for _, c := range []struct {
		n    int
		p    float64
		want int
	}{
		{1, 50, 0}, {1, 99, 0},
		{2, 50, 1},  // 0.5 rounds up
		{4, 50, 2},  // 1.5 + 0.5
		{3, 75, 2},  // 1.5 rounds up
		{5, 75, 3},  // exact
		{10, 50, 5}, // 4.5 rounds up
		{10, 75, 7}, // 6.75
		{10, 90, 8}, // 8.1
		{10, 95, 9}, // 8.55
		{10, 99, 9}, // 8.91
		{100, 99, 98},
		{101, 50, 50},
	} {
		if got := rank(c.n, c.p); got != c.want {
			t.Errorf("rank(n=%d, p=%v) = %d; want %d", c.n, c.p, got, c.want)
		}
	}
}

// TestDist_RoundedRankAndPopulationStd: samples 1..4 (given unsorted).
func TestDist_RoundedRankAndPopulationStd(t *testing.T) {
	d := dist([]float64{4, 1, 3, 2})
	want := Dist{N: 4, Mean: 2.5, Min: 1, Max: 4, Median: 3, P75: 3, P90: 4, P95: 4, P99: 4, Std: math.Sqrt(1.25)}
	if d != want {
		t.Errorf("dist = %+v; want %+v", d, want)
	}
	// Population, not sample, standard deviation: 2 (sample std 2.14).
	if d := dist([]float64{2, 4, 4, 4, 5, 5, 7, 9}); !near(d.Std, 2) {
		t.Errorf("std = %v; want 2 (population)", d.Std)
	}
	if d := dist(nil); d != (Dist{}) {
		t.Errorf("empty dist = %+v; want zero", d)
	}
}

// TestHistDist_EqualsDistOfTheSamples: the run-length form of the ITL
// samples gives exactly the statistics of the expanded samples.
func TestHistDist_EqualsDistOfTheSamples(t *testing.T) {
	h := map[float64]int{1: 3, 2: 1, 5: 2, 0.5: 4}
	var v []float64
	for k, n := range h {
		for range n {
			v = append(v, k)
		}
	}
	a, b := histDist(h), dist(v)
	if a.N != b.N || a.Min != b.Min || a.Max != b.Max || a.Median != b.Median || a.P75 != b.P75 ||
		a.P90 != b.P90 || a.P95 != b.P95 || a.P99 != b.P99 || !near(a.Mean, b.Mean) || !near(a.Std, b.Std) {
		t.Errorf("histDist = %+v; dist of the samples = %+v", a, b)
	}
}

// rec builds a completed record arriving at arrival with tokens at the
// given times.
func rec(id string, arrival vtime.Time, input int, tokens ...vtime.Time) Request {
	r := NewRequest()
	r.RequestID, r.SessionID = id, id
	r.ArrivalMs, r.DispatchedMs, r.FirstAdmitMs = arrival, arrival, arrival
	r.InputLength = input
	r.RequestedOutput = len(tokens)
	for _, t := range tokens {
		r.Token(t)
	}
	r.Status = StatusCompleted
	if len(tokens) > 0 {
		r.TerminalMs = tokens[len(tokens)-1]
	}
	return r
}

// TestSummarize_Latencies: TTFT, E2E, TPOT, TTST and ITL from two completed
// requests; a rejected one is counted but contributes no sample.
func TestSummarize_Latencies(t *testing.T) {
	a := rec("a", 0, 10, 2, 3, 4)  // ttft 2, gaps 1 1, tpot 1, e2e 4
	b := rec("b", 1, 30, 5, 8)     // ttft 4, gap 3, tpot 3, e2e 7
	a.Reused, a.FirstReused = 8, 8 // 8 of 40 input tokens
	rej := NewRequest()
	rej.RequestID, rej.Status, rej.TerminalMs, rej.InputLength = "r", StatusRejected, 9, 100
	s := Summarize([]Request{a, b, rej}, 3, Run{GPUs: 2, CommittedPrefillTokens: 32})
	if s.NumRequests != 3 || s.CompletedRequests != 2 || s.RejectedRequests != 1 {
		t.Errorf("requests %d completed %d rejected %d; want 3 2 1", s.NumRequests, s.CompletedRequests, s.RejectedRequests)
	}
	if s.TotalInputTokens != 40 || s.TotalOutputTokens != 5 || s.DurationMs != 8 {
		t.Errorf("input %d output %d duration %v; want 40 5 8", s.TotalInputTokens, s.TotalOutputTokens, s.DurationMs)
	}
	if !near(s.RequestThroughputRPS, 250) || !near(s.TotalThroughput, 45/0.008) {
		t.Errorf("throughput %v rps, %v tok/s; want 250, 5625", s.RequestThroughputRPS, s.TotalThroughput)
	}
	if !near(s.PrefixCacheReusedRatio, 0.2) || !near(s.FirstAdmissionPrefixCacheReusedRatio, 0.2) {
		t.Errorf("reuse ratios %v %v; want 0.2", s.PrefixCacheReusedRatio, s.FirstAdmissionPrefixCacheReusedRatio)
	}
	check := func(name string, d Dist, n int, mean, min, max, median float64) {
		t.Helper()
		if d.N != n || !near(d.Mean, mean) || d.Min != min || d.Max != max || d.Median != median {
			t.Errorf("%s = %+v; want n %d mean %v min %v max %v median %v", name, d, n, mean, min, max, median)
		}
	}
	check("ttft", s.TTFT, 2, 3, 2, 4, 4)
	check("e2e", s.E2E, 2, 5.5, 4, 7, 7)
	check("tpot", s.TPOT, 2, 2, 1, 3, 3)
	check("ttst", s.TTST, 2, 2, 1, 3, 3)
	check("itl", s.ITL, 3, 5.0/3, 1, 3, 1)
	if s.MaxITL != 3 {
		t.Errorf("max itl %v; want 3", s.MaxITL)
	}
	if !near(s.GPUHours, 2*8/3.6e6) {
		t.Errorf("gpu hours %v; want %v", s.GPUHours, 2*8/3.6e6)
	}
}

func lines(b []byte) []map[string]any {
	var out []map[string]any
	for _, l := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		m := map[string]any{}
		if err := json.Unmarshal(l, &m); err != nil {
			panic(err)
		}
		out = append(out, m)
	}
	return out
}

// TestRequestsJSONL_Order is docs/model/report.md ("Command line"): terminal
// requests only, in order of terminal time, ties by request id.
func TestRequestsJSONL_Order(t *testing.T) {
	recs := []Request{
		rec("c", 0, 4, 5),
		rec("b", 0, 4, 3),
		rec("a", 0, 4, 5),
		rec("d", 0, 4, 1),
		rec("e", 0, 4, 3),
	}
	recs[3].Status, recs[3].TerminalMs = "", vtime.Unset() // in flight: not written
	var got []string
	for _, m := range lines(RequestsJSONL(recs)) {
		got = append(got, m["request_id"].(string))
	}
	if strings.Join(got, " ") != "b e a c" {
		t.Errorf("order %v; want [b e a c]", got)
	}
}

// TestRequestsJSONL_OmitsWhatDidNotHappen: fields of events that did not
// happen are omitted, never null.
func TestRequestsJSONL_OmitsWhatDidNotHappen(t *testing.T) {
	one := rec("one", 0, 4, 2) // one token: no ttst, no itl
	two := rec("two", 0, 4, 2, 3)
	two.HasHost, two.FirstG1, two.FirstHost = true, 4, 0
	rej := NewRequest()
	rej.RequestID, rej.SessionID, rej.Status = "rej", "rej", StatusRejected
	rej.ArrivalMs, rej.DispatchedMs, rej.TerminalMs = 1, 1, 1
	rej.HasHost = true // G2 on, but never admitted
	out := RequestsJSONL([]Request{one, two, rej})
	if bytes.Contains(out, []byte("null")) {
		t.Errorf("requests.jsonl contains null: %s", out)
	}
	ms := map[string]map[string]any{}
	for _, m := range lines(out) {
		ms[m["request_id"].(string)] = m
	}
	for _, c := range []struct {
		id           string
		present, not []string
	}{
		{"one", []string{"first_token_ms", "last_token_ms", "ttft_ms", "e2e_latency_ms", "first_admit_ms"},
			[]string{"ttst_ms", "itl_ms", "first_admission_g1_reused_input_tokens", "first_admission_host_reused_input_tokens", "prefill_worker_idx", "decode_worker_idx"}},
		{"two", []string{"ttst_ms", "itl_ms", "first_admission_g1_reused_input_tokens", "first_admission_host_reused_input_tokens"},
			[]string{"prefill_worker_idx"}},
		{"rej", []string{"arrival_time_ms", "terminal_time_ms", "terminal_status"},
			[]string{"first_admit_ms", "first_token_ms", "last_token_ms", "ttft_ms", "ttst_ms", "e2e_latency_ms", "itl_ms",
				"first_admission_g1_reused_input_tokens", "first_admission_host_reused_input_tokens"}},
	} {
		m := ms[c.id]
		for _, k := range c.present {
			if _, ok := m[k]; !ok {
				t.Errorf("%s: %s missing", c.id, k)
			}
		}
		for _, k := range c.not {
			if v, ok := m[k]; ok {
				t.Errorf("%s: %s = %v present; want omitted", c.id, k, v)
			}
		}
	}
	if ms["rej"]["terminal_status"] != "rejected" {
		t.Errorf("rej terminal_status %v", ms["rej"]["terminal_status"])
	}
}

// TestUUID_IsDeterministic: derived from the position, never random.
func TestUUID_IsDeterministic(t *testing.T) {
	if UUID(5) != UUID(5) || UUID(5) == UUID(6) {
		t.Errorf("UUID not a function of the index: %s %s", UUID(5), UUID(6))
	}
	if got := UUID(255); got != "00000000-0000-4000-8000-0000000000ff" {
		t.Errorf("UUID(255) = %s", got)
	}
}

// TestToken_GapRuns: the gaps a record reports are the differences of its
// token times, each distinct value with its count, whether the value comes
// back after another (merged into its closed run), is still the open run,
// or alternates. A record keeps one entry per distinct closed value.
func TestToken_GapRuns(t *testing.T) {
	for _, c := range []struct {
		name     string
		times    []vtime.Time
		want     map[vtime.Time]int
		distinct int // closed runs kept
	}{
		{"no token", nil, map[vtime.Time]int{}, 0},
		{"one token", []vtime.Time{5}, map[vtime.Time]int{}, 0},
		{"one run, still open", []vtime.Time{1, 2, 3, 4}, map[vtime.Time]int{1: 3}, 0},
		{"a value comes back", []vtime.Time{1, 2, 3, 6, 7, 8}, map[vtime.Time]int{1: 4, 3: 1}, 2},
		{"alternating", []vtime.Time{0, 1, 3, 4, 6, 7}, map[vtime.Time]int{1: 3, 2: 2}, 2},
		{"three values", []vtime.Time{0, 1, 3, 6, 7}, map[vtime.Time]int{1: 2, 2: 1, 3: 1}, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := rec("x", 0, 1, c.times...)
			got := map[vtime.Time]int{}
			r.EachGap(func(ms vtime.Time, n int) { got[ms] += n })
			if !maps.Equal(got, c.want) {
				t.Errorf("gaps %v; want %v", got, c.want)
			}
			if len(r.gaps) != c.distinct {
				t.Errorf("%d closed runs kept (%v); want %d", len(r.gaps), r.gaps, c.distinct)
			}
		})
	}
}

// TestTokenAgain: recording tokens as the engine's commit loop does
// (TokenAgain, then Token when it declines) leaves the same record as Token
// alone, over random gap sequences with runs, repeats and new values.
func TestTokenAgain(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 3))
		a, b := NewRequest(), NewRequest()
		now, again := vtime.Time(rng.IntN(5)), 0
		for range rng.IntN(300) {
			if rng.IntN(4) == 0 {
				now += vtime.Time(1+rng.IntN(3)) / 4
			} else {
				now++
			}
			a.Token(now)
			if b.TokenAgain(now) {
				again++
			} else {
				b.Token(now)
			}
		}
		if sa, sb := tokenFields(&a), tokenFields(&b); sa != sb {
			t.Fatalf("seed %d: Token alone\n%s\nTokenAgain then Token\n%s", seed, sa, sb)
		}
		if seed == 0 && again == 0 {
			t.Fatal("TokenAgain never recorded a token")
		}
	}
}

// tokenFields prints what Token writes (NaN times defeat reflect.DeepEqual).
func tokenFields(r *Request) string {
	s := fmt.Sprintf("first %v second %v last %v tokens %d run %v×%d closed %d gaps",
		r.FirstTokenMs, r.SecondTokenMs, r.LastTokenMs, r.Tokens, r.gapMs, r.gapRun, r.closedGaps)
	r.EachGap(func(ms vtime.Time, n int) { s += fmt.Sprintf(" %v×%d", ms, n) })
	return s
}

// TestRoutingEntrySize: the routing fields fit the 56 bytes a
// routing_history entry had before them, so core/replay's memory estimate
// (one entry per request) and its limit messages are unchanged.
func TestRoutingEntrySize(t *testing.T) {
	if n := unsafe.Sizeof(Routing{}); n != 56 {
		t.Errorf("report.Routing is %d bytes; want 56", n)
	}
}

// TestRoutingFields: a round-robin routing_history entry keeps its five
// fields; another policy's adds policy and overlap_blocks, and
// host_overlap_blocks on a rank with G2. The per-worker summary appears
// only when the run gives it entries.
func TestRoutingFields(t *testing.T) {
	r := NewRequest()
	r.RequestID, r.Status, r.TerminalMs = "x", StatusCompleted, 1
	r.Routing = []Routing{{Pool: "agg", Outcome: "routed", Worker: 1, Schedule: 1},
		{Pool: "decode", Outcome: "routed", Worker: 0, Schedule: 2, Policy: 3, Overlap: 4, HostOverlap: 2, HasHost: true}}
	got := string(RequestsJSONL([]Request{r}))
	want := `"routing_history": [{"pool": "agg", "outcome": "routed", "logical_worker_id": 1, "scheduler_id": 1, "dp_rank": 0}, ` +
		`{"pool": "decode", "outcome": "routed", "logical_worker_id": 0, "scheduler_id": 2, "dp_rank": 0, "policy": "kv_router", "overlap_blocks": 4, "host_overlap_blocks": 2}]`
	if !strings.Contains(got, want) {
		t.Errorf("got %s\nwant it to contain %s", got, want)
	}
	if s := string(SummaryJSON(Summary{})); strings.Contains(s, "workers") {
		t.Errorf("summary without per-worker entries has %s", s)
	}
	s := string(SummaryJSON(Summary{Workers: []WorkerLoad{{Pool: "agg", Worker: 1, Requests: 2, Completed: 2, InputTokens: 8, Reused: 2}}}))
	if want := `"workers": [{"pool": "agg", "worker": 1, "routed_requests": 2, "completed_requests": 2, "input_tokens": 8, "reused_input_tokens": 2, "prefix_cache_reused_ratio": 0.25}]`; !strings.Contains(s, want) {
		t.Errorf("got %s\nwant it to contain %s", s, want)
	}
}

// TestAppendQuoted: appendQuoted writes what strconv.AppendQuote writes,
// for keys, plain values and every kind of byte its shortcut must refuse.
func TestAppendQuoted(t *testing.T) {
	for _, s := range []string{"", "request_12", "ttft_ms", "a b~", "say \"hi\"", `back\slash`, "tab\there",
		"\x7f", "\x00", "é", "日本", "\xff", "line\n", "}{,:"} {
		if got, want := string(appendQuoted([]byte("x"), s)), strconv.Quote(s); got != "x"+want {
			t.Errorf("appendQuoted(%q) = %s, want %s", s, got[1:], want)
		}
	}
}
