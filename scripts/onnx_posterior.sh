#!/usr/bin/env bash
# onnx_posterior.sh MODEL.onnx OUTDIR SEED...: issue 59's aim 2, a posterior from
# a network trained in PyTorch against that network alone (docs/models.md, "A
# network from PyTorch"). MODEL is scripts/onnx_export.py's LeNet-5 (3 epochs on
# Fashion-MNIST, its seed 1). Recipe and budget fixed 2026-11-28 22:25 UTC, before
# their runs: make run-cnn's recipe (T = 0.1, two SGNHT chains side by side on the
# two cores) started from the file's weights (--start model), 6,000 steps a chain,
# burn-in 1,000, a sample every 50 (200 samples), all 60,000 training images; the
# training must take at most 10 minutes (timing.json; cores shared with other jobs
# make that an upper bound of the idle time). The network alone is a run of one
# SGD step at --lr 1e-12 from the file's weights, which scores as PyTorch does. Each
# seed's eval: the posterior against the network (--baseline) on the test set, with
# MNIST's test digits and the built-in sets as out-of-distribution (SEED.json).
# Aim: the posterior's NLL, ECE and Brier below the network's, and its mutual
# information's AUROC on MNIST above the network's better of max-probability and
# entropy, on every seed.
set -euo pipefail
model=$1 out=$2; shift 2
. "$(dirname "$0")/runs.sh"
train_row network --data "$data" --model "$model" --start model --validation 0 --sampler sgd --steps 1 --lr 1e-12 --quiet
for seed in "$@"; do
	train_row "post-$seed" --data "$data" --model "$model" --start model --validation 0 --seed "$seed" \
		--temperature 0.1 --chains 2 --steps 6000 --burnin 1000 --thin 50 --quiet
	eval_json "$out/$seed.json" --run "$out/post-$seed" --baseline "$out/network" --ood mnist --ood builtin
done

# After the fixed recipe lost ECE on seeds 1-2 (its reliability diagram
# under-confident: accuracy above confidence in the bins of 0.63-0.90), a colder
# temperature is chosen on validation, not on the test set: with ONNX_T_CHOICE=1,
# rows T = 0.1 and T = 0.03 of the same recipe on the 55,000 images left by the
# 5,000-image split of --split-seed 1 (seed 1), scored on that split
# (val-T.json); the lower validation ECE is the choice (rule fixed 2026-11-28
# 22:50 UTC, before its runs). The network saw the split's images in PyTorch's
# training, so the validation rows compare temperatures, not the network.
if [ "${ONNX_T_CHOICE:-0}" = 1 ]; then
	for t in 0.1 0.03; do
		train_row "val-t$t" --data "$data" --model "$model" --start model --validation 5000 --split-seed 1 --seed 1 \
			--temperature "$t" --chains 2 --steps 6000 --burnin 1000 --thin 50 --quiet
		eval_json "$out/val-t$t.json" --run "$out/val-t$t" --split validation
	done
fi
