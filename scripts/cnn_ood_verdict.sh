#!/usr/bin/env bash
# cnn_ood_verdict.sh SEED OUTDIR ROW...: issue 57's test-set verdict for the CNN:
# scripts/cnn_ood_select.sh's rows trained as make run-cnn trains (all 60,000
# training images, --validation 0) and scored as issue 57's aims read them: the
# test set with MNIST's test digits and the built-in sets (ROW.test.json: eval
# --ood mnist --ood builtin --json), the posterior rows also at --thin 8
# (ROW.thin8.test.json). Each eval's wall-clock seconds go to FILE.seconds (aim
# 4: at most 2 minutes on 2 idle cores). Rows as cnn_ood_select.sh's:
#   base    make run-cnn's flags (its posterior, seed SEED)
#   s4k3nc  base with --noise-correction --null-space-prior 10 --null-space-keep
#           0.999 --null-space-skip 0.9999
#   nc      base with --noise-correction
#   ens     8 sgd LeNets of 4,000 steps (seeds 10 SEED + i), scored as ens7 (the
#           first 7, base's and nc's wall-clock) and ens8 (s4k3nc's)
# A posterior row's whole posterior is scored with the ensemble of its wall-clock
# as eval's --baseline (base and nc: ens7, s4k3nc: ens8; the selection's
# measurements), so its JSON holds both predictors' figures and the paired
# comparison's intervals (eval's "paired"): give ens before it. Its --thin 8 eval
# scores the posterior alone: its seconds are aim 4's. ROW.thin8.ens.test.json
# scores every 8th sample against the same ensemble (what make run-cnn-ensemble
# prints when make run-cnn's eval reads every 8th sample). Written 2026-11-29 11:30
# UTC, while the selection's seed 1 ran, before any of its figures; nc and the
# baselines added 13:25 UTC, ROW.thin8.ens 16:00 UTC, each before any verdict run.
# Finished rows are skipped, unfinished ones resume bit-exactly (runs.sh).
set -euo pipefail
seed=$1 out=$2; shift 2
. "$(dirname "$0")/runs.sh"
train() { local name=$1; shift; train_row "$name" --data "$data" --model lenet --validation 0 --quiet --checkpoint-every 5000 "$@"; }
# score FILE FROM ROW... [-- EVAL ARGS]: the pooled ROWs on the test set from step
# FROM, timed.
score() {
	local file=$1 from=$2 runs rows=() t0; shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do rows+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	[ -f "$file" ] && return 0
	run_flags "$out" "${rows[@]}"
	t0=$(date +%s)
	eval_json "$file" "${runs[@]}" --from-step "$from" --ood mnist --ood builtin "$@"
	echo "$(( $(date +%s) - t0 ))" > "$file.seconds"
}
for row in "$@"; do
	if [ "$row" = ens ]; then
		sgd_members ens 8 4000
		score "$out/ens7.test.json" 0 "${members[@]:0:7}"
		score "$out/ens8.test.json" 0 "${members[@]}"
		continue
	fi
	cnn_ood_row "$row" || { echo "cnn_ood_verdict: unknown row $row" >&2; exit 2; }
	base=()
	for i in $(seq 1 "$row_k"); do
		[ -f "$out/ens-$i/.done" ] || { echo "cnn_ood_verdict: $row needs ens-$i: give ens before $row" >&2; exit 2; }
		base+=(--baseline "$out/ens-$i")
	done
	train "$row" "${row_args[@]}"
	score "$out/$row.thin8.test.json" 7000 "$row" -- --thin 8
	score "$out/$row.test.json" 7000 "$row" -- "${base[@]}"
	score "$out/$row.thin8.ens.test.json" 7000 "$row" -- --thin 8 "${base[@]}"
done
