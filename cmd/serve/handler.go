package main

import (
	"mime"
	"net/http"
)

func init() {
	// the built-in table has .wasm; make sure of the others whatever the
	// system's mime.types says
	mime.AddExtensionType(".wasm", "application/wasm")
	mime.AddExtensionType(".js", "text/javascript; charset=utf-8")
	mime.AddExtensionType(".svg", "image/svg+xml")
}

// Handler serves dir with caching off, so a rebuilt site is picked up on
// reload.
func Handler(dir string) http.Handler {
	fs := http.FileServer(http.Dir(dir))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		fs.ServeHTTP(w, r)
	})
}
