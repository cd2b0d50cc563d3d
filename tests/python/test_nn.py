"""nn layers against torch.nn with copied weights; training mode, dropout and BatchNorm statistics."""
import numpy as np
import pytest

from tinygrad_cpp import Tensor, dtypes, nn

from conftest import assert_close

torch = pytest.importorskip("torch")

rng = np.random.default_rng(2)


def copy_into(ours, theirs, names=("weight", "bias")):
  """Gives our layer the torch layer's parameters (as new realized tensors of the same shapes)."""
  for n in names:
    if getattr(theirs, n, None) is None: continue
    value = getattr(theirs, n).detach().numpy()
    assert getattr(ours, n).shape == value.shape, n
    getattr(ours, n).assign(Tensor(value)).realize()


def test_linear_matches_torch():
  ours, theirs = nn.Linear(5, 3), torch.nn.Linear(5, 3)
  assert ours.weight.shape == (3, 5) and ours.bias.shape == (3,)
  bound = 1 / np.sqrt(5)
  assert np.abs(ours.weight.numpy()).max() <= bound  # torch's init range
  copy_into(ours, theirs)
  x = rng.standard_normal((4, 5)).astype(np.float32)
  assert_close(ours(Tensor(x)), theirs(torch.tensor(x)), atol=1e-5)
  assert nn.Linear(5, 3, bias=False).bias is None


@pytest.mark.parametrize("kwargs", [
    {}, {"stride": 2}, {"padding": 1}, {"padding": 2, "dilation": 2}, {"groups": 2}, {"bias": False},
])
def test_conv2d_matches_torch(kwargs):
  ours, theirs = nn.Conv2d(4, 6, 3, **kwargs), torch.nn.Conv2d(4, 6, 3, **kwargs)
  assert ours.weight.shape == tuple(theirs.weight.shape)
  copy_into(ours, theirs)
  x = rng.standard_normal((2, 4, 9, 9)).astype(np.float32)
  assert_close(ours(Tensor(x)), theirs(torch.tensor(x)), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kernel, kwargs", [
    ((3, 1), {"padding": (1, 0)}), ((3, 3), {"stride": (2, 1)}), (3, {"dilation": (1, 2), "padding": (2, 1)}),
    ((2, 3), {"stride": (1, 2), "padding": 1}),
])
def test_conv2d_tuple_and_rectangular_arguments(kernel, kwargs):
  ours, theirs = nn.Conv2d(2, 3, kernel, **kwargs), torch.nn.Conv2d(2, 3, kernel, **kwargs)
  copy_into(ours, theirs)
  x = rng.standard_normal((1, 2, 7, 6)).astype(np.float32)
  assert_close(ours(Tensor(x)), theirs(torch.tensor(x)), rtol=1e-4, atol=1e-5)


def test_conv2d_four_paddings_are_left_right_top_bottom():
  x = rng.standard_normal((1, 1, 4, 5)).astype(np.float32)
  w = rng.standard_normal((2, 1, 3, 3)).astype(np.float32)
  padded = torch.nn.functional.pad(torch.tensor(x), (1, 0, 2, 1))  # torch's pad is also last dim first
  assert_close(Tensor(x).conv2d(Tensor(w), padding=(1, 0, 2, 1)),
               torch.nn.functional.conv2d(padded, torch.tensor(w)), rtol=1e-4, atol=1e-5)


def test_batchnorm_training_and_eval_match_torch():
  ours, theirs = nn.BatchNorm(3), torch.nn.BatchNorm2d(3)
  with torch.no_grad():
    theirs.weight.copy_(torch.tensor([0.5, 1.0, 2.0]))
    theirs.bias.copy_(torch.tensor([0.1, -0.2, 0.3]))
  copy_into(ours, theirs)
  theirs.train()
  with Tensor.train():
    for _ in range(3):
      x = (rng.standard_normal((4, 3, 5, 5)) * 2 + 1).astype(np.float32)
      assert_close(ours(Tensor(x)), theirs(torch.tensor(x)), rtol=1e-4, atol=1e-4)
  # running statistics: momentum 0.1, the unbiased batch variance (as torch)
  assert_close(ours.running_mean, theirs.running_mean, rtol=1e-4, atol=1e-5)
  assert_close(ours.running_var, theirs.running_var, rtol=1e-4, atol=1e-5)
  assert ours.num_batches_tracked.tolist() == [3]
  theirs.eval()
  x = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
  before = ours.running_mean.numpy().copy()
  assert_close(ours(Tensor(x)), theirs(torch.tensor(x)), rtol=1e-4, atol=1e-4)  # running stats, no update
  np.testing.assert_array_equal(ours.running_mean.numpy(), before)


def test_batchnorm_buffers_are_not_trainable():
  bn = nn.BatchNorm(4)
  assert bn.running_mean.requires_grad is False and bn.running_var.requires_grad is False
  assert bn.weight.requires_grad is None  # an optimizer makes it trainable
  opt = nn.optim.SGD(nn.state.get_parameters(bn), lr=0.1)
  assert len(opt.params) == 2 and len(opt.buffers) == 3  # weight, bias; running_mean/var, num_batches_tracked
  assert bn.weight.requires_grad is True


@pytest.mark.parametrize("shape, normalized", [((2, 5, 8), 8), ((3, 4, 6), (4, 6))])
def test_layernorm_matches_torch(shape, normalized):
  ours, theirs = nn.LayerNorm(normalized), torch.nn.LayerNorm(normalized)
  with torch.no_grad():
    theirs.weight.copy_(torch.rand(theirs.weight.shape) + 0.5)
    theirs.bias.copy_(torch.rand(theirs.bias.shape))
  copy_into(ours, theirs)
  x = rng.standard_normal(shape).astype(np.float32) * 3
  assert_close(ours(Tensor(x)), theirs(torch.tensor(x)), rtol=1e-4, atol=1e-4)


def test_groupnorm_and_rmsnorm():
  ours, theirs = nn.GroupNorm(2, 4), torch.nn.GroupNorm(2, 4)
  with torch.no_grad():
    theirs.weight.copy_(torch.tensor([1.0, 2.0, 0.5, 1.5]))
  copy_into(ours, theirs)
  x = rng.standard_normal((2, 4, 3, 3)).astype(np.float32)
  assert_close(ours(Tensor(x)), theirs(torch.tensor(x)), rtol=1e-4, atol=1e-4)
  rms = nn.RMSNorm(6, eps=1e-6)
  y = rng.standard_normal((3, 6)).astype(np.float32)
  assert_close(rms(Tensor(y)), y / np.sqrt((y * y).mean(-1, keepdims=True) + 1e-6), rtol=1e-5)


def test_embedding_matches_torch():
  ours, theirs = nn.Embedding(10, 4), torch.nn.Embedding(10, 4)
  copy_into(ours, theirs, ("weight",))
  idx = np.array([[1, 9, 0], [3, 3, 7]])
  assert_close(ours(Tensor(idx)), theirs(torch.tensor(idx)))


def test_training_mode_context_manager_and_decorator():
  assert Tensor.training is False
  with Tensor.train():
    assert Tensor.training is True
    with Tensor.train(False):
      assert Tensor.training is False
    assert Tensor.training is True
  assert Tensor.training is False

  @Tensor.train()
  def step():
    return Tensor.training
  assert step() is True and Tensor.training is False


def test_dropout_only_in_training():
  x = Tensor.ones(2000)
  assert x.dropout(0.5).numpy().tolist() == [1.0] * 2000  # not training: identity
  with Tensor.train():
    y = x.dropout(0.25).numpy()
    assert x.dropout(0.0).numpy().tolist() == [1.0] * 2000
  kept = y[y != 0]
  np.testing.assert_allclose(kept, 1 / 0.75, rtol=1e-6)  # survivors scaled by 1 / (1 - p)
  assert set(np.unique(y).tolist()) <= {0.0, np.float32(1 / 0.75).item()}
  assert 0.2 < (y == 0).mean() < 0.3


def test_functional_losses_against_torch():
  logits = rng.standard_normal((6, 5)).astype(np.float32)
  labels = np.array([0, 4, 2, 2, 1, 3])
  assert_close(Tensor(logits).sparse_categorical_crossentropy(Tensor(labels)),
               torch.nn.functional.cross_entropy(torch.tensor(logits), torch.tensor(labels)), rtol=1e-5)
  assert_close(Tensor(logits).sparse_categorical_crossentropy(Tensor(labels), label_smoothing=0.1),
               torch.nn.functional.cross_entropy(torch.tensor(logits), torch.tensor(labels), label_smoothing=0.1),
               rtol=1e-5)
  p = (rng.random(6) * 0.9 + 0.05).astype(np.float32)
  t = (rng.random(6) > 0.5).astype(np.float32)
  assert_close(Tensor(p).binary_crossentropy(Tensor(t)),
               torch.nn.functional.binary_cross_entropy(torch.tensor(p), torch.tensor(t)), rtol=1e-5)
  assert_close(Tensor(logits[:, 0]).binary_crossentropy_logits(Tensor(t)),
               torch.nn.functional.binary_cross_entropy_with_logits(torch.tensor(logits[:, 0]), torch.tensor(t)),
               rtol=1e-5)


def test_pooling_against_torch():
  x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
  tx = torch.tensor(x)
  assert_close(Tensor(x).max_pool2d(), torch.nn.functional.max_pool2d(tx, 2))
  assert_close(Tensor(x).max_pool2d(3, stride=2), torch.nn.functional.max_pool2d(tx, 3, stride=2))
  assert_close(Tensor(x).avg_pool2d(), torch.nn.functional.avg_pool2d(tx, 2), atol=1e-6)
  assert_close(Tensor(x).avg_pool2d(3, stride=1, padding=1), torch.nn.functional.avg_pool2d(tx, 3, 1, 1), atol=1e-6)
  F = torch.nn.functional
  assert_close(Tensor(x).max_pool2d((2, 3), stride=(2, 1)), F.max_pool2d(tx, (2, 3), stride=(2, 1)))
  assert_close(Tensor(x).max_pool2d(3, padding=(1, 0)), F.max_pool2d(tx, 3, padding=(1, 0)))
  assert_close(Tensor(x).avg_pool2d((1, 2)), F.avg_pool2d(tx, (1, 2)), atol=1e-6)


def test_sequential_and_dtype_of_layers():
  layers = [nn.Linear(4, 8), Tensor.relu, nn.Linear(8, 2)]
  x = Tensor.ones(3, 4)
  out = x.sequential(layers)
  want = layers[2](layers[0](x).relu())
  assert out.shape == (3, 2) and out.dtype == dtypes.float32
  assert_close(out, want.numpy())
