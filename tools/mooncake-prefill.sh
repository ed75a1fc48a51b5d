#!/bin/sh
# Prints the per-request prefill figures of docs/timing.md ("What G2 is
# worth on Mooncake"): the conversation trace with roofline timing,
# Llama-3.1-8B on an H200, without a CPU tier and with 200,000 SimpleCPU
# blocks, read from requests.jsonl (prefill_*_bound_ms, ttft_ms).
#   tools/mooncake-prefill.sh KVSIM CONFIG SCRATCH
set -eu
kvsim=$1 cfg=$2 dir=$3
run() {
	out=$1
	shift
	"$kvsim" predict --config "$cfg" --format json --set "engine.model=llama-3.1-8b" --set "engine.hardware=h200" \
		--set "engine.workers.aggregated.timing={type: roofline}" --capture-per-request --overwrite \
		--output-dir "$dir/$out" "$@" >/dev/null 2>&1
}
run none
run g2 --set "engine.workers.aggregated.kv_cache.host_offload={num_host_blocks: 200000, connector: simple_cpu_v0_32}"
python3 - "$dir" <<'PY'
import json, statistics as st, sys
d = sys.argv[1]
def load(n):
    return {r["request_id"]: r for r in map(json.loads, open(f"{d}/{n}/requests.jsonl"))}
a, b = load("none"), load("g2")
def row(name, rs):
    c = st.mean(r.get("prefill_compute_bound_ms", 0) for r in rs)
    m = st.mean(r.get("prefill_memory_bound_ms", 0) for r in rs)
    p = st.mean(r.get("prefill_passes", 0) for r in rs)
    t = st.mean(r["ttft_ms"] for r in rs if "ttft_ms" in r)
    print(f"| {name} | {len(rs):,} | {p:.2f} | {c:.2f} | {m:.2f} | {t:.2f} |")
rest = [k for k, r in b.items() if r.get("first_admission_host_reused_input_tokens", 0) > 0 and k in a]
print("| run | requests | prefill passes | compute-bound ms | memory-bound ms | TTFT ms |")
print("|---|---|---|---|---|---|")
row("no tier, all", list(a.values()))
row("200,000 simple_cpu_v0_32, all", list(b.values()))
row("no tier, the restored requests", [a[k] for k in rest])
row("200,000 simple_cpu_v0_32, the restored requests", [b[k] for k in rest])
PY
