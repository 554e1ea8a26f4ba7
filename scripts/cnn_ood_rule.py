#!/usr/bin/python3
"""cnn_ood_rule.py DIR: issue 57's CNN selection rule, round 2 (scripts/cnn_ood_select.sh's header).

DIR holds seed1, seed2 and seed3, `scripts/cnn_ood_select.sh SEED DIR/seedSEED ROW...`'s
output (ROW.val.json and ROW.thin8.val.json: eval --json on the validation split; ROW/.done
the training seconds). Prints every row's figures per seed, the means, each posterior row's
criteria against the ensemble of its wall-clock (base: ens7, s4k3nc: ens8, nc: by its seed-1
seconds), and the decision; exits 1 while a row the rule needs is not scored. base, out after
seed 1 (its check failed), is shown where it ran.

usage: scripts/cnn_ood_rule.py /work/runs57/cnnsel
"""
import json
import os
import sys

SEEDS = (1, 2, 3)
POSTERIORS = ("base", "s4k3nc", "nc")
FILES = ["base", "base.thin8", "s4k3nc", "s4k3nc.thin8", "nc", "nc.thin8", "ens7", "ens8"]
SETS = ("mnist", "uniform", "gaussian", "inverted")
# base's seed-1 training seconds and the LeNets they hold (the header's round 2)
BASE_SECONDS, BASE_NETWORKS = 1252, 7.2


def ensemble_of(row, nc_seconds):
    """The ensemble of a posterior row's wall-clock: base ens7, s4k3nc ens8, nc by its seconds."""
    if row == "nc":
        k = min(max(int(BASE_NETWORKS * nc_seconds / BASE_SECONDS), 7), 8)
        return f"ens{k}"
    return {"base": "ens7", "s4k3nc": "ens8"}[row]


def set_name(path):
    """The short name of an OOD set in eval's JSON: a built-in set's, or "mnist" (`--ood mnist`, or
    the IDX file's path as the selection gave it)."""
    for s in SETS[1:]:
        if path.startswith(s):
            return s
    if path == "mnist" or "idx3-ubyte" in path:
        return "mnist"
    raise ValueError(f"unknown OOD set {path!r}")


def figures(rep):
    """Accuracy, NLL, ECE, Brier, the MI AUROCs by set and the health of one eval JSON."""
    e = rep["ensemble"]
    f = {k: e[k] for k in ("accuracy", "nll", "ece", "brier")}
    for o in rep["ood"]:
        if o["predictor"] == "ensemble" and o["score"] == "mutual_information":
            f[set_name(o["set"])] = o["auroc"]
    missing = [s for s in SETS if s not in f]
    if missing:
        raise ValueError(f"no mutual-information AUROC for {missing}")
    f["ok"] = all(h.get("posterior") and not h.get("warn") for h in rep.get("health") or [])
    f["samples"] = e["samples"]
    return f


def criteria(p, e):
    """The aims' 12 criteria of posterior figures p against ensemble figures e: a list of (name, met)."""
    c = [("acc", p["accuracy"] > e["accuracy"])]
    c += [(k, p[k] < e[k]) for k in ("nll", "ece", "brier")]
    c += [(f"MI {s} > ens", p[s] > e[s]) for s in SETS]
    c += [(f"MI {s} >= 0.95", p[s] >= 0.95) for s in SETS[1:]]
    c += [("MI mnist >= 0.97 with ECE", p["mnist"] >= 0.97 and p["ece"] < e["ece"])]
    return c


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    res = {}
    print("| seed | row | samples | accuracy | NLL | ECE | Brier | MI MNIST / uniform / Gaussian / inverted | health |")
    print("|---|---|---:|---:|---:|---:|---:|---|---|")
    for seed in SEEDS:
        for row in FILES:
            path = os.path.join(argv[1], f"seed{seed}", f"{row}.val.json")
            try:
                with open(path) as fh:
                    f = figures(json.load(fh))
            except OSError:
                continue
            res[seed, row] = f
            mi = " / ".join(f"{f[s]:.3f}" for s in SETS)
            health = ("ok" if f["ok"] else "NOT OK") if not row.startswith("ens") else "-"
            print(f"| {seed} | {row} | {f['samples']} | {f['accuracy']:.4f} | {f['nll']:.4f} | {f['ece']:.4f} | {f['brier']:.4f} | {mi} | {health} |")
    # a row is out once a seed's chain failed; the others need all three seeds
    out = {row for row in POSTERIORS if any((s, row) in res and not res[s, row]["ok"] for s in SEEDS)}
    live = [row for row in POSTERIORS if row not in out]
    need = [f"seed{s}/{f}" for s in SEEDS for row in live for f in (row, row + ".thin8")] + \
           [f"seed{s}/{e}" for s in SEEDS for e in ("ens7", "ens8")]
    pending = [n for n in need if (int(n[4]), n.split("/")[1]) not in res]
    print(f"\nnot candidates (a chain's check not ok): {', '.join(sorted(out)) or 'none'}")
    if pending:
        print(f"pending: {' '.join(pending)}: the rule reads all three seeds", file=sys.stderr)
        return 1
    try:
        with open(os.path.join(argv[1], "seed1", "nc", ".done")) as fh:
            nc_seconds = float(fh.read())
    except OSError:
        nc_seconds = BASE_SECONDS
    keys = ("accuracy", "nll", "ece", "brier") + SETS
    rows = [r for r in FILES if all((s, r) in res for s in SEEDS)]
    mean = {row: {k: sum(res[s, row][k] for s in SEEDS) / len(SEEDS) for k in keys} for row in rows}
    print("means of seeds 1-3:")
    for row in rows:
        m = mean[row]
        print(f"  {row:13s} {m['accuracy']:.4f} / {m['nll']:.4f} / {m['ece']:.4f} / {m['brier']:.4f}  MI " +
              " / ".join(f"{m[s]:.3f}" for s in SETS))
    count = {}
    for row in live:
        ens = ensemble_of(row, nc_seconds)
        for name in (row, row + ".thin8"):
            c = criteria(mean[name], mean[ens])
            count[name] = sum(met for _, met in c)
            print(f"{name} against {ens}: {count[name]} of {len(c)}: " + ", ".join(n for n, met in c if met))
    if not live:
        print("make run-cnn: no candidate: every row failed its posterior check")
        return 0
    chosen = sorted(live, key=lambda r: (-count[r], mean[r]["nll"]))[0]
    print(f"make run-cnn: takes {chosen}'s flags" + (" (its own)" if chosen == "base" else ""))
    thin = (mean[chosen + ".thin8"]["nll"] <= mean[chosen]["nll"] + 0.002
            and count[chosen + ".thin8"] >= count[chosen])
    print(f"make run-cnn's eval: {'--thin 8' if thin else 'every sample'} "
          f"(NLL {mean[chosen]['nll']:.4f} whole, {mean[chosen + '.thin8']['nll']:.4f} at --thin 8)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
