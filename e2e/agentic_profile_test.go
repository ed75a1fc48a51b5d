package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/ui/state"
	"github.com/kvsim/kvsim/wasm/proto"
)

// wekaProfileYAML runs aisimulate's weka fixture (uploaded as
// weka-g2-restore.jsonl) on one aggregated worker of dynamo's
// test_agentx_g2.py shape: G1 of 3 blocks of 4 tokens, a G2 of 8 blocks
// at 1 GB/s each way, fixed timing (prefill 2 ms, decode 1 ms).
const wekaProfileYAML = `traffic:
  source: {type: trace, format: weka, paths: [weka-g2-restore.jsonl]}
  load: {type: trace_timestamps}
engine:
  mode: aggregated
  model: tiny
  hardware: h200_sxm
  backend: vllm
  context_length: 2048
  workers:
    aggregated:
      parallelism: {replicas: 1, tensor: 1, attention_data: 1}
      scheduler: {max_batched_tokens: 16, max_sequences: 1}
      kv_cache:
        block_size: 4
        prefix_caching: true
        bytes_per_token: 250000
        capacity: {type: fixed, blocks: 3}
        host_offload: {num_host_blocks: 8, scope: dp_rank_local, d2h_bandwidth_gbps: 1, h2d_bandwidth_gbps: 1}
      timing: {type: fixed, prefill_ms: 2, decode_ms: 1}
`

// TestAgenticProfileReport uploads aisimulate's weka fixture
// (core/trace/testdata/weka-g2-restore.jsonl) as weka, sets one lane,
// snapshot seed 23, warmup and a 0.7 s profile without grace through the
// controls (a negative cancel drain is refused next to its control, with
// Run off), runs it, and checks the agentic cards against a native
// core/replay run of the YAML the page shows: each card's value, unit and
// line are those state.AgenticCards writes for the native
// prediction.json's agentic sections.
func TestAgenticProfileReport(t *testing.T) {
	fixture := filepath.Join(repoRoot, "core", "trace", "testdata", "weka-g2-restore.jsonl")
	data, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	tb := newTab(t)
	tb.open("")
	tb.singleMode()
	tb.do(chromedp.Click(chromedp.CSS("details.upload summary")))
	for _, js := range []string{`(() => { const s = document.getElementById('up-format');
		s.value = 'weka'; s.dispatchEvent(new Event('change', {bubbles: true})); })()`,
		`(() => { const s = document.getElementById('up-block');
		s.value = '0'; s.dispatchEvent(new Event('change', {bubbles: true})); })()`} {
		tb.do(chromedp.Evaluate[chromedp.Void](js))
	}
	tb.do(chromedp.SetUploadFiles(chromedp.ID("upload"), []string{fixture}))
	tb.wait("the upload check", `document.getElementById('upload-note')?.textContent.includes('weka-g2-restore.jsonl:')`, 30*time.Second)
	tb.setYAML(wekaProfileYAML)
	tb.wait("the agentic controls", `!!document.getElementById('f-snapshot_seed')`, 5*time.Second)
	tb.typeInto("f-lanes", "1")
	tb.typeInto("f-snapshot_seed", "23")
	tb.do(chromedp.Click(chromedp.ID("f-warmup")))
	tb.typeInto("f-profile_seconds", "0.7")
	tb.wait("the profile controls", `!!document.getElementById('f-profile_drain')`, 5*time.Second)
	if hint := tb.text("#profile_drain-hint"); !strings.Contains(hint, "not modelled") {
		t.Errorf("drain hint %q", hint)
	}
	tb.typeInto("f-profile_drain", "-1")
	tb.wait("the drain error", `!!document.getElementById('err-profile_drain')`, 5*time.Second)
	if msg := tb.text("#err-profile_drain"); !strings.Contains(msg, "cancel_drain_seconds") || !strings.Contains(msg, ":") {
		t.Errorf("drain error %q", msg)
	}
	if !eval[bool](tb, `document.getElementById('run').disabled`) {
		t.Error("Run is enabled with a negative cancel drain")
	}
	t.Logf("refused: %s", tb.text("#err-profile_drain"))
	tb.typeInto("f-profile_drain", "2")
	tb.typeInto("f-profile_grace", "0")
	tb.wait("the profile config", `document.getElementById('yaml').value.includes('response_grace_seconds: 0')`, 5*time.Second)
	if errs := eval[[]string](tb, `[...document.querySelectorAll('.err')].map(e => e.textContent)`); len(errs) != 0 {
		t.Fatalf("errors with the profile set: %q", errs)
	}
	yaml := eval[string](tb, `document.getElementById('yaml').value`)
	for _, want := range []string{"agentic_lanes: 1", "agentic_snapshot: {seed: 23}", "agentic_warmup: true", "duration_seconds: 0.7",
		"cancel_drain_seconds: 2"} {
		if !strings.Contains(yaml, want) {
			t.Fatalf("YAML lacks %q:\n%s", want, yaml)
		}
	}
	tb.clickRun()

	out, err := replay.Run(replay.Job{Name: "config.yaml", Config: []byte(yaml),
		Traces: replay.Traces{Texts: map[string][]byte{"weka-g2-restore.jsonl": data}}})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Lanes   []proto.AgenticLane   `json:"agentic_snapshots"`
		Warmup  *proto.AgenticWarmup  `json:"agentic_phases"`
		Profile *proto.AgenticProfile `json:"agentic_profile"`
	}
	if err := json.Unmarshal(out.Prediction, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Lanes) != 1 || doc.Warmup == nil || doc.Warmup.Lanes[0].Warmups != 10 || doc.Profile == nil || doc.Profile.Successful == 0 {
		t.Fatalf("native agentic sections %+v %+v %+v", doc.Lanes, doc.Warmup, doc.Profile)
	}
	want := state.AgenticCards(&proto.Agentic{Seed: 23, Lanes: doc.Lanes, Warmup: doc.Warmup, Profile: doc.Profile})
	tb.wait("the agentic cards", `!!document.getElementById('card-ag-deadline')`, 10*time.Second)
	for _, c := range want {
		got := state.Card{ID: c.ID, Key: tb.text("#" + c.ID + " .k"), Value: tb.text("#" + c.ID + " .v .n"),
			Unit: tb.text("#" + c.ID + " .v small"), Sub: tb.text("#" + c.ID + " .s")}
		if !strings.EqualFold(got.Key, c.Key) || got.Value != c.Value || got.Unit != c.Unit || got.Sub != c.Sub {
			t.Errorf("%s:\n page   %+v\n native %+v", c.ID, got, c)
		}
		t.Logf("%s: %s %s — %s", c.ID, got.Value, got.Unit, got.Sub)
	}
	tb.do(chromedp.Click(chromedp.ID("agentic-lanes-toggle")))
	tb.wait("the lane table", `!!document.querySelector('#agentic-lanes tbody tr')`, 5*time.Second)
	if got, want := tb.text("#agentic-lanes tbody tr td:nth-child(8)"), "10"; got != want {
		t.Errorf("lane 0 warmup done %q, want %q", got, want)
	}
	tb.shot("agentic-profile")
}
