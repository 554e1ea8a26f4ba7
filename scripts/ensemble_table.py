#!/usr/bin/env python3
"""ensemble_table.py SWEEPDIR [--split val|test] [--seeds 1,2,3]: the sweep's table (docs/experiments.md).

Reads SWEEPDIR/seedS/ROW.{val,test}.json written by scripts/ensemble_sweep.sh and
ensemble_sweep_precond.sh (eval --json) and prints one markdown row per
configuration: the mean over the seeds done (and their range) of the ensemble's
accuracy, NLL, ECE and Brier, the seeds counted, and the samples averaged. Rows are
sorted by mean NLL, the sweep's ranking figure on the validation split. --seeds keeps
only those seeds, so that rows are compared over the same seeds.
"""
import glob
import json
import os
import sys


def main():
    sweep = sys.argv[1]
    split = "val"
    if "--split" in sys.argv:
        split = sys.argv[sys.argv.index("--split") + 1]
    seeds = None
    if "--seeds" in sys.argv:
        seeds = set(sys.argv[sys.argv.index("--seeds") + 1].split(","))
    rows = {}
    for path in sorted(glob.glob(os.path.join(sweep, "seed*", "*.%s.json" % split))):
        seed = os.path.basename(os.path.dirname(path))[4:]
        if seeds is not None and seed not in seeds:
            continue
        name = os.path.basename(path)[: -len(".%s.json" % split)]
        with open(path) as f:
            try:
                rep = json.load(f)
            except json.JSONDecodeError as e:
                sys.exit("%s: %s" % (path, e))
        rows.setdefault(name, []).append((seed, rep["ensemble"]))
    out = []
    for name, runs in rows.items():
        figs = {}
        for k in ("accuracy", "nll", "ece", "brier"):
            v = [r[k] for _, r in runs]
            figs[k] = (sum(v) / len(v), min(v), max(v))
        out.append((figs["nll"][0], name, runs, figs))
    out.sort()
    print("| configuration | seeds | samples | accuracy | NLL | ECE | Brier |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for _, name, runs, figs in out:
        cells = []
        for k in ("accuracy", "nll", "ece", "brier"):
            m, lo, hi = figs[k]
            cells.append("%.4f" % m if len(runs) == 1 else "%.4f (%.4f-%.4f)" % (m, lo, hi))
        seeds = ",".join(s for s, _ in runs)
        samples = "/".join(str(r["samples"]) for _, r in runs)
        print("| %s | %s | %s | %s |" % (name, seeds, samples, " | ".join(cells)))


if __name__ == "__main__":
    main()
