#!/usr/bin/env python3
"""Step 3 in Python: autograd (examples/03_autograd, docs/tutorials/03-autograd.md).
requires_grad=True marks a leaf, backward() fills its .grad with more lazy graph. Each gradient is
checked twice: against the derivative worked out by hand, and against central finite differences
(f(x + h) - f(x - h)) / 2h computed from forward passes only (in float64). Then an MLP learns XOR,
and a Huber loss written from primitives gets its gradient checked numerically."""
import math

import numpy as np

from claims import Claims, section
from tinygrad_cpp import Tensor, dtypes, nn
from tinygrad_cpp.nn.state import get_parameters

STEP = 1e-5  # h of the central difference


def f64(v) -> Tensor:
  return Tensor(np.asarray(v, np.float64))


def numeric_gradient(f, x):
  """d f / d x_i by central differences, one forward pass per side and element."""
  g = []
  for i in range(len(x)):
    plus, minus = list(x), list(x)
    plus[i] += STEP
    minus[i] -= STEP
    g.append((f(f64(plus)).item() - f(f64(minus)).item()) / (2 * STEP))
  return g


def autograd_gradient(f, x):
  t = Tensor(np.asarray(x, np.float64), requires_grad=True)
  f(t).backward()
  return t.grad.numpy()


def main():
  claims = Claims()
  xs, ws = [-1.5, -0.5, 0.25, 2.0], [0.5, -2.0, 3.0, 1.0]

  section("d/dx sum(x^2) = 2x")
  square = lambda x: (x ** 2).sum()
  g = autograd_gradient(square, xs)
  print(f"  x = {xs}\n  autograd: {g.tolist()}")
  claims.close(g, [2 * x for x in xs], 1e-12, 1e-12, "autograd = 2x (by hand)")
  claims.close(g, numeric_gradient(square, xs), 1e-6, 1e-6, "autograd = finite differences")

  section("d/dx sum(x*w) = w and d/dw sum(x*w) = x")
  x, w = Tensor(np.array(xs), requires_grad=True), Tensor(np.array(ws), requires_grad=True)
  (x * w).sum().backward()
  print(f"  x.grad = {x.grad.tolist()}\n  w.grad = {w.grad.tolist()}")
  claims.close(x.grad.numpy(), ws, 0, 0, "x.grad = w")
  claims.close(w.grad.numpy(), xs, 0, 0, "w.grad = x")
  wt = f64(ws)
  claims.close(x.grad.numpy(), numeric_gradient(lambda t: (t * wt).sum(), xs), 1e-6, 1e-6,
               "x.grad = finite differences")

  section("d/dx sum(sigmoid(x)) = s(1 - s)")
  sig = lambda t: t.sigmoid().sum()
  gs = autograd_gradient(sig, xs)
  hand = [(1 / (1 + math.exp(-v))) * (1 - 1 / (1 + math.exp(-v))) for v in xs]
  print(f"  autograd: {gs.tolist()}\n  by hand:  {hand}")
  claims.close(gs, hand, 1e-9, 1e-12, "autograd = s(1 - s) (by hand)")
  claims.close(gs, numeric_gradient(sig, xs), 1e-6, 1e-8, "autograd = finite differences")

  section("an MLP 2 -> 8 -> 1 overfits XOR (Adam, binary cross-entropy on logits)")
  Tensor.manual_seed(3)
  layers = [nn.Linear(2, 8), Tensor.tanh, nn.Linear(8, 1)]
  opt = nn.optim.Adam(get_parameters(layers), lr=0.1)  # makes the layers' weights trainable
  inp = Tensor([[0.0, 0], [0, 1], [1, 0], [1, 1]])
  target = Tensor([[0.0], [1], [1], [0]])
  first = last = 0.0
  for step in range(1, 41):
    opt.zero_grad()
    loss = inp.sequential(layers).binary_crossentropy_logits(target)
    loss.backward()
    opt.step()
    last = loss.item()
    if step == 1: first = last
    if step == 1 or step % 20 == 0: print(f"  step {step}  loss {last:.6f}")
  out = inp.sequential(layers).sigmoid().numpy().ravel()
  print(f"  p(xor) for 00 01 10 11: {[round(float(p), 4) for p in out]}")
  claims.check(last < 0.05 and last < first, "the loss falls below 0.05", f"first {first:.4f}, last {last:.4f}")
  claims.check(out[0] < 0.5 and out[1] > 0.5 and out[2] > 0.5 and out[3] < 0.5, "all four XOR cases are right")

  section("a Huber loss from primitives: where(|d| <= 1, d^2 / 2, |d| - 1/2), mean")
  delta = 1.0
  pred, truth = [-2.5, -0.3, 0.4, 1.7, 3.0], [0.0, 0.2, -0.1, 0.1, 0.5]
  t_truth = f64(truth)

  def huber(p):
    d = p - t_truth
    a = d.abs()
    return (a <= delta).where(d * d * 0.5, (a - 0.5 * delta) * delta).mean()
  gh = autograd_gradient(huber, pred)
  hand_h = [min(max(p - t, -delta), delta) / len(pred) for p, t in zip(pred, truth)]
  print(f"  d = pred - truth = [-2.5, -0.5, 0.5, 1.6, 2.5]\n  autograd: {gh.tolist()}\n"
        f"  by hand clip(d, -1, 1) / n: {hand_h}")
  claims.close(gh, hand_h, 1e-12, 1e-12, "autograd = clip(d, -1, 1) / n (by hand)")
  claims.close(gh, numeric_gradient(huber, pred), 1e-6, 1e-8, "autograd = finite differences")
  claims.check(Tensor(np.array(pred), requires_grad=True).dtype == dtypes.float64, "all of it in float64")
  claims.finish("03_autograd")


if __name__ == "__main__":
  main()
