#!/usr/bin/env python3
"""The PyTorch (CUDA) peer of `tg bench gpu`: the same rows and shapes, eager mode; times are wall
medians of `op(); torch.cuda.synchronize()` in ms. Prints one flat JSON object; each <row>_shape
key says what was measured (`tg bench gpu` gives no ratio for a shape that differs from its own)."""
import argparse
import json

from peer_timing import median_ms

p = argparse.ArgumentParser()
p.add_argument("--repeat", type=int, default=10)
a = p.parse_args()

import torch

dev = "cuda"
torch.manual_seed(0)
torch.backends.cuda.matmul.allow_tf32 = False  # f32 rows are f32 on both sides
torch.backends.cudnn.allow_tf32 = False


def timed(fn):
    def run():
        fn()
        torch.cuda.synchronize()
    return median_ms(run, a.repeat)


out = {"torch_version": torch.__version__, "device": torch.cuda.get_device_name()}
n = 64 << 20
x, y, z = (torch.rand(n, device=dev) * 2 - 1 for _ in range(3))
out["elementwise_ms"] = timed(lambda: ((x + y) * z).relu())
out["sum_ms"] = timed(lambda: x.sum())
out["elementwise_shape"] = out["sum_shape"] = str(n)
del x, y, z
m = torch.rand(4096, 4096, device=dev)
k = torch.rand(4096, 4096, device=dev)
out["matmul_f32_ms"] = timed(lambda: m @ k)
out["matmul_f32_shape"] = "4096x4096"
h = torch.rand(8192, 8192, device=dev, dtype=torch.float16)
g = torch.rand(8192, 8192, device=dev, dtype=torch.float16)
out["matmul_f16_ms"] = timed(lambda: h @ g)
out["matmul_f16_shape"] = "8192x8192"
hb, gb = h.to(torch.bfloat16), g.to(torch.bfloat16)
out["matmul_bf16_ms"] = timed(lambda: hb @ gb)
out["matmul_bf16_shape"] = "8192x8192"
del h, g, hb, gb
img = torch.rand(256, 32, 28, 28, device=dev)
w = torch.rand(64, 32, 3, 3, device=dev)
out["conv_ms"] = timed(lambda: torch.nn.functional.conv2d(img, w))
out["conv_shape"] = "x".join(str(d) for d in (*img.shape, *w.shape))
t = torch.rand(16, device=dev)
out["tiny_ms"] = timed(lambda: t + 1)
out["tiny_shape"] = str(t.numel())
print(json.dumps(out))
