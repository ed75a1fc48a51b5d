package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/traces"
	"github.com/kvsim/kvsim/ui/state"
)

// A badInput is one row of docs/errors.md: an input a careless or curious
// user gives, where the page shows what is wrong with it, and the message.
type badInput struct {
	name  string
	input string // what was given, for the table
	page  string // where the page shows the message
	// the job, for cases every front end meets: the API's body (the
	// connectors example unless config is set), also sent to /api/sweep
	// when sweep is true; nil for page-only cases
	config *string
	sets   []string
	trace  *string
	// replayOnly: /api/sweep answers it per point, not as the request's
	// error
	replayOnly bool
	// pageMsg computes a page-only case's message from the page's own code
	pageMsg func() string
	// api is a request only the API sees (raw body and content type)
	api *rawRequest
}

type rawRequest struct{ path, contentType, body string }

func ptr(s string) *string { return &s }

const agg = "engine.workers.aggregated."

// badInputs are the table's cases. Each message is computed from the real
// code path when the test runs (TestBadInputTable).
var badInputs = []badInput{
	{name: "G1 not a number", input: "G1 (GPU) blocks = abc", page: "next to the G1 field; Run disabled",
		sets: []string{agg + "kv_cache.capacity.blocks=abc"}},
	{name: "G1 zero", input: "G1 = 0", page: "next to the G1 field", sets: []string{agg + "kv_cache.capacity.blocks=0"}},
	{name: "G1 negative", input: "G1 = -5", page: "next to the G1 field", sets: []string{agg + "kv_cache.capacity.blocks=-5"}},
	{name: "G1 over the limit", input: "G1 = 10,000,000", page: "the run's error (each compare row)",
		sets: []string{agg + "kv_cache.capacity.blocks=10000000"}},
	{name: "G2 over the limit", input: "G2 = 99,999,999,999 (a G2-size compare row)", page: "that compare row",
		sets: []string{agg + "kv_cache.host_offload.num_host_blocks=99999999999"}},
	{name: "G2 negative", input: "G2 = -1", page: "next to the G2 field", sets: []string{agg + "kv_cache.host_offload.num_host_blocks=-1"}},
	{name: "block size zero", input: "Block size = 0", page: "next to the Block size field", sets: []string{agg + "kv_cache.block_size=0"}},
	{name: "unknown connector", input: "connector: offloading_v9", page: "next to the connector radios",
		sets: []string{agg + "kv_cache.host_offload.connector=offloading_v9"}},
	{name: "D2H bandwidth negative", input: "GPU→CPU (D2H) = -1", page: "next to the D2H field", sets: []string{agg + "kv_cache.host_offload.d2h_bandwidth_gbps=-1"}},
	{name: "H2D bandwidth not a number", input: "CPU→GPU (H2D) = fast", page: "next to the H2D field", sets: []string{agg + "kv_cache.host_offload.h2d_bandwidth_gbps=fast"}},
	{name: "max sequences zero", input: "Max sequences = 0", page: "next to the Max sequences field", sets: []string{agg + "scheduler.max_sequences=0"}},
	{name: "token budget negative", input: "Token budget = -1", page: "next to the Token budget field", sets: []string{agg + "scheduler.max_batched_tokens=-1"}},
	{name: "prefill time negative", input: "Prefill pass = -2 ms", page: "next to the Prefill pass field", sets: []string{agg + "timing.prefill_ms=-2"}},
	{name: "replicas zero", input: "Replicas = 0", page: "next to the Replicas field", sets: []string{agg + "parallelism.replicas=0"}},
	{name: "attention DP zero", input: "Attention DP = 0", page: "next to the Attention DP field", sets: []string{agg + "parallelism.attention_data=0"}},
	{name: "too many ranks", input: "Replicas = 2,000", page: "the run's error", sets: []string{agg + "parallelism.replicas=2000"}},
	{name: "concurrency zero", input: "Concurrent sessions = 0", page: "next to the Concurrent sessions field", sets: []string{"traffic.load.concurrency=0"}},
	{name: "unknown key", input: "kv_cache.capacity.colour: red (YAML)", page: "under the YAML box", sets: []string{agg + "kv_cache.capacity.colour=red"}},
	{name: "unknown mode", input: "engine.mode: hybrid", page: "under the YAML box", sets: []string{"engine.mode=hybrid"}},
	{name: "kv_transfer without P/D", input: "engine.kv_transfer in aggregated mode", page: "under the YAML box",
		sets: []string{"engine.kv_transfer={bandwidth_gb_per_second: 10}"}},
	{name: "unknown source type", input: "traffic.source.type: replay", page: "next to the trace picker", sets: []string{"traffic.source.type=replay"}},
	{name: "trace not built in or uploaded", input: "traffic.source.paths: [mine.jsonl]", page: "next to the trace picker; Run disabled", replayOnly: true,
		sets: []string{"traffic.source.paths=[mine.jsonl]"}},
	{name: "10^9 synthetic sessions", input: "a synthetic source with stop: {sessions: 1000000000}", page: "the run's error",
		sets: []string{"traffic.source={type: synthetic-session, new_input_tokens_per_turn: 500, output_tokens_per_turn: 50, session: {turns: 8}}",
			"traffic.stop={sessions: 1000000000}"}},
	{name: "synthetic turns zero", input: "generator turns = 0", page: "under the generator",
		sets: []string{"traffic.source={type: synthetic-session, new_input_tokens_per_turn: 500, output_tokens_per_turn: 50, session: {turns: 0}}",
			"traffic.stop={sessions: 4}"}},
	{name: "YAML syntax error", input: "engine: [ (YAML)", page: "under the YAML box", config: ptr("engine: [\n")},
	{name: "empty config", input: "a YAML box with only a comment", page: "under the YAML box", config: ptr("# nothing yet\n")},
	{name: "config not a mapping", input: "- a list (YAML)", page: "under the YAML box", config: ptr("- a\n- b\n")},
	{name: "P/D mode without its roles", input: "engine.mode: disaggregated (YAML), workers still aggregated", page: "under the YAML box",
		sets: []string{"engine.mode=disaggregated"}},
	{name: "malformed trace line", input: "an upload whose line 2 is {", page: "under the upload (the trace is not used)", replayOnly: true,
		trace: ptr(`{"session_id": "s", "input_length": 10, "new_input_length": 10, "output_length": 2, "hash_ids": [1]}` + "\n{\n")},
	{name: "trace row without hash_ids", input: "an upload row without hash_ids", page: "under the upload (the trace is not used)", replayOnly: true,
		trace: ptr(`{"session_id": "s", "input_length": 10, "new_input_length": 10, "output_length": 2}` + "\n")},
	{name: "--set without a value", input: "--set engine.model (API set)", page: "— (the page writes the YAML)", sets: []string{"engine.model"}},
	{name: "compare G2 sizes zero", input: "Compare G2 sizes: 0, 5", page: "under the compare set-up; Run disabled",
		pageMsg: func() string { _, err := state.ParseCompare("g2:0,5"); return err.Error() }},
	{name: "compare one run", input: "Compare with one connector ticked", page: "under the compare set-up; Run disabled",
		pageMsg: func() string {
			return state.Compare{Axis: state.AxisConnector, Values: []string{"offloading_v0_24"}}.Check().Error()
		}},
	{name: "compare connectors with P/D", input: "P/D on, Compare connector profiles", page: "under the compare set-up; Run disabled",
		pageMsg: func() string { return state.Compare{Axis: state.AxisConnector}.PDProblem(true) }},
	{name: "sweep Web Workers out of range", input: "Sweep: Web Workers = 0, 100 or -1", page: "next to the Web Workers field; Run sweep disabled",
		pageMsg: func() string { _, err := state.SweepWorkers("0"); return err.Error() }},
	{name: "API: not JSON", input: "POST /api/replay with body {", page: "—",
		api: &rawRequest{"/api/replay", "application/json", "{"}},
	{name: "API: wrong content type", input: "POST /api/replay as text/plain", page: "—",
		api: &rawRequest{"/api/replay", "text/plain", "x"}},
	{name: "API: empty body", input: "POST /api/replay with an empty JSON body", page: "—",
		api: &rawRequest{"/api/replay", "application/json", ""}},
	{name: "API: unknown field", input: `POST /api/replay {"confg": "…"}`, page: "—",
		api: &rawRequest{"/api/replay", "application/json", `{"confg": "x"}`}},
	{name: "API: sweep vary unknown path", input: `POST /api/sweep with vary {"kv_cache.capacity.colour": ["red"]}`, page: "the sweep's error",
		api: &rawRequest{"/api/sweep", "application/json", `{"example": "connectors.yaml", "vary": {"engine.workers.aggregated.kv_cache.capacity.colour": ["red"]}}`}},
}

// outcome is what one front end answered.
type outcome struct {
	status int
	kind   string
	msg    string
}

// run sends a case to the API (replay, and sweep when it applies) and, for
// a job, runs it natively through core/replay as the CLI and the page's
// Web Worker do; the messages must be one.
func (c *badInput) run(t *testing.T, h http.Handler) (api []string, msg string) {
	t.Helper()
	if c.pageMsg != nil {
		return nil, c.pageMsg()
	}
	if c.api != nil {
		rec := do(t, h, http.MethodPost, c.api.path, c.api.contentType, []byte(c.api.body))
		var e apiError
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Msg == "" {
			t.Fatalf("%s: %d %s", c.name, rec.Code, rec.Body)
		}
		return []string{fmt.Sprintf("%s %d %s", c.api.path, rec.Code, e.Kind)}, e.Msg
	}
	body := map[string]any{"set": c.sets}
	job := replay.Job{Name: "connectors.yaml", Sets: c.sets, Traces: replay.Traces{Builtin: true}}
	if c.config != nil {
		body["config"], job.Name, job.Config = *c.config, defaultConfigName, []byte(*c.config)
	} else {
		body["example"] = "connectors.yaml"
		b, _ := traces.Read("connectors.yaml")
		job.Config = b
	}
	if c.trace != nil {
		body["trace"] = *c.trace
		job.Traces = replay.Traces{Texts: map[string][]byte{"delta-sessions.jsonl": []byte(*c.trace)}}
	}
	_, err := replay.Run(job)
	if err == nil {
		t.Fatalf("%s: replay.Run accepts it", c.name)
	}
	msg = err.Error()
	// a job case goes to both endpoints that take a job, but a trace's
	// problem, which a sweep reports per point in its answer
	urls := []string{"/api/replay", "/api/sweep"}
	if c.replayOnly {
		urls = urls[:1]
	}
	for _, u := range urls {
		b := body
		if u == "/api/sweep" {
			b = map[string]any{"vary": map[string]any{"connector": []string{"offloading_v0_24"}}}
			for k, v := range body {
				b[k] = v
			}
		}
		rec := post(t, h, u, b)
		var e apiError
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		// the API may add how to send what is missing (a trace's rows)
		if !strings.HasPrefix(e.Msg, msg) {
			t.Errorf("%s: %s says %q; core/replay (the CLI, the page) %q", c.name, u, e.Msg, msg)
		}
		api = append(api, fmt.Sprintf("%s %d %s", u, rec.Code, e.Kind))
	}
	return api, msg
}

// TestBadInputTable computes every case's message from the real code path
// (core/replay for what the CLI, the page's Web Worker and the API share;
// the page's own code for its controls; the API's handler for its
// requests), checks that the API and core/replay agree, and checks that
// docs/errors.md lists exactly these messages (rewrite it with -update).
func TestBadInputTable(t *testing.T) {
	if len(badInputs) < 30 {
		t.Fatalf("%d cases; the table promises at least 30", len(badInputs))
	}
	h := Handler()
	var b strings.Builder
	b.WriteString(errorsHeader)
	for i := range badInputs {
		c := &badInputs[i]
		api, msg := c.run(t, h)
		if strings.Contains(msg, "goroutine") || strings.Contains(msg, "panic") {
			t.Errorf("%s: %q", c.name, msg)
		}
		apiCol := "—"
		if len(api) > 0 {
			apiCol = strings.Join(api, "<br>")
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s |\n", i+1, c.name, cell(c.input), cell(c.page), apiCol, cell(msg))
	}
	const file = "../../docs/errors.md"
	if *update {
		if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(file)
	if err != nil || string(got) != b.String() {
		t.Errorf("docs/errors.md is stale (go test ./worker/api -run TestBadInputTable -update): %v", err)
	}
}

// cell escapes a table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "\n", " ")
	return "`" + strings.ReplaceAll(s, "`", "'") + "`"
}

const errorsHeader = `# Bad input: what each front end says

Generated by ` + "`TestBadInputTable`" + ` (worker/api/badinput_test.go) from the real code path; do not edit
by hand (` + "`go test ./worker/api -run TestBadInputTable -update`" + ` rewrites it, and the test fails when
it is stale). Every job the CLI, the page and the API share goes through core/replay, so the message
is one: ` + "`kvsim predict`" + ` prints it after ` + "`kvsim: `" + ` (exit 1), the page shows it where the "page"
column says, and the API answers it in ` + "`error`" + ` with the status and kind of the "API" column (for
every endpoint that takes the input: ` + "`/api/replay`" + ` and, where a sweep meets it, ` + "`/api/sweep`" + `).
The page edits a control into the YAML first, so there its message names the YAML's line:col instead
of the ` + "`--set`" + `. Page-only rows are the page's own checks; API-only rows never reach the core. No
message carries a stack trace.

| # | case | input | page | API | message |
|---|---|---|---|---|---|
`
