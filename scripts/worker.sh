# shellcheck shell=bash
# The Cloudflare worker's build steps (docs/worker.md). build.sh sources
# every scripts/*.sh and calls build_<name>, test_<name> and serve_<name>;
# these run after build_ui has written dist/. Each function runs in a
# subshell from the repository root and leaves the caller's directory alone.
#
#   build_worker   build/worker/{worker.mjs,shim.mjs,wasm_exec.js,app.wasm}
#   test_worker    worker/smoke.sh (wrangler dev) and the bundle size check
#   serve_worker   wrangler dev on 127.0.0.1:${PORT:-8787} (site + API)
#
# Environment: KVSIM_ASSETS_DIR serves another directory than dist/ (smoke
# test and serve_worker); WORKER_GZIP_LIMIT overrides the 3 MiB free-plan
# bundle limit.

KVSIM_WORKER_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# worker_npm installs node_modules from package-lock.json unless the
# installed tree already matches it.
worker_npm() (
	cd "$KVSIM_WORKER_ROOT" || exit 1
	if [ -x node_modules/.bin/wrangler ] && [ node_modules/.package-lock.json -nt package-lock.json ]; then
		exit 0
	fi
	npm ci --no-audit --no-fund
)

# worker_assets_flag prints --assets DIR (absolute) when KVSIM_ASSETS_DIR
# is set; wrangler.jsonc's ../dist is used otherwise.
worker_assets_flag() {
	if [ -n "${KVSIM_ASSETS_DIR:-}" ]; then
		printf -- '--assets\n%s\n' "$(cd "$KVSIM_ASSETS_DIR" && pwd)"
	fi
}

build_worker() (
	set -euo pipefail
	cd "$KVSIM_WORKER_ROOT"
	rm -rf build/worker
	go tool workers-assets-gen -mode=go -o build/worker
	GOOS=js GOARCH=wasm go build -trimpath -o build/worker/app.wasm ./cmd/worker
	echo "build_worker: build/worker/app.wasm $(wc -c <build/worker/app.wasm) bytes"
)

# worker_bundle_size runs `wrangler deploy --dry-run` (offline, nothing is
# uploaded), prints wrangler's gzip figure and fails above the free plan's
# limit (3 MiB, wrangler's own MAX_GZIP_SIZE_BYTES).
worker_bundle_size() (
	set -euo pipefail
	cd "$KVSIM_WORKER_ROOT"
	worker_npm
	local limit="${WORKER_GZIP_LIMIT:-3145728}" assets=() out line kib bytes
	mapfile -t assets < <(worker_assets_flag)
	rm -rf build/dry
	out="$(cd worker && NO_COLOR=1 FORCE_COLOR=0 CI=true WRANGLER_SEND_METRICS=false \
		XDG_CONFIG_HOME="$KVSIM_WORKER_ROOT/build/xdg" \
		../node_modules/.bin/wrangler deploy --dry-run --outdir ../build/dry "${assets[@]}" 2>&1)" || {
		printf '%s\n' "$out" >&2
		echo "worker bundle: wrangler deploy --dry-run failed" >&2
		exit 1
	}
	line="$(printf '%s\n' "$out" | sed 's/\x1b\[[0-9;]*m//g' | grep -m1 'Total Upload:' || true)"
	kib="$(printf '%s\n' "$line" | sed -n 's/.*gzip: \([0-9.]*\) KiB.*/\1/p')"
	if [ -z "$kib" ]; then
		printf '%s\n' "$out" >&2
		echo "worker bundle: no 'Total Upload' line in wrangler's output" >&2
		exit 1
	fi
	bytes="$(awk -v k="$kib" 'BEGIN { printf "%d", k * 1024 }')"
	echo "worker bundle: ${line#*Total Upload: } (${bytes} bytes gzip; limit ${limit})"
	if [ "$bytes" -gt "$limit" ]; then
		echo "worker bundle: gzip size ${bytes} bytes exceeds the free plan's limit of ${limit} bytes" >&2
		exit 1
	fi
)

test_worker() (
	set -euo pipefail
	cd "$KVSIM_WORKER_ROOT"
	worker_npm
	worker/smoke.sh
	worker_bundle_size
)

serve_worker() (
	set -euo pipefail
	cd "$KVSIM_WORKER_ROOT"
	worker_npm
	local assets=()
	mapfile -t assets < <(worker_assets_flag)
	cd worker
	WRANGLER_SEND_METRICS=false XDG_CONFIG_HOME="$KVSIM_WORKER_ROOT/build/xdg" \
		exec ../node_modules/.bin/wrangler dev --ip 127.0.0.1 --port "${PORT:-8787}" \
		--persist-to ../build/wrangler-state "${assets[@]}"
)
