// Package api is the HTTP API of the kvsim Cloudflare worker: a plain
// http.Handler over core/replay. cmd/worker serves it with
// syumai/workers on js/wasm; tests drive it natively with httptest.
//
// Endpoints (docs/worker.md is the reference):
//
//	GET  /api/health           liveness and the limits below
//	GET  /api/examples         the built-in configs and traces (package traces)
//	GET  /api/examples/{name}  one example file, verbatim
//	POST /api/replay           run one config over an inline or built-in trace
//	POST /api/sweep            list a small grid's points, or run one point
//
// Every answer is JSON except GET /api/examples/{name} and
// POST /api/replay?format=prediction. Every error is a JSON object
// {"error", "status", "kind"} plus "file", "line", "col" and "path" when
// the problem has a position (a config or trace rejected by the core, with
// the message the CLI prints).
//
// Work is bounded before and during a run (Limits): the body size and the
// trace rows here, then core/replay's limits (the same defaults every front
// end meets, then the worker's tighter ones): the ranks, G1 and G2 blocks a
// config asks for, the workload's requests and estimated memory, and the
// number of scheduler passes. A worker isolate starts a
// fresh Go runtime for each request, so nothing here keeps state between
// requests.
package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"runtime"
	"strings"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/traces"
)

// Limits bound the work one request may ask for: the HTTP body and the
// grid here, the run itself with core/replay's Limits (checked after
// replay.DefaultLimits, so a job over those is refused with the same
// message the CLI and the page give).
type Limits struct {
	// MaxBodyBytes bounds a POST body (413 above it).
	MaxBodyBytes int64 `json:"max_body_bytes"`
	// MaxTraceRows bounds the non-blank lines of an inline trace (413
	// above it, before the trace is parsed).
	MaxTraceRows int `json:"max_trace_rows"`
	// MaxSweepPoints bounds the points of one sweep grid (422).
	MaxSweepPoints int `json:"max_sweep_points"`
	// Run bounds each replay (422): ranks, G1 and G2 blocks, requests,
	// estimated memory, the requests of runs that return per-request rows
	// or the per-pass record, and the scheduler passes.
	Run replay.Limits `json:"run"`
}

// DefaultLimits are the limits the worker runs with: a worker isolate has
// 128 MB of memory and a bounded CPU time per request.
func DefaultLimits() Limits {
	return Limits{
		MaxBodyBytes:   2 << 20,
		MaxTraceRows:   50_000,
		MaxSweepPoints: 64,
		Run: replay.Limits{
			MaxRanks:          64,
			MaxG1Blocks:       1 << 20,
			MaxG2Blocks:       1 << 20,
			MaxRequests:       50_000,
			MaxMemoryBytes:    64 << 20,
			MaxRequestRows:    10_000,
			MaxRecordRequests: 1_000,
			MaxPasses:         200_000,
		},
	}
}

type server struct {
	lim Limits
	mux *http.ServeMux
}

// Handler returns the API with DefaultLimits.
func Handler() http.Handler { return New(DefaultLimits()) }

// New returns the API with the given limits.
func New(lim Limits) http.Handler {
	s := &server{lim: lim, mux: http.NewServeMux()}
	// Methods are checked by only() rather than by method patterns so that
	// a wrong method gets a JSON 405 like every other error.
	s.mux.Handle("/api/health", only(http.MethodGet, s.health))
	s.mux.Handle("/api/examples", only(http.MethodGet, s.examples))
	s.mux.Handle("/api/examples/{name}", only(http.MethodGet, s.example))
	s.mux.Handle("/api/replay", only(http.MethodPost, s.replay))
	s.mux.Handle("/api/sweep", only(http.MethodPost, s.sweep))
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &apiError{Status: http.StatusNotFound, Kind: kindNotFound,
			Msg: fmt.Sprintf("no such endpoint: %s (see GET /api/health and docs/worker.md)", r.URL.Path)})
	})
	return s
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		// The core does not panic on any input it accepts; if it ever does,
		// answer with a JSON 500 instead of a dropped connection.
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			writeError(w, &apiError{Status: http.StatusInternalServerError, Kind: kindInternal,
				Msg: fmt.Sprintf("internal error: %v", v)})
		}
	}()
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	if r.Method == http.MethodOptions {
		h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Content-Type")
		h.Set("Access-Control-Max-Age", "86400")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// only admits one method (GET also admits HEAD).
func only(method string, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method && !(method == http.MethodGet && r.Method == http.MethodHead) {
			w.Header().Set("Allow", method+", OPTIONS")
			writeError(w, &apiError{Status: http.StatusMethodNotAllowed, Kind: kindRequest,
				Msg: fmt.Sprintf("method %s not allowed on %s (use %s)", r.Method, r.URL.Path, method)})
			return
		}
		h(w, r)
	})
}

func (s *server) health(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"ok": true, "goos": runtime.GOOS, "goarch": runtime.GOARCH, "limits": s.lim,
	})
}

// exampleInfo is one entry of GET /api/examples.
type exampleInfo struct {
	Name string `json:"name"`
	Kind string `json:"kind"` // "config" or "trace"
	// Description is the config's leading comment.
	Description string `json:"description,omitempty"`
	Bytes       int    `json:"bytes"`
	// Trace is the trace a config reads (traffic.source.paths[0]).
	Trace string `json:"trace,omitempty"`
	// Rows is a trace's row count.
	Rows int `json:"rows,omitempty"`
}

func (s *server) examples(w http.ResponseWriter, r *http.Request) {
	var out []exampleInfo
	for _, name := range traces.Names() {
		data, err := traces.Read(name)
		if err != nil {
			continue
		}
		e := exampleInfo{Name: name, Bytes: len(data)}
		switch path.Ext(name) {
		case ".yaml", ".yml":
			e.Kind = "config"
			e.Description = leadingComment(data)
			if cfg, err := config.Parse(name, ".", data, nil); err == nil && cfg.Traffic.Source.Type == config.SourceTrace {
				e.Trace = cfg.Traffic.Source.Paths[0]
			}
		case ".jsonl":
			e.Kind = "trace"
			e.Rows = countRows(data)
		default:
			continue
		}
		out = append(out, e)
	}
	writeJSON(w, http.StatusOK, map[string]any{"examples": out})
}

func (s *server) example(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	data, ok := exampleFile(name)
	if !ok {
		writeError(w, unknownExample(name))
		return
	}
	ct := "text/plain; charset=utf-8"
	switch path.Ext(name) {
	case ".yaml", ".yml":
		ct = "application/yaml; charset=utf-8"
	case ".jsonl":
		ct = "application/jsonl; charset=utf-8"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.WriteHeader(http.StatusOK)
	w.Write(data)
}

// exampleFile returns a built-in example by its exact name.
func exampleFile(name string) ([]byte, bool) {
	for _, n := range traces.Names() {
		if n == name {
			data, err := traces.Read(n)
			return data, err == nil
		}
	}
	return nil, false
}

func unknownExample(name string) *apiError {
	return &apiError{Status: http.StatusNotFound, Kind: kindNotFound,
		Msg: fmt.Sprintf("unknown example %q (GET /api/examples lists them: %s)", name, strings.Join(traces.Names(), ", "))}
}

// leadingComment is the text of the comment lines a config starts with.
func leadingComment(data []byte) string {
	var parts []string
	for _, line := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(line)
		if !strings.HasPrefix(t, "#") {
			break
		}
		parts = append(parts, strings.TrimSpace(strings.TrimPrefix(t, "#")))
	}
	return strings.Join(parts, " ")
}

// countRows counts the lines a trace reader would parse: lines that are
// not empty or whitespace only (core/trace skips those).
func countRows(data []byte) int {
	n := 0
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(bytes.Trim(line, " \t\r\n\v\f")) > 0 {
			n++
		}
	}
	return n
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":"internal error: encoding the answer","status":500,"kind":"internal"}`)
	}
	writeRaw(w, status, append(b, '\n'))
}

func writeRaw(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(b)
}
