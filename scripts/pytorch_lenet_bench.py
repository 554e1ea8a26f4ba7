#!/usr/bin/python3
"""Side-by-side reference for `ptsghmc bench --model lenet`: the LeNet step in PyTorch.

One chain of the LeNet CNN (conv 5x5x32 "same", ReLU, 2x2 max pool, conv
5x5x64, ReLU, pool, dense 256 ReLU, dense 10; 857,738 parameters), float32,
CPU: the minibatch gradient of the potential U~ = -log prior - (N/B) sum log
softmax likelihood (a Gaussian prior of precision fan-in, as ptsghmc's
--prior-fanin), and an SGHMC-style momentum update with injected noise (about
1% of the step; ptsghmc runs SGNHT, whose thermostat adds one dot product).
Not a dependency of the project: run it with Debian's python3-torch to
compare speeds on one machine; scripts/bench_side_by_side.sh does, alternating
with ptsghmc.

Run it with MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=1073741824
(PyTorch allocates its tensors afresh each step; see docs/speed.md).

usage: /usr/bin/python3 scripts/pytorch_lenet_bench.py [--batch 128] [--steps 20] [--threads 1]
"""
import argparse
import time

import torch
import torch.nn.functional as F

p = argparse.ArgumentParser()
p.add_argument("--batch", type=int, default=128)
p.add_argument("--steps", type=int, default=20)
p.add_argument("--threads", type=int, default=1)
a = p.parse_args()
if a.batch < 1 or a.steps < 1 or a.threads < 1:
    p.error("batch, steps and threads must be positive")
torch.set_num_threads(a.threads)
torch.manual_seed(1)
B, N = a.batch, 10000
X = torch.rand(N, 1, 28, 28)
Y = torch.randint(0, 10, (N,))


def param(*shape, fan_in):
    w = torch.randn(*shape) * (2 / fan_in) ** 0.5 if len(shape) > 1 else torch.zeros(*shape)
    return w.requires_grad_(), float(fan_in)


layers = [
    param(32, 1, 5, 5, fan_in=25), param(32, fan_in=25),
    param(64, 32, 5, 5, fan_in=800), param(64, fan_in=800),
    param(3136, 256, fan_in=3136), param(256, fan_in=3136),
    param(256, 10, fan_in=256), param(10, fan_in=256),
]
params = [w for w, _ in layers]
prec = [lam for _, lam in layers]
D = sum(q.numel() for q in params)
mom = [torch.zeros_like(q) for q in params]
h, friction = 1e-4, 10.0


def potential(xb, yb):
    c1w, c1b, c2w, c2b, f1w, f1b, f2w, f2b = params
    z = F.max_pool2d(F.relu(F.conv2d(xb, c1w, c1b, padding=2)), 2)
    z = F.max_pool2d(F.relu(F.conv2d(z, c2w, c2b, padding=2)), 2)
    z = F.relu(z.reshape(z.shape[0], -1) @ f1w + f1b)
    z = z @ f2w + f2b
    nll = F.cross_entropy(z, yb, reduction="sum")
    prior = sum(0.5 * lam * (q * q).sum() for q, lam in zip(params, prec))
    return prior + (N / xb.shape[0]) * nll


perm = torch.randperm(N)
pos = 0


def step():
    global pos, perm
    if pos + B > N:
        perm, pos = torch.randperm(N), 0
    idx = perm[pos:pos + B]
    pos += B
    u = potential(X[idx], Y[idx])
    grads = torch.autograd.grad(u, params)
    with torch.no_grad():
        noise = (2 * friction * h) ** 0.5
        for q, m, g in zip(params, mom, grads):
            m.mul_(1 - friction * h).add_(g, alpha=-h).add_(torch.randn_like(m), alpha=noise)
            q.add_(m, alpha=h)


for _ in range(3):
    step()
t, c = time.perf_counter(), time.process_time()
for _ in range(a.steps):
    step()
dt, dc = time.perf_counter() - t, time.process_time() - c
print(f"pytorch lenet step, batch {B}, {D} parameters, {a.threads} threads: {1e3 * dt / a.steps:.1f} ms a step (process CPU {1e3 * dc / a.steps:.1f} ms)")
print(f"pytorch lenet: {a.steps / dt:.3f} steps/s")
