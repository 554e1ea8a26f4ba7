#!/usr/bin/python3
"""calibration_rule.py ROOT [ROW ...]: issue 45's MLP calibration selection, decided.

ROOT holds seed1/, seed2/, seed3/, each `scripts/calibration_select.sh SEED ROOT/seedSEED
ensemble ROW...` output (ROW.val.json and ROW.test.json: eval --json on the validation
split and on the test set). Applies the rule fixed with the rows (calibration_select.sh's
header) to the validation figures: among the sampler rows whose posterior check is ok on
every seed (no chain NOT A POSTERIOR, none warned) and whose mean validation NLL and Brier
are below the ensemble's, the lowest mean validation ECE wins; within 0.001 of it, the
lower mean NLL. Prints the validation and test tables (mean and range over the seeds
present) and the winner; exits 1 while a row of some seed is not scored yet.

usage: scripts/calibration_rule.py ROOT [ROW ...]
       (rows default: t0.3 t0.2 t0.1-nc sgdstart2-t0.3; the ensemble row is "ensemble")
"""
import json
import os
import sys

SEEDS = (1, 2, 3)
FIGS = ("accuracy", "nll", "ece", "brier")


def load(root, seed, row, split):
    """The row's eval JSON for one seed and split ("val" or "test"), or None."""
    try:
        with open(os.path.join(root, f"seed{seed}", f"{row}.{split}.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def healthy(rep):
    """Whether every chain of the report passed the posterior check without a warning."""
    return all(h.get("posterior") and not h.get("warn") for h in rep.get("health") or [])


def summary(reps):
    """Mean and (min, max) of each figure over the reports."""
    out = {}
    for k in FIGS:
        v = [r["ensemble"][k] for r in reps]
        out[k] = (sum(v) / len(v), min(v), max(v))
    return out


def table(title, rows):
    print(f"\n{title}\n")
    print("| row | seeds | accuracy | NLL | ECE | Brier | health |")
    print("|---|---|---:|---:|---:|---:|---|")
    for name, s, seeds, health in rows:
        cells = " | ".join(f"{m:.4f} ({lo:.4f}-{hi:.4f})" for m, lo, hi in (s[k] for k in FIGS))
        print(f"| {name} | {','.join(map(str, seeds))} | {cells} | {health} |")


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    root, rows = argv[1], argv[2:] or ["t0.3", "t0.2", "t0.1-nc", "sgdstart2-t0.3"]
    complete, res = True, {}
    for row in ["ensemble"] + rows:
        for split in ("val", "test"):
            reps = [(s, load(root, s, row, split)) for s in SEEDS]
            done = [(s, r) for s, r in reps if r is not None]
            complete = complete and len(done) == len(SEEDS)
            res[row, split] = done
    for split, title in (("val", "validation (what the rule reads)"), ("test", "test set (recorded, not used to choose)")):
        lines = []
        for row in ["ensemble"] + rows:
            done = res[row, split]
            if not done:
                continue
            health = "" if row == "ensemble" else "/".join("ok" if healthy(r) else "warn" for _, r in done)
            lines.append((row, summary([r for _, r in done]), [s for s, _ in done], health))
        table(title, lines)
    if not complete:
        print("\nnot every row is scored on every seed yet: no winner", file=sys.stderr)
        return 1
    ens = summary([r for _, r in res["ensemble", "val"]])
    eligible = []
    for row in rows:
        reps = [r for _, r in res[row, "val"]]
        s = summary(reps)
        ok = all(healthy(r) for r in reps)
        below = s["nll"][0] < ens["nll"][0] and s["brier"][0] < ens["brier"][0]
        print(f"{row}: health ok on every seed {ok}; mean NLL and Brier below the ensemble's {below}")
        if ok and below:
            eligible.append((row, s["ece"][0], s["nll"][0]))
    if not eligible:
        print("\nno sampler row is eligible: no winner")
        return 0
    best_ece = min(e for _, e, _ in eligible)
    near = [x for x in eligible if x[1] <= best_ece + 0.001]
    winner = min(near, key=lambda x: x[2])
    print(f"\nwinner: {winner[0]} (mean validation ECE {winner[1]:.4f}, NLL {winner[2]:.4f})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
