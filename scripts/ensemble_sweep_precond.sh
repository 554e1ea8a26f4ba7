#!/usr/bin/env bash
# ensemble_sweep_precond.sh SEED OUTDIR: rows added to scripts/ensemble_sweep.sh
# when the preconditioned kernels landed (2026-11-24 16:25 UTC, before any run of
# these rows), with the same data, split, budget and scoring: one sgnht chain of
# 150,000 steps with the rmsprop diagonal mass estimated during burn-in and then
# frozen, at the default lr 0.02 and at lr 0.2 (the mass slows the stiff
# coordinates, so a larger lr keeps the widest ones moving; docs/sampler.md).
set -euo pipefail
seed=$1 out=$2
. "$(dirname "$0")/runs.sh"
row() {
	local name=$1; shift
	train_row "$name" --data "$data" --arch 784-100-10 --split-seed "$seed" --seed "$seed" --quiet --checkpoint-every 5000 "$@"
	eval_json "$out/$name.val.json" --run "$out/$name" --split validation
	eval_json "$out/$name.test.json" --run "$out/$name"
	echo "== seed $seed $name: $(python3 -c "import json; v=json.load(open('$out/$name.val.json'))['ensemble']; print('val acc %.4f nll %.4f ece %.4f' % (v['accuracy'], v['nll'], v['ece']))")" >&2
}
row precond --steps 150000 --burnin 10000 --thin 250 --precondition rmsprop
row precond-lr0.2 --steps 150000 --burnin 10000 --thin 250 --precondition rmsprop --lr 0.2
