#!/bin/sh
# Prints the Mooncake table of docs/timing.md: the conversation trace
# (cases/mooncake/conversation.yaml of the shared cases) with roofline
# timing, Llama-3.1-8B on an H200, without a CPU tier and with each
# connector at three G2 sizes.
#   tools/mooncake-timing.sh KVSIM CONFIG [TIMING]
# KVSIM is a kvsim binary (go build -o /tmp/kvsim ./cmd/kvsim), CONFIG the
# case's conversation.yaml, TIMING the timing block ({type: roofline}).
set -eu
kvsim=$1 cfg=$2 timing=${3:-"{type: roofline}"}
ho=engine.workers.aggregated.kv_cache.host_offload
row() {
	"$kvsim" predict --config "$cfg" --format json --set "engine.model=llama-3.1-8b" --set "engine.hardware=h200" \
		--set "engine.workers.aggregated.timing=$timing" "$@" 2>/dev/null |
		python3 -c 'import json,sys; s=json.load(sys.stdin); print("| %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | {:,} |".format(s["committed_prefill_tokens"]) % (s["mean_ttft_ms"], s["median_ttft_ms"], s["p99_ttft_ms"], s["mean_tpot_ms"], s["median_tpot_ms"], s["p99_tpot_ms"]))'
}
echo "| G2 | connector | mean TTFT | p50 TTFT | p99 TTFT | mean TPOT | p50 TPOT | p99 TPOT | committed prefill |"
echo "|---|---|---|---|---|---|---|---|---|"
echo "| none | – $(row)"
for blocks in 50000 100000 200000; do
	for c in offloading_v0_24 offloading_v0_32 simple_cpu_v0_32; do
		echo "| $blocks | $c $(row --set "$ho={num_host_blocks: $blocks, connector: $c}")"
	done
done
