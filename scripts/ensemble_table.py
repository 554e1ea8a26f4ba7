#!/usr/bin/env python3
"""ensemble_table.py SWEEPDIR [--split val|test] [--seeds 1,2,3]: the sweep's table (docs/experiments.md).

Reads SWEEPDIR/seedS/ROW.{val,test}.json written by scripts/ensemble_sweep.sh and
ensemble_sweep_precond.sh (eval --json) and prints one markdown row per
configuration: the mean over the seeds done (and their range) of the ensemble's
accuracy, NLL, ECE and Brier, the seeds counted, and the samples averaged. Rows are
sorted by mean NLL, the sweep's ranking figure on the validation split. --seeds keeps
only those seeds, so that rows are compared over the same seeds. --health adds two
columns: the selective-prediction AURC of the ensemble ranked by its predictive
entropy (lower is better), and each seed's health verdict ("ok", "warn" when any chain
warned after burn-in, "-" for runs without a watched thermostat, such as sgd networks).
--split ood reads ROW.ood.json (`eval --ood builtin --json`) and adds the AUROC of
each built-in out-of-distribution set against the test images, the ensemble ranked by
mutual information (by entropy where a row has one member: an sgd network has no
disagreement to measure).
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
        ens = dict(rep["ensemble"])
        ens["aurc"] = next((x["aurc"] for x in rep.get("selective") or []
                            if x["score"] == "entropy" and x["predictor"] == "ensemble"), None)
        hs = [h for h in rep.get("health") or [] if h.get("watched")]
        ens["health"] = "-" if not hs else ("warn" if any(h.get("warn") for h in hs) else "ok")
        for x in rep.get("ood") or []:
            if x["predictor"] == "ensemble" and x["score"] in ("mutual_information", "entropy") and x["auroc"] is not None:
                if x["score"] == "mutual_information" or x["set"] not in ens.setdefault("ood", {}):
                    ens.setdefault("ood", {})[x["set"]] = x["auroc"]
        rows.setdefault(name, []).append((seed, ens))
    out = []
    for name, runs in rows.items():
        figs = {}
        for k in ("accuracy", "nll", "ece", "brier"):
            v = [r[k] for _, r in runs]
            figs[k] = (sum(v) / len(v), min(v), max(v))
        out.append((figs["nll"][0], name, runs, figs))
    out.sort()
    health = "--health" in sys.argv
    oodsets = []
    for _, _, runs, _ in out:
        for _, r in runs:
            for k in r.get("ood", {}):
                if k not in oodsets:
                    oodsets.append(k)
    if health:
        print("| configuration | seeds | samples | accuracy | NLL | ECE | Brier | AURC (entropy) | health |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    else:
        print("| configuration | seeds | samples | accuracy | NLL | ECE | Brier |" + "".join(" AUROC %s |" % k for k in oodsets))
        print("|---|---|---:|---:|---:|---:|---:|" + "---:|" * len(oodsets))
    for _, name, runs, figs in out:
        cells = []
        for k in ("accuracy", "nll", "ece", "brier"):
            m, lo, hi = figs[k]
            cells.append("%.4f" % m if len(runs) == 1 else "%.4f (%.4f-%.4f)" % (m, lo, hi))
        seeds = ",".join(s for s, _ in runs)
        samples = "/".join(str(r["samples"]) for _, r in runs)
        if health:
            a = [r["aurc"] for _, r in runs if r["aurc"] is not None]
            cells.append("-" if not a else "%.4f" % (sum(a) / len(a)) if len(a) == 1
                         else "%.4f (%.4f-%.4f)" % (sum(a) / len(a), min(a), max(a)))
            cells.append("/".join(r["health"] for _, r in runs))
        for k in oodsets if not health else []:
            v = [r["ood"][k] for _, r in runs if k in r.get("ood", {})]
            cells.append("-" if not v else "%.3f" % v[0] if len(v) == 1
                         else "%.3f (%.3f-%.3f)" % (sum(v) / len(v), min(v), max(v)))
        print("| %s | %s | %s | %s |" % (name, seeds, samples, " | ".join(cells)))


if __name__ == "__main__":
    main()
