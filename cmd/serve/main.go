// Command serve serves the built site (dist/) on 127.0.0.1 for
// `./build.sh serve` and the browser tests. It is a plain static file
// server: the app runs entirely in the browser.
//
//	go run ./cmd/serve [-dir dist] [-addr 127.0.0.1:8080]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
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
	fmt.Printf("kvsim: serving %s at http://%s/ (the page runs the §A connector comparison on load; Ctrl-C stops)\n", *dir, ln.Addr())
	srv := &http.Server{Handler: Handler(*dir)}
	// Ctrl-C (or a SIGTERM) is the way to stop: shut down and exit 0
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(shut)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
	fmt.Println("kvsim: stopped")
}
