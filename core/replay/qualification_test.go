package replay

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/report"
	"github.com/kvsim/kvsim/core/vtime"
)

// qualificationConfig is the engine of aisimulate's
// crates/core/tests/agentx_qualification.rs (run): one aggregated vLLM
// worker, 64 G1 blocks of 4 tokens, 4 sequences, 64 batched tokens, fixed
// timing (prefill 2 ms, decode 1 ms), one lane, context length ctx.
func qualificationConfig(ctx int) string {
	return strings.NewReplacer(
		"capacity: {type: fixed, blocks: 3}", "capacity: {type: fixed, blocks: 64}",
		"max_batched_tokens: 16, max_sequences: 1", "max_batched_tokens: 64, max_sequences: 4",
		"context_length: 2048", "context_length: "+strconv.Itoa(ctx),
		", nested_timestamp_basis: absolute", "").Replace(agentxConfig("weka", ""))
}

func readFixture(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile("../trace/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestAgentxQualification re-expresses aisimulate's
// agentx_qualification.rs::public_aggregated_weka_and_materialized_v2_have_identical_complete_lifecycles
// (vLLM) on its three public fixtures: every request completes with its
// requested output (2, 4 and 3 requests in 1, 1 and 2 plays), the first
// dispatch is at 0, and with one lane the second play of the JSONL file is
// dispatched exactly when the last request of the first ends.
func TestAgentxQualification(t *testing.T) {
	for _, c := range []struct {
		name            string
		requests, plays int
	}{
		{"weka-a.json", 2, 1},
		{"weka-relative.json", 4, 1},
		{"weka-two-plays.jsonl", 3, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := runText(t, qualificationConfig(2048), readFixture(t, c.name))
			if res.Summary.NumRequests != c.requests || res.Summary.CompletedRequests != c.requests {
				t.Fatalf("%d requests, %d completed; want %d and %d", res.Summary.NumRequests, res.Summary.CompletedRequests, c.requests, c.requests)
			}
			first := vtime.Never
			lastEnd := map[string]vtime.Time{}
			firstDispatch := map[string]vtime.Time{}
			for _, r := range res.Records {
				if r.Status != report.StatusCompleted || r.Tokens != r.RequestedOutput {
					t.Errorf("%s: %s with %d of %d tokens", r.RequestID, r.Status, r.Tokens, r.RequestedOutput)
				}
				first = min(first, r.DispatchedMs)
				play := strings.SplitN(r.RequestID, ":", 2)[0]
				lastEnd[play] = max(lastEnd[play], r.TerminalMs)
				if d, ok := firstDispatch[play]; !ok || r.DispatchedMs < d {
					firstDispatch[play] = r.DispatchedMs
				}
			}
			if first != 0 || len(lastEnd) != c.plays {
				t.Errorf("first dispatch %v, plays %d; want 0 and %d", first, len(lastEnd), c.plays)
			}
			if c.plays == 2 && firstDispatch["play-b"] != lastEnd["play-a"] {
				t.Errorf("play-b dispatched at %v; want play-a's last end %v", firstDispatch["play-b"], lastEnd["play-a"])
			}
		})
	}
}

// TestAgentxChildContextRejection re-expresses
// agentx_qualification.rs::public_vllm_child_context_rejection_settles_the_play_and_skips_parent_resume:
// with a 6-token context, the subagent's second request (8 tokens) is
// rejected, so the parent's resume that joins it is never issued: 3
// requests issued, 2 completed, 1 rejected (outer:1:inner:1), outer:2 never
// dispatched, and the run ends.
func TestAgentxChildContextRejection(t *testing.T) {
	res := runText(t, qualificationConfig(6), readFixture(t, "weka-relative.json"))
	if res.Summary.NumRequests != 3 || res.Summary.CompletedRequests != 2 {
		t.Fatalf("%d issued, %d completed; want 3 and 2", res.Summary.NumRequests, res.Summary.CompletedRequests)
	}
	for _, r := range res.Records {
		switch {
		case strings.HasSuffix(r.RequestID, "outer:1:inner:1") && r.Status != report.StatusRejected:
			t.Errorf("%s: %q; want rejected", r.RequestID, r.Status)
		case strings.HasSuffix(r.RequestID, "outer:2") && r.DispatchedMs.IsSet():
			t.Errorf("%s dispatched at %v; want never", r.RequestID, r.DispatchedMs)
		}
	}
}
