#!/usr/bin/env bash
# verdict.sh ARCH SEED SECONDS OUTDIR: the tempering verdict's five rows for
# one architecture and seed, each trained for the same wall-clock budget on
# all 60,000 Fashion-MNIST training images and evaluated on the 10,000 test
# images (OUTDIR/ROW.json). Rows:
#   pt       exact PT-SGHMC, 4 rungs, adaptive ladder with a free top (Barker swap target 0.3)
#   chains4  4 independent SGNHT chains in one process, pooled
#   sgnht    one SGNHT chain (2 BLAS threads)
#   resghmc  PT with reSGHMC's approximate swap (F = 3e5), geometric ladder T = 1..1.5
#   sgd      momentum SGD (the non-Bayesian baseline)
# Summarise several OUTDIRs with scripts/verdict_table.py.
# PT rows tune their ladder during a burn-in of PT_BURNIN steps with exchange
# rounds every PT_EXCHANGE steps (defaults 6300 and 50: tuning rounds of
# 100, 200, ..., 3200 steps); the single-chain rows burn in for 3000 steps.
set -euo pipefail
arch=$1 seed=$2 secs=$3 out=$4
ptb=${PT_BURNIN:-6300} pte=${PT_EXCHANGE:-50}
bin=${BIN:-bin/ptsghmc}
data=${DATA:-/usr/share/datasets/fashion-mnist}
mkdir -p "$out"
common=(--data "$data" --arch "$arch" --validation 0 --seed "$seed" --steps 100000000 --time-limit "${secs}s" --thin 50 --log-every 50 --checkpoint-every 5000 --quiet --overwrite)
row() {
	local name=$1; shift
	echo "== $arch seed $seed $name: $*" >&2
	local t0=$(date +%s)
	"$bin" train --out "$out/$name" "${common[@]}" "$@" > "$out/$name.train.txt" 2>&1
	local t1=$(date +%s)
	"$bin" eval --run "$out/$name" --json > "$out/$name.json"
	echo "   trained $((t1 - t0)) s; $(grep -m1 -o 'trained [0-9]* steps' "$out/$name.train.txt")" >&2
}
row pt      --sampler ptsghmc --replicas 4 --ladder adaptive --tmax 1.5 --swap-target 0.3 --exchange "$pte" --burnin "$ptb"
row chains4 --sampler sgnht --chains 4 --burnin 3000
row sgnht   --sampler sgnht --burnin 3000
row resghmc --sampler ptsghmc --replicas 4 --ladder geometric --tmax 1.5 --exchange-test resghmc --resghmc-f 3e5 --exchange "$pte" --burnin "$ptb"
row sgd     --sampler sgd
