#!/usr/bin/python3
"""cnn_verdict_table.py ROOT: issue 45's test-set table from scripts/cnn_verdict.sh's output.

ROOT holds seed1/, seed2/, seed3/ (each `scripts/cnn_verdict.sh SEED ROOT/seedSEED posterior
ens4` output, or the MLP calibration rows of scripts/calibration_ood.sh), read from ROW.ood.json
alone: `eval --ood builtin` scores the test set too (its figures are those of the rows'
separate test-set evals, ROW.test.json, where they exist: checked on all of them). Prints a markdown row per seed and row
(accuracy, NLL, ECE, Brier, mutual-information AUROC of the ensemble on each built-in
out-of-distribution set) and, with two seeds or more, their mean and range. A row still
training or being scored prints "pending".

usage: scripts/cnn_verdict_table.py ROOT [ROW ...]   (rows default: posterior ens4)
"""
import json
import os
import sys


def load(d, row):
    """The row's four figures and its MI AUROC per OOD set, or None when not scored yet."""
    try:
        with open(os.path.join(d, f"{row}.ood.json")) as f:
            rep = json.load(f)
        e, o = rep["ensemble"], rep["ood"]
    except (OSError, ValueError, KeyError):
        return None
    mi = {r["set"]: r["auroc"] for r in o if r["score"] == "mutual_information" and r["predictor"] == "ensemble"}
    return [e["accuracy"], e["nll"], e["ece"], e["brier"]], mi


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    root, rows = argv[1], argv[2:] or ["posterior", "ens4"]
    print("| row | seed | accuracy | NLL | ECE | Brier | MI AUROC |")
    print("|---|---|---:|---:|---:|---:|---|")
    for row in rows:
        figs, aurocs = [], []
        for seed in (1, 2, 3):
            r = load(os.path.join(root, f"seed{seed}"), row)
            if r is None:
                print(f"| {row} | {seed} | pending | | | | |")
                continue
            v, mi = r
            figs.append(v)
            aurocs.append(mi)
            sets = ", ".join(f"{k} {mi[k]:.3f}" for k in sorted(mi))
            print(f"| {row} | {seed} | " + " | ".join(f"{x:.4f}" for x in v) + f" | {sets} |")
        if len(figs) > 1:
            cols = list(zip(*figs))
            cells = " | ".join(f"{sum(c) / len(c):.4f} ({min(c):.4f}-{max(c):.4f})" for c in cols)
            sets = sorted(set.intersection(*(set(m) for m in aurocs)))
            mean_mi = ", ".join(f"{k} {sum(m[k] for m in aurocs) / len(aurocs):.3f}" for k in sets)
            print(f"| {row} | mean of {len(figs)} (range) | {cells} | {mean_mi} |")


if __name__ == "__main__":
    main(sys.argv)
