#!/usr/bin/env python3
"""Step 6 in Python: custom ops from primitives (examples/06_custom_ops, docs/tutorials/06-custom-ops.md).
gelu with the exact erf (erf itself written from exp, abs and sign: Abramowitz & Stegun 7.1.26),
rms_norm and swiglu are ordinary Python functions over Tensor ops, so they fuse and differentiate
like built-in ones. Their values are checked against examples/06_custom_ops/reference.txt (float64,
plain Python: make_reference.py), rms_norm's gradient against finite differences, and each runs
fused and step by step (realize after every op) to compare kernel counts and times. The defaults
are the CI size; the C++ page's is --rows 512 --cols 1024 --repeats 3."""
import argparse
import math
import os
import time

import numpy as np

from claims import Claims, section
from tinygrad_cpp import KernelCounter, Tensor, dtypes, nn

HERE = os.path.dirname(os.path.abspath(__file__))

fused = lambda t: t  # called after every op: identity when fused,
stepwise = lambda t: t.realize()  # realize() when step by step


def erf(x: Tensor, s=fused) -> Tensor:
  """sign(x) (1 - (a1 t + ... + a5 t^5) exp(-x^2)), t = 1 / (1 + p |x|); error < 1.5e-7."""
  p, a1, a2, a3, a4, a5 = 0.3275911, 0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429
  ax = s(x.abs())
  t = s(s(s(ax * p) + 1).reciprocal())
  poly = s(s(s(s(s(s(s(s(t * a5) + a4) * t) + a3) * t) + a2) * t) + a1)
  poly = s(poly * t)
  e = s(s(s(ax * ax).neg()).exp())
  return s(x.sign() * s(1 - s(poly * e)))


def gelu(x: Tensor, s=fused) -> Tensor:
  """x/2 (1 + erf(x / sqrt 2)), the exact form (Tensor.gelu is the tanh approximation)."""
  return s(s(x * 0.5) * s(1 + erf(s(x * (1 / math.sqrt(2))), s)))


def rms_norm(x: Tensor, w: Tensor, eps: float, s=fused) -> Tensor:
  """x / sqrt(mean(x^2 over the last dim) + eps) * w."""
  ms = s(s(x * x).mean(-1, keepdim=True))
  return s(s(x * s(s(ms + eps).rsqrt())) * w)


def swiglu(x: Tensor, w: Tensor, v: Tensor, s=fused) -> Tensor:
  """silu(x W) * (x V), silu(a) = a * sigmoid(a): the gated unit of LLaMA's feed-forward."""
  g = s(x @ w)
  return s(s(g * s(g.sigmoid())) * s(x @ v))


def read_reference(path: str) -> dict:
  out = {}
  with open(path) as f:
    for line in f:
      if not line.strip() or line.startswith("#"): continue
      name, *values = line.split()
      out[name] = [float(v) for v in values]
  return out


def make(shape, f, dtype=dtypes.float32) -> Tensor:
  rows, cols = int(np.prod(shape[:-1])), shape[-1]
  v = np.array([[f(r, c) for c in range(cols)] for r in range(rows)], np.float64).reshape(shape)
  return Tensor(v, dtype=dtype).realize()


def measure(fn, step, repeats: int):
  """Kernels and best wall time (ms) of `repeats` realizes of fn(step), compiled before timing."""
  fn(step).realize()
  kernels, best = 0, float("inf")
  for _ in range(repeats):
    with KernelCounter() as c:
      t0 = time.perf_counter()
      fn(step).realize()
      best = min(best, (time.perf_counter() - t0) * 1000)
    kernels = c.kernel_count
  return kernels, best


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--reference", default=os.path.join(HERE, "..", "06_custom_ops", "reference.txt"))
  ap.add_argument("--rows", type=int, default=64)
  ap.add_argument("--cols", type=int, default=256)
  ap.add_argument("--repeats", type=int, default=1)
  args = ap.parse_args()
  claims = Claims()
  ref = read_reference(args.reference)
  print(f"reference values: {os.path.normpath(args.reference)}")

  section("values against the float64 reference")
  gx = make((16,), lambda r, c: (c - 8) / 4)
  g = gelu(gx).numpy()
  claims.close(g, ref["gelu"], 0, 2e-6, "gelu (erf from primitives) = x/2 (1 + erf(x / sqrt 2))")
  print(f"  (Tensor.gelu, the tanh approximation, differs from it by up to "
        f"{np.abs(gx.gelu().numpy() - np.array(ref['gelu'])).max():.3g})")
  rx = make((2, 8), lambda r, c: ((8 * r + c) % 7 - 3) / 2 + r * 0.25)
  rw = make((8,), lambda r, c: 1 + c / 8)
  claims.close(rms_norm(rx, rw, 1e-6).numpy(), ref["rms_norm"], 1e-6, 1e-6, "rms_norm")
  layer = nn.RMSNorm(8, eps=1e-6)
  layer.weight.assign(rw)
  claims.close(layer(rx).numpy(), ref["rms_norm"], 1e-6, 1e-6, "nn.RMSNorm with the same weight agrees")
  sx = make((2, 4), lambda r, c: (r * 4 + c) / 8 - 0.5)
  sw = make((4, 3), lambda i, j: ((i * 3 + j) % 5 - 2) / 4)
  sv = make((4, 3), lambda i, j: ((i * 2 + j) % 7 - 3) / 6)
  claims.close(swiglu(sx, sw, sv).numpy(), ref["swiglu"], 1e-5, 1e-7, "swiglu")

  section("rms_norm's gradient: autograd against finite differences (float64)")
  w64 = rw.cast(dtypes.float64).realize()
  c64 = make((2, 8), lambda r, c: math.sin(r * 8 + c), dtypes.float64)
  base = rx.numpy().astype(np.float64)
  leaf = Tensor(base.copy(), requires_grad=True)
  (rms_norm(leaf, w64, 1e-6) * c64).sum().backward()  # a weighted sum of the output
  auto_grad = leaf.grad.numpy().ravel()
  # All 32 perturbed inputs (x + h e_i and x - h e_i) as one batch: one realize evaluates them all.
  h, n = 1e-6, base.size
  moved = np.concatenate([base.ravel() + sign * h * np.eye(n) for sign in (1.0, -1.0)]).reshape(2 * n, 2, 8)
  fx = (rms_norm(Tensor(moved), w64, 1e-6) * c64).sum((1, 2)).numpy()
  numeric = (fx[:n] - fx[n:]) / (2 * h)
  print(f"  d/dx[0][0..3]: autograd {auto_grad[:4].round(6).tolist()}\n                 numeric  "
        f"{numeric[:4].round(6).tolist()}")
  claims.close(auto_grad, numeric, 1e-6, 1e-7, "autograd = finite differences on all 16 inputs")

  rows, cols = args.rows, args.cols
  section(f"fused against step by step, on ({rows}, {cols})")
  big = make((rows, cols), lambda r, c: ((r * 31 + c * 17) % 101) / 50 - 1)
  weight = make((cols,), lambda r, c: 1 + (c % 5) / 10)
  wsq = make((cols, 64), lambda i, j: ((i + 3 * j) % 9 - 4) / 64)
  vsq = make((cols, 64), lambda i, j: ((2 * i + j) % 7 - 3) / 64)
  # A reduce whose result is broadcast back is stored first (step 2), so rms_norm is 2 kernels; swiglu's
  # two matmuls reduce over the same axis and neither is broadcast: one kernel computes both and the gating.
  cases = [("gelu", lambda s: gelu(big, s), 1), ("rms_norm", lambda s: rms_norm(big, weight, 1e-6, s), 2),
           ("swiglu", lambda s: swiglu(big, wsq, vsq, s), 1)]
  print("  op        fused kernels   ms     step-by-step kernels   ms")
  for name, fn, want_fused in cases:
    fk, fms = measure(fn, fused, args.repeats)
    sk, sms = measure(fn, stepwise, args.repeats)
    print(f"  {name:<9} {fk:6d} {fms:11.3f} {sk:14d} {sms:15.3f}")
    claims.equal(fk, want_fused, f"{name}: fused kernel count")
    claims.check(sk > fk, f"{name}: step by step launches more kernels", f"{sk} vs {fk}")
  claims.finish("06_custom_ops")


if __name__ == "__main__":
  main()
