"""TinyJit: jitted outputs equal eager ones call after call; capture on call 2; non-tensor arguments."""
import numpy as np
import pytest

from tinygrad_cpp import KernelCounter, Tensor, TinyJit, nn

from conftest import assert_close


def test_jit_outputs_equal_eager_over_five_calls():
  def f(a, b):
    return (a @ b).relu() + a.sum(1, keepdim=True)
  jf = TinyJit(f)
  rng = np.random.default_rng(4)
  for i in range(5):
    a = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal((3, 5)).astype(np.float32)
    out = jf(Tensor(a), Tensor(b))
    assert_close(out, f(Tensor(a), Tensor(b)).numpy(), rtol=1e-6, atol=1e-6)
    assert_close(out, np.maximum(a @ b, 0) + a.sum(1, keepdims=True), rtol=1e-5, atol=1e-5)
    # captured after the second call; the third and later replay
    assert jf.captured == (i >= 1), i
  assert len(jf.jit_cache) >= 1


def test_replays_do_not_call_the_function():
  calls = []

  @TinyJit
  def f(x):
    calls.append(1)
    return x * 2 + 1
  for i in range(5):
    assert f(Tensor([float(i), 1.0])).tolist() == [2.0 * i + 1, 3.0]
  assert len(calls) == 2  # warm-up and capture


def test_structured_arguments_and_returns():
  @TinyJit
  def f(pair, scale, *, extra):
    a, b = pair
    return {"sum": a + b * scale, "prod": (a * b, extra - a)}
  for i in range(4):
    a, b, e = Tensor([1.0, 2.0]) + i, Tensor([3.0, 4.0]), Tensor([10.0, 10.0])
    out = f((a, b), 2.0, extra=e)
    assert out["sum"].tolist() == [7.0 + i, 10.0 + i]
    assert out["prod"][0].tolist() == [3.0 * (1 + i), 4.0 * (2 + i)]
    assert out["prod"][1].tolist() == [9.0 - i, 8.0 - i]


def test_non_tensor_arguments_change_recaptures():
  @TinyJit
  def f(x, k):
    return x + k
  x = Tensor([1.0, 2.0])
  assert f(x, 1).tolist() == [2.0, 3.0]
  assert f(x, 1).tolist() == [2.0, 3.0]
  assert f(x, 1).tolist() == [2.0, 3.0] and f.captured
  assert f(x, 5).tolist() == [6.0, 7.0]  # another constant: not the captured kernels' value
  assert f(Tensor([0.0, 0.0]), 5).tolist() == [5.0, 5.0]


def test_replay_launches_only_captured_kernels():
  @TinyJit
  def f(x):
    return (x + 1).relu().sum()
  for _ in range(3): f(Tensor.rand(16))
  with KernelCounter() as c:
    v = Tensor([-3.0, 1.0, 2.0] + [0.0] * 13)
    out = f(v)
  assert out.item() == pytest.approx(2 + 3 + 13)
  assert c.kernel_count <= len(f.jit_cache) + 1  # the replay (and the input's upload copy at most)


def test_jitted_training_step_matches_eager():
  def make():
    Tensor.manual_seed(5)
    model = nn.Linear(3, 2)
    return model, nn.optim.SGD(nn.state.get_parameters(model), lr=0.1)
  rng = np.random.default_rng(6)
  batches = [(rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((4, 2)).astype(np.float32))
             for _ in range(5)]

  def step(model, opt, x, y):
    opt.zero_grad()
    loss = (model(x) - y).square().mean()
    loss.backward()
    opt.step()
    return loss

  eager_model, eager_opt = make()
  eager = [step(eager_model, eager_opt, Tensor(x), Tensor(y)).item() for x, y in batches]
  jit_model, jit_opt = make()
  jstep = TinyJit(lambda x, y: step(jit_model, jit_opt, x, y))
  jitted = [jstep(Tensor(x), Tensor(y)).item() for x, y in batches]
  np.testing.assert_allclose(jitted, eager, rtol=1e-5)
  assert_close(jit_model.weight, eager_model.weight.numpy(), rtol=1e-5, atol=1e-6)
  assert jstep.captured


def test_jit_as_method_decorator():
  class M:
    def __init__(self): self.w = Tensor([2.0, 3.0])

    @TinyJit
    def __call__(self, x): return x * self.w
  m = M()
  for i in range(4): assert m(Tensor([1.0, float(i)])).tolist() == [2.0, 3.0 * i]
