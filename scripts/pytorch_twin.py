#!/usr/bin/python3
"""PyTorch twin of a `ptsghmc train` run on Fashion-MNIST: the same Bayesian MLP,
prior, minibatches, step size and kernel, trained in PyTorch and scored with the
same four figures (`train.Score`: accuracy, NLL, ECE with 15 equal-width
confidence bins, Brier summed over classes) on the 10,000 test images.

It is the README results table's cross-check: if ptsghmc's figures were an
artefact of its own code, an independent implementation of the same model and
kernel would not reproduce them. Not a dependency of the project: run it with
Debian's python3-torch (`/usr/bin/python3`), on the same machine and BLAS.

What is the same as ptsghmc's defaults (train.DefaultConfig):
  * model: 784-400-400-10 ReLU MLP, He-normal weights (sd sqrt(2/fan_in)), zero
    biases; pixels scaled to [0, 1];
  * prior: Gaussian, precision 0.03 * fan_in on every weight and bias of a layer;
  * potential: U~ = -log prior - N/|S| sum log-likelihood over the minibatch;
  * minibatches: each epoch a fresh permutation, batches of 128, the last batch
    of an epoch the remainder;
  * step: h = sqrt(lr/N), diffusion A = friction/h, unit mass;
  * --sampler sgd: p <- (1 - A h) p - h grad U~, theta <- theta + h p, from p = 0
    (sampler.SGD; the same as torch.optim.SGD(lr, momentum=1-friction) on the
    mean loss, which is what this twin runs); the final weights are scored;
  * --sampler sgnht: p <- exp(-xi h) p - h grad U~ + sqrt(2(1-exp(-A h))) N(0, I),
    theta <- theta + h p, xi <- xi + A^2 h (|p_before + p_after|^2/(4D) - 1), from
    p ~ N(0, I), xi = A (sampler.SGNHT with its default inertia Q = 1/A^2); after
    --burnin steps every --thin-th state is a sample and the ensemble averages the
    samples' predictive probabilities.
Random streams differ (PyTorch's generator, not Go's), so figures agree within
seed-to-seed spread, not digit for digit: run several --seed values.

usage: /usr/bin/python3 scripts/pytorch_twin.py [--sampler sgd|sgnht] [--steps 30000]
       [--burnin 20000] [--thin 300] [--lr 0.02] [--friction 0.1] [--seed 1]
       [--threads 1] [--data /usr/share/datasets/fashion-mnist] [--json FILE]
"""
import argparse
import gzip
import json
import math
import os
import struct
import sys
import time

import numpy as np
import torch

p = argparse.ArgumentParser()
p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
p.add_argument("--arch", default="784-400-400-10")
p.add_argument("--sampler", choices=["sgd", "sgnht"], default="sgd")
p.add_argument("--steps", type=int, default=30000)
p.add_argument("--burnin", type=int, default=20000)
p.add_argument("--thin", type=int, default=300)
p.add_argument("--batch", type=int, default=128)
p.add_argument("--lr", type=float, default=0.02)
p.add_argument("--friction", type=float, default=0.1)
p.add_argument("--prior", type=float, default=0.03, help="prior precision per weight, times fan-in")
p.add_argument("--seed", type=int, default=1)
p.add_argument("--threads", type=int, default=1, help="PyTorch threads (1 was its fastest setting here, docs/speed.md)")
p.add_argument("--log-every", type=int, default=10000)
p.add_argument("--json", default="", help="also write the figures as JSON to this file")
a = p.parse_args()
if a.steps < 1 or a.batch < 1 or a.thin < 1 or a.threads < 1 or a.burnin < 0:
    p.error("steps, batch, thin and threads must be positive, burnin non-negative")
if not (a.lr > 0 and 0 < a.friction < 1 and a.prior >= 0):
    p.error("lr must be positive, friction in (0, 1), prior non-negative")
if a.sampler == "sgnht" and a.burnin >= a.steps:
    p.error("burnin must be below steps: sgnht keeps samples after burn-in")
torch.set_num_threads(a.threads)
torch.manual_seed(a.seed)


def read_idx(path):
    """Reads a (gzipped) IDX file of unsigned bytes into a NumPy array."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] != 8:
        sys.exit(f"{path}: not an IDX file of unsigned bytes (magic {raw[:4].hex()})")
    rank = raw[3]
    dims = struct.unpack(">" + "I" * rank, raw[4:4 + 4 * rank])
    data = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * rank)
    if data.size != math.prod(dims):
        sys.exit(f"{path}: {data.size} bytes of data, dimensions {dims} need {math.prod(dims)}")
    return data.reshape(dims)


def load(split):
    for ext in ("", ".gz"):
        img = os.path.join(a.data, f"{split}-images-idx3-ubyte{ext}")
        lab = os.path.join(a.data, f"{split}-labels-idx1-ubyte{ext}")
        if os.path.exists(img) and os.path.exists(lab):
            x = read_idx(img).reshape(-1, 28 * 28).astype(np.float32) / 255
            return torch.from_numpy(x), torch.from_numpy(read_idx(lab).astype(np.int64))
    sys.exit(f"{a.data}: no {split}-images-idx3-ubyte[.gz] and {split}-labels-idx1-ubyte[.gz]")


X, Y = load("train")
Xt, Yt = load("t10k")
N = X.shape[0]
sizes = [int(s) for s in a.arch.split("-")]
if sizes[0] != X.shape[1] or sizes[-1] != int(Y.max()) + 1:
    sys.exit(f"arch {a.arch} does not fit {X.shape[1]} features and {int(Y.max()) + 1} classes")

params, precision = [], []
for i, o in zip(sizes[:-1], sizes[1:]):
    params.append(torch.randn(i, o) * math.sqrt(2 / i))
    params.append(torch.zeros(o))
    precision += [a.prior * i, a.prior * i]
params = [q.requires_grad_() for q in params]
D = sum(q.numel() for q in params)


def logits(x):
    z = x
    for k in range(0, len(params), 2):
        z = torch.addmm(params[k + 1], z, params[k])
        if k + 2 < len(params):
            z = torch.relu(z)
    return z


def potential(xb, yb):
    """U~ = -log prior - N/|S| sum log p(y|x, theta)."""
    nll = torch.nn.functional.cross_entropy(logits(xb), yb, reduction="sum")
    prior = sum(0.5 * lam * (q * q).sum() for lam, q in zip(precision, params))
    return prior + N / xb.shape[0] * nll


def test_probs():
    with torch.no_grad():
        return torch.softmax(logits(Xt).double(), dim=1)


def score(probs, labels):
    """train.Score: accuracy, NLL, ECE (15 bins (b/15, (b+1)/15]), Brier."""
    probs, labels = probs.numpy(), labels.numpy()
    n = len(labels)
    conf = probs.max(axis=1)
    correct = (probs.argmax(axis=1) == labels).astype(np.float64)
    nll = -np.log(np.maximum(probs[np.arange(n), labels], 1e-300)).mean()
    onehot = np.zeros_like(probs)
    onehot[np.arange(n), labels] = 1
    brier = ((probs - onehot) ** 2).sum(axis=1).mean()
    bins = np.clip(np.ceil(conf * 15).astype(int) - 1, 0, 14)
    ece = sum(abs(correct[bins == b].sum() - conf[bins == b].sum()) for b in range(15)) / n
    return {"accuracy": correct.mean(), "nll": nll, "ece": ece, "brier": brier}


h = math.sqrt(a.lr / N)
A = a.friction / h
noise = math.sqrt(-2 * math.expm1(-A * h))
mom = [torch.zeros_like(q) if a.sampler == "sgd" else torch.randn_like(q) for q in params]
xi = A
order, pos = torch.randperm(N), 0
ens, kept = None, 0
start = time.time()
for step in range(1, a.steps + 1):
    if pos >= N:
        order, pos = torch.randperm(N), 0
    idx = order[pos:pos + a.batch]
    pos += a.batch
    for q in params:
        q.grad = None
    potential(X[idx], Y[idx]).backward()
    with torch.no_grad():
        if a.sampler == "sgd":
            for q, m in zip(params, mom):
                m.mul_(1 - A * h).sub_(h * q.grad)
                q.add_(h * m)
        else:
            decay, kin = math.exp(-xi * h), 0.0
            for q, m in zip(params, mom):
                new = decay * m - h * q.grad + noise * torch.randn_like(m)
                kin += float(((m + new) ** 2).sum()) / 4
                m.copy_(new)
                q.add_(h * m)
            xi += A * A * h * (kin / D - 1)
            if not math.isfinite(xi):
                sys.exit(f"step {step}: the thermostat diverged")
            if step > a.burnin and (step - a.burnin) % a.thin == 0:
                pr = test_probs()
                ens = pr if ens is None else ens + pr
                kept += 1
    if step % a.log_every == 0:
        print(f"step {step}/{a.steps}  {step / (time.time() - start):.1f} steps/s", file=sys.stderr)

wall = time.time() - start
last = score(test_probs(), Yt)
rows = [("single sample (the last)" if a.sampler == "sgnht" else "sgd network", 1, last)]
if a.sampler == "sgnht":
    if kept == 0:
        sys.exit("no samples kept: steps - burnin is below thin")
    rows.insert(0, ("ensemble (posterior)", kept, score(ens / kept, Yt)))
print(f"pytorch twin: {a.sampler} {a.arch}, {a.steps} steps, lr {a.lr}, friction {a.friction}, "
      f"seed {a.seed}, {a.threads} threads, torch {torch.__version__}: {wall:.0f} s "
      f"({a.steps / wall:.1f} steps/s)")
print(f"{'predictor':24s} {'samples':>7s} {'accuracy':>9s} {'nll':>8s} {'ece':>8s} {'brier':>8s}")
for name, n, m in rows:
    print(f"{name:24s} {n:7d} {m['accuracy']:9.4f} {m['nll']:8.4f} {m['ece']:8.4f} {m['brier']:8.4f}")
if a.json:
    with open(a.json, "w") as f:
        json.dump({"args": vars(a), "wall_seconds": wall,
                   "rows": [{"predictor": n, "samples": k, **m} for n, k, m in rows]}, f, indent=1)
