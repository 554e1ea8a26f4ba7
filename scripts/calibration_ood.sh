#!/usr/bin/env bash
# calibration_ood.sh ROOT ROW...: the out-of-distribution record of issue 45's MLP
# calibration rows (scripts/calibration_select.sh), not an input of its rule: for
# seeds 1-3, `eval --ood builtin --json` of ROOT/seedSEED/ROW (the row "ensemble" is
# the five sgd networks sgd-1..5) on the test set and the built-in far-OOD sets
# (uniform noise, Gaussian noise, inverted test images) into ROOT/seedSEED/ROW.ood.json,
# unless it exists. A colder posterior is better calibrated in distribution; this says
# what it costs out of distribution (mutual information's AUROC), where make run's
# T = 0.3 beat the ensembles.
set -euo pipefail
root=$1; shift
out=$root
. "$(dirname "$0")/runs.sh"
for seed in 1 2 3; do
	dir=$root/seed$seed
	for row in "$@"; do
		if [ "$row" = ensemble ]; then
			run_flags "$dir" sgd-1 sgd-2 sgd-3 sgd-4 sgd-5
		else
			run_flags "$dir" "$row"
		fi
		eval_json "$dir/$row.ood.json" "${runs[@]}" --data "$data" --ood builtin
	done
done
