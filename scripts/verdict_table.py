#!/usr/bin/env python3
"""verdict_table.py DIR [DIR ...]: the tempering verdict table (mean and
sample sd over the seed directories written by verdict.sh) as Markdown."""
import json, os, statistics, sys

rows = ["pt", "chains4", "sgnht", "resghmc", "sgd"]
names = {"pt": "(a) exact PT, adaptive free-top ladder, R=4", "chains4": "(b) 4 SGNHT chains pooled",
         "sgnht": "(c) 1 SGNHT chain", "resghmc": "(d) reSGHMC approximate swaps, R=4", "sgd": "(e) SGD"}

def ms(xs, f="%.4f"):
    if not xs:
        return "-"
    if len(xs) == 1:
        return f % xs[0]
    return (f + " ± " + f) % (statistics.mean(xs), statistics.stdev(xs))

print("| row | acc | NLL | ECE | Brier | samples | steps (per chain) | swap acceptance after burn-in | round trips | Lambda | R-hat |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    reps = []
    for d in sys.argv[1:]:
        p = os.path.join(d, r + ".json")
        if os.path.exists(p):
            reps.append(json.load(open(p)))
    if not reps:
        continue
    m = lambda k: [x["ensemble"][k] for x in reps]
    steps, acc, trips, lam, rhat = [], [], [], [], []
    for x in reps:
        for tr in x.get("traces", []) or []:
            pass
        t = x.get("tempering") or []
        if t:
            acc.append("/".join("%.2f" % a for a in t[0]["swap_acceptance"]))
            trips.append("%d in %d" % (t[0]["round_trips"], t[0]["window_steps"]))
            lam.append(t[0]["barrier"])
        if x.get("rhat"):
            rhat.append(x["rhat"])
    for d in sys.argv[1:]:
        p = os.path.join(d, r + ".train.txt")
        if os.path.exists(p):
            for line in open(p):
                if line.startswith("trained "):
                    steps.append(line.split()[1])
    print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        names[r], ms(m("accuracy")), ms(m("nll")), ms(m("ece")), ms(m("brier")),
        "/".join(str(s) for s in m("samples")), "/".join(sorted(set(steps), key=steps.index)) if steps else "-",
        "; ".join(acc) or "-", "; ".join(trips) or "-", ms(lam, "%.2f") if lam else "-", ms(rhat, "%.3f") if rhat else "-"))
