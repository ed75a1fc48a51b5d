//go:build js && wasm

// Command worker is kvsim's Cloudflare Worker: the replay API of package
// worker/api served by syumai/workers. The static site (dist/) is served by
// Workers Static Assets before a request reaches Go (worker/wrangler.jsonc).
// Build it with scripts/worker.sh (build_worker); docs/worker.md has the API.
package main

import (
	"github.com/syumai/workers"

	"github.com/kvsim/kvsim/worker/api"
)

func main() { workers.Serve(api.Handler()) }
