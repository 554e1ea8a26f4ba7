#!/usr/bin/python3
"""cnn_select_rule.py OUT ROW...: issue 45's CNN selection rule applied to cnn_select.sh's output.

OUT is `scripts/cnn_select.sh SEED OUT ROW...`'s directory (ROW.val.json: eval --json on the
validation split). The rule (cnn_select.sh's header): among the rows whose posterior check
is ok on validation (no chain NOT A POSTERIOR or warned; deep-ensemble rows have none), the
lowest validation NLL wins; within 0.003 of it, the lower ECE. Prints the rows' figures and
the winner; exits 1 while a row is not scored.

usage: scripts/cnn_select_rule.py OUT ROW...   (round 2: t0.1 t0.1x2 t0.05x2 t0.05x4w)
"""
import json
import os
import sys


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    out, rows = argv[1], argv[2:]
    res = {}
    print("| row | samples | accuracy | NLL | ECE | Brier | health |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for row in rows:
        try:
            with open(os.path.join(out, f"{row}.val.json")) as f:
                rep = json.load(f)
        except (OSError, ValueError):
            print(f"| {row} | pending | | | | | |")
            continue
        e = rep["ensemble"]
        health = rep.get("health") or []
        ok = all(h.get("posterior") and not h.get("warn") for h in health)
        res[row] = (e, ok)
        verdict = ("ok" if ok else "warn") if health else "-"
        print(f"| {row} | {e['samples']} | {e['accuracy']:.4f} | {e['nll']:.4f} | {e['ece']:.4f} | {e['brier']:.4f} | {verdict} |")
    if len(res) < len(rows):
        print("\nnot every row is scored yet: no winner", file=sys.stderr)
        return 1
    eligible = [(r, e) for r, (e, ok) in res.items() if ok]
    if not eligible:
        print("\nno row is eligible: no winner")
        return 0
    best = min(e["nll"] for _, e in eligible)
    near = [(r, e) for r, e in eligible if e["nll"] <= best + 0.003]
    r, e = min(near, key=lambda x: x[1]["ece"])
    print(f"\nwinner: {r} (validation NLL {e['nll']:.4f}, ECE {e['ece']:.4f})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
