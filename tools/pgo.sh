#!/usr/bin/env bash
# tools/pgo.sh: regenerate cmd/kvsim/default.pgo, the CPU profile Go's profile-guided
# optimisation builds the CLI with (`go build` picks up a main package's default.pgo by itself).
# See docs/performance.md ("Profile-guided builds of the CLI").
#
#   tools/pgo.sh            profile the workloads below with a build made without a profile,
#                           merge the profiles, write the file
#
# Run it after changing the engine's hot paths, and commit the file with the figures that
# justify it. A stale profile is never wrong, only less useful: it changes what the compiler
# inlines, never what a run computes (the reports are byte-identical either way).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

go build -pgo=off -o "$tmp/kvsim" ./cmd/kvsim
n=0
profile() { # profile ARGS: one `kvsim predict ARGS`, its CPU profile kept
	n=$((n + 1))
	echo "tools/pgo.sh: kvsim predict $*" >&2
	"$tmp/kvsim" predict "$@" --format json --cpuprofile "$tmp/$n.prof" >/dev/null 2>&1
}

# Issue 21's scale: the Mooncake conversation trace without G2, with each connector's tier of
# 200,000 host blocks, and with a recorded window. Acceptance case E is left out on purpose: it
# gains more from this profile than from one that includes it, and so do the Mooncake runs
# (docs/performance.md).
mooncake=traces/mooncake/conversation.yaml
tier=engine.workers.aggregated.kv_cache.host_offload
profile --config "$mooncake"
profile --config "$mooncake"
for c in simple_cpu_v0_32 offloading_v0_24 offloading_v0_32; do
	profile --config "$mooncake" --set "$tier={num_host_blocks: 200000, connector: $c}"
done
profile --config "$mooncake" --output-dir "$tmp/window" --capture-window 100000:100010

go tool pprof -proto "$tmp"/*.prof >"$tmp/default.pgo"
cp "$tmp/default.pgo" cmd/kvsim/default.pgo
echo "tools/pgo.sh: wrote cmd/kvsim/default.pgo ($(wc -c <"$tmp/default.pgo") bytes, $n profiles)" >&2
