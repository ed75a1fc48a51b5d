package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/kvsim/kvsim/core/replay"
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

// job turns a replay request into a replay job: the config, its
// overrides, the inline trace (bounded by its rows before anything is
// parsed) or the built-in one the config names, and the worker's limits.
func (s *server) job(req *replayRequest) (replay.Job, *apiError) {
	data, name, aerr := configText(req)
	if aerr != nil {
		return replay.Job{}, aerr
	}
	job := replay.Job{Name: name, Dir: ".", Config: data, Sets: req.Set, Limits: s.lim.Run,
		Traces:  replay.Traces{Builtin: true, Hint: `send its rows in "trace"`},
		Capture: replay.Capture{Requests: req.Requests, Passes: req.Passes}}
	if req.Trace != nil {
		if n := countRows([]byte(*req.Trace)); n > s.lim.MaxTraceRows {
			return replay.Job{}, tooLarge(fmt.Sprintf("trace has %d rows, more than the limit of %d", n, s.lim.MaxTraceRows))
		}
		job.Traces.Inline = []byte(*req.Trace)
	}
	return job, nil
}

// run runs one job; every limit is checked by core/replay before the
// engine starts, and the passes during the run.
func run(job replay.Job) (*replay.Output, *apiError) {
	out, err := replay.Run(job)
	if err != nil {
		return nil, coreError(err)
	}
	return out, nil
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
	job, aerr := s.job(&req)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	out, aerr := run(job)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	if format == "prediction" {
		writeRaw(w, http.StatusOK, out.Prediction)
		return
	}
	writeRaw(w, http.StatusOK, resultJSON(nil, out))
}

// resultJSON writes the answer of a run. The core's encodings are copied
// verbatim (not re-encoded), so "prediction" holds prediction.json's bytes
// without its final newline, each element of "requests" one line of
// requests.jsonl, and "record" the text of passes.jsonl. head, if any, is
// written first (a sweep's "point").
func resultJSON(head []byte, out *replay.Output) []byte {
	b := []byte{'{'}
	if head != nil {
		b = append(b, `"point":`...)
		b = append(b, head...)
		b = append(b, ',')
	}
	b = append(b, `"passes":`...)
	b = strconv.AppendInt(b, out.Stats.Passes, 10)
	b = append(b, `,"summary":`...)
	b = append(b, out.SummaryJSON()...)
	b = append(b, `,"prediction":`...)
	b = append(b, bytes.TrimSuffix(out.Prediction, []byte{'\n'})...)
	if out.Requests != nil {
		b = append(b, `,"requests":[`...)
		lines := bytes.Split(bytes.TrimSuffix(out.Requests, []byte{'\n'}), []byte{'\n'})
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
	if out.Record != nil {
		var rec bytes.Buffer
		if err := out.Record.WriteJSONL(&rec); err == nil {
			b = append(b, `,"record":`...)
			b = strconv.AppendQuote(b, rec.String())
		}
	}
	return append(b, "}\n"...)
}
