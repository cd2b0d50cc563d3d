#!/usr/bin/env python3
"""PyTorch DDP peer for `tg bench train --devices`: beautiful_mnist, Adam 1e-3, random data, the
global batch --bs split across the GPUs (one process per GPU under torchrun, NCCL). Rank 0 prints
the median training-step time as one JSON line. Strict float32 like ours and like
peer_torch_train.py, whose one-GPU figure this is compared with: TF32 off for cuDNN and matmuls."""
import argparse, json, os, statistics, time

p = argparse.ArgumentParser()
p.add_argument("--bs", type=int, default=4096, help="global batch")
p.add_argument("--steps", type=int, default=5)
a = p.parse_args()

import torch
import torch.distributed as dist
import torch.nn as nn

torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
dist.init_process_group("nccl")
rank, world = dist.get_rank(), dist.get_world_size()
torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(1, 32, 5), nn.ReLU(), nn.Conv2d(32, 32, 5), nn.ReLU(), nn.BatchNorm2d(32), nn.MaxPool2d(2),
    nn.Conv2d(32, 64, 3), nn.ReLU(), nn.Conv2d(64, 64, 3), nn.ReLU(), nn.BatchNorm2d(64), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(576, 10)).cuda()
model = nn.parallel.DistributedDataParallel(model)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.rand(a.bs // world, 1, 28, 28, device="cuda")
y = torch.randint(0, 10, (a.bs // world,), device="cuda")
times = []
for step in range(a.steps + 1):
    dist.barrier()
    t0 = time.perf_counter()
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    loss.item()  # waits for this GPU
    dist.barrier()  # and for the others: a step ends when every rank is done
    if step > 0:  # the first step warms up
        times.append((time.perf_counter() - t0) * 1000)
if rank == 0:
    print(json.dumps({"step_ms": statistics.median(times), "world": world, "torch": torch.__version__}), flush=True)
dist.destroy_process_group()
