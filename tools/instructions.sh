#!/usr/bin/env bash
# tools/instructions.sh: the instructions one `kvsim predict` executes in kvsim's own code, counted
# by valgrind's cachegrind (docs/performance.md, "Deterministic counts (cachegrind)"). Unlike wall
# time on a shared machine, the count repeats exactly from run to run, so a change of a tenth of a
# percent shows; whole-program counts do not repeat (the runtime's spinning varies), hence the sum
# over this repository's source files only.
#
#   tools/instructions.sh [-b KVSIM] [-o CGOUT] -- PREDICT-ARGS...
#
# -b runs the given binary instead of one built here (it must be built without -trimpath, in this
# checkout, so that its file names are this repository's); -o keeps cachegrind's output for
# cg_annotate. The run is GOMAXPROCS=1 and --format json (stdout discarded). Example:
#
#   tools/instructions.sh -- --config traces/mooncake/conversation.yaml
#   tools/instructions.sh -- --config traces/mooncake/conversation.yaml \
#       --set 'engine.workers.aggregated.kv_cache.host_offload={num_host_blocks: 200000, connector: simple_cpu_v0_32}'
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="" out=""
while getopts "b:o:" opt; do
	case "$opt" in
	b) bin="$OPTARG" ;;
	o) out="$OPTARG" ;;
	*) echo "usage: tools/instructions.sh [-b KVSIM] [-o CGOUT] -- PREDICT-ARGS..." >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
command -v valgrind >/dev/null || { echo "tools/instructions.sh: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
if [ -z "$bin" ]; then
	bin="$tmp/kvsim"
	(cd "$root" && go build -o "$bin" ./cmd/kvsim)
fi
out="${out:-$tmp/cg.out}"
# Under valgrind a go1.26 binary now and then dies with SIGILL in the runtime's lock spinning
# (runtime.cputicks): try again.
for try in 1 2 3; do
	if GOMAXPROCS=1 valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$out" \
		"$bin" predict "$@" --format json >/dev/null 2>"$tmp/valgrind.log"; then
		break
	fi
	if [ "$try" = 3 ]; then
		cat "$tmp/valgrind.log" >&2
		exit 1
	fi
done
# cachegrind's file: "fl=" names the source file of the cost lines ("LINE COUNT") that follow.
awk -v root="$root/" '
	/^fl=/ { mine = index(substr($0, 4), root) == 1; next }
	/^[0-9]/ && mine { sum += $2 }
	/^summary:/ { total = $2 }
	END { printf "kvsim code: %.3f G instructions (whole program %.3f G)\n", sum / 1e9, total / 1e9 }
' "$out"
