// Command serve serves the built site (dist/) on 127.0.0.1 for
// `./build.sh serve` and the browser tests. It is a plain static file
// server: the app runs entirely in the browser.
//
//	go run ./cmd/serve [-dir dist] [-addr 127.0.0.1:8080]
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
)

func main() {
	dir := flag.String("dir", "dist", "the built site")
	addr := flag.String("addr", "127.0.0.1:8080", "listen address (port 0 picks a free port)")
	flag.Parse()
	if _, err := os.Stat(filepath.Join(*dir, "index.html")); err != nil {
		log.Fatalf("serve: %s has no index.html; build the site first (./build.sh)", *dir)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("serve: %v", err)
	}
	fmt.Printf("kvsim: serving %s at http://%s/ (opens on the §A connector comparison)\n", *dir, ln.Addr())
	if err := http.Serve(ln, Handler(*dir)); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}
