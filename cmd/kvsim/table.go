package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kvsim/kvsim/core/report"
)

// writeTable prints the key summary figures of `predict --format table`.
// Labels are the prediction.json keys so a figure can be found in the
// report; the JSON keeps full precision, the table rounds.
func writeTable(w io.Writer, s *report.Summary) error {
	var t textTable
	t.add("num_requests", groupInt(int64(s.NumRequests)))
	t.add("completed_requests", groupInt(int64(s.CompletedRequests)))
	if s.RejectedRequests > 0 {
		t.add("rejected_requests", groupInt(int64(s.RejectedRequests)))
	}
	t.add("total_input_tokens", groupInt(s.TotalInputTokens))
	t.add("total_output_tokens", groupInt(s.TotalOutputTokens))
	t.add("committed_prefill_tokens", groupInt(s.CommittedPrefillTokens))
	if s.G2 != nil {
		t.add("restored (first_admission_host_reused_input_tokens)", groupInt(s.FirstAdmissionHostTokens))
	}
	t.add("prefix_cache_reused_ratio", strconv.FormatFloat(s.PrefixCacheReusedRatio, 'f', 4, 64))
	t.add("first_admission_prefix_cache_reused_ratio", strconv.FormatFloat(s.FirstAdmissionPrefixCacheReusedRatio, 'f', 4, 64))
	t.add("preemptions", groupInt(s.Preemptions))
	t.add("duration_ms", ms(s.DurationMs))
	t.add("request_throughput_rps", strconv.FormatFloat(s.RequestThroughputRPS, 'f', 2, 64))
	t.add("")
	t.add("latency (ms)", "samples", "mean", "p50", "p99")
	for _, d := range []struct {
		name string
		d    report.Dist
	}{{"ttft", s.TTFT}, {"tpot", s.TPOT}, {"e2e_latency", s.E2E}} {
		t.add(d.name, groupInt(int64(d.d.N)), ms(d.d.Mean), ms(d.d.Median), ms(d.d.P99))
	}
	if g := s.G2; g != nil {
		t.add("")
		t.add("G2", "jobs", "blocks", "bytes")
		t.add("stores (g2_store_*)", groupInt(g.StoreJobs), groupInt(g.StoreBlocks), groupInt(g.StoreBytes))
		t.add("loads (g2_load_*)", groupInt(g.LoadJobs), groupInt(g.LoadBlocks), groupInt(g.LoadBytes))
		t.add("g2_lookups", groupInt(g.Lookups))
		t.add("g2_lookup_hits", groupInt(g.LookupHits))
		t.add("g2_lookup_defers", groupInt(g.LookupDefers))
		t.add("g2_evictions", groupInt(g.Evictions))
	}
	if len(s.Domains) > 0 {
		t.add("")
		t.add("g2_domains", "capacity", "resident", "used")
		for i, d := range s.Domains {
			t.add(fmt.Sprintf("[%d]", i), groupInt(int64(d.CapacityBlocks)), groupInt(int64(d.ResidentBlocks)), groupInt(int64(d.UsedBlocks)))
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

// groupInt formats n with thousands separators: 20,320.
func groupInt(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// ms formats milliseconds with up to three decimals, trailing zeros cut.
func ms(v float64) string {
	s := strconv.FormatFloat(v, 'f', 3, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
