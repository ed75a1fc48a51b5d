#!/usr/bin/env bash
# Smoke test of the built worker under `wrangler dev` (docs/worker.md).
#
# Needs: build/worker from build_worker (scripts/worker.sh), node_modules
# from `npm ci`, and the built site in dist/ (build_ui), or another
# directory holding at least one .wasm file in KVSIM_ASSETS_DIR.
#
# Starts wrangler dev on 127.0.0.1 and a free port (SMOKE_PORT to choose),
# waits for /api/health (at most 60 s), checks health, a .wasm asset, the
# §B and one §A replay (prediction.json byte for byte against the native
# goldens in worker/api/testdata), a sweep, and rejected requests, then
# times /api/replay. Prints "worker smoke: N passed, M failed"; exits
# nonzero on any failure. wrangler is stopped whatever happens.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 1
work="$root/build/smoke"
rm -rf "$work"
mkdir -p "$work" "$root/build/xdg"

passed=0
failed=0
pass() { passed=$((passed + 1)); echo "ok   $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1${2:+: $2}"; }
finish() {
	echo "worker smoke: $passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

# --- prerequisites ----------------------------------------------------------
assets="${KVSIM_ASSETS_DIR:-$root/dist}"
if [ ! -d "$assets" ]; then
	fail "assets" "$assets does not exist: build the site first (build_ui writes dist/), or set KVSIM_ASSETS_DIR"
	finish
fi
assets="$(cd "$assets" && pwd)"
wasm="$(cd "$assets" && find . -maxdepth 1 -name '*.wasm' -printf '%f\n' | sort | head -n1)"
if [ -z "$wasm" ]; then
	fail "assets" "no .wasm file in $assets (build_ui writes dist/main.wasm and dist/sim.wasm)"
	finish
fi
for f in build/worker/worker.mjs build/worker/shim.mjs build/worker/wasm_exec.js build/worker/app.wasm; do
	if [ ! -f "$f" ]; then
		fail "worker build" "$f is missing: run build_worker (scripts/worker.sh)"
		finish
	fi
done
if [ ! -x node_modules/.bin/wrangler ]; then
	fail "wrangler" "node_modules/.bin/wrangler is missing: run npm ci"
	finish
fi

port="${SMOKE_PORT:-$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')}"
base="http://127.0.0.1:$port"

# --- start wrangler in its own process group; always stop it ------------------
assets_flag=()
if [ -n "${KVSIM_ASSETS_DIR:-}" ]; then
	assets_flag=(--assets "$assets")
fi
(
	cd worker || exit 1
	export WRANGLER_SEND_METRICS=false CI=true NO_COLOR=1 XDG_CONFIG_HOME="$root/build/xdg"
	exec setsid ../node_modules/.bin/wrangler dev --ip 127.0.0.1 --port "$port" \
		--persist-to "$root/build/wrangler-state" --show-interactive-dev-session=false "${assets_flag[@]}"
) </dev/null >"$work/wrangler.log" 2>&1 &
wpid=$!
stop() {
	if kill -0 "$wpid" 2>/dev/null; then
		kill -TERM -- "-$wpid" 2>/dev/null || kill -TERM "$wpid" 2>/dev/null
		for _ in $(seq 50); do
			kill -0 "$wpid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL -- "-$wpid" 2>/dev/null
	fi
	wait "$wpid" 2>/dev/null
}
trap stop EXIT
trap 'exit 130' INT TERM

# --- wait for /api/health --------------------------------------------------
up=""
start=$SECONDS
while [ $((SECONDS - start)) -lt 60 ]; do
	if ! kill -0 "$wpid" 2>/dev/null; then
		break
	fi
	if curl -fsS -o /dev/null --max-time 5 "$base/api/health" 2>/dev/null; then
		up=1
		break
	fi
	sleep 0.5
done
if [ -z "$up" ]; then
	fail "wrangler dev" "no answer from $base/api/health within 60 s; log tail:"
	tail -n 30 "$work/wrangler.log"
	finish
fi
echo "wrangler dev up on $base after $((SECONDS - start)) s (assets: $assets)"

# request METHOD PATH [CONTENT-TYPE BODYFILE] -> $work/out, sets $code and $ctype
request() {
	local args=(-sS -o "$work/out" -w '%{http_code} %{content_type}' -X "$1" --max-time 60)
	if [ $# -ge 4 ]; then
		args+=(-H "Content-Type: $3" --data-binary "@$4")
	fi
	local w
	w="$(curl "${args[@]}" "$base$2")" || w="000 "
	code="${w%% *}"
	ctype="${w#* }"
}

# js EXPR: evaluates EXPR with `r` bound to the parsed JSON of $work/out.
js() {
	node -e 'const r=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));const v=('"$1"');process.stdout.write(String(v))' "$work/out" 2>/dev/null
}

# body FILE JS-OBJECT: writes a JSON request body built by node (fs is bound).
body() {
	node -e 'const fs=require("fs");const t=n=>fs.readFileSync("traces/"+n,"utf8");fs.writeFileSync(process.argv[1],JSON.stringify('"$2"'))' "$1"
}

hob=engine.workers.aggregated.kv_cache.host_offload
body "$work/b.json" '{config:t("g2-restore.yaml"),name:"g2-restore.yaml",trace:t("g2-restore.jsonl")}'
body "$work/a.json" '{config:t("connectors.yaml"),name:"connectors.yaml",trace:t("delta-sessions.jsonl"),set:["'$hob'.num_host_blocks=2048","'$hob'.connector=simple_cpu_v0_32"]}'
body "$work/sweep.json" '{example:"connectors.yaml",vary:{"'$hob'.num_host_blocks":[2048,192],"'$hob'.connector":["offloading_v0_24","offloading_v0_32","simple_cpu_v0_32"]}}'
body "$work/point.json" '{example:"connectors.yaml",point:5,vary:{"'$hob'.num_host_blocks":[2048,192],"'$hob'.connector":["offloading_v0_24","offloading_v0_32","simple_cpu_v0_32"]}}'
body "$work/badcfg.json" '{config:t("g2-restore.yaml").replace("prefix_caching:","prefix_cashing:"),name:"g2-restore.yaml",trace:t("g2-restore.jsonl")}'
head -c $((2 * 1024 * 1024 + 1)) /dev/zero | tr '\0' ' ' >"$work/big.json"

# --- checks ------------------------------------------------------------------
request GET /api/health
if [ "$code" = 200 ] && [ "$(js 'r.ok===true && r.goos==="js" && r.goarch==="wasm"')" = true ]; then
	pass "GET /api/health (js/wasm)"
else
	fail "GET /api/health" "$code $(head -c 300 "$work/out")"
fi

request GET "/$wasm"
if [ "$code" = 200 ] && [ "$ctype" = application/wasm ] && cmp -s "$work/out" "$assets/$wasm"; then
	pass "GET /$wasm: application/wasm, same bytes as the asset"
else
	fail "GET /$wasm" "status $code, content-type '$ctype'"
fi

request GET /api/examples
if [ "$code" = 200 ] && [ "$(js 'r.examples.map(e=>e.name).includes("g2-restore.yaml")')" = true ]; then
	pass "GET /api/examples"
else
	fail "GET /api/examples" "$code $(head -c 300 "$work/out")"
fi

request POST /api/replay application/json "$work/b.json"
if [ "$code" = 200 ] && [ "$(js 'r.summary.committed_prefill_tokens')" = 28 ]; then
	pass "POST /api/replay §B: committed_prefill_tokens 28"
else
	fail "POST /api/replay §B" "$code $(head -c 300 "$work/out")"
fi

request POST "/api/replay?format=prediction" application/json "$work/b.json"
if [ "$code" = 200 ] && cmp -s "$work/out" worker/api/testdata/g2-restore.prediction.json; then
	pass "§B prediction.json equals the native golden byte for byte"
else
	fail "§B prediction.json" "$code; differs from worker/api/testdata/g2-restore.prediction.json"
fi

request POST "/api/replay?format=prediction" application/json "$work/a.json"
if [ "$code" = 200 ] && cmp -s "$work/out" worker/api/testdata/connectors-2048-simple_cpu_v0_32.prediction.json; then
	pass "§A 2048 simple_cpu_v0_32 prediction.json equals the native golden byte for byte"
else
	fail "§A prediction.json" "$code; differs from worker/api/testdata/connectors-2048-simple_cpu_v0_32.prediction.json"
fi

request POST /api/replay application/yaml traces/g2-restore.yaml
if [ "$code" = 200 ] && [ "$(js 'r.summary.committed_prefill_tokens')" = 28 ]; then
	pass "POST /api/replay YAML body with the built-in trace"
else
	fail "POST /api/replay YAML body" "$code $(head -c 300 "$work/out")"
fi

request POST /api/sweep application/json "$work/sweep.json"
if [ "$code" = 200 ] && [ "$(js 'r.count===6 && r.points[5].set[1].endsWith("connector=simple_cpu_v0_32")')" = true ]; then
	pass "POST /api/sweep lists 6 points"
else
	fail "POST /api/sweep listing" "$code $(head -c 300 "$work/out")"
fi

request POST /api/sweep application/json "$work/point.json"
if [ "$code" = 200 ] && [ "$(js 'r.point.index===5 && r.summary.committed_prefill_tokens===8368')" = true ]; then
	pass "POST /api/sweep point 5 (192 simple_cpu_v0_32): committed_prefill_tokens 8368"
else
	fail "POST /api/sweep point" "$code $(head -c 300 "$work/out")"
fi

request POST /api/replay application/json "$work/big.json"
if [ "$code" = 413 ] && [ "$(js 'r.status===413 && r.error.startsWith("request body")')" = true ]; then
	pass "oversized body rejected: 413 $(js 'r.error')"
else
	fail "oversized body" "$code $(head -c 300 "$work/out")"
fi

request POST /api/replay application/json "$work/badcfg.json"
if [ "$code" = 422 ] && [ "$(js 'r.file+":"+r.line+":"+r.col')" = "g2-restore.yaml:17:9" ]; then
	pass "rejected config: 422 $(js 'r.error')"
else
	fail "rejected config" "$code $(head -c 300 "$work/out")"
fi

request GET /api/replay
if [ "$code" = 405 ] && [ "$(js 'r.status')" = 405 ]; then
	pass "GET /api/replay: 405"
else
	fail "GET /api/replay" "$code $(head -c 300 "$work/out")"
fi

# --- timings -------------------------------------------------------------------
# Each request starts a fresh Go runtime in the isolate (shim.mjs), so the
# health call is the fixed cost and the rest is the replay itself.
timing() {
	local label="$1" n="${SMOKE_TIMING_RUNS:-5}" times=() t
	shift
	for _ in $(seq "$n"); do
		t="$(curl -sS -o /dev/null -w '%{time_total}' --max-time 60 "$@")" || t=nan
		times+=("$(awk -v t="$t" 'BEGIN { printf "%.1f", t * 1000 }')")
	done
	echo "time $label: ${times[*]} ms (median $(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') ms)"
}
timing "GET  /api/health" "$base/api/health"
timing "POST /api/replay §B" -H 'Content-Type: application/json' --data-binary "@$work/b.json" "$base/api/replay"
timing "POST /api/replay §A 2048 simple_cpu_v0_32" -H 'Content-Type: application/json' --data-binary "@$work/a.json" "$base/api/replay"
timing "POST /api/sweep point 5 of 6" -H 'Content-Type: application/json' --data-binary "@$work/point.json" "$base/api/sweep"

finish
