#!/usr/bin/python3
"""Side-by-side reference for `ptsghmc bench`: the same PT-SGHMC step in PyTorch.

R replicas of an MLP stacked into batched matrix products, float32, CPU:
every replica's minibatch potential, gradient and per-example log-likelihoods,
the SGNHT update with injected noise, and an exchange round every 10 steps
(alternately the even and the odd adjacent pairs, as ptsghmc's "alternate"
scheme). Not a dependency of the project: run it with Debian's python3-torch to
compare speeds on one machine.

An exchange runs the test ptsghmc runs (`--exchange-test`, as train's flag):
barker (the default) is ptsghmc's corrected minibatch Barker test
(tempering.Exchanger with train's settings): per-example energies
u_i = prior - N log l_i of the pair's two configurations on a batch of 256
examples drawn without replacement, deltaE's estimate and standard error (with
the finite-population correction), the Margin (50) and Tolerance (1e-8) early
decisions, the batch doubled (extending the same order) until the standard
error is at most 1, or the whole data set (the exact test); resghmc is the
approximate test (tempering.BiasCorrectedExchange, F = 1) on one batch of 256.
An accepted exchange swaps the pair's parameters and momenta. The swap's
random draw is a logistic variate (ptsghmc adds a draw from its correction
table): the same work, not the same random numbers, so the two programs'
tests grow their batches about equally often, not identically; both print
their counts.

The flags match `ptsghmc bench`'s: --replicas, --batch, --steps, --exchange
(steps between exchange rounds; 0, or a single replica, means no exchange).
--kernel sghmc drops the thermostat (constant friction: a single-chain SGHMC
step, slightly less work than SGNHT). A single replica (R = 1) uses plain
2-D matrix products (addmm) instead of batched ones. scripts/bench_side_by_side.sh
runs the issue-14 workloads against ptsghmc bench. --threads sets PyTorch's
own threads only: Debian's OpenBLAS (the system libblas.so.3) keeps its own,
set with OPENBLAS_NUM_THREADS.

usage: /usr/bin/python3 scripts/pytorch_bench.py [--replicas 10] [--batch 128] [--steps 50]
       [--threads 1] [--exchange 10] [--exchange-test barker|resghmc] [--xbatch 256] [--kernel sgnht|sghmc|adamw]
"""
import argparse
import math
import time

import torch

p = argparse.ArgumentParser()
p.add_argument("--arch", default="784-400-400-10")
p.add_argument("--replicas", type=int, default=10)
p.add_argument("--batch", type=int, default=128)
p.add_argument("--steps", type=int, default=50)
p.add_argument("--threads", type=int, default=1)
p.add_argument("--exchange", type=int, default=10, help="steps between exchange rounds (0: none)")
p.add_argument("--exchange-test", choices=["barker", "resghmc"], default="barker",
               help="the swap test: barker (ptsghmc's corrected minibatch Barker test, growing its batch) or resghmc (one batch)")
p.add_argument("--xbatch", type=int, default=256,
               help="an exchange test's first batch (ptsghmc's --xbatch; N or more: every test exact)")
p.add_argument("--kernel", choices=["sgnht", "sghmc", "adamw"], default="sgnht",
               help="adamw: one network optimised by torch.optim.AdamW (mean cross-entropy, "
                    "forward, backward, zero_grad, step): the optimiser's step a sampler's step is compared with")
a = p.parse_args()
if a.replicas < 1 or a.batch < 1 or a.steps < 1 or a.threads < 1 or a.xbatch < 2:
    p.error("replicas, batch, steps and threads must be positive, xbatch at least 2")
if a.exchange < 0:
    p.error("exchange must be >= 0 (0: no exchanges)")
if a.kernel == "adamw" and a.replicas != 1:
    p.error("--kernel adamw optimises one network: --replicas 1")
torch.set_num_threads(a.threads)
torch.manual_seed(1)
sizes = [int(s) for s in a.arch.split("-")]
R, B, N = a.replicas, a.batch, 10000
every = a.exchange if R > 1 else 0
X = torch.rand(N, sizes[0])
Y = torch.randint(0, sizes[-1], (N,))
params = []
for i, o in zip(sizes[:-1], sizes[1:]):
    params.append((torch.randn(R, i, o) * (2 / i) ** 0.5).requires_grad_())
    params.append(torch.zeros(R, 1, o).requires_grad_())
mom = [torch.randn_like(q) for q in params]
xi = torch.full((R,), 10.0)
h, A = 1e-3, 10.0
temps = torch.logspace(0, 1, R)
D = sum(q[0].numel() for q in params)


def loglik(xb, yb):
    if R == 1:
        z = xb
        for k in range(0, len(params), 2):
            z = torch.addmm(params[k + 1][0], z, params[k][0])
            if k + 2 < len(params):
                z = torch.relu(z)
        lp = torch.log_softmax(z, dim=1)
        return lp.gather(1, yb.view(-1, 1)).view(1, -1)  # 1 x B
    z = xb.unsqueeze(0).expand(R, -1, -1)
    for k in range(0, len(params), 2):
        z = torch.baddbmm(params[k + 1], z, params[k])
        if k + 2 < len(params):
            z = torch.relu(z)
    lp = torch.log_softmax(z, dim=2)
    return lp.gather(2, yb.view(1, -1, 1).expand(R, -1, 1)).squeeze(2)  # R x B


# ptsghmc's exchange settings (runspec.DefaultConfig: xbatch, xmargin,
# xtolerance; the correction table's sigma); --xbatch sets the first
XBATCH, MARGIN, LOG_TOL, SIGMA = a.xbatch, 50.0, math.log(1e-8), 1.0
counts = {"tests": 0, "grown": 0, "exact": 0, "early": 0, "swaps": 0}


def pair_energies(j, xb, yb):
    """Per-example energies u_i = prior - N log l_i of replicas j and j+1 (2 x n, float64)."""
    z = xb.unsqueeze(0).expand(2, -1, -1)
    for k in range(0, len(params), 2):
        z = torch.baddbmm(params[k + 1][j:j + 2], z, params[k][j:j + 2])
        if k + 2 < len(params):
            z = torch.relu(z)
    ll = torch.log_softmax(z, dim=2).gather(2, yb.view(1, -1, 1).expand(2, -1, 1)).squeeze(2)
    prior = sum(0.5 * (q[j:j + 2] ** 2).sum(dim=(1, 2)) for q in params)
    return prior.double().view(2, 1) - N * ll.double()


def logistic():
    u = torch.rand(1, dtype=torch.float64).item()
    return math.log(u / (1 - u)) if 0 < u < 1 else 0.0


def exchange_test(j):
    """Decides the exchange of replicas j and j+1 as ptsghmc's --exchange-test does."""
    counts["tests"] += 1
    c = 1 / temps[j].item() - 1 / temps[j + 1].item()
    perm = torch.randperm(N)
    n, have, d = min(XBATCH, N), 0, torch.empty(0, dtype=torch.float64)
    while True:
        e = pair_energies(j, X[perm[have:n]], Y[perm[have:n]])
        d, have = torch.cat([d, c * (e[0] - e[1])]), n
        mean = d.mean().item()
        if n >= N:  # the whole data set: the exact Barker test
            counts["exact"] += 1
            return mean + logistic() > 0
        var = d.var().item() / n * (1 - n / N)  # finite-population correction
        if a.exchange_test == "resghmc":
            return math.log(max(torch.rand(1, dtype=torch.float64).item(), 1e-300)) < mean - var / 2
        sd = var ** 0.5
        if mean + 6 * sd < -MARGIN or mean + var / 2 < LOG_TOL:
            counts["early"] += 1
            return False
        if mean - 6 * sd > MARGIN or -mean + var / 2 < LOG_TOL:
            counts["early"] += 1
            return True
        if sd <= SIGMA:
            return mean + (SIGMA * SIGMA - var) ** 0.5 * torch.randn(1, dtype=torch.float64).item() + logistic() > 0
        if n == XBATCH:
            counts["grown"] += 1
        n = min(2 * n, N)


opt = None
if a.kernel == "adamw":
    opt = torch.optim.AdamW(params, lr=1e-3, weight_decay=1e-2)


def adamw_step(t):
    idx = torch.randint(0, N, (B,))
    loss = -loglik(X[idx], Y[idx]).mean()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()


def step(t):
    global xi
    if opt is not None:
        adamw_step(t)
        return
    idx = torch.randint(0, N, (B,))
    ll = loglik(X[idx], Y[idx])
    prior = sum(0.5 * (q ** 2).sum(dim=(1, 2)) for q in params)
    u = prior - N / B * ll.sum(1)
    grads = torch.autograd.grad(u.sum(), params)
    with torch.no_grad():
        kin = torch.zeros(R)
        for q, m, g in zip(params, mom, grads):
            shape = (R,) + (1,) * (q.dim() - 1)
            m.mul_(1 - (xi * h).view(shape)).sub_(h * g / temps.view(shape))
            m.add_(torch.randn_like(m), alpha=(2 * A * h) ** 0.5)
            q.add_(m, alpha=h)
            if a.kernel == "sgnht":
                kin += (m ** 2).sum(dim=tuple(range(1, q.dim())))
        if a.kernel == "sgnht":
            xi = xi + h * (kin / D - 1)
        if every > 0 and t % every == 0:
            for j in range(t // every % 2, R - 1, 2):
                if exchange_test(j):
                    for q in params + mom:
                        q[[j, j + 1]] = q[[j + 1, j]]
                    counts["swaps"] += 1


for t in range(3):
    step(t + 1)
start = time.time()
for t in range(a.steps):
    step(t + 1)
el = time.time() - start
extra = ""
if a.exchange != 10 or a.kernel != "sgnht":
    extra = f" exchange={every} {a.kernel}"
if every > 0 and a.exchange_test != "barker":
    extra += f" {a.exchange_test}"
if every > 0 and a.xbatch != 256:
    extra += f" xbatch={a.xbatch}"
print(f"pytorch {torch.__version__} threads={a.threads} {a.arch} R={R} batch={B}{extra}: {a.steps / el:.2f} steps/s")
if every > 0:
    print(f"exchange tests {counts['tests']} ({counts['grown']} grew their batch, {counts['exact']} exact on all data, "
          f"{counts['early']} decided early; {counts['swaps']} swaps)")
