#!/usr/bin/env python3
"""Step 2 in Python: the three op types (examples/02_op_types, docs/tutorials/02-op-types.md).
Elementwise ops (unary, binary, ternary) fuse into one kernel; reduce ops fuse with the elementwise
ops before them (and a few after); movement ops (reshape, permute, expand, pad, shrink, flip) only
change how memory is indexed and make no kernel at all. We predict the kernel count of
(x.permute(1,0) @ y.reshape(4,4)).sum(1), then count it, and build matmul from expand, multiply and sum.
(The C++ program also prints each schedule with tg::summarize; Python has no Tensor.schedule(), so
this one prints DEBUG=2's line per launched kernel instead.)"""
import numpy as np

from claims import Claims, debug_output, section
from tinygrad_cpp import Context, KernelCounter, Tensor


def count_kernels(code: str, t: Tensor) -> int:
  """Kernels that realizing `t` launches, with DEBUG=2's line for each."""
  print(f"  {code}")
  with debug_output(), Context(DEBUG=2), KernelCounter() as c:
    t.realize()
  return c.kernel_count


def make_input(shape, scale):
  v = scale * (np.arange(np.prod(shape)) % 7 - 3).astype(np.float32)
  return Tensor(v.reshape(shape)).realize()


def main():
  claims = Claims()
  x, y, w = make_input((4, 4), 1.0), make_input((16,), 0.5), make_input((4, 4), 2.0)
  xv, yv, wv = x.numpy(), y.numpy(), w.numpy()

  section("elementwise: unary, binary and ternary ops fuse into one kernel")
  claims.equal(count_kernels("x.exp2()", x.exp2()), 1, "one unary op: one kernel")
  claims.equal(count_kernels("((x + w) * 2).abs().sqrt().neg()", ((x + w) * 2).abs().sqrt().neg()), 1,
               "a chain of unary and binary ops: still one kernel")
  claims.equal(count_kernels("(x < w).where(x, w)", (x < w).where(x, w)), 1, "a ternary op (where) fuses too")

  section("reduce: sum, max, ... fuse with the elementwise ops that feed them")
  claims.equal(count_kernels("(x * w).sum(1)", (x * w).sum(1)), 1, "elementwise into a reduce: one kernel")
  claims.equal(count_kernels("(x * w).sum(1).relu()", (x * w).sum(1).relu()), 1,
               "elementwise after a reduce fuses when the result is not broadcast")
  claims.equal(count_kernels("x - x.max(1, keepdim=True)", x - x.max(1, keepdim=True)), 2,
               "a reduce broadcast back over its axis is stored first: two kernels")
  claims.equal(count_kernels("x.softmax()", x.softmax()), 3, "softmax: max, sum of exp, divide = three kernels")

  section("movement: reshape, permute, expand, pad, shrink, flip make no kernel")
  moved = x.permute(1, 0).reshape(2, 8).shrink(((0, 1), (2, 8))).flip(1).expand(3, 6)
  claims.equal(count_kernels("x.permute(1,0).reshape(2,8).shrink(((0,1),(2,8))).flip(1).expand(3,6)", moved), 0,
               "movement ops alone: zero kernels (a view of x's buffer)")
  want = np.broadcast_to(xv.T.reshape(2, 8)[0:1, 2:8][:, ::-1], (3, 6))
  claims.check(np.array_equal(moved.numpy(), want), "reading it gives the indexed values (checked with numpy)")
  claims.equal(count_kernels("x.pad(((1,1),(0,0))) + 1", x.pad(((1, 1), (0, 0))) + 1), 1,
               "a movement op under an elementwise op is only the kernel's index math")

  section("predict, then count: (x.permute(1,0) @ y.reshape(4,4)).sum(1)")
  print("  prediction: permute and reshape are movement (0 kernels); @ is multiply + sum over k\n"
        "  (1 reduce); .sum(1) reduces again, and two reduces in a row with nothing in between\n"
        "  merge into one reduce over both axes. So: 1 kernel.")
  predicted = 1
  r = (x.permute(1, 0) @ y.reshape(4, 4)).sum(1)
  claims.equal(count_kernels("(x.permute(1,0) @ y.reshape(4,4)).sum(1)", r), predicted, "the count matches the prediction")
  claims.close(r.numpy(), (xv.T.astype(np.float64) @ yv.reshape(4, 4)).sum(1), 1e-6, 1e-5,
               "values equal numpy's in float64")

  section("matmul is expand, multiply and sum")
  # (4, 4, 1) * (1, 4, 4) -> (4, 4, 4) indexed [i, k, j]; summing k gives [i, j] = sum_k x[i,k] w[k,j].
  by_hand = (x.reshape(4, 4, 1).expand(4, 4, 4) * w.reshape(1, 4, 4).expand(4, 4, 4)).sum(1)
  builtin = x @ w
  hand_kernels = count_kernels("(x.reshape(4,4,1).expand(4,4,4) * w.reshape(1,4,4).expand(4,4,4)).sum(1)", by_hand)
  builtin_kernels = count_kernels("x @ w", builtin)
  claims.close(by_hand.numpy(), builtin.numpy(), 0, 1e-5, "expand * sum equals @")
  claims.close(builtin.numpy(), xv @ wv, 0, 1e-5, "and numpy's matmul")
  claims.check(hand_kernels == 1 and builtin_kernels == 1, "both are one kernel: the (4,4,4) product is never stored",
               f"{hand_kernels} and {builtin_kernels}")
  claims.finish("02_op_types")


if __name__ == "__main__":
  main()
