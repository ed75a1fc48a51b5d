#!/bin/sh
# Reproduces the BLIS step times of core/timing/blis_test.go: checks out
# inference-sim/inference-sim (BLIS) at the commit the table was made from,
# runs tools/blis/crosscheck.go.txt inside it, and prints the table of
# step times (TestStepTimesAreBLISs), or with "kvblocks" the G1 capacities
# (TestKVBlocksAreBLISs).
#   tools/blis/crosscheck.sh [BLIS_CHECKOUT_DIR [kvblocks]]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
commit=f90a1e3a6787da17c2cd463dab6fb2660b1b1760
dir=${1:-${TMPDIR:-/tmp}/blis-crosscheck}
if [ ! -d "$dir/.git" ] && [ ! -f "$dir/go.mod" ]; then
	git clone -q https://github.com/inference-sim/inference-sim "$dir"
	git -C "$dir" checkout -q "$commit"
fi
mkdir -p "$dir/cmd/kvsim-crosscheck"
cp "$here/crosscheck.go.txt" "$dir/cmd/kvsim-crosscheck/main.go"
shift 2>/dev/null || true
cd "$dir" && go run ./cmd/kvsim-crosscheck "$@"
