#!/usr/bin/env bash
# build.sh: build, run and test kvsim. It installs what it needs on a fresh Debian machine with Go.
#
#   ./build.sh               build everything: Go modules (go mod download), node packages (npm ci,
#                            only when package.json exists and node_modules is missing or stale), every
#                            Go package, the CLI at build/bin/kvsim, then every build_* hook
#   ./build.sh run [ARGS]    build, then `build/bin/kvsim predict ARGS` (no ARGS: the built-in example)
#   ./build.sh test          build; install Debian's chromium when /usr/bin/chromium is missing and we
#                            are root; gofmt, go vet ./..., go test ./... (the browser tests
#                            of ./e2e run alone in test_ui), the core's tests under
#                            GOOS=js GOARCH=wasm (node), brief fuzzing of FuzzParse (core/config)
#                            and FuzzRead (core/trace), about 10 s each; then every test_* hook
#   ./build.sh serve [ARGS]  build, then the one serve_* hook with ARGS ("not available yet" without one);
#                            serving the site (serve_ui) builds only the site (go mod download, build_ui:
#                            no npm, no go build ./..., no CLI, no Cloudflare worker)
#
# EXTENSION POINTS. Other engineers never edit this file; they add a script under scripts/.
#   * Every scripts/*.sh is sourced, in file-name order (C collation), from the repository root
#     before any stage runs. At top level a script only defines functions and variables.
#   * Functions whose names start with build_, test_ or serve_ are hooks:
#       build_<name>   run after the Go build (so also before the tests of `test` and before `serve`)
#       test_<name>    run after the Go test stage of `test`
#       serve_<name>   run by `serve NAME` with the arguments after NAME; plain `serve` runs
#                      serve_ui (or the only serve_* hook)
#     Hooks of one kind run in the order of the files that define them, and within one file in
#     name order. A hook defined by two scripts is an error.
#   * Hooks run from the repository root under `set -euo pipefail`; a failing hook fails build.sh.
#     They may use: log MESSAGE (a stage line), $ROOT (the repository root), $KVSIM (the CLI
#     binary), $GO_WASM_PATH (a PATH holding Go's wasm_exec helpers for GOOS=js GOARCH=wasm tests).
#   Example, in the shape of scripts/ui.sh:
#       build_ui() { log "ui: vugugen"; go tool vugugen -skip-go-mod ./ui; ...; }
#       test_ui()  { log "ui: e2e"; go test ./e2e; }
#       serve_ui() { go run ./cmd/serve -dir dist "$@"; }
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
export LC_ALL=C

ROOT="$(pwd)"
KVSIM="$ROOT/build/bin/kvsim"
export ROOT KVSIM

log() { printf '==> %s\n' "$*"; }
die() {
	printf 'build.sh: %s\n' "$*" >&2
	exit 1
}

command -v go >/dev/null || die "go is not installed (kvsim needs Go 1.26; see go.mod)"
GO_WASM_PATH="$(go env GOROOT)/lib/wasm:$PATH"
export GO_WASM_PATH

# ---- hooks ---------------------------------------------------------------------------------

BUILD_HOOKS=()
TEST_HOOKS=()
SERVE_HOOKS=()

function_names() { declare -F | awk '{print $3}' | sort; }

load_hooks() {
	local f name before after
	local -A body=() owner=()
	shopt -s nullglob
	local scripts=(scripts/*.sh)
	shopt -u nullglob
	for f in "${scripts[@]}"; do
		before="$(function_names)"
		for name in "${BUILD_HOOKS[@]}" "${TEST_HOOKS[@]}" "${SERVE_HOOKS[@]}"; do
			body[$name]="$(declare -f "$name")"
		done
		# shellcheck source=/dev/null
		source "$f"
		for name in "${BUILD_HOOKS[@]}" "${TEST_HOOKS[@]}" "${SERVE_HOOKS[@]}"; do
			[[ "$(declare -f "$name")" == "${body[$name]}" ]] ||
				die "$f redefines $name, already defined by ${owner[$name]}"
		done
		after="$(function_names)"
		while read -r name; do
			case "$name" in
			build_*) BUILD_HOOKS+=("$name") ;;
			test_*) TEST_HOOKS+=("$name") ;;
			serve_*) SERVE_HOOKS+=("$name") ;;
			*) continue ;;
			esac
			owner[$name]="$f"
		done < <(comm -13 <(printf '%s\n' "$before") <(printf '%s\n' "$after"))
	done
}

run_hooks() {
	local kind="$1" hook
	shift
	for hook in "$@"; do
		log "$kind hook: $hook"
		"$hook"
	done
}

# ---- set-up --------------------------------------------------------------------------------

ensure_go_modules() {
	log "go mod download"
	go mod download
}

ensure_node_modules() {
	[[ -f package.json ]] || return 0
	local stamp=node_modules/.package-lock.json
	if [[ -f "$stamp" && ! package.json -nt "$stamp" && ! (-f package-lock.json && package-lock.json -nt "$stamp") ]]; then
		log "node_modules is up to date"
		return 0
	fi
	command -v npm >/dev/null || die "npm is not installed (package.json needs it)"
	log "npm ci"
	npm ci --no-audit --no-fund
}

ensure_chromium() {
	if [[ -x /usr/bin/chromium ]]; then
		return 0
	fi
	if [[ "$(id -u)" != 0 ]]; then
		log "chromium: /usr/bin/chromium is missing and we are not root; not installing it (browser tests skip unless E2E_REQUIRED=1)"
		return 0
	fi
	if ! command -v apt-get >/dev/null; then
		log "chromium: /usr/bin/chromium is missing and there is no apt-get; not installing it"
		return 0
	fi
	log "apt-get install chromium"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
}

# ---- stages --------------------------------------------------------------------------------

stage_build() {
	ensure_go_modules
	ensure_node_modules
	log "go build ./..."
	go build ./...
	log "go build -o build/bin/kvsim ./cmd/kvsim"
	mkdir -p build/bin
	go build -o build/bin/kvsim ./cmd/kvsim
	run_hooks build "${BUILD_HOOKS[@]}"
}

# go_files lists the Go files to check with gofmt: tracked and untracked-but-not-ignored files
# in a git work tree, every .go file outside .git, node_modules, build and dist otherwise.
go_files() {
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git ls-files --cached --others --exclude-standard -- '*.go'
	else
		find . \( -path ./.git -o -path ./node_modules -o -path ./build -o -path ./dist \) -prune -o -name '*.go' -print
	fi
}

stage_go_test() {
	log "gofmt -l"
	local files=() f unformatted
	while IFS= read -r f; do
		[[ -f "$f" ]] && files+=("$f") # skip tracked files deleted in the work tree
	done < <(go_files)
	if ((${#files[@]})); then
		unformatted="$(gofmt -l "${files[@]}")"
		[[ -z "$unformatted" ]] || die "gofmt -l lists files that need formatting:
$unformatted"
	fi
	log "go vet ./..."
	go vet ./...
	# The browser tests (./e2e) measure the page's timing (summary latency, timer ticks during a
	# run), so they do not share the cores with the other packages: test_ui (scripts/ui.sh) runs
	# them alone after this stage.
	log "go test ./... (but ./e2e, which test_ui runs)"
	go test $(go list ./... | grep -v '/e2e$')
	command -v node >/dev/null || die "node is not installed (the GOOS=js GOARCH=wasm tests run under it)"
	log "GOOS=js GOARCH=wasm go test ./core/..."
	PATH="$GO_WASM_PATH" GOOS=js GOARCH=wasm go test ./core/...
	# Fuzzing budgets are counts of inputs, not durations: with -fuzztime 10s, Go 1.26's fuzzing
	# coordinator can fail a target with a bare "context deadline exceeded" and no failing input
	# when the deadline passes while a worker is mid-input (go.dev/issue/75804, fixed in Go 1.27;
	# it failed CI once on FuzzRead). A count has no deadline to race. The counts are about 10 s
	# each on a 2-core CI machine.
	log "fuzz FuzzParse (core/config), 120,000 inputs"
	go test -run '^$' -fuzz '^FuzzParse$' -fuzztime 120000x -fuzzminimizetime 1s ./core/config
	log "fuzz FuzzRead (core/trace), 200,000 inputs"
	go test -run '^$' -fuzz '^FuzzRead$' -fuzztime 200000x -fuzzminimizetime 1s ./core/trace
}

# stage_serve_build builds what serve hook $1 serves: the site alone for
# serve_ui (it needs Go only), everything otherwise.
stage_serve_build() {
	if [[ "$1" == serve_ui ]] && declare -F build_ui >/dev/null; then
		ensure_go_modules
		log "build hook: build_ui (serving the site builds only the site)"
		build_ui
		return
	fi
	stage_build
}

usage() {
	cat >&2 <<'EOF'
usage: ./build.sh [run [ARGS] | test | serve [ARGS]]
  (none)       build everything (the CLI lands in build/bin/kvsim)
  run [ARGS]   build, then build/bin/kvsim predict ARGS
  test         build, then the full test suite
  serve [NAME] [ARGS]  build, then serve: the site on 127.0.0.1 (NAME ui, the default)
                       or the Cloudflare worker under wrangler dev (NAME worker)
EOF
	exit 2
}

main() {
	local cmd="${1:-build}"
	[[ $# -gt 0 ]] && shift
	case "$cmd" in
	build | run | test | serve) ;;
	-h | --help | help) usage ;;
	*)
		printf 'build.sh: unknown command %q\n' "$cmd" >&2
		usage
		;;
	esac
	if [[ "$cmd" == build || "$cmd" == test ]] && [[ $# -gt 0 ]]; then
		usage
	fi
	load_hooks
	local start=$SECONDS
	case "$cmd" in
	build)
		stage_build
		;;
	run)
		stage_build
		log "build/bin/kvsim predict $*"
		"$KVSIM" predict "$@"
		;;
	test)
		ensure_chromium
		stage_build
		stage_go_test
		run_hooks test "${TEST_HOOKS[@]}"
		;;
	serve)
		if ((${#SERVE_HOOKS[@]} == 0)); then
			echo "build.sh serve: not available yet (no scripts/*.sh defines a serve_* hook)"
			return 0
		fi
		# `serve NAME ARGS` picks serve_NAME; plain `serve` picks serve_ui
		# (the static site) when several hooks exist.
		local hook=""
		if (($# > 0)) && declare -F "serve_$1" >/dev/null; then
			hook="serve_$1"
			shift
		elif ((${#SERVE_HOOKS[@]} == 1)); then
			hook="${SERVE_HOOKS[0]}"
		elif declare -F serve_ui >/dev/null; then
			hook=serve_ui
		else
			die "serve: several serve_* hooks (${SERVE_HOOKS[*]}); name one: ./build.sh serve NAME"
		fi
		stage_serve_build "$hook"
		log "serve hook: $hook"
		"$hook" "$@"
		;;
	esac
	log "build.sh $cmd: done in $((SECONDS - start))s"
}

main "$@"
