package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/record"
	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/core/trace"
	"github.com/kvsim/kvsim/traces"
)

const hostOffload = "engine.workers.aggregated.kv_cache.host_offload"

// aRow is docs/model/cases.md ("Case A: connector comparison")'s row
// "2048 blocks, simple_cpu_v0_32".
var aRow = []string{hostOffload + ".num_host_blocks=2048", hostOffload + ".connector=simple_cpu_v0_32"}

func example(t testing.TB, name string) string {
	t.Helper()
	b, err := traces.Read(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// native runs an example config the way the CLI does: the file's name,
// the trace from the examples, replay.Run with every invariant checked.
func native(t testing.TB, name string, sets []string) *replay.Output {
	t.Helper()
	res, err := replay.Run(replay.Job{Name: name, Dir: ".", Config: []byte(example(t, name)), Sets: sets,
		Traces: replay.Traces{Builtin: true}, Capture: replay.Capture{Requests: true}, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func do(t testing.TB, h http.Handler, method, target, ct string, body []byte) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, bytes.NewReader(body))
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func post(t testing.TB, h http.Handler, target string, v any) *httptest.ResponseRecorder {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return do(t, h, http.MethodPost, target, "application/json", b)
}

// answer is the shape of a replay answer; raw fields keep the bytes.
type answer struct {
	Point      json.RawMessage   `json:"point"`
	Passes     int64             `json:"passes"`
	Summary    json.RawMessage   `json:"summary"`
	Prediction json.RawMessage   `json:"prediction"`
	Requests   []json.RawMessage `json:"requests"`
}

func decode(t testing.TB, rec *httptest.ResponseRecorder) answer {
	t.Helper()
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Fatalf("content type %q", ct)
	}
	var a answer
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
		t.Fatalf("%v: %s", err, rec.Body)
	}
	return a
}

// checkSame asserts that an answer carries the native run's encodings
// byte for byte.
func checkSame(t *testing.T, a answer, res *replay.Output) {
	t.Helper()
	pred := res.Prediction
	if !bytes.Equal(append(append([]byte(nil), a.Prediction...), '\n'), pred) {
		t.Errorf("prediction differs:\n api    %s\n native %s", a.Prediction, pred)
	}
	if !bytes.Equal(a.Summary, res.SummaryJSON()) {
		t.Errorf("summary differs:\n api    %s\n native %s", a.Summary, res.SummaryJSON())
	}
	if a.Passes != res.Stats.Passes {
		t.Errorf("passes %d; native %d", a.Passes, res.Stats.Passes)
	}
	if a.Requests != nil {
		var lines [][]byte
		for _, r := range a.Requests {
			lines = append(lines, r)
		}
		got := append(bytes.Join(lines, []byte{'\n'}), '\n')
		if want := res.Requests; !bytes.Equal(got, want) {
			t.Errorf("requests differ:\n api    %s\n native %s", got, want)
		}
	}
}

func committed(t *testing.T, summary json.RawMessage) int64 {
	t.Helper()
	var s struct {
		C *int64 `json:"committed_prefill_tokens"`
	}
	if err := json.Unmarshal(summary, &s); err != nil || s.C == nil {
		t.Fatalf("summary without committed_prefill_tokens: %s", summary)
	}
	return *s.C
}

// TestReplayMatchesNative is the must-show: the §B config and
// trace (and one §A row) posted to /api/replay give the native run's
// prediction.json byte for byte, whichever way the inputs are sent.
func TestReplayMatchesNative(t *testing.T) {
	h := Handler()
	cases := []struct {
		name      string
		example   string
		sets      []string
		trace     string
		committed int64
	}{
		{"B", "g2-restore.yaml", nil, "g2-restore.jsonl", 28},
		{"B-0.1GBps", "g2-restore.yaml", []string{hostOffload + ".h2d_bandwidth_gbps=0.1"}, "g2-restore.jsonl", 28},
		{"A-2048-simple_cpu_v0_32", "connectors.yaml", aRow, "delta-sessions.jsonl", 5248},
		{"A-none", "connectors.yaml", []string{hostOffload + "=null"}, "delta-sessions.jsonl", 20320},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := native(t, c.example, c.sets)
			if got := res.Summary.CommittedPrefillTokens; got != c.committed {
				t.Fatalf("native committed_prefill_tokens %d; want %d", got, c.committed)
			}
			inline := map[string]any{"config": example(t, c.example), "name": c.example,
				"trace": example(t, c.trace), "set": c.sets, "requests": true}
			for _, v := range []struct {
				how string
				rec *httptest.ResponseRecorder
			}{
				{"inline config and trace", post(t, h, "/api/replay", inline)},
				{"inline config, built-in trace", post(t, h, "/api/replay", map[string]any{
					"config": example(t, c.example), "name": c.example, "set": c.sets, "requests": true})},
				{"built-in example", post(t, h, "/api/replay", map[string]any{"example": c.example, "set": c.sets, "requests": true})},
				{"YAML body", do(t, h, http.MethodPost, "/api/replay?requests=true&name="+c.example+setQuery(c.sets),
					"application/yaml", []byte(example(t, c.example)))},
			} {
				t.Run(v.how, func(t *testing.T) {
					a := decode(t, v.rec)
					checkSame(t, a, res)
					if len(a.Requests) == 0 {
						t.Error("no requests in the answer")
					}
					if got := committed(t, a.Summary); got != c.committed {
						t.Errorf("committed_prefill_tokens %d; want %d", got, c.committed)
					}
				})
			}
			// ?format=prediction answers with prediction.json itself.
			rec := post(t, h, "/api/replay?format=prediction", inline)
			if rec.Code != http.StatusOK || !bytes.Equal(rec.Body.Bytes(), res.Prediction) {
				t.Errorf("format=prediction: %d %s; want %s", rec.Code, rec.Body, res.Prediction)
			}
		})
	}
}

func setQuery(sets []string) string {
	var b strings.Builder
	for _, s := range sets {
		b.WriteString("&set=")
		b.WriteString(strings.NewReplacer("=", "%3D", "&", "%26", "+", "%2B").Replace(s))
	}
	return b.String()
}

// coreMessage is the message core/config or core/trace gives for an input:
// what the CLI prints.
func configMessage(t *testing.T, name, data string, sets []string) string {
	t.Helper()
	_, err := config.Parse(name, ".", []byte(data), sets)
	if err == nil {
		t.Fatal("config accepted")
	}
	return err.Error()
}

func traceMessage(t *testing.T, name, data string, opt trace.Options) string {
	t.Helper()
	opt.Name = name
	_, err := trace.Read(strings.NewReader(data), opt)
	if err == nil {
		t.Fatal("trace accepted")
	}
	return err.Error()
}

const syntheticEngine = `engine:
  mode: aggregated
  model: tiny
  hardware: h200_sxm
  backend: vllm
  workers:
    aggregated:
      parallelism: {replicas: 1, tensor: 1, attention_data: 1}
      scheduler: {max_batched_tokens: 64, max_sequences: 1}
      kv_cache: {block_size: 4, prefix_caching: true, capacity: {type: fixed, blocks: 64}}
      timing: {type: fixed, prefill_ms: 2, decode_ms: 1}
`

func synthetic(source, stop string) string {
	return "traffic:\n  source: " + source + "\n  load: {type: concurrency, concurrency: 1}\n  stop: " + stop + "\n" + syntheticEngine
}

// TestBadRequests: every rejected request gets its status and message.
func TestBadRequests(t *testing.T) {
	h := Handler()
	lim := DefaultLimits()
	bCfg, bTrace := example(t, "g2-restore.yaml"), example(t, "g2-restore.jsonl")
	js := func(v any) []byte {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	badKey := strings.Replace(bCfg, "prefix_caching: true", "prefix_cashing: true", 1)
	badSet := []string{hostOffload + ".num_host_blocks=-3"}
	badTrace := strings.Replace(bTrace, `"input_length":9,"output_length":1,"hash_ids":[11,12,13]`, `"input_length":"9","output_length":1,"hash_ids":[11,12,13]`, 1)
	overCapacity := strings.Replace(bTrace, `"input_length":9,"output_length":1,"hash_ids":[1,2,3]}`+"\n"+`{"request_id":"pressure"`, `"input_length":13,"output_length":1,"hash_ids":[1,2,3]}`+"\n"+`{"request_id":"pressure"`, 1)
	if overCapacity == bTrace || badTrace == bTrace || badKey == bCfg {
		t.Fatal("test inputs did not change")
	}
	traceOpt := trace.Options{Format: "mooncake", BlockSize: 4}
	bigBody := append([]byte(`{"config":"`), bytes.Repeat([]byte("x"), int(lim.MaxBodyBytes))...)
	bigBody = append(bigBody, `"}`...)
	tooManyRows := strings.Repeat("{}\n", lim.MaxTraceRows+1)
	longRun := synthetic("{type: synthetic, input_tokens: 8, output_tokens: 100000}", "{requests: 3}")
	manyRanks := strings.Replace(syntheticEngine, "replicas: 1", "replicas: 65", 1)

	type tc struct {
		name        string
		method, url string
		ct          string
		body        []byte
		unknownLen  bool // send without Content-Length
		status      int
		msg         string // the whole "error"
		kind        string
		file, path  string
		line, col   int
	}
	cases := []tc{
		{name: "GET replay", method: "GET", url: "/api/replay", status: 405, kind: kindRequest,
			msg: "method GET not allowed on /api/replay (use POST)"},
		{name: "POST health", method: "POST", url: "/api/health", ct: "application/json", body: []byte("{}"), status: 405, kind: kindRequest,
			msg: "method POST not allowed on /api/health (use GET)"},
		{name: "PUT sweep", method: "PUT", url: "/api/sweep", status: 405, kind: kindRequest,
			msg: "method PUT not allowed on /api/sweep (use POST)"},
		{name: "text/plain", method: "POST", url: "/api/replay", ct: "text/plain", body: []byte("{}"), status: 415, kind: kindRequest,
			msg: "unsupported content type text/plain: send application/json (or application/yaml with the config as the body)"},
		{name: "no content type", method: "POST", url: "/api/sweep", body: []byte("{}"), status: 415, kind: kindRequest,
			msg: "unsupported content type none: send application/json"},
		{name: "YAML to sweep", method: "POST", url: "/api/sweep", ct: "application/yaml", body: []byte(bCfg), status: 415, kind: kindRequest,
			msg: "unsupported content type application/yaml: send application/json"},
		{name: "body too large", method: "POST", url: "/api/replay", ct: "application/json", body: bigBody, status: 413, kind: kindLimit,
			msg: fmt.Sprintf("request body of %d bytes exceeds the limit of 2097152 bytes", len(bigBody))},
		{name: "body too large, no length", method: "POST", url: "/api/replay", ct: "application/json", body: bigBody, unknownLen: true, status: 413, kind: kindLimit,
			msg: "request body exceeds the limit of 2097152 bytes"},
		{name: "empty body", method: "POST", url: "/api/replay", ct: "application/json", status: 400, kind: kindRequest,
			msg: "empty request body: send a JSON object (see docs/worker.md)"},
		{name: "truncated JSON", method: "POST", url: "/api/replay", ct: "application/json", body: []byte(`{"config": `), status: 400, kind: kindRequest,
			msg: "malformed JSON body: unexpected end of the body"},
		{name: "JSON syntax", method: "POST", url: "/api/replay", ct: "application/json", body: []byte("{\n \"config\": x}"), status: 400, kind: kindRequest,
			msg: "malformed JSON body: 2:12: invalid character 'x' looking for beginning of value"},
		{name: "unknown field", method: "POST", url: "/api/replay", ct: "application/json", body: []byte(`{"cfg": "a: 1"}`), status: 400, kind: kindRequest,
			msg: `malformed JSON body: json: unknown field "cfg"`},
		{name: "wrong type", method: "POST", url: "/api/replay", ct: "application/json", body: []byte(`{"config": 5}`), status: 400, kind: kindRequest,
			msg: `malformed JSON body: 1:12: field "config" must be a string, got number`},
		{name: "two objects", method: "POST", url: "/api/replay", ct: "application/json", body: []byte(`{} {}`), status: 400, kind: kindRequest,
			msg: "malformed JSON body: data after the object at byte 4"},
		{name: "missing config", method: "POST", url: "/api/replay", ct: "application/json", body: []byte(`{"trace": "{}"}`), status: 400, kind: kindRequest,
			msg: `missing config: send "config" (YAML or JSON text) or "example" (a built-in config name)`},
		{name: "config and example", method: "POST", url: "/api/replay", ct: "application/json", body: js(map[string]any{"config": bCfg, "example": "g2-restore.yaml"}), status: 400, kind: kindRequest,
			msg: `give either "config" or "example", not both`},
		{name: "unknown query", method: "POST", url: "/api/replay?request=1", ct: "application/json", body: js(map[string]any{"config": bCfg}), status: 400, kind: kindRequest,
			msg: `unknown query parameter "request" (accepted here: format)`},
		{name: "bad format", method: "POST", url: "/api/replay?format=csv", ct: "application/json", body: js(map[string]any{"example": "g2-restore.yaml"}), status: 400, kind: kindRequest,
			msg: `query parameter format="csv": want json or prediction`},
		{name: "missing trace", method: "POST", url: "/api/replay", ct: "application/json",
			body: js(map[string]any{"config": bCfg, "set": []string{"traffic.source.paths=[mine.jsonl]"}}), status: 422, kind: kindTrace,
			msg:  `--set traffic.source.paths=[mine.jsonl]: traffic.source.paths[0]: "mine.jsonl" is not a built-in trace (built-in: agentic-g2-restore.jsonl, delta-sessions.jsonl, g2-restore.jsonl): send its rows in "trace"`,
			file: "--set traffic.source.paths=[mine.jsonl]", path: "traffic.source.paths[0]"},
		{name: "trace for synthetic", method: "POST", url: "/api/replay", ct: "application/json",
			body: js(map[string]any{"config": synthetic("{type: synthetic, input_tokens: 8, output_tokens: 2}", "{requests: 2}"), "trace": bTrace}), status: 422, kind: kindConfig,
			msg:  "config.yaml:2:18: traffic.source.type: a trace was given with the job, but source type synthetic reads no trace",
			file: "config.yaml", line: 2, col: 18, path: "traffic.source.type"},
		{name: "unknown example", method: "POST", url: "/api/replay", ct: "application/json", body: []byte(`{"example": "nope.yaml"}`), status: 404, kind: kindNotFound,
			msg: `unknown example "nope.yaml" (GET /api/examples lists them: ` + strings.Join(traces.Names(), ", ") + ")"},
		{name: "trace as example config", method: "POST", url: "/api/replay", ct: "application/json", body: []byte(`{"example": "g2-restore.jsonl"}`), status: 404, kind: kindNotFound,
			msg: `unknown example "g2-restore.jsonl" (GET /api/examples lists them: ` + strings.Join(traces.Names(), ", ") + ")"},
		{name: "GET unknown example", method: "GET", url: "/api/examples/nope.yaml", status: 404, kind: kindNotFound,
			msg: `unknown example "nope.yaml" (GET /api/examples lists them: ` + strings.Join(traces.Names(), ", ") + ")"},
		{name: "unknown endpoint", method: "GET", url: "/api/nope", status: 404, kind: kindNotFound,
			msg: "no such endpoint: /api/nope (see GET /api/health and docs/worker.md)"},
		{name: "config unknown key", method: "POST", url: "/api/replay", ct: "application/json",
			body: js(map[string]any{"config": badKey, "name": "g2-restore.yaml", "trace": bTrace}), status: 422, kind: kindConfig,
			msg: configMessage(t, "g2-restore.yaml", badKey, nil), file: "g2-restore.yaml", line: 17, col: 9, path: "engine.workers.aggregated.kv_cache.prefix_cashing"},
		{name: "config unknown key, YAML body", method: "POST", url: "/api/replay", ct: "application/yaml", body: []byte(badKey), status: 422, kind: kindConfig,
			msg: configMessage(t, "config.yaml", badKey, nil), file: "config.yaml", line: 17, col: 9, path: "engine.workers.aggregated.kv_cache.prefix_cashing"},
		{name: "config bad --set", method: "POST", url: "/api/replay", ct: "application/json",
			body: js(map[string]any{"example": "g2-restore.yaml", "set": badSet}), status: 422, kind: kindConfig,
			msg: configMessage(t, "g2-restore.yaml", bCfg, badSet), file: "--set " + badSet[0], path: hostOffload + ".num_host_blocks"},
		{name: "config not YAML", method: "POST", url: "/api/replay", ct: "application/json",
			body: js(map[string]any{"config": "traffic: [1,"}), status: 422, kind: kindConfig,
			msg: configMessage(t, "config.yaml", "traffic: [1,", nil), file: "config.yaml", line: 1, col: 10},
		{name: "trace row rejected", method: "POST", url: "/api/replay", ct: "application/json",
			body: js(map[string]any{"config": bCfg, "trace": badTrace}), status: 422, kind: kindTrace,
			msg: traceMessage(t, "g2-restore.jsonl", badTrace, traceOpt), file: "g2-restore.jsonl", line: 2, col: 81, path: "input_length"},
		{name: "trace over capacity", method: "POST", url: "/api/replay", ct: "application/json",
			body: js(map[string]any{"config": bCfg, "trace": overCapacity}), status: 422, kind: kindTrace,
			msg: traceMessage(t, "g2-restore.jsonl", overCapacity, traceOpt), file: "g2-restore.jsonl", line: 1, col: 71, path: "input_length"},
		{name: "too many trace rows", method: "POST", url: "/api/replay", ct: "application/json",
			body: js(map[string]any{"config": bCfg, "trace": tooManyRows}), status: 413, kind: kindLimit,
			msg: "trace has 50001 rows, more than the limit of 50000"},
		{name: "too many passes", method: "POST", url: "/api/replay", ct: "application/json",
			body: js(map[string]any{"config": longRun, "set": []string{"engine.workers.aggregated.kv_cache.capacity.blocks=30000"}}), status: 422, kind: kindLimit,
			msg: "the run needs more passes than allowed (200000)"},
		{name: "too many synthetic requests", method: "POST", url: "/api/replay", ct: "application/json",
			body: js(map[string]any{"config": synthetic("{type: synthetic, input_tokens: 8, output_tokens: 2}", "{requests: 50001}")}), status: 422, kind: kindLimit,
			msg:  "config.yaml:4:20: traffic.stop.requests: the workload has 50,001 requests, more than the limit of 50,000",
			file: "config.yaml", line: 4, col: 20, path: "traffic.stop.requests"},
		{name: "too many tokens", method: "POST", url: "/api/replay", ct: "application/json",
			body: js(map[string]any{"config": synthetic("{type: synthetic, input_tokens: 100000, output_tokens: 100}", "{requests: 500}")}), status: 422, kind: kindLimit,
			msg:  "config.yaml:4:20: traffic.stop.requests: the run would need about 275.7 MiB of memory (500 requests, 50,050,000 tokens, 64 G1 and 0 G2 blocks), more than the limit of 64.0 MiB",
			file: "config.yaml", line: 4, col: 20, path: "traffic.stop.requests"},
		{name: "too many request rows", method: "POST", url: "/api/replay", ct: "application/json",
			body: js(map[string]any{"config": synthetic("{type: synthetic, input_tokens: 8, output_tokens: 2}", "{requests: 10001}"), "requests": true}), status: 422, kind: kindLimit,
			msg: "the per-request rows (requests.jsonl) are kept for runs of at most 10,000 requests; this one has 10,001"},
		{name: "too many ranks", method: "POST", url: "/api/replay", ct: "application/json",
			body: js(map[string]any{"config": "traffic:\n  source: {type: synthetic, input_tokens: 8, output_tokens: 2}\n  load: {type: concurrency, concurrency: 1}\n  stop: {requests: 2}\n" + manyRanks}), status: 422, kind: kindLimit,
			msg:  "config.yaml:11:5: engine.workers: 65 DP ranks (replicas × attention_data over all roles) exceed the limit of 64",
			file: "config.yaml", line: 11, col: 5, path: "engine.workers"},
		{name: "too many G1 blocks", method: "POST", url: "/api/replay", ct: "application/json",
			body: js(map[string]any{"example": "g2-restore.yaml", "set": []string{"engine.workers.aggregated.kv_cache.capacity.blocks=2000000"}}), status: 422, kind: kindLimit,
			msg:  "--set engine.workers.aggregated.kv_cache.capacity.blocks=2000000: engine.workers.aggregated.kv_cache.capacity.blocks: 2,000,000 G1 blocks per DP rank exceed the limit of 1,048,576",
			file: "--set engine.workers.aggregated.kv_cache.capacity.blocks=2000000", path: "engine.workers.aggregated.kv_cache.capacity.blocks"},
		{name: "pass record of a sweep point", method: "POST", url: "/api/sweep", ct: "application/json",
			body:   js(map[string]any{"example": "g2-restore.yaml", "vary": map[string]any{"num_host_blocks": []int{4, 8}}, "point": 0, "passes": true}),
			status: 422, kind: kindRequest, path: "passes",
			msg: "a sweep point does not return the per-pass record; ask /api/replay with the point's set"},
		{name: "sweep without vary", method: "POST", url: "/api/sweep", ct: "application/json",
			body: js(map[string]any{"example": "g2-restore.yaml"}), status: 400, kind: kindRequest,
			msg: `missing "vary": an object mapping --vary paths to arrays of values, or an array of "PATH=v1,v2" strings`},
		{name: "sweep vary not object", method: "POST", url: "/api/sweep", ct: "application/json",
			body: []byte(`{"example": "g2-restore.yaml", "vary": 1}`), status: 400, kind: kindRequest,
			msg: `"vary" must be an object mapping --vary paths to arrays of values, or an array of "PATH=v1,v2" strings`},
		{name: "sweep vary array of numbers", method: "POST", url: "/api/sweep", ct: "application/json",
			body: []byte(`{"example": "g2-restore.yaml", "vary": [1]}`), status: 400, kind: kindRequest,
			msg: `"vary" as an array must hold --vary strings "PATH=v1,v2,…"`},
		{name: "sweep empty axis", method: "POST", url: "/api/sweep", ct: "application/json",
			body: []byte(`{"example": "g2-restore.yaml", "vary": {"a.b": []}}`), status: 400, kind: kindRequest,
			msg: `"vary"["a.b"] has no values`},
		{name: "sweep duplicate axis", method: "POST", url: "/api/sweep", ct: "application/json",
			body: []byte(`{"example": "g2-restore.yaml", "vary": {"a.b": [1], "a.b": [2]}}`), status: 400, kind: kindRequest,
			msg: `"vary" names "a.b" twice`},
		{name: "sweep too many points", method: "POST", url: "/api/sweep", ct: "application/json",
			body: []byte(`{"example": "g2-restore.yaml", "vary": {"a": [1,2,3,4,5,6,7,8,9], "b": [1,2,3,4,5,6,7,8]}}`), status: 422, kind: kindLimit,
			msg: "the grid has more than 64 points (the limit)", path: "vary"},
		{name: "sweep point out of range", method: "POST", url: "/api/sweep", ct: "application/json",
			body: []byte(`{"example": "g2-restore.yaml", "vary": {"connector": ["offloading_v0_24", "simple_cpu_v0_32"]}, "point": 2}`), status: 400, kind: kindRequest,
			msg: `"point" 2 is out of range: the grid has points 0 to 1`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(c.method, c.url, bytes.NewReader(c.body))
			if c.unknownLen {
				req.Body = io.NopCloser(bytes.NewReader(c.body))
				req.ContentLength = -1
			}
			if c.ct != "" {
				req.Header.Set("Content-Type", c.ct)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			var got apiError
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatalf("%d, body not JSON: %s", rec.Code, rec.Body)
			}
			if rec.Code != c.status || got.Status != c.status {
				t.Errorf("status %d (body %d); want %d", rec.Code, got.Status, c.status)
			}
			if got.Msg != c.msg {
				t.Errorf("error\n got %q\nwant %q", got.Msg, c.msg)
			}
			if got.Kind != c.kind {
				t.Errorf("kind %q; want %q", got.Kind, c.kind)
			}
			if got.File != c.file || got.Line != c.line || got.Col != c.col || got.Path != c.path {
				t.Errorf("position %s:%d:%d path %q; want %s:%d:%d path %q", got.File, got.Line, got.Col, got.Path, c.file, c.line, c.col, c.path)
			}
			if c.status == 405 && rec.Header().Get("Allow") == "" {
				t.Error("405 without Allow")
			}
		})
	}
}

// TestPassRecord: "passes": true returns passes.jsonl as "record", which
// decodes to the same record the CLI writes.
func TestPassRecord(t *testing.T) {
	h := Handler()
	req := httptest.NewRequest("POST", "/api/replay", strings.NewReader(`{"example": "g2-restore.yaml", "passes": true}`))
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != 200 {
		t.Fatalf("status %d: %s", w.Code, w.Body.String())
	}
	var out struct {
		Record string `json:"record"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	rec, err := record.Decode(strings.NewReader(out.Record))
	if err != nil {
		t.Fatal(err)
	}
	if n := rec.NumPasses(0); n != 5 {
		t.Errorf("record has %d passes; want 5", n)
	}
}
