#!/usr/bin/python3
"""budget_fit.py: where a budget curve says a target would be met.

Reads scripts/budget_curve.sh's OUT/budget-B.json (the ensemble of a run read as if it
had stopped at B steps a chain), fits each figure y(G) = a + b/G over the budgets given,
G = CHAINS * B gradient steps in all (least squares; two budgets fit exactly), and prints
per curve directory the fit's limit a, the budget G at which the fit crosses the target
(accuracy >= 0.932, NLL <= 0.200, ECE <= 0.010: uncertainty-baselines' 10 LeNet-5s, issue
45's aim 1), or "never" when the limit is on the wrong side of it. With --check B (repeatable),
the fit's prediction at that budget is printed beside the measured figure (budgets outside the
fit, e.g. a resumed longer run, test the extrapolation).

usage: scripts/budget_fit.py [--chains N] [--check B]... DIR... B B [B...]
"""
import argparse
import json
import os
import sys

# Targets: (figure, target, whether higher is better).
TARGETS = [("accuracy", 0.932, True), ("nll", 0.200, False), ("ece", 0.010, False)]


def load(d, b):
    """The ensemble's figures of DIR/budget-B.json."""
    path = os.path.join(d, f"budget-{b}.json")
    try:
        with open(path) as f:
            return json.load(f)["ensemble"]
    except (OSError, ValueError, KeyError) as err:
        sys.exit(f"budget_fit: {path}: {err} (run scripts/budget_curve.sh for budget {b} first)")


def fit_inverse(gs, ys):
    """Least-squares a, b of y = a + b/g over the points (g, y)."""
    xs = [1.0 / g for g in gs]
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        raise ValueError("budgets must differ")
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return my - b * mx, b


def crossing(a, b, target, higher_better):
    """The budget g at which a + b/g reaches target, or None if it never does."""
    met_in_limit = a > target if higher_better else a < target
    if not met_in_limit:
        return None
    g = b / (target - a)
    return max(g, 0.0)


def split_dirs_budgets(args):
    """The leading arguments (curve directories) and the trailing run of integers (budgets).

    A directory named by digits alone is a directory when one follows it, so only the
    trailing integers are budgets."""
    i = len(args)
    while i > 0 and args[i - 1].isdigit():
        i -= 1
    return args[:i], [int(x) for x in args[i:]]


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--chains", type=int, default=1, help="chains pooled in each run (gradient steps = chains x B)")
    p.add_argument("--check", type=int, action="append", default=[], help="a budget (a chain) to compare with the fit; repeatable")
    p.add_argument("dir", nargs="+", help="curve directories, then the budgets (a chain) to fit")
    args = p.parse_args(argv[1:])
    dirs, budgets = split_dirs_budgets(args.dir)
    if not dirs or len(budgets) < 2:
        p.error("want at least one directory and then two budgets")
    for d in dirs:
        if not os.path.isdir(d):
            p.error(f"{d}: not a curve directory (the directories come first, then the budgets)")
    for d in dirs:
        print(f"{d} (fit to {', '.join(f'{args.chains * b:,}' for b in budgets)} gradient steps)")
        rows = [load(d, b) for b in budgets]
        gs = [args.chains * b for b in budgets]
        for fig, target, higher in TARGETS:
            a, b = fit_inverse(gs, [r[fig] for r in rows])
            g = crossing(a, b, target, higher)
            where = "never" if g is None else ("at every budget" if g == 0 else f"at {g:,.0f} gradient steps")
            line = f"  {fig}: limit {a:.4f}; reaches {target} {where}"
            for c in args.check:
                got = load(d, c)[fig]
                line += f"; at {args.chains * c:,} fit {a + b / (args.chains * c):.4f}, measured {got:.4f}"
            print(line)


if __name__ == "__main__":
    main(sys.argv)
