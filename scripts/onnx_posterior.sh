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
