package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/engine"
	"github.com/kvsim/kvsim/core/record"
	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/core/trace"
)

// replayRequest is the JSON body of POST /api/replay (and the common part
// of POST /api/sweep).
type replayRequest struct {
	// Config is the config text, YAML or JSON (JSON is YAML).
	Config *string `json:"config"`
	// Example names a built-in config instead of Config.
	Example string `json:"example"`
	// Name is the file name used in error positions ("config.yaml" by
	// default, the example's name for Example).
	Name string `json:"name"`
	// Trace is the JSONL text of the trace the config's
	// traffic.source.paths[0] names. Without it that path must name a
	// built-in trace.
	Trace *string `json:"trace"`
	// Set holds --set PATH=VALUE overrides, applied in order.
	Set []string `json:"set"`
	// Requests adds requests.jsonl's rows to the answer.
	Requests bool `json:"requests"`
	// Passes asks for the per-pass record.
	Passes bool `json:"passes"`
}

const defaultConfigName = "config.yaml"

// yamlTypes are the content types of a raw YAML config body.
var yamlTypes = map[string]bool{
	"application/yaml": true, "application/x-yaml": true, "text/yaml": true, "text/x-yaml": true,
}

// readBody reads a POST body within the size limit and decodes it: a JSON
// object into v, or (for replay only, rawYAML non-nil) a raw YAML config
// whose other inputs come from the query string.
func (s *server) readBody(r *http.Request, v any, rawYAML *replayRequest) *apiError {
	ct := r.Header.Get("Content-Type")
	if err := checkQuery(r, ct, rawYAML != nil); err != nil {
		return err
	}
	mt, _, err := mime.ParseMediaType(ct)
	isJSON := err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
	isYAML := err == nil && yamlTypes[mt] && rawYAML != nil
	if !isJSON && !isYAML {
		want := "application/json"
		if rawYAML != nil {
			want += " (or application/yaml with the config as the body)"
		}
		if ct == "" {
			ct = "none"
		}
		return &apiError{Status: http.StatusUnsupportedMediaType, Kind: kindRequest,
			Msg: fmt.Sprintf("unsupported content type %s: send %s", ct, want)}
	}
	if r.ContentLength > s.lim.MaxBodyBytes {
		return tooLarge(fmt.Sprintf("request body of %d bytes exceeds the limit of %d bytes", r.ContentLength, s.lim.MaxBodyBytes))
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, s.lim.MaxBodyBytes+1))
	if err != nil {
		return badRequest("reading the request body: " + err.Error())
	}
	if int64(len(body)) > s.lim.MaxBodyBytes {
		return tooLarge(fmt.Sprintf("request body exceeds the limit of %d bytes", s.lim.MaxBodyBytes))
	}
	if isYAML {
		return yamlRequest(body, r, rawYAML)
	}
	return decodeJSON(body, v)
}

// decodeJSON decodes exactly one JSON object with known fields only.
func decodeJSON(body []byte, v any) *apiError {
	if len(bytes.TrimSpace(body)) == 0 {
		return badRequest("empty request body: send a JSON object (see docs/worker.md)")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest("malformed JSON body: " + jsonMessage(body, err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest(fmt.Sprintf("malformed JSON body: data after the object at byte %d", dec.InputOffset()))
	}
	return nil
}

// jsonMessage describes a decoding error with a line:col of the body.
func jsonMessage(body []byte, err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		l, c := lineCol(body, se.Offset)
		return fmt.Sprintf("%d:%d: %s", l, c, se.Error())
	case errors.As(err, &te):
		l, c := lineCol(body, te.Offset)
		return fmt.Sprintf("%d:%d: field %q must be %s, got %s", l, c, te.Field, jsonKind(te.Type.Kind().String()), te.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "unexpected end of the body"
	}
	return err.Error()
}

func jsonKind(k string) string {
	switch k {
	case "ptr", "string":
		return "a string"
	case "slice":
		return "an array"
	case "bool":
		return "a boolean"
	case "int", "int64":
		return "an integer"
	case "struct", "map":
		return "an object"
	}
	return "a " + k
}

// lineCol turns a byte offset into a 1-based line and column.
func lineCol(b []byte, off int64) (int, int) {
	off = min(max(off, 0), int64(len(b)))
	before := b[:off]
	line := bytes.Count(before, []byte{'\n'}) + 1
	return line, int(off) - (bytes.LastIndexByte(before, '\n') + 1)
}

// checkQuery rejects query parameters the endpoint does not read: a JSON
// body carries everything but format (replay only); a YAML body takes
// name, set, requests, passes and format.
func checkQuery(r *http.Request, ct string, replay bool) *apiError {
	mt, _, _ := mime.ParseMediaType(ct)
	allowed := map[string]bool{}
	switch {
	case replay && yamlTypes[mt]:
		allowed = map[string]bool{"name": true, "set": true, "requests": true, "passes": true, "format": true}
	case replay:
		allowed["format"] = true
	}
	for k := range r.URL.Query() {
		if !allowed[k] {
			names := make([]string, 0, len(allowed))
			for _, n := range []string{"name", "set", "requests", "passes", "format"} {
				if allowed[n] {
					names = append(names, n)
				}
			}
			list := "none"
			if len(names) > 0 {
				list = strings.Join(names, ", ")
			}
			return badRequest(fmt.Sprintf("unknown query parameter %q (accepted here: %s)", k, list))
		}
	}
	return nil
}

// yamlRequest is a raw YAML config body; the query string carries name,
// set (repeatable) and the requests and passes flags. The trace must be a
// built-in one (traffic.source.paths[0] names it).
func yamlRequest(body []byte, r *http.Request, req *replayRequest) *apiError {
	q := r.URL.Query()
	cfg := string(body)
	req.Config = &cfg
	req.Name = q.Get("name")
	req.Set = q["set"]
	var err *apiError
	if req.Requests, err = boolParam(q.Get("requests"), "requests"); err != nil {
		return err
	}
	if req.Passes, err = boolParam(q.Get("passes"), "passes"); err != nil {
		return err
	}
	return nil
}

func boolParam(v, name string) (bool, *apiError) {
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, badRequest(fmt.Sprintf("query parameter %s=%q: want true or false", name, v))
	}
	return b, nil
}

// maxRecordRows bounds the runs whose per-pass record ("passes": true) the
// API returns: the record grows with every pass and block.
const maxRecordRows = 1000

// configText resolves the config of a request: its text and its name.
func configText(req *replayRequest) ([]byte, string, *apiError) {
	switch {
	case req.Config != nil && req.Example != "":
		return nil, "", badRequest(`give either "config" or "example", not both`)
	case req.Example != "":
		data, ok := exampleFile(req.Example)
		if !ok || !isConfigName(req.Example) {
			return nil, "", unknownExample(req.Example)
		}
		name := req.Name
		if name == "" {
			name = req.Example
		}
		return data, name, nil
	case req.Config == nil || strings.TrimSpace(*req.Config) == "":
		return nil, "", badRequest(`missing config: send "config" (YAML or JSON text) or "example" (a built-in config name)`)
	}
	name := req.Name
	if name == "" {
		name = defaultConfigName
	}
	return []byte(*req.Config), name, nil
}

func isConfigName(n string) bool { return path.Ext(n) == ".yaml" || path.Ext(n) == ".yml" }

// run parses, bounds and runs one replay request. It never runs work
// beyond s.lim.
func (s *server) run(req *replayRequest) (*replay.Result, *apiError) {
	data, name, aerr := configText(req)
	if aerr != nil {
		return nil, aerr
	}
	cfg, err := config.Parse(name, ".", data, req.Set)
	if err != nil {
		return nil, coreError(err)
	}
	return s.runConfig(cfg, req)
}

// runConfig bounds and runs a parsed config: the trace is resolved from
// the request, and every limit is checked before the engine starts.
func (s *server) runConfig(cfg *config.Config, req *replayRequest) (*replay.Result, *apiError) {
	if aerr := s.checkConfig(cfg); aerr != nil {
		return nil, aerr
	}
	open, aerr := s.opener(cfg, req)
	if aerr != nil {
		return nil, aerr
	}
	wl, err := replay.Workload(cfg, open)
	if err != nil {
		return nil, coreError(err)
	}
	if aerr := s.checkWorkload(cfg, wl); aerr != nil {
		return nil, aerr
	}
	if req.Requests && wl.Rows > s.lim.MaxRequestRows {
		return nil, overLimit("requests", fmt.Sprintf("the per-request rows are limited to runs of at most %d requests, and this one has %d: leave out \"requests\"", s.lim.MaxRequestRows, wl.Rows))
	}
	if req.Passes && wl.Rows > maxRecordRows {
		return nil, overLimit("passes", fmt.Sprintf("the per-pass record is limited to runs of at most %d requests, and this one has %d: leave out \"passes\"", maxRecordRows, wl.Rows))
	}
	opts := engine.Options{MaxPasses: s.lim.MaxPasses}
	var rr *record.Recorder
	if req.Passes {
		rr = record.NewRecorder()
		opts.Observer = rr
	}
	res, err := replay.Run(cfg, wl, opts)
	if err != nil {
		return nil, coreError(err)
	}
	if rr != nil {
		var b bytes.Buffer
		if err := rr.Record().WriteJSONL(&b); err != nil {
			return nil, coreError(err)
		}
		res.Record = b.Bytes()
	}
	return res, nil
}

// opener resolves traffic.source.paths[0]: the inline trace if given,
// otherwise the built-in example of that name.
func (s *server) opener(cfg *config.Config, req *replayRequest) (replay.Opener, *apiError) {
	src := cfg.Traffic.Source
	if src.Type != config.SourceTrace {
		if req.Trace != nil {
			return nil, badRequest(fmt.Sprintf(`"trace" was given but traffic.source.type is %s, which reads no trace`, src.Type))
		}
		return nil, nil
	}
	var data []byte
	if req.Trace != nil {
		data = []byte(*req.Trace)
	} else {
		p := path.Clean(src.Paths[0])
		var ok bool
		if data, ok = exampleFile(p); !ok || isConfigName(p) {
			return nil, badRequest(fmt.Sprintf(`missing trace: traffic.source.paths[0] is %q, which is not a built-in trace; send its rows in "trace"`, src.Paths[0]))
		}
	}
	if n := countRows(data); n > s.lim.MaxTraceRows {
		return nil, tooLarge(fmt.Sprintf("trace has %d rows, more than the limit of %d", n, s.lim.MaxTraceRows))
	}
	return func(string) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }, nil
}

// checkConfig bounds what a config asks for before anything is built:
// ranks, G1 blocks and (for synthetic sources, whose workload the core
// generates) requests, tokens and KV blocks.
func (s *server) checkConfig(cfg *config.Config) *apiError {
	var ranks, g1 int64
	for _, r := range cfg.Roles() {
		n := int64(r.Parallelism.Replicas) * int64(r.Parallelism.AttentionData)
		ranks += n
		g1 += n * int64(r.KVCache.CapacityBlocks)
	}
	if ranks > int64(s.lim.MaxRanks) {
		return overLimit("engine.workers", fmt.Sprintf("%d DP ranks (replicas × attention_data) exceed the limit of %d", ranks, s.lim.MaxRanks))
	}
	if g1 > s.lim.MaxG1Blocks {
		return overLimit("engine.workers", fmt.Sprintf("%d G1 blocks over all ranks exceed the limit of %d", g1, s.lim.MaxG1Blocks))
	}
	src, stop := cfg.Traffic.Source, cfg.Traffic.Stop
	bs := float64(blockSize(cfg))
	var reqs, tokens, blocks float64
	switch src.Type {
	case config.SourceSynthetic:
		reqs = float64(stop.Requests)
		per := float64(src.InputTokens) + float64(src.OutputTokens)
		tokens = reqs * per
		blocks = reqs * (math.Floor(per/bs) + 1)
	case config.SourceSyntheticSession:
		t := float64(src.Session.Turns)
		reqs = float64(stop.Sessions) * t
		per := float64(src.NewInputTokensPerTurn) + float64(src.OutputTokensPerTurn)
		// Turn k (from 1) of a session is sized for k × per tokens.
		tokens = float64(stop.Sessions) * per * t * (t + 1) / 2
		blocks = tokens/bs + reqs
	default:
		return nil
	}
	if reqs > float64(s.lim.MaxTraceRows) {
		return overLimit("traffic.stop", fmt.Sprintf("%.0f synthetic requests exceed the limit of %d", reqs, s.lim.MaxTraceRows))
	}
	return s.checkBudget(tokens, blocks)
}

func (s *server) checkBudget(tokens, blocks float64) *apiError {
	if tokens > float64(s.lim.MaxTokens) {
		return overLimit("", fmt.Sprintf("the workload needs %.0f tokens (prompts with history plus outputs), more than the limit of %d", tokens, s.lim.MaxTokens))
	}
	if blocks > float64(s.lim.MaxKVBlocks) {
		return overLimit("", fmt.Sprintf("the workload needs %.0f KV block slots, more than the limit of %d", blocks, s.lim.MaxKVBlocks))
	}
	return nil
}

// checkWorkload bounds a trace workload the way engine.New sizes its
// buffers: every turn is sized for its prompt (with history when turns
// accumulate) plus its output.
func (s *server) checkWorkload(cfg *config.Config, wl *trace.Workload) *apiError {
	if wl.Rows > s.lim.MaxTraceRows {
		return tooLarge(fmt.Sprintf("trace has %d rows, more than the limit of %d", wl.Rows, s.lim.MaxTraceRows))
	}
	bs := float64(blockSize(cfg))
	var tokens, blocks float64
	for i := range wl.Sessions {
		known := 0.0
		for _, t := range wl.Sessions[i].Turns {
			if !wl.Accumulate {
				known = 0
			}
			known += float64(t.ContentLength) + float64(t.OutputLength)
			tokens += known
			blocks += math.Floor(known/bs) + 1
		}
	}
	return s.checkBudget(tokens, blocks)
}

func blockSize(cfg *config.Config) int {
	for _, r := range cfg.Roles() {
		return max(r.KVCache.BlockSize, 1)
	}
	return 64
}

func (s *server) replay(w http.ResponseWriter, r *http.Request) {
	var req replayRequest
	if err := s.readBody(r, &req, &req); err != nil {
		writeError(w, err)
		return
	}
	format := r.URL.Query().Get("format")
	if format != "" && format != "json" && format != "prediction" {
		writeError(w, badRequest(fmt.Sprintf("query parameter format=%q: want json or prediction", format)))
		return
	}
	res, err := s.run(&req)
	if err != nil {
		writeError(w, err)
		return
	}
	if format == "prediction" {
		writeRaw(w, http.StatusOK, res.PredictionJSON())
		return
	}
	writeRaw(w, http.StatusOK, resultJSON(nil, res, req.Requests))
}

// resultJSON writes the answer of a run. The core's encodings are copied
// verbatim (not re-encoded), so "prediction" holds prediction.json's bytes
// without its final newline, and each element of "requests" one line of
// requests.jsonl. head, if any, is written first (a sweep's "point").
func resultJSON(head []byte, res *replay.Result, requests bool) []byte {
	b := []byte{'{'}
	if head != nil {
		b = append(b, `"point":`...)
		b = append(b, head...)
		b = append(b, ',')
	}
	b = append(b, `"passes":`...)
	b = strconv.AppendInt(b, res.Engine.Passes, 10)
	b = append(b, `,"summary":`...)
	b = append(b, res.SummaryJSON()...)
	b = append(b, `,"prediction":`...)
	b = append(b, bytes.TrimSuffix(res.PredictionJSON(), []byte{'\n'})...)
	if requests {
		b = append(b, `,"requests":[`...)
		lines := bytes.Split(bytes.TrimSuffix(res.RequestsJSONL(), []byte{'\n'}), []byte{'\n'})
		for i, l := range lines {
			if len(l) == 0 {
				continue
			}
			if i > 0 {
				b = append(b, ",\n"...)
			}
			b = append(b, l...)
		}
		b = append(b, ']')
	}
	if res.Record != nil {
		// The per-pass record travels as the text of passes.jsonl.
		b = append(b, `,"record":`...)
		b = strconv.AppendQuote(b, string(res.Record))
	}
	return append(b, "}\n"...)
}
