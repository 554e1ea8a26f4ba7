#!/bin/sh
# ladder_ceiling.sh BIN DATA OUT [SEEDS]
#
# What issue 32's ladder bar (every pair's swap acceptance after burn-in
# within 0.1 of 0.3, on the 784-32-10 case of `make ladder-check`) asks of
# any ladder, tuned or not: trains that case with the ladder FIXED at the
# best one for 0.3 chosen with hindsight (T = 1, 1.01231, 1.02476, 1.03737:
# 4 rungs equally spaced in log T at the Barker distance of 0.3, from the
# mean barrier density of 12 seeds' runs on a fixed ladder up to T = 1.0261,
# steps 12,000-36,000), 36,000 steps per seed, exchanges every 20 steps,
# and cuts each run after step 12,000 into stretches of 6,000 steps (the
# sampling phase `make ladder-check` judges) and of 12,000 steps
# (`BURNIN=12000 STEPS=24000`'s). It prints every stretch's per-pair
# acceptance (the mean of the attempts' swap probabilities) and how many
# stretches have every pair within 0.1 of 0.3: the share a ladder tuned
# without error could pass; and the same over steps 6,000-12,000 (the
# ladder fixed from step 0, so still in the barrier's fall). A seed whose
# run is already complete in OUT is not trained again. SEEDS defaults to
# 1..12 (about 40 s each on two cores). Reads Fashion-MNIST, so it is not
# part of `make test`.
set -eu
bin=${1:-bin/ptsghmc}
data=${2:-/usr/share/datasets/fashion-mnist}
out=${3:-runs/ladder-ceiling}
seeds=${4:-${SEEDS:-1 2 3 4 5 6 7 8 9 10 11 12}}
ladder=1,1.01231,1.02476,1.03737
steps=36000
mkdir -p "$out"
for s in $seeds; do
	if grep -q "\"step\":$steps," "$out/s$s/metrics.jsonl" 2>/dev/null; then
		echo "seed $s: already trained in $out/s$s (delete it to train it again)"
		continue
	fi
	"$bin" train --data "$data" --train-size 10000 --validation 1000 \
		--arch 784-32-10 --sampler ptsghmc --replicas 4 --ladder $ladder \
		--exchange 20 --steps "$steps" --burnin 200 --thin 1000 --seed "$s" \
		--out "$out/s$s" --overwrite --quiet >"$out/s$s.log" 2>&1 ||
		{ cat "$out/s$s.log" >&2; exit 1; }
	echo "seed $s trained: $out/s$s"
done
python3 - "$out" "$steps" $seeds <<'PY'
import json, math, sys
out, steps, seeds = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
burn, target = 200, 0.3
def window(rows, t0, t1):
    # the cumulative acceptance since burn-in, differenced between two log steps
    a0 = [a * (t0 - burn) for a in rows[t0]["swap_acceptance"]]
    a1 = [a * (t1 - burn) for a in rows[t1]["swap_acceptance"]]
    return [(y - x) / (t1 - t0) for x, y in zip(a0, a1)]
def load(s):
    # the logged rows that carry swap acceptances, by step
    rows = {}
    for line in open("%s/s%s/metrics.jsonl" % (out, s)):
        r = json.loads(line)
        if "swap_acceptance" in r:
            rows[r["step"]] = r
    return rows
runs = {s: load(s) for s in seeds}
cells, passed = [], 0
for s in seeds:
    w = window(runs[s], 6000, 12000)
    ok = all(abs(a - target) <= 0.1 for a in w)
    passed += ok
    cells.append("/".join("%.2f" % a for a in w) + (" pass" if ok else " MISS"))
print("steps 6,000-12,000 (the sampling phase of make ladder-check, here on a ladder fixed from step 0):")
print("  " + ", ".join(cells))
print("  %d of %d seeds pass" % (passed, len(seeds)))
for width in (6000, 12000):
    passed = total = 0
    pairs = []
    print("stretches of %d steps from step 12,000 (pass: every pair within 0.1 of %.1f)" % (width, target))
    for s in seeds:
        rows = runs[s]
        cells = []
        for t0 in range(12000, steps, width):
            w = window(rows, t0, t0 + width)
            ok = all(abs(a - target) <= 0.1 for a in w)
            passed += ok
            total += 1
            pairs += w
            cells.append("/".join("%.2f" % a for a in w) + (" pass" if ok else " MISS"))
        print("  seed %2s: %s" % (s, ", ".join(cells)))
    m = sum(pairs) / len(pairs)
    sd = math.sqrt(sum((a - m) ** 2 for a in pairs) / len(pairs))
    print("  %d of %d stretches pass; pairs mean %.3f, sd %.3f" % (passed, total, m, sd))
PY
