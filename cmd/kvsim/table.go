package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kvsim/kvsim/core/numfmt"
	"github.com/kvsim/kvsim/core/report"
)

// writeTable prints the key summary figures of `predict --format table`.
// Labels are the prediction.json keys so a figure can be found in the
// report; the JSON keeps full precision, the table rounds.
func writeTable(w io.Writer, s *report.Summary) error {
	var t textTable
	t.add("num_requests", numfmt.Thousands(int64(s.NumRequests)))
	t.add("completed_requests", numfmt.Thousands(int64(s.CompletedRequests)))
	if s.RejectedRequests > 0 {
		t.add("rejected_requests", numfmt.Thousands(int64(s.RejectedRequests)))
	}
	t.add("total_input_tokens", numfmt.Thousands(s.TotalInputTokens))
	t.add("total_output_tokens", numfmt.Thousands(s.TotalOutputTokens))
	t.add("committed_prefill_tokens", numfmt.Thousands(s.CommittedPrefillTokens))
	if s.G2 != nil {
		t.add("restored (first_admission_host_reused_input_tokens)", numfmt.Thousands(s.FirstAdmissionHostTokens))
	}
	t.add("prefix_cache_reused_ratio", strconv.FormatFloat(s.PrefixCacheReusedRatio, 'f', 4, 64))
	t.add("first_admission_prefix_cache_reused_ratio", strconv.FormatFloat(s.FirstAdmissionPrefixCacheReusedRatio, 'f', 4, 64))
	t.add("preemptions", numfmt.Thousands(s.Preemptions))
	t.add("duration_ms", ms(s.DurationMs))
	t.add("request_throughput_rps", strconv.FormatFloat(s.RequestThroughputRPS, 'f', 2, 64))
	t.add("")
	t.add("latency (ms)", "samples", "mean", "p50", "p99")
	for _, d := range []struct {
		name string
		d    report.Dist
	}{{"ttft", s.TTFT}, {"tpot", s.TPOT}, {"e2e_latency", s.E2E}} {
		t.add(d.name, numfmt.Thousands(int64(d.d.N)), ms(d.d.Mean), ms(d.d.Median), ms(d.d.P99))
	}
	if g := s.G2; g != nil {
		t.add("")
		t.add("G2", "jobs", "blocks", "bytes")
		t.add("stores (g2_store_*)", numfmt.Thousands(g.StoreJobs), numfmt.Thousands(g.StoreBlocks), numfmt.Thousands(g.StoreBytes))
		t.add("loads (g2_load_*)", numfmt.Thousands(g.LoadJobs), numfmt.Thousands(g.LoadBlocks), numfmt.Thousands(g.LoadBytes))
		t.add("g2_lookups", numfmt.Thousands(g.Lookups))
		t.add("g2_lookup_hits", numfmt.Thousands(g.LookupHits))
		t.add("g2_lookup_defers", numfmt.Thousands(g.LookupDefers))
		t.add("g2_evictions", numfmt.Thousands(g.Evictions))
	}
	if len(s.Domains) > 0 {
		t.add("")
		t.add("g2_domains", "capacity", "resident", "used")
		for i, d := range s.Domains {
			t.add(fmt.Sprintf("[%d]", i), numfmt.Thousands(int64(d.CapacityBlocks)), numfmt.Thousands(int64(d.ResidentBlocks)), numfmt.Thousands(int64(d.UsedBlocks)))
		}
	}
	if len(s.Workers) > 0 {
		t.add("")
		t.add("workers", "routed", "completed", "reused ratio", "restored")
		for _, wl := range s.Workers {
			ratio, restored := "", ""
			if wl.InputTokens > 0 {
				ratio = strconv.FormatFloat(float64(wl.Reused)/float64(wl.InputTokens), 'f', 4, 64)
			}
			if wl.HasHost {
				restored = numfmt.Thousands(wl.FirstHost)
			}
			t.add(fmt.Sprintf("%s w%d", wl.Pool, wl.Worker), numfmt.Thousands(int64(wl.Requests)),
				numfmt.Thousands(int64(wl.Completed)), ratio, restored)
		}
	}
	return t.write(w)
}

// textTable aligns rows: the first column to the left, the others to the
// right. A row with only an empty label is a blank line.
type textTable struct{ rows [][]string }

func (t *textTable) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *textTable) write(w io.Writer) error {
	var width []int
	for _, r := range t.rows {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, r := range t.rows {
		line := ""
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i == 0 {
				line = c + pad
			} else {
				line += "  " + pad + c
			}
		}
		b.WriteString(strings.TrimRight(line, " "))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ms formats milliseconds with up to three decimals, trailing zeros cut.
func ms(v float64) string {
	s := strconv.FormatFloat(v, 'f', 3, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
