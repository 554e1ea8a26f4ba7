#!/usr/bin/env bash
# budget_curve.sh OUTDIR RUNDIR B...: a run's posterior-predictive figures had it
# stopped at each budget of B steps, the ensemble read from the second half of the
# chain as make run-cnn reads it (eval --from-step B/2 --to-step B --json into
# OUTDIR/budget-B.json; a constant-step run computes nothing from --steps, so its
# first B steps are a B-step run's). Prints one table row per budget. Existing JSON
# files are kept. BIN (default bin/ptsghmc) and DATA as in runs.sh.
set -euo pipefail
out=$1 run=$2; shift 2
. "$(dirname "$0")/runs.sh"
for b in "$@"; do
	eval_json "$out/budget-$b.json" --run "$run" --data "$data" --from-step $((b / 2)) --to-step "$b"
done
python3 - "$out" "$@" <<'PY'
import json, sys
out, budgets = sys.argv[1], sys.argv[2:]
print("| steps | samples | accuracy | NLL | ECE | Brier |")
print("|---:|---:|---:|---:|---:|---:|")
for b in budgets:
    e = json.load(open(f"{out}/budget-{b}.json"))["ensemble"]
    print(f"| {int(b):,} | {e['samples']} | {e['accuracy']:.4f} | {e['nll']:.4f} | {e['ece']:.4f} | {e['brier']:.4f} |")
PY
