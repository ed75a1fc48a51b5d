#!/bin/bash
# Paired CPU rounds of the §E benchmark by timing (docs/timing.md ("The cost
# of a modelled pass")): each round runs every (binary, timing) pair once,
# in reverse order every other round, timed by /usr/bin/time (user + system
# CPU), and prints, per binary, the median per-round CPU ratio of each
# modelled timing to fixed and the ratio of median CPU, with the load.
#   tools/timing-rounds.sh DIR ROUNDS KVSIM...
# DIR holds fixed.yaml, polynomial.yaml, roofline.yaml and trained_physics.yaml
# (the §E config with that timing) and their trace; each KVSIM is a binary
# (go build -o /tmp/kvsim ./cmd/kvsim).
set -eu
dir=$1 rounds=$2
shift 2
log=$(mktemp)
items=()
for b in "$@"; do for t in fixed polynomial roofline trained_physics; do items+=("$b $t"); done; done
for ((i = 0; i < rounds; i++)); do
	if ((i % 2)); then order=$(seq $((${#items[@]} - 1)) -1 0); else order=$(seq 0 $((${#items[@]} - 1))); fi
	for j in $order; do
		set -- ${items[$j]}
		load=$(cut -d' ' -f1 /proc/loadavg)
		/usr/bin/time -f "%U %S" -o "$log.t" "$1" predict --config "$dir/$2.yaml" --output-dir "$log.out" \
			--format json --overwrite >/dev/null 2>&1
		echo "$i $1 $2 $(cat "$log.t") $load" >>"$log"
	done
done
python3 - "$log" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
cpu = {(r[0], r[1], r[2]): float(r[3]) + float(r[4]) for r in rows}
loads = [float(r[5]) for r in rows]
print(f"load {min(loads):.2f}-{max(loads):.2f} (median {st.median(loads):.2f})")
for b in dict.fromkeys(r[1] for r in rows):
    rounds = sorted({r[0] for r in rows if r[1] == b})
    fx = [cpu[(i, b, "fixed")] for i in rounds]
    print(f"{b}: fixed median CPU {st.median(fx):.3f} s")
    for t in ("polynomial", "roofline", "trained_physics"):
        c = [cpu[(i, b, t)] for i in rounds]
        pr = [cpu[(i, b, t)] / cpu[(i, b, "fixed")] for i in rounds]
        print(f"  {t}: median per-round ratio {st.median(pr):.3f} (range {min(pr):.3f}-{max(pr):.3f}), "
              f"ratio of medians {st.median(c) / st.median(fx):.3f}")
PY
rm -rf "$log" "$log.t" "$log.out"
