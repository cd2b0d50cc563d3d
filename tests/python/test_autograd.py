"""backward() and .grad against torch 1.13 and hand-derived gradients."""
import numpy as np
import pytest

from tinygrad_cpp import Tensor, dtypes

from conftest import assert_close

torch = pytest.importorskip("torch")

rng = np.random.default_rng(1)
X = rng.standard_normal((4, 5)).astype(np.float32)
W = rng.standard_normal((5, 3)).astype(np.float32)


def both(fn, *arrays):
  """fn applied to tinygrad_cpp and torch leaves made from `arrays`; returns both sets of gradients."""
  ours = [Tensor(a, requires_grad=True) for a in arrays]
  theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
  fn(*ours).backward()
  fn(*theirs).backward()
  return [t.grad for t in ours], [t.grad for t in theirs]


@pytest.mark.parametrize("fn", [
    lambda x, w: (x @ w).relu().sum(),
    lambda x, w: (x @ w).tanh().mean(),
    lambda x, w: ((x @ w) ** 2).sum() / 7,
    lambda x, w: (x.exp() @ w).sigmoid().sum(),
    lambda x, w: (x.T.sum(1) * w.sum(1)).sum(),
    lambda x, w: (x @ w).softmax(-1)[:, 0].sum(),
    lambda x, w: (x @ w).log_softmax(-1).mean(),
    lambda x, w: x.max(1)[0].sum() + w.abs().sum() if isinstance(x, torch.Tensor) else x.max(1).sum() + w.abs().sum(),
    lambda x, w: (x[1:3, ::2] * 2).sum() + w.reshape(15).flip(0)[0] * 3,
    lambda x, w: (x.unsqueeze(2) * w.unsqueeze(0)).sum(1).square().mean(),
])
def test_gradients_match_torch(fn):
  ours, theirs = both(fn, X, W)
  for g, tg in zip(ours, theirs):
    assert g is not None
    assert_close(g, tg, rtol=1e-4, atol=1e-5)


def test_grad_of_sum_of_squares_is_2x():
  x = Tensor([1.0, -2.0, 3.0], requires_grad=True)
  (x * x).sum().backward()
  assert x.grad.tolist() == [2.0, -4.0, 6.0]
  assert x.grad.shape == x.shape and x.grad.dtype == dtypes.float32


def test_backward_with_gradient_and_accumulation():
  x = Tensor([1.0, 2.0], requires_grad=True)
  (x * 3).backward(Tensor([1.0, 10.0]))
  assert x.grad.tolist() == [3.0, 30.0]
  (x * 3).sum().backward()  # accumulates, as torch and tinygrad do
  assert x.grad.tolist() == [6.0, 33.0]
  x.grad = None
  (x * x).sum().backward()
  assert x.grad.tolist() == [2.0, 4.0]


def test_only_requires_grad_leaves_get_gradients():
  x, c = Tensor([1.0, 2.0], requires_grad=True), Tensor([5.0, 6.0])
  (x * c).sum().backward()
  assert x.grad.tolist() == [5.0, 6.0] and c.grad is None
  d = Tensor([1.0], requires_grad=True)
  (d.detach() * 2).sum()  # detach() cuts the graph
  assert d.grad is None


def test_float64_gradient_against_finite_differences():
  x0 = np.array([-1.5, -0.5, 0.25, 2.0])
  f = lambda t: (t.sigmoid() * t.sin()).sum()
  x = Tensor(x0, requires_grad=True)
  f(x).backward()
  h = 1e-6
  numeric = [(f(Tensor(x0 + h * e)).item() - f(Tensor(x0 - h * e)).item()) / (2 * h) for e in np.eye(4)]
  assert x.grad.dtype == dtypes.float64
  np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=1e-7, atol=1e-9)


def test_gradient_function():
  x = Tensor([2.0, 3.0], requires_grad=True)
  y = Tensor([1.0, -1.0], requires_grad=True)
  gx, gy = (x * y).sum().gradient(x, y)
  assert gx.tolist() == [1.0, -1.0] and gy.tolist() == [2.0, 3.0]


def test_requires_grad_needs_float():
  with pytest.raises(ValueError):
    Tensor([1, 2], requires_grad=True)
