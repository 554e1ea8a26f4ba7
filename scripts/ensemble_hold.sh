#!/usr/bin/env bash
# ensemble_hold.sh OUTDIR ROW...: the ensemble verdict's 30-minute hold
# (docs/experiments.md, "Sampling against a deep ensemble"), seed 1: Fashion-MNIST
# 784-400-400-10 on all 60,000 training images, scored on the 10,000 test images.
# Budgets are the confirm stage's (scripts/ensemble_confirm.sh) times 30/8, in steps:
# the deep ensemble is 19 sgd networks of 30,000 steps (94 s each measured: 19 fit in
# 30 minutes), seeds 11-29, so its first five are the confirm stage's seed-1 members
# (REUSE=DIR links DIR/sgd-1..5 instead of retraining them); one chain 470,000 steps,
# two chains 315,000 each; --thin times 30/8 (940), so the ensemble keeps about as many
# samples as at 8 minutes. Finished rows are skipped; unfinished ones resume bit-exactly.
set -euo pipefail
out=$1; shift
. "$(dirname "$0")/runs.sh"
seed=1
S=470000 S2=315000 thin=940
train() { local name=$1; shift; train_row "$name" --data "$data" --validation 0 --quiet --checkpoint-every 5000 "$@"; }
score() { local name=$1; shift; eval_rows "$name" test "$@"; }
for row in "$@"; do
	case $row in
	ensemble)
		m=()
		for i in $(seq 1 19); do
			if [ -n "${REUSE:-}" ] && [ "$i" -le 5 ] && [ -f "$REUSE/sgd-$i/.done" ] && [ ! -e "$out/sgd-$i" ]; then
				ln -s "$(realpath "$REUSE/sgd-$i")" "$out/sgd-$i"
			fi
			train "sgd-$i" --seed $((10 * seed + i)) --sampler sgd --steps 30000
			m+=("sgd-$i")
		done
		score ensemble "${m[@]}"; continue ;;
	sgnht) args=(--steps $S --burnin 10000 --thin $thin) ;;
	t0.3) args=(--steps $S --burnin 10000 --thin $thin --temperature 0.3) ;;
	t0.1) args=(--steps $S --burnin 10000 --thin $thin --temperature 0.1) ;;
	# issue 45's calibration candidates (scripts/calibration_select.sh), at 30 minutes
	t0.2) args=(--steps $S --burnin 10000 --thin $thin --temperature 0.2) ;;
	t0.1-nc) args=(--steps $S --burnin 10000 --thin $thin --temperature 0.1 --noise-correction) ;;
	st5-t0.1) args=(--steps $S --burnin 10000 --thin $thin --prior-df 5 --prior 0.05 --temperature 0.1) ;;
	sgdstart2-t0.1) args=(--chains 2 --steps $S2 --sgd-warmup 30000 --burnin 30000 --thin $thin --temperature 0.1) ;;
	*) echo "ensemble_hold: unknown row $row" >&2; exit 2 ;;
	esac
	train "$row" --seed "$seed" "${args[@]}"
	score "$row" "$row"
done
