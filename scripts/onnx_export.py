#!/usr/bin/python3
"""Train networks in PyTorch on Fashion-MNIST and export them as ONNX for `ptsghmc train --model FILE.onnx`.

Writes to --out:
  mlp.onnx, lenet5.onnx     an MLP 784-400-400-10 and a LeNet-5 (conv 5x5x6 "same", ReLU,
                            2x2 max pool, conv 5x5x16, ReLU, pool, dense 120, 84, 10), trained
                            with Adam for --epochs epochs (cross-entropy on the logits)
  mlp.logits, lenet5.logits PyTorch's logits of the 10,000 test images: float32
                            little-endian, row-major [10000, 10]
  summary.json              each network's test accuracy, NLL, epochs and seconds of training
  lenet_go.onnx             untrained, the architecture of ptsghmc's --model lenet (conv 5x5x32
                            and 5x5x64 "same", dense 256), to time the import beside it (bench)

--tiny writes the fixtures of onnx/testdata instead (small networks, a few images, expected
logits in JSON; the weights are trained for a few hundred steps so they are not at their
initial scale): tiny_mlp.onnx (784-16-10, fixed batch 1, a Softmax at the output),
tiny_cnn.onnx (conv 5x5x4 "same", ReLU, 2x2 average pool, conv 3x3x8, ReLU, 2x2 max pool,
x.view(x.size(0), -1), dense 10, a LogSoftmax at the output; the batch dimension dynamic)
and tiny.json.

Pixels are the IDX bytes / 255, exactly as ptsghmc reads them (no normalisation): the
imported network sees what PyTorch saw. The LeNet-5 flattens with x.view(x.size(0), -1)
and is exported with a dynamic batch, so its file carries the Shape/Gather/Unsqueeze/Concat
chain exporters write before a Reshape.

Not a dependency of ptsghmc: run it with Debian's python3-torch, one thread:
  MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=1073741824 \\
    /usr/bin/python3 scripts/onnx_export.py --out runs/onnx [--epochs 3] [--train-size 60000]

usage: onnx_export.py --out DIR [--data DIR] [--epochs E] [--train-size N] [--seed S] [--tiny]
"""
import argparse
import gzip
import json
import os
import struct
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

p = argparse.ArgumentParser()
p.add_argument("--out", required=True)
p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
p.add_argument("--epochs", type=float, default=3)
p.add_argument("--train-size", type=int, default=60000)
p.add_argument("--seed", type=int, default=1)
p.add_argument("--batch", type=int, default=128)
p.add_argument("--threads", type=int, default=1)
p.add_argument("--tiny", action="store_true")
a = p.parse_args()
if a.epochs <= 0 or a.train_size < 1 or a.batch < 1:
    p.error("epochs, train-size and batch must be positive")
torch.set_num_threads(a.threads)
torch.manual_seed(a.seed)
os.makedirs(a.out, exist_ok=True)


def idx(name):
    """An IDX file of the data directory (optionally gzipped) as a uint8 tensor."""
    path = os.path.join(a.data, name)
    opener = open
    if not os.path.exists(path):
        path, opener = path + ".gz", gzip.open
    with opener(path, "rb") as f:
        b = f.read()
    if b[0] != 0 or b[1] != 0 or b[2] != 8:
        raise SystemExit(f"{path}: not an IDX file of unsigned bytes")
    rank = b[3]
    dims = struct.unpack(">" + "I" * rank, b[4:4 + 4 * rank])
    return torch.frombuffer(bytearray(b[4 + 4 * rank:]), dtype=torch.uint8).reshape(dims)


def images(name):
    return idx(name).float().div(255).reshape(-1, 1, 28, 28)


Xtr, Ytr = images("train-images-idx3-ubyte"), idx("train-labels-idx1-ubyte").long()
Xte, Yte = images("t10k-images-idx3-ubyte"), idx("t10k-labels-idx1-ubyte").long()
if a.train_size < len(Xtr):
    keep = torch.randperm(len(Xtr))[:a.train_size]
    Xtr, Ytr = Xtr[keep], Ytr[keep]


class MLP(nn.Module):
    def __init__(self, widths, softmax=False):
        super().__init__()
        self.flat = nn.Flatten()
        self.layers = nn.ModuleList(nn.Linear(i, o) for i, o in zip(widths, widths[1:]))
        self.softmax = softmax

    def forward(self, x):
        x = self.flat(x)
        for i, l in enumerate(self.layers):
            x = l(x)
            if i + 1 < len(self.layers):
                x = F.relu(x)
        return F.softmax(x, dim=1) if self.softmax and not self.training else x


class LeNet5(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(x.size(0), -1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


class GoLeNet(nn.Module):
    """The architecture of ptsghmc's --model lenet (nn.LeNet), for timing the import against it."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 5, padding=2)
        self.conv2 = nn.Conv2d(32, 64, 5, padding=2)
        self.fc1 = nn.Linear(64 * 7 * 7, 256)
        self.fc2 = nn.Linear(256, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc2(F.relu(self.fc1(torch.flatten(x, 1))))


class TinyCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 5, padding=2)
        self.conv2 = nn.Conv2d(4, 8, 3)
        self.fc = nn.Linear(8 * 6 * 6, 10)

    def forward(self, x):
        x = F.avg_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = self.fc(x.view(x.size(0), -1))
        return x if self.training else F.log_softmax(x, dim=1)


def fit(net, epochs):
    """Adam on the cross-entropy of the logits; returns the seconds taken."""
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    steps = max(1, int(epochs * len(Xtr) / a.batch))
    net.train()
    t0 = time.time()
    for s in range(steps):
        if s % (len(Xtr) // a.batch or 1) == 0:
            perm = torch.randperm(len(Xtr))
        j = perm[(s % max(len(Xtr) // a.batch, 1)) * a.batch:][:a.batch]
        loss = F.cross_entropy(net(Xtr[j]), Ytr[j])
        opt.zero_grad()
        loss.backward()
        opt.step()
    net.eval()
    return time.time() - t0


def logits(net, x):
    with torch.no_grad():
        return torch.cat([net(x[i:i + 1000]) for i in range(0, len(x), 1000)])


def export(net, path, dynamic):
    kw = {}
    if dynamic:
        kw["dynamic_axes"] = {"x": {0: "N"}, "logits": {0: "N"}}
    net.eval()
    torch.onnx.export(net, torch.zeros(1, 1, 28, 28), path, input_names=["x"], output_names=["logits"],
                      do_constant_folding=True, **kw)


if a.tiny:
    fixtures = {}
    for name, net, dynamic in [("tiny_mlp", MLP([784, 16, 10], softmax=True), False), ("tiny_cnn", TinyCNN(), True)]:
        fit(net, 400 * a.batch / len(Xtr))
        export(net, os.path.join(a.out, name + ".onnx"), dynamic)
        # the pre-softmax logits: what ptsghmc's model reports
        net.softmax = False
        net.train()
        with torch.no_grad():
            z = net(Xte[:4])
        fixtures[name] = [[float(v) for v in row] for row in z]
    pix = (Xte[:4] * 255).round().to(torch.uint8).reshape(4, 784)
    with open(os.path.join(a.out, "tiny.json"), "w") as f:
        json.dump({"producer": "scripts/onnx_export.py --tiny, torch " + torch.__version__,
                   "images": [[int(v) for v in row] for row in pix], "labels": [int(v) for v in Yte[:4]],
                   "logits": fixtures}, f, indent=1)
    print("wrote", a.out)
    raise SystemExit(0)

summary = {"torch": torch.__version__, "train_size": len(Xtr), "epochs": a.epochs, "seed": a.seed}
for name, net in [("mlp", MLP([784, 400, 400, 10])), ("lenet5", LeNet5())]:
    secs = fit(net, a.epochs)
    z = logits(net, Xte)
    nll = F.cross_entropy(z, Yte).item()
    acc = (z.argmax(1) == Yte).float().mean().item()
    export(net, os.path.join(a.out, name + ".onnx"), dynamic=True)
    with open(os.path.join(a.out, name + ".logits"), "wb") as f:
        f.write(z.contiguous().numpy().astype("<f4").tobytes())
    summary[name] = {"accuracy": acc, "nll": nll, "train_seconds": round(secs, 1),
                     "parameters": sum(p.numel() for p in net.parameters())}
    print(f"{name}: {summary[name]['parameters']} parameters, {secs:.0f} s of training, test accuracy {acc:.4f}, NLL {nll:.4f}")
# untrained, for `ptsghmc bench --model lenet_go.onnx` beside `--model lenet`: the same graph
export(GoLeNet(), os.path.join(a.out, "lenet_go.onnx"), dynamic=True)
with open(os.path.join(a.out, "summary.json"), "w") as f:
    json.dump(summary, f, indent=1)
