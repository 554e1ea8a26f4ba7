#!/usr/bin/env bash
# uncertainty_figures.sh OUTDIR: the uncertainty issue's Fashion-MNIST figures
# (docs/uncertainty.md, "Fashion-MNIST"), fixed before the runs:
#  - make run's posterior (the default config: one SGNHT chain, 60,000 steps,
#    55,000 images) against the deep ensemble of the ensemble issue (5 sgd
#    networks of 30,000 steps on all 60,000 images, seeds 1-5), on the test set,
#    the built-in far-OOD sets, rotation and noise shift, selective prediction;
#  - near-OOD: the same two recipes trained on classes 0-7 (the last two classes,
#    8 bag and 9 ankle boot, held out; chosen before any run), whose held-out
#    test images eval scores as out-of-distribution.
# Finished runs are skipped and unfinished ones resumed (bit-exact).
set -euo pipefail
out=$1
. "$(dirname "$0")/runs.sh"
train() { local name=$1; shift; train_row "$name" --data "$data" --quiet "$@"; }
for cls in all 8; do
	extra=() arch=()
	if [ "$cls" = 8 ]; then extra=(--classes 0,1,2,3,4,5,6,7); arch=(--arch 784-400-400-8); fi
	train "$cls-posterior" "${extra[@]}" "${arch[@]}"
	base=()
	for s in 1 2 3 4 5; do
		train "$cls-sgd-$s" --sampler sgd --steps 30000 --validation 0 --seed "$s" "${extra[@]}" "${arch[@]}"
		base+=(--baseline "$out/$cls-sgd-$s")
	done
	ood=(--ood builtin)
	"$bin" eval --data "$data" --run "$out/$cls-posterior" "${base[@]}" "${ood[@]}" --shift rotate,noise --selective --plot "$out/$cls-plots" > "$out/$cls.eval.txt"
	"$bin" eval --data "$data" --run "$out/$cls-posterior" "${base[@]}" "${ood[@]}" --shift rotate,noise --json > "$out/$cls.eval.json"
done
echo FIGURES DONE
