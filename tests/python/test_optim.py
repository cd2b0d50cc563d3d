"""nn.optim SGD / Adam / AdamW: a few steps against torch.optim from identical weights and data."""
import numpy as np
import pytest

from tinygrad_cpp import Tensor, nn
from tinygrad_cpp.nn.state import get_parameters

from conftest import assert_close

torch = pytest.importorskip("torch")

rng = np.random.default_rng(3)
W1 = rng.standard_normal((4, 6)).astype(np.float32) * 0.5
W2 = rng.standard_normal((6, 2)).astype(np.float32) * 0.5
DATA = [(rng.standard_normal((8, 4)).astype(np.float32), rng.standard_normal((8, 2)).astype(np.float32))
        for _ in range(4)]


def loss_of(w1, w2, x, y):
  return (((x @ w1).tanh() @ w2 - y) ** 2).mean()


@pytest.mark.parametrize("name, kwargs", [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.05, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    ("Adam", {"lr": 0.01}),
    ("Adam", {"lr": 0.02, "b1": 0.8, "b2": 0.99, "eps": 1e-6}),
    ("AdamW", {"lr": 0.01}),
    ("AdamW", {"lr": 0.01, "weight_decay": 0.1}),
])
def test_optimizer_steps_match_torch(name, kwargs):
  ours = [Tensor(W1.copy(), requires_grad=True), Tensor(W2.copy(), requires_grad=True)]
  theirs = [torch.tensor(W1.copy(), requires_grad=True), torch.tensor(W2.copy(), requires_grad=True)]
  opt = getattr(nn.optim, name)(ours, **kwargs)
  torch_kwargs = dict(kwargs)
  if "b1" in torch_kwargs: torch_kwargs["betas"] = (torch_kwargs.pop("b1"), torch_kwargs.pop("b2"))
  torch_opt = getattr(torch.optim, name)(theirs, **torch_kwargs)
  for x, y in DATA:
    opt.zero_grad()
    loss = loss_of(*ours, Tensor(x), Tensor(y))
    loss.backward()
    opt.step()
    torch_opt.zero_grad()
    torch_loss = loss_of(*theirs, torch.tensor(x), torch.tensor(y))
    torch_loss.backward()
    torch_opt.step()
    assert loss.item() == pytest.approx(torch_loss.item(), rel=1e-5, abs=1e-6)
    for p, tp in zip(ours, theirs):
      assert_close(p, tp, rtol=1e-5, atol=1e-5)
  assert opt.step_count == len(DATA)


def test_optimizer_trains_layers_from_get_parameters():
  # nn layers' weights have requires_grad None; the optimizer makes them trainable, as tinygrad's
  Tensor.manual_seed(0)
  model = [nn.Linear(2, 8), nn.Linear(8, 1)]
  params = get_parameters(model)
  assert all(p.requires_grad is None for p in params)
  opt = nn.optim.Adam(params, lr=0.05)
  assert all(p.requires_grad is True for p in params) and len(opt.params) == 4
  x = Tensor([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
  y = Tensor([[0.0], [1.0], [1.0], [0.0]])
  losses = []
  for _ in range(60):
    opt.zero_grad()
    loss = (x.sequential([model[0], Tensor.tanh, model[1]]) - y).square().mean()
    loss.backward()
    opt.step()
    losses.append(loss.item())
  assert losses[-1] < 0.05 < losses[0], losses[::10]


def test_explicit_false_stays_a_buffer_and_lr_is_writable():
  w = Tensor([1.0, 2.0])
  frozen = Tensor([5.0], requires_grad=False)
  opt = nn.optim.SGD([w, frozen], lr=0.5)
  assert len(opt.params) == 1 and len(opt.buffers) == 1 and frozen.requires_grad is False
  assert isinstance(opt, nn.optim.Optimizer)
  (w * w).sum().backward()
  opt.step()
  assert w.tolist() == [0.0, 0.0]  # w - 0.5 * 2w
  opt.lr = 0.25
  opt.zero_grad()
  assert w.grad is None or w.grad.tolist() == [0.0, 0.0]
  (w - 4).sum().backward()
  opt.step()
  assert w.tolist() == [-0.25, -0.25]
  assert frozen.tolist() == [5.0]


def test_lr_tensor_overrides_lr():
  w = Tensor([1.0], requires_grad=True)
  opt = nn.optim.SGD([w], lr=100.0)
  opt.lr_tensor = Tensor(0.5)
  w.sum().backward()
  opt.step()
  assert w.tolist() == [0.5]
  opt.lr_tensor = None
  assert opt.lr_tensor is None and opt.lr == 100.0
