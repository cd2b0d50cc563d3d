#!/usr/bin/env python3
"""Step 1 in Python: tensor basics and laziness (examples/01_tensor_basics, docs/tutorials/01-tensor-basics.md).
Every factory with its shape and dtype, dtype promotion, and what "lazy" means: building an
expression runs nothing; realize() schedules it into kernels. (a + b).relu().sum() is one kernel;
realizing after each op makes three."""
import numpy as np

from claims import Claims, debug_output, section
from tinygrad_cpp import Context, KernelCounter, Tensor, dtypes


def show(code: str, t: Tensor):
  print(f"  {code}\n      -> {t!r} {t.tolist()}")


def main():
  claims = Claims()

  section("factories: every one gives a shape and a dtype")
  frm = Tensor([[1.0, 2, 3], [4, 5, 6]])
  show("Tensor([[1.0, 2, 3], [4, 5, 6]])", frm)
  s = Tensor(7)
  show("Tensor(7)", s)
  f = Tensor.full((2, 2), 3.5)
  show("Tensor.full((2, 2), 3.5)", f)
  z = Tensor.zeros(3, dtype=dtypes.int32)
  show("Tensor.zeros(3, dtype=dtypes.int32)", z)
  o = Tensor.ones(2, 1)
  show("Tensor.ones(2, 1)", o)
  ar = Tensor.arange(5)
  show("Tensor.arange(5)", ar)
  ar2 = Tensor.arange(1, 2, 0.25)
  show("Tensor.arange(1, 2, 0.25)", ar2)
  lin = Tensor.linspace(0, 1, 5)
  show("Tensor.linspace(0, 1, 5)", lin)
  eye = Tensor.eye(3)
  show("Tensor.eye(3)", eye)
  Tensor.manual_seed(42)
  r = Tensor.rand(2, 3)
  show("Tensor.rand(2, 3)   (after Tensor.manual_seed(42))", r)
  show("Tensor.randn(4)", Tensor.randn(4))
  u = Tensor.uniform(3, low=-2, high=2)
  show("Tensor.uniform(3, low=-2, high=2)", u)
  ri = Tensor.randint(6, low=0, high=10)
  show("Tensor.randint(6, low=0, high=10)", ri)
  show("frm.full_like(9)", frm.full_like(9))
  a = np.arange(6, dtype=np.float64).reshape(2, 3)
  show("Tensor(np.arange(6, dtype=np.float64).reshape(2, 3))", Tensor(a))

  claims.check(frm.shape == (2, 3) and frm.dtype == dtypes.float32, "a list of Python floats: (2, 3) float32")
  claims.check(s.dtype == dtypes.int32 and s.shape == (), "Tensor(7) is a 0-d int32 (Python ints are int32)")
  claims.check(Tensor(a).dtype == dtypes.float64, "a numpy array keeps its dtype (float64)")
  claims.check(ar.dtype == dtypes.int32 and ar.tolist() == [0, 1, 2, 3, 4], "arange(5) is int32 0..4")
  claims.check(ar2.tolist() == [1, 1.25, 1.5, 1.75], "arange(1, 2, 0.25) stops before 2")
  claims.check(lin.tolist() == [0, 0.25, 0.5, 0.75, 1], "linspace includes both ends")
  claims.check(eye.numpy().tolist() == np.eye(3).tolist(), "eye(3) is the identity")
  rv = r.numpy()
  claims.check(((rv >= 0) & (rv < 1)).all(), "rand is in [0, 1)")
  uv = u.numpy()
  claims.check(((uv >= -2) & (uv < 2)).all(), "uniform(-2, 2) is in [-2, 2)")
  iv = ri.numpy()
  claims.check(ri.dtype == dtypes.int32 and ((iv >= 0) & (iv < 10)).all(), "randint(0, 10) is int32 in [0, 10)")
  Tensor.manual_seed(42)
  claims.check(np.array_equal(Tensor.rand(2, 3).numpy(), rv), "the same seed gives the same numbers")

  section("dtypes: tinygrad's promotion rules")
  i = Tensor.arange(3)
  print(f"  Tensor.arange(3) + 1        -> {(i + 1)!r}   (a Python int keeps the tensor's dtype)")
  print(f"  Tensor.arange(3) * 2.5      -> {(i * 2.5)!r}  (a Python float makes it float)")
  print(f"  int32 + float16             -> {(i + Tensor.ones(3, dtype=dtypes.float16))!r}")
  print(f"  Tensor.arange(3).cast(bool) -> {i.cast(dtypes.bool)!r} {i.cast(dtypes.bool).tolist()}")
  claims.check((i + 1).dtype == dtypes.int32, "int tensor + int scalar stays int32")
  claims.check((i * 2.5).dtype == dtypes.float32, "int tensor * float scalar is float32")
  claims.check((i + Tensor.ones(3, dtype=dtypes.float16)).dtype == dtypes.float16, "int32 + float16 is float16")
  claims.check(i.cast(dtypes.bool).tolist() == [False, True, True], "cast to bool: 0 is False")

  section("laziness: an expression is a graph until realize()")
  a, b = Tensor([-1.0, 2, -3, 4]).realize(), Tensor([3.0, -1, 1, -5]).realize()
  expr = (a + b).relu().sum()
  print(f"  expr = (a + b).relu().sum() is {expr!r} (nothing ran yet)")
  print("  with Context(DEBUG=1), realize prints:")
  with debug_output(), Context(DEBUG=1), KernelCounter() as fused:
    expr.realize()
  print(f"  expr.item() = {expr.item()}")
  claims.equal(fused.kernel_count, 1, "realizing (a + b).relu().sum() launches one kernel")
  claims.equal(expr.item(), 3.0, "relu(a + b) = [2, 1, 0, 0], sum 3")
  with KernelCounter() as again:
    expr.realize()
  claims.equal(again.kernel_count, 0, "after realize there is nothing left to run")

  print("  realizing after each op (fresh inputs c, d):")
  c, d = Tensor([-1.0, 2, -3, 4]).realize(), Tensor([3.0, -1, 1, -5]).realize()
  with debug_output(), Context(DEBUG=1), KernelCounter() as stepwise:
    t3 = (c + d).realize().relu().realize().sum().realize()
  claims.equal(t3.item(), 3.0, "the step-by-step result is the same")
  claims.equal(stepwise.kernel_count, 3, "realizing after each op makes three kernels")
  claims.finish("01_tensor_basics")


if __name__ == "__main__":
  main()
