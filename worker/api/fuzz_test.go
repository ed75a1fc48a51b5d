package api

import (
	"encoding/json"
	"net/http"
	"testing"
)

// FuzzReplay posts mutated configs and traces to /api/replay. Whatever the
// input, the answer is a JSON object and never the 500 that ServeHTTP
// makes of a recovered panic: a config or trace the core cannot take must
// come back as a positioned 4xx error, and one it takes must run within
// the limits. `go test` runs the seeds; fuzz by hand with
//
//	go test ./worker/api -run '^$' -fuzz FuzzReplay -fuzztime 5m
func FuzzReplay(f *testing.F) {
	for _, c := range [][2]string{
		{"g2-restore.yaml", "g2-restore.jsonl"},
		{"g2-restore-pd.yaml", "g2-restore.jsonl"},
		{"agentic-g2.yaml", "agentic-g2-restore.jsonl"},
		{"agentic-g2-pd.yaml", "agentic-g2-restore.jsonl"},
	} {
		f.Add(example(f, c[0]), example(f, c[1]))
	}
	h := Handler()
	f.Fuzz(func(t *testing.T, cfg, trace string) {
		rec := post(t, h, "/api/replay", map[string]any{"config": cfg, "trace": trace, "passes": true, "requests": true})
		if rec.Code == http.StatusInternalServerError {
			t.Fatalf("500: %s\nconfig:\n%s\ntrace:\n%s", rec.Body, cfg, trace)
		}
		var v map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
			t.Fatalf("status %d with a body that is not a JSON object (%v): %.200s", rec.Code, err, rec.Body)
		}
	})
}
