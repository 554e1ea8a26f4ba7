#!/bin/sh
# ladder_check.sh BIN DATA OUT [SEED]
#
# Issue 32's acceptance check of the adaptive free-top ladder: trains the
# 784-32-10 Fashion-MNIST case (4 rungs, --swap-target 0.3, exchanges every
# 20 steps, burn-in 6,000 of 12,000 steps, seed 3) and checks from
# `eval --json` that the ladder after burn-in is what tuning left (fixed
# after burn-in) and that every adjacent pair's swap acceptance after
# burn-in is within 0.1 of the target. The acceptance is the mean of the
# attempts' swap probabilities (Rao-Blackwellised); the fraction of
# attempts that swapped is printed beside it. BURNIN and STEPS (environment)
# change the burn-in and the run's length (defaults 6000 and 12000). Prints
# the ladder, its top temperature, the barrier Lambda, tuning's verdict and
# the acceptances; exits 1 when a pair misses. Reads Fashion-MNIST, so it is
# not part of `make test`.
set -eu
bin=${1:-bin/ptsghmc}
data=${2:-/usr/share/datasets/fashion-mnist}
out=${3:-runs/ladder-check}
seed=${4:-${SEED:-3}}
burnin=${BURNIN:-6000}
steps=${STEPS:-12000}
target=0.3
"$bin" train --data "$data" --train-size 10000 --validation 1000 \
	--arch 784-32-10 --sampler ptsghmc --replicas 4 --ladder adaptive --swap-target $target \
	--exchange 20 --steps "$steps" --burnin "$burnin" --thin 100 --seed "$seed" --out "$out" --overwrite --quiet
"$bin" eval --run "$out" --json >"$out/eval.json"
python3 - "$out/eval.json" "$target" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
target = float(sys.argv[2])
def find(d):
    if isinstance(d, dict):
        if "tempering" in d and d["tempering"]:
            t = d["tempering"]
            return t[0] if isinstance(t, list) else t
        for v in d.values():
            r = find(v)
            if r:
                return r
    if isinstance(d, list):
        for v in d:
            r = find(v)
            if r:
                return r
    return None
t = find(doc)
if t is None:
    sys.exit("ladder_check: no tempering section in eval --json")
acc = t["swap_acceptance"]
print("ladder after burn-in: T = " + ", ".join("%.4g" % v for v in t["temps"]))
print("top temperature %.4g; barrier Lambda %.3f; tuning converged: %s%s" % (
    t["temps"][-1], t["barrier"], t.get("tuning_converged", False),
    "" if t.get("tuning_converged") else " (would need --burnin %d)" % t.get("needed_burnin", 0)))
print("swap acceptance per pair after burn-in: " + "/".join("%.3f" % a for a in acc) + " (target %.2f +- 0.1; %s)" % (target, t.get("swap_acceptance_from", "outcomes")))
if "swap_outcomes" in t:
    print("fraction swapped per pair after burn-in: " + "/".join("%.3f" % a for a in t["swap_outcomes"]) +
          " (" + "/".join("%d of %d" % (a, n) for a, n in zip(t["swaps_accepted"], t["swaps_proposed"])) + ")")
if not t.get("after_burnin"):
    sys.exit("ladder_check: the window is not after burn-in")
bad = [p + 1 for p, a in enumerate(acc) if abs(a - target) > 0.1]
if bad:
    print("ladder_check: FAIL: pairs %s outside %.2f +- 0.1" % (bad, target))
    print("(on this case even the best fixed ladder for 0.3, chosen with hindsight, has every pair within 0.1\n"
          " in about half of its 6,000-step stretches: make ladder-ceiling, docs/sampler.md)")
    sys.exit(1)
print("ladder_check: ok")
PY
