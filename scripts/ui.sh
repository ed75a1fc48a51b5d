# shellcheck shell=bash
# scripts/ui.sh: the browser app (ui/, wasm/, public/, index.html, cmd/serve,
# e2e/; docs/ui.md). build.sh sources every scripts/*.sh and calls
# build_ui after the Go build, test_ui after the Go tests and serve_ui for
# `./build.sh serve`. Each function runs in a subshell from the repository
# root.
#
#   build_ui   regenerate the vugu code, then dist/: index.html, main.wasm
#              (the UI), sim.wasm (the bridge, run in a Web Worker),
#              wasm_exec.js, public/ and traces/conversation_trace.jsonl.gz
#              (the built-in Mooncake trace, fetched by the page when picked;
#              gzip -9 -n: no name or time in the header, so the bytes are
#              the same on every build)
#   test_ui    the bridge and UI tests under node (GOOS=js GOARCH=wasm), the
#              check that the generated code matches the .vugu sources, and
#              the browser tests (go test ./e2e; chromium, E2E_REQUIRED=1 in
#              CI)
#   serve_ui   serve dist/ on 127.0.0.1 (ARGS go to cmd/serve, e.g.
#              -addr 127.0.0.1:9000; KVSIM_ADDR sets the default address)

KVSIM_UI_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

ui_log() { if declare -F log >/dev/null; then log "$@"; else printf '==> %s\n' "$*"; fi; }

# ui_generate runs vugugen on ui/ and gofmt on its output (vugugen's is
# not gofmt-clean).
ui_generate() {
	go tool vugugen -skip-go-mod ./ui
	gofmt -w ui/*_gen.go
}

# ui_check_generated regenerates the vugu code from a copy of ui/ and
# compares it with the tree's *_gen.go, so a stale generated file fails
# whether or not the tree has uncommitted edits (CI also runs git diff
# after build.sh, which catches generated code that was not committed).
ui_check_generated() {
	local tmp f bad=0
	tmp="$(mktemp -d)"
	cp ui/*.go ui/*.vugu "$tmp"/
	go tool vugugen -skip-go-mod "$tmp"
	gofmt -w "$tmp"/*_gen.go
	for f in "$tmp"/*_gen.go; do
		if ! cmp -s "$f" "ui/$(basename "$f")"; then
			echo "ui: ui/$(basename "$f") is stale; run: go tool vugugen -skip-go-mod ./ui && gofmt -w ui/*_gen.go" >&2
			bad=1
		fi
	done
	for f in ui/*_gen.go; do
		[ -f "$tmp/$(basename "$f")" ] || { echo "ui: $f has no .vugu source any more" >&2; bad=1; }
	done
	rm -rf "$tmp"
	return "$bad"
}

build_ui() (
	set -euo pipefail
	cd "$KVSIM_UI_ROOT"
	ui_log "ui: vugugen"
	ui_generate
	ui_log "ui: dist/ (main.wasm, sim.wasm, index.html, public/, wasm_exec.js, traces/)"
	mkdir -p dist
	rm -rf dist/public dist/index.html dist/main.wasm dist/sim.wasm dist/wasm_exec.js dist/traces
	GOOS=js GOARCH=wasm go build -trimpath -ldflags='-s -w' -o dist/main.wasm ./ui
	GOOS=js GOARCH=wasm go build -trimpath -ldflags='-s -w' -o dist/sim.wasm ./wasm
	cp index.html dist/
	cp -R public dist/public
	cp "$(go env GOROOT)/lib/wasm/wasm_exec.js" dist/
	mkdir -p dist/traces
	gzip -9 -n -c traces/mooncake/conversation_trace.jsonl >dist/traces/conversation_trace.jsonl.gz
	ui_log "$(printf 'ui: %-14s %9d bytes' dist/traces/conversation_trace.jsonl.gz "$(wc -c <dist/traces/conversation_trace.jsonl.gz)")"
	local f raw gz budget
	for f in dist/main.wasm dist/sim.wasm; do
		raw="$(wc -c <"$f")"
		gz="$(gzip -9c "$f" | wc -c)"
		budget="$(ui_gzip_budget "$f")"
		ui_log "$(printf 'ui: %-14s %9d bytes, %9d gzip -9 (budget %d)' "$f" "$raw" "$gz" "$budget")"
		if [ "$gz" -gt "$budget" ]; then
			printf 'build_ui: %s is %d bytes gzipped, over its budget of %d (docs/ui.md, "Sizes"): shrink it or raise the budget there and here on purpose\n' "$f" "$gz" "$budget" >&2
			return 1
		fi
	done
)

# ui_gzip_budget prints the gzip -9 size a wasm file of dist/ may reach:
# about 20 % above its size when the budget was set (docs/ui.md, "Sizes"),
# so that growth past it is a decision rather than an accident.
ui_gzip_budget() {
	case "$1" in
	dist/main.wasm) echo 2300000 ;;
	dist/sim.wasm) echo 2100000 ;; # raised from 2,000,000 for issue 21's split runs (docs/ui.md, "Sizes")
	*) echo 0 ;;
	esac
}

test_ui() (
	set -euo pipefail
	cd "$KVSIM_UI_ROOT"
	ui_log "ui: GOOS=js GOARCH=wasm go test ./wasm/... ./ui/... (node)"
	PATH="$(go env GOROOT)/lib/wasm:$PATH" GOOS=js GOARCH=wasm go test ./wasm/... ./ui/...
	ui_log "ui: generated code is current"
	ui_check_generated
	ui_log "ui: browser tests (go test ./e2e)"
	go test ./e2e
)

serve_ui() (
	set -euo pipefail
	cd "$KVSIM_UI_ROOT"
	[ -f dist/main.wasm ] || build_ui
	# a built binary, not go run: Ctrl-C reaches the server alone, which
	# shuts down and exits 0 (go run would report "signal: interrupt")
	mkdir -p build/bin
	go build -o build/bin/kvsim-serve ./cmd/serve
	exec build/bin/kvsim-serve -dir dist -addr "${KVSIM_ADDR:-127.0.0.1:8080}" "$@"
)
