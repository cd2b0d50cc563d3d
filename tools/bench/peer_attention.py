#!/usr/bin/env python3
"""PyTorch peer for `tg bench attention`: F.scaled_dot_product_attention (FlashAttention on a GPU)
on random (batch, heads, seq, dim) tensors, or the explicit softmax(q k^T / sqrt(d)) v where this
torch lacks it (Debian's 1.13); prints one JSON line with the median forward and forward + backward
times in ms (CUDA events on a GPU, wall time on the CPU) and which of the two ran ("path")."""
import argparse, json, statistics, time

p = argparse.ArgumentParser()
p.add_argument("--seq", type=int, default=1024)
p.add_argument("--batch", type=int, default=8)
p.add_argument("--heads", type=int, default=12)
p.add_argument("--dim", type=int, default=64)
p.add_argument("--bf16", action="store_true")
p.add_argument("--causal", action="store_true")
p.add_argument("--runs", type=int, default=10)
p.add_argument("--device", default="cpu")
p.add_argument("--threads", type=int, default=2)
a = p.parse_args()

import torch
import torch.nn.functional as F

torch.backends.cuda.matmul.allow_tf32 = False
torch.set_num_threads(a.threads)
dt = torch.bfloat16 if a.bf16 else torch.float32
shape = (a.batch, a.heads, a.seq, a.dim)
q, k, v = (torch.randn(shape, device=a.device, dtype=dt, requires_grad=True) for _ in range(3))
g = torch.randn(shape, device=a.device, dtype=dt)
cuda = a.device.startswith("cuda")


def timed(fn):
    for _ in range(2):
        fn()
    times = []
    for _ in range(a.runs):
        if cuda:
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record(); fn(); e.record(); torch.cuda.synchronize()
            times.append(s.elapsed_time(e))
        else:
            t0 = time.perf_counter(); fn(); times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


HAS_SDPA = hasattr(F, "scaled_dot_product_attention")
mask = torch.ones(a.seq, a.seq, dtype=torch.bool, device=a.device).tril() if a.causal else None


def attention():
    if HAS_SDPA:
        return F.scaled_dot_product_attention(q, k, v, is_causal=a.causal)
    s = q @ k.transpose(-1, -2) / a.dim ** 0.5
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    return s.softmax(-1) @ v


def forward():
    with torch.no_grad():
        attention()


def forward_backward():
    attention().backward(g)


print(json.dumps({"forward_ms": timed(forward), "forward_backward_ms": timed(forward_backward),
                  "path": "sdpa" if HAS_SDPA else "explicit softmax", "torch": torch.__version__}))
