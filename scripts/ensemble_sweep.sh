#!/usr/bin/env bash
# ensemble_sweep.sh SEED OUTDIR: the ensemble verdict's sweep (docs/experiments.md,
# "Sampling against a deep ensemble"), one seed: Fashion-MNIST 784-100-10 on
# 55,000 training images with 5,000 held out (the same 5,000 for every row of
# the seed: --split-seed SEED), every row a budget of 2 minutes of wall-clock on
# 2 idle cores fixed IN STEPS from speeds measured before the sweep (sgd 1,192
# steps/s with one network; sgnht 1,300 steps/s with one chain, 905 per chain
# with two), so rows are deterministic and a row cut short resumes bit-exactly
# (the script skips finished rows and resumes unfinished ones). Each row is
# scored on the held-out validation set (ROW.val.json, what the sweep ranks by)
# and on the test set (ROW.test.json, recorded, not used to choose).
set -euo pipefail
seed=$1 out=$2
. "$(dirname "$0")/runs.sh"
common=(--data "$data" --arch 784-100-10 --split-seed "$seed" --quiet --checkpoint-every 5000)
train() { local name=$1; shift; train_row "$name" "${common[@]}" "$@"; }
# score NAME RUNS...: validation and test figures of the pooled runs.
score() {
	local name=$1; shift
	eval_rows "$name" validation "$@"
	eval_rows "$name" test "$@"
	echo "== seed $seed $name: $(python3 -c "import json,sys; v=json.load(open('$out/$name.val.json'))['ensemble']; print('val acc %.4f nll %.4f ece %.4f' % (v['accuracy'], v['nll'], v['ece']))")" >&2
}
S=150000      # one sgnht chain, 2 minutes
S2=105000     # each of two chains, 2 minutes
sampler_row() { # NAME ARGS...
	local name=$1; shift
	train "$name" --seed "$seed" "$@"
	score "$name" "$name"
}
# 1. deep ensemble: 8 sgd networks of 15,000 steps (the validation curve of one
#    network flattens by 15,000 steps), one after another
members=()
for m in 1 2 3 4 5 6 7 8; do
	train "sgd-$m" --seed $((10 * seed + m)) --sampler sgd --steps 15000
	members+=("sgd-$m")
done
score ensemble8 "${members[@]}"
# 2. today's default: one sgnht chain
sampler_row sgnht --steps $S --burnin 10000 --thin 250
# 3. two chains, pooled
sampler_row chains2 --chains 2 --steps $S2 --burnin 10000 --thin 250
# 4. posterior temperature (noise tempering), Gaussian prior
sampler_row t0.3 --steps $S --burnin 10000 --thin 250 --temperature 0.3
sampler_row t0.1 --steps $S --burnin 10000 --thin 250 --temperature 0.1
sampler_row t0.03 --steps $S --burnin 10000 --thin 250 --temperature 0.03
# 5. heavy-tailed prior (Student-t, 5 degrees of freedom), at T = 1 and 0.1
sampler_row st5 --steps $S --burnin 10000 --thin 250 --prior-df 5 --prior 0.05
sampler_row st5-t0.1 --steps $S --burnin 10000 --thin 250 --prior-df 5 --prior 0.05 --temperature 0.1
# 6. cyclical SG-MCMC: 5 cycles of 30,000 steps, peak lr 0.05, samples in each cycle's last 20%
sampler_row cyclical --steps $S --burnin 10000 --thin 100 --cycle 30000 --lr 0.05
# 7. two chains started from SGD solutions (15,000 sgd steps each, then sgnht),
#    beside the same starts with sampling off (the same runs ended at the switch)
sampler_row sgdstart2 --chains 2 --steps $S2 --sgd-warmup 15000 --burnin 15000 --thin 250
sampler_row sgdstart2-off --chains 2 --steps 15000 --sgd-warmup 15000 --burnin 14999 --thin 1
sampler_row sgdstart2-t0.1 --chains 2 --steps $S2 --sgd-warmup 15000 --burnin 15000 --thin 250 --temperature 0.1
