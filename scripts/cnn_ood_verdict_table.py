#!/usr/bin/python3
"""cnn_ood_verdict_table.py ROOT ROW [--split val]: issue 57's aims for the CNN, read from
scripts/cnn_ood_verdict.sh's output.

ROOT holds seed1, seed2 and seed3 (`scripts/cnn_ood_verdict.sh SEED ROOT/seedSEED ens ROW`):
ROW.test.json (the whole posterior with the ensemble of its wall-clock as --baseline, so with
the paired intervals), ROW.thin8.test.json (every 8th sample), ens7/ens8.test.json, ROW/.done
(the training seconds) and FILE.seconds (each eval's). Prints, per seed and as the mean and
range of the seeds scored, the posterior whole and at --thin 8 and its ensemble (accuracy,
NLL, ECE, Brier, the mutual information's AUROC on MNIST digits and the built-in sets), the
paired intervals' verdicts, and each aim read as issue 57 states it:
  1  the 8 comparisons with the ensemble of the same wall-clock (on the means)
  2  the best of the three scores' AUROC (max-prob, entropy, MI) >= 0.95 on uniform, Gaussian
     and inverted images, with the score named
  3  MNIST's MI AUROC >= 0.97 with an ECE below the ensemble's
  4  eval of the test set and the four OOD sets in at most 120 s (--thin 8 and whole)
  5  training in at most 1,800 s with accuracy >= 0.932, NLL <= 0.200, ECE <= 0.010
--split val reads ROW.val.json and ROW.thin8.val.json instead (scripts/cnn_ood_select.sh's
output, which has no baseline in the posterior's eval and no eval seconds): the same table on
validation.

usage: scripts/cnn_ood_verdict_table.py /work/runs57/cnnverdict nc
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cnn_ood_rule import SETS, criteria, figures, set_name  # noqa: E402

SEEDS = (1, 2, 3)
ENSEMBLE = {"base": "ens7", "nc": "ens7", "s4k3nc": "ens8"}  # cnn_ood_verdict.sh's --baseline
SCORES = ("max_prob", "entropy", "mutual_information")
KEYS = ("accuracy", "nll", "ece", "brier") + SETS
AIM5 = {"seconds": 1800, "accuracy": 0.932, "nll": 0.200, "ece": 0.010}
AIM4_SECONDS = 120


def read_number(path):
    """The number in a one-line file (ROW/.done, FILE.seconds), or None when it is absent."""
    try:
        with open(path) as fh:
            return float(fh.read())
    except OSError:
        return None


def load(path):
    """One eval JSON's figures (cnn_ood_rule.figures: the four in-distribution figures, the MI
    AUROC by set, the health) with every ensemble AUROC by (set, score), the paired intervals
    and the eval's seconds; None if not scored."""
    try:
        with open(path) as fh:
            rep = json.load(fh)
    except OSError:
        return None
    f = figures(rep)
    f["auroc"] = {(set_name(o["set"]), o["score"]): o["auroc"] for o in rep.get("ood") or []
                  if o["predictor"] == "ensemble"}
    f["paired"] = rep.get("paired") or []
    f["eval_seconds"] = read_number(path + ".seconds")
    return f


def verdict(d):
    """Which predictor a paired interval favours: "P" the posterior, "E" the ensemble, "-" neither.
    eval's JSON says so in "favours" (PairedDiff.Verdict); files of eval before it (the verdict's
    binary, fb23ce6) are read by the same rule."""
    if "favours" in d:
        return {"ensemble": "P", "baseline": "E", "": "-"}[d["favours"]]
    lo, hi = d["lo"], d["hi"]
    if d["figure"] not in ("accuracy", "auroc"):
        lo, hi = -hi, -lo
    return "P" if lo > 0 else "E" if hi < 0 else "-"


def spread(values, fmt):
    """The mean of values and their range, formatted."""
    return f"{fmt.format(sum(values) / len(values))} ({fmt.format(min(values))}-{fmt.format(max(values))})"


def mean(figs):
    """The mean over seeds of each figure of KEYS and of every (set, score) AUROC."""
    m = {k: sum(f[k] for f in figs) / len(figs) for k in KEYS}
    m["auroc"] = {k: sum(f["auroc"][k] for f in figs) / len(figs) for k in figs[0]["auroc"]}
    return m


def print_rows(res, names):
    """The per-seed rows and, with two seeds or more, their mean and range."""
    print("| row | seed | samples | train s | eval s | accuracy | NLL | ECE | Brier | MI MNIST / uniform / Gaussian / inverted | health |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for name in names:
        figs = []
        for seed in SEEDS:
            f = res.get((seed, name))
            if f is None:
                print(f"| {name} | {seed} | pending | | | | | | | | |")
                continue
            figs.append(f)
            train = "-" if f["train_seconds"] is None else f"{f['train_seconds']:.0f}"
            ev = "-" if f["eval_seconds"] is None else f"{f['eval_seconds']:.0f}"
            health = "-" if name.startswith("ens") else "ok" if f["ok"] else "NOT OK"
            mi = " / ".join(f"{f[s]:.3f}" for s in SETS)
            print(f"| {name} | {seed} | {f['samples']} | {train} | {ev} | {f['accuracy']:.4f} | {f['nll']:.4f} | "
                  f"{f['ece']:.4f} | {f['brier']:.4f} | {mi} | {health} |")
        if len(figs) > 1:
            cells = " | ".join(spread([f[k] for f in figs], "{:.4f}") for k in ("accuracy", "nll", "ece", "brier"))
            mi = " / ".join(f"{sum(f[s] for f in figs) / len(figs):.3f}" for s in SETS)
            print(f"| {name} | mean of {len(figs)} (range) | | | | {cells} | {mi} | |")


def print_paired(res, name):
    """The paired intervals' verdicts of the posterior (whole, or name ROW.thin8.ens: every
    8th sample) against its ensemble, per seed."""
    row = name.split(".")[0]
    names = [("accuracy", None), ("nll", None), ("ece", None), ("brier", None)] + [(s, "mutual_information") for s in SETS]
    if not any(res.get((seed, name)) and res[seed, name]["paired"] for seed in SEEDS):
        return
    print(f"\npaired 95% intervals, {name} minus {ENSEMBLE[row]} (P: the posterior's side, E: the ensemble's, -: holds 0):")
    for seed in SEEDS:
        f = res.get((seed, name))
        if f is None or not f["paired"]:
            continue
        cells = []
        for fig, score in names:
            for d in f["paired"]:
                if (score is None and d["figure"] == fig) or \
                        (score and d["figure"] == "auroc" and d["score"] == score and set_name(d["set"]) == fig):
                    cells.append(f"{fig} {d['diff']:+.4f} [{d['lo']:+.4f}, {d['hi']:+.4f}] {verdict(d)}")
        print(f"  seed {seed}: " + "; ".join(cells))


def print_aims(res, row, ens):
    """Aims 1-5 on the means of the seeds scored, whole and at --thin 8."""
    seeds = [s for s in SEEDS if all((s, n) in res for n in (row, row + ".thin8", ens))]
    if not seeds:
        print("\naims: pending (no seed has the posterior, its --thin 8 eval and the ensemble scored)")
        return
    e = mean([res[s, ens] for s in seeds])
    print(f"\naims on the means of seeds {', '.join(map(str, seeds))}:")
    for name in (row, row + ".thin8"):
        figs = [res[s, name] for s in seeds]
        p = mean(figs)
        c = criteria(p, e)
        met = [n for n, ok in c[:8] if ok]
        print(f"{name}:")
        print(f"  aim 1: {len(met)} of 8 against {ens}: {', '.join(met) or 'none'}")
        far = []
        for s in SETS[1:]:
            best = max(SCORES, key=lambda sc: p["auroc"][s, sc])
            far.append(f"{s} {p['auroc'][s, best]:.3f} ({best}) {'met' if p['auroc'][s, best] >= 0.95 else 'not met'}")
        print(f"  aim 2: {'; '.join(far)}")
        print(f"  aim 3: MNIST MI {p['mnist']:.3f}, ECE {p['ece']:.4f} against {e['ece']:.4f}: "
              f"{'met' if c[11][1] else 'not met'}")
        ev = [f["eval_seconds"] for f in figs if f["eval_seconds"] is not None]
        if ev:
            print(f"  aim 4: eval {spread(ev, '{:.0f}')} s: {'met' if max(ev) <= AIM4_SECONDS else 'not met'} "
                  f"(at most {AIM4_SECONDS} s on every seed)")
        tr = [f["train_seconds"] for f in figs if f["train_seconds"] is not None]
        if tr:
            ok = max(tr) <= AIM5["seconds"] and p["accuracy"] >= AIM5["accuracy"] and \
                p["nll"] <= AIM5["nll"] and p["ece"] <= AIM5["ece"]
            print(f"  aim 5: training {spread(tr, '{:.0f}')} s, accuracy {p['accuracy']:.4f}, NLL {p['nll']:.4f}, "
                  f"ECE {p['ece']:.4f}: {'met' if ok else 'not met'}")


def main(argv):
    ap = argparse.ArgumentParser(usage="%(prog)s ROOT ROW [--split val]", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root")
    ap.add_argument("row", choices=sorted(ENSEMBLE))
    ap.add_argument("--split", choices=("test", "val"), default="test")
    a = ap.parse_args(argv[1:])
    row, ens = a.row, ENSEMBLE[a.row]
    names = [row, row + ".thin8", ens]
    res = {}
    for seed in SEEDS:
        d = os.path.join(a.root, f"seed{seed}")
        for name in names + [row + ".thin8.ens"]:
            f = load(os.path.join(d, f"{name}.{a.split}.json"))
            if f is not None:
                f["train_seconds"] = None if name == ens else read_number(os.path.join(d, row, ".done"))
                res[seed, name] = f
    print_rows(res, names)
    print_paired(res, row)
    print_paired(res, row + ".thin8.ens")
    print_aims(res, row, ens)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
