#!/usr/bin/env python3
"""PyTorch peer for `tg bench train`: the same beautiful_mnist model, Adam 1e-3, random data of
the same batch size; prints the median training-step time and peak RSS as one JSON line.

By default the step is strict float32, like ours: TF32 off for cuDNN's convolutions and for
matmuls (PyTorch's own default is `cudnn.allow_tf32 = True`, so its convolutions may run on
tensor cores with 10-bit mantissas). `--tf32` keeps PyTorch's defaults instead; the JSON line says
which settings ran."""
import argparse, json, resource, statistics, time

p = argparse.ArgumentParser()
p.add_argument("--bs", type=int, default=512)
p.add_argument("--steps", type=int, default=5)
p.add_argument("--threads", type=int, default=2)
p.add_argument("--device", default="cpu", help="cpu or cuda")
p.add_argument("--compile", action="store_true", help="the step through torch.compile (3 untimed steps)")
p.add_argument("--tf32", action="store_true", help="keep PyTorch's default TF32 settings (default: strict f32)")
a = p.parse_args()

import torch
import torch.nn as nn

if not a.tf32:
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False

torch.set_num_threads(a.threads)
torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(1, 32, 5), nn.ReLU(), nn.Conv2d(32, 32, 5), nn.ReLU(), nn.BatchNorm2d(32), nn.MaxPool2d(2),
    nn.Conv2d(32, 64, 3), nn.ReLU(), nn.Conv2d(64, 64, 3), nn.ReLU(), nn.BatchNorm2d(64), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(576, 10))
model = model.to(a.device)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.rand(a.bs, 1, 28, 28, device=a.device)
y = torch.randint(0, 10, (a.bs,), device=a.device)


def step():
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


if a.compile:
    step = torch.compile(step)
warmup = 3 if a.compile else 1  # compiling takes the first calls
times = []
for i in range(a.steps + warmup):
    t0 = time.perf_counter()
    step().item()  # waits for the GPU too
    if i >= warmup:
        times.append((time.perf_counter() - t0) * 1000)
print(json.dumps({"step_ms": statistics.median(times), "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "torch": torch.__version__, "compiled": a.compile,
                  "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32,
                  "matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32}))
