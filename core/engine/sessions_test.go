package engine_test

// docs/model/cases.md ("Case D: smaller checks") checks that run through
// the engine.

import (
	"fmt"
	"testing"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/engine"
	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/core/vtime"
)

// runSource runs a synthetic traffic block on one aggregated worker with
// the given block size and G1 capacity (no host offload), checker on.
func runSource(t *testing.T, traffic string, blockSize, g1Blocks int) *engine.Engine {
	t.Helper()
	yaml := fmt.Sprintf(`traffic:
%s
engine:
  mode: aggregated
  model: tiny
  hardware: h200_sxm
  workers:
    aggregated:
      scheduler: {max_batched_tokens: 8192, max_sequences: 8}
      kv_cache: {block_size: %d, capacity: {type: fixed, blocks: %d}}
      timing: {type: fixed, prefill_ms: 2, decode_ms: 1}
`, traffic, blockSize, g1Blocks)
	cfg, err := config.Parse("test.yaml", ".", []byte(yaml), nil)
	if err != nil {
		t.Fatalf("config: %v\n%s", err, yaml)
	}
	wl, err := replay.Workload(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(cfg, wl, engine.Options{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestSyntheticSessions_Cumulative is
// docs/model/cases.md ("Case D: smaller checks"): new 8 tokens and 2
// output per turn, 3 turns ⇒ prompt lengths 8, 18, 28; with concurrency 1 and
// 2 sessions the six requests complete in session order.
func TestSyntheticSessions_Cumulative(t *testing.T) {
	e := runSource(t, `  source: {type: synthetic-session, new_input_tokens_per_turn: 8, output_tokens_per_turn: 2, session: {turns: 3}}
  load: {type: concurrency, concurrency: 1}
  stop: {sessions: 2}`, 4, 64)
	recs := e.Records
	if len(recs) != 6 {
		t.Fatalf("%d requests; want 6", len(recs))
	}
	prev := vtime.Time(-1)
	for i := range recs {
		r := &recs[i]
		if want := []int{8, 18, 28}[i%3]; r.InputLength != want {
			t.Errorf("%s (session %s turn %d): prompt %d; want %d", r.RequestID, r.SessionID, r.Turn, r.InputLength, want)
		}
		if r.Status != "completed" || r.Tokens != 2 {
			t.Errorf("%s: status %q with %d tokens; want completed with 2", r.RequestID, r.Status, r.Tokens)
		}
		if r.TerminalMs <= prev {
			t.Errorf("%s (session %s turn %d) completed at %v, not after the previous request (%v)", r.RequestID, r.SessionID, r.Turn, r.TerminalMs, prev)
		}
		if i > 0 && r.ArrivalMs != recs[i-1].TerminalMs {
			t.Errorf("%s ready at %v; want %v (the previous turn or session's end: concurrency 1, no delay)", r.RequestID, r.ArrivalMs, recs[i-1].TerminalMs)
		}
		prev = r.TerminalMs
	}
	// Turn 0 had KV for 8 + 1 tokens (the last output token is never fed
	// back): two full 4-token blocks, which turn 1's prompt starts with.
	if got := recs[1].FirstReused; got != 8 {
		t.Errorf("turn 1 reused %d tokens; want 8 (two full blocks of turn 0)", got)
	}
}

// TestWholeBlockReuse is docs/model/cases.md ("Case D: smaller checks") /
// docs/model/g1.md ("Prefix lookup and the recompute cap"): a resident
// 128-token prompt re-sent with 64-token blocks reuses 64 tokens (the
// block-aligned last block is recomputed to produce logits).
func TestWholeBlockReuse(t *testing.T) {
	e := runSource(t, `  source: {type: synthetic, input_tokens: 128, output_tokens: 1, cached_prefix_tokens: 128}
  load: {type: concurrency, concurrency: 1}
  stop: {requests: 2}`, 64, 16)
	if got := e.Records[0].FirstReused; got != 0 {
		t.Errorf("first request reused %d; want 0", got)
	}
	if got := e.Records[1].FirstReused; got != 64 {
		t.Errorf("second request reused %d; want 64", got)
	}
	if got := e.CommittedPrefill; got != 128+64 {
		t.Errorf("committed prefill %d; want 192", got)
	}
}
