package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

func TestHandlerTypes(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"index.html", "main.wasm", "wasm_exec.js", "public/style.css", "public/sim-worker.js"} {
		p := filepath.Join(dir, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x"), 0o644)
	}
	srv := httptest.NewServer(Handler(dir))
	defer srv.Close()
	for path, want := range map[string]string{
		"/main.wasm":            "application/wasm",
		"/wasm_exec.js":         "text/javascript; charset=utf-8",
		"/public/sim-worker.js": "text/javascript; charset=utf-8",
		"/public/style.css":     "text/css; charset=utf-8",
		"/":                     "text/html; charset=utf-8",
	} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != want {
			t.Errorf("%s: %d %q, want %q", path, resp.StatusCode, resp.Header.Get("Content-Type"), want)
		}
	}
}
