"""Transformer pieces: Tensor.scaled_dot_product_attention (values and gradients against a numpy
reference), nn.utils.clip_grad_norm_ and nn.optim.OptimizerGroup."""
import numpy as np
import pytest

from tinygrad_cpp import Tensor, TinyJit, nn

from conftest import assert_close

rng = np.random.default_rng(11)


def randn(*shape) -> np.ndarray: return rng.standard_normal(shape).astype(np.float32)


def sdpa_ref(q, k, v, mask=None, causal=False, scale=None):
  """numpy: softmax(q k^T * scale + mask) v, and the weights; a row with every key masked gives zeros."""
  scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
  s = q @ np.swapaxes(k, -1, -2) * scale
  if causal: s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
  if mask is not None: s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
  m = s.max(-1, keepdims=True)
  e = np.exp(s - np.where(np.isinf(m), 0, m))
  total = e.sum(-1, keepdims=True)
  p = e / np.where(total == 0, 1, total)
  return p @ v, p, scale


def sdpa_grads_ref(q, k, v, w, **kw):
  """Gradients of sum(sdpa(q, k, v) * w) with respect to q, k and v."""
  _, p, scale = sdpa_ref(q, k, v, **kw)
  t = lambda x: np.swapaxes(x, -1, -2)  # noqa: E731
  dp = w @ t(v)
  ds = p * (dp - (dp * p).sum(-1, keepdims=True))
  return ds @ k * scale, t(ds) @ q * scale, t(p) @ w


def test_sdpa_matches_numpy_with_broadcast_batch():
  q, k, v = randn(2, 3, 5, 8), randn(1, 3, 7, 8), randn(2, 1, 7, 6)
  out = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v))
  assert out.shape == (2, 3, 5, 6)
  assert_close(out, sdpa_ref(q, k, v)[0], atol=1e-5)


@pytest.mark.parametrize("L, S", [(5, 5), (4, 6), (6, 4)])
def test_sdpa_causal_is_top_left(L, S):
  q, k, v = randn(2, L, 8), randn(2, S, 8), randn(2, S, 3)
  out = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), is_causal=True)
  assert_close(out, sdpa_ref(q, k, v, causal=True)[0], atol=1e-5)


def test_sdpa_bool_and_float_masks():
  q, k, v = randn(2, 3, 5, 8), randn(2, 3, 7, 8), randn(2, 3, 7, 4)
  keep = rng.random((5, 7)) < 0.6
  keep[:, 0] = True  # every query attends something
  out = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), attn_mask=Tensor(keep))  # True = attend
  assert_close(out, sdpa_ref(q, k, v, mask=keep)[0], atol=1e-5)
  bias = randn(2, 1, 5, 7)
  out = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), attn_mask=Tensor(bias))  # added
  assert_close(out, sdpa_ref(q, k, v, mask=bias)[0], atol=1e-5)


def test_sdpa_is_causal_replaces_attn_mask_as_tinygrad():
  q, k, v = randn(4, 8), randn(4, 8), randn(4, 2)
  bias = randn(4, 4) * 10
  out = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), attn_mask=Tensor(bias), is_causal=True)
  assert_close(out, sdpa_ref(q, k, v, causal=True)[0], atol=1e-5)


def test_sdpa_scale_and_enable_gqa():
  q, k, v = randn(1, 4, 3, 8), randn(1, 2, 5, 8), randn(1, 2, 5, 6)
  out = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), enable_gqa=True, scale=0.5)
  # repeat_interleave of the 2 key/value heads to 4: heads 0, 0, 1, 1
  want = sdpa_ref(q, np.repeat(k, 2, axis=-3), np.repeat(v, 2, axis=-3), scale=0.5)[0]
  assert_close(out, want, atol=1e-5)
  with pytest.raises(ValueError, match="multiple"):
    Tensor(randn(1, 3, 3, 8)).scaled_dot_product_attention(Tensor(k), Tensor(v), enable_gqa=True)


@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_gradients_match_numpy(causal):
  q, k, v, w = randn(2, 4, 8), randn(2, 6, 8), randn(2, 6, 3), randn(2, 4, 3)
  want = sdpa_grads_ref(q, k, v, w, causal=causal)
  # the reference itself against central differences (float64) for q
  q64, k64, v64, w64 = (x.astype(np.float64) for x in (q, k, v, w))
  f = lambda qq: (sdpa_ref(qq, k64, v64, causal=causal)[0] * w64).sum()  # noqa: E731
  numeric, h = np.zeros_like(q64), 1e-6
  for i in np.ndindex(*q.shape):
    d = np.zeros_like(q64)
    d[i] = h
    numeric[i] = (f(q64 + d) - f(q64 - d)) / (2 * h)
  np.testing.assert_allclose(sdpa_grads_ref(q64, k64, v64, w64, causal=causal)[0], numeric, atol=1e-6)

  tq, tk, tv = (Tensor(x, requires_grad=True) for x in (q, k, v))
  (tq.scaled_dot_product_attention(tk, tv, is_causal=causal) * Tensor(w)).sum().backward()
  for t, g in zip((tq, tk, tv), want):
    assert_close(t.grad, g, rtol=1e-4, atol=1e-5)


def test_sdpa_fully_masked_row_gives_zeros_and_zero_gradients():
  q, k, v = randn(3, 4), randn(5, 4), randn(5, 2)
  keep = np.ones((3, 5), bool)
  keep[1] = False  # query 1 attends nothing: zeros (tinygrad gives NaN)
  tq, tk, tv = (Tensor(x, requires_grad=True) for x in (q, k, v))
  out = tq.scaled_dot_product_attention(tk, tv, attn_mask=Tensor(keep))
  out.sum().backward()
  got = out.numpy()
  np.testing.assert_array_equal(got[1], 0)
  assert_close(got, sdpa_ref(q, k, v, mask=keep)[0], atol=1e-5)
  np.testing.assert_array_equal(tq.grad.numpy()[1], 0)
  for t in (tq, tk, tv): assert np.isfinite(t.grad.numpy()).all()


def test_sdpa_dropout_only_in_training():
  q, k, v = randn(2, 6, 8), randn(2, 6, 8), np.ones((2, 6, 1), np.float32)
  plain = sdpa_ref(q, k, v)[0]
  assert_close(Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), dropout_p=0.5), plain, atol=1e-5)
  with Tensor.train():
    np.testing.assert_array_equal(
        Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), dropout_p=1.0).numpy(), 0)
    Tensor.manual_seed(1)
    # with v all ones each output is the sum of the kept weights / (1 - p): not 1 everywhere
    out = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), dropout_p=0.5).numpy()
  assert np.isfinite(out).all() and (out >= 0).all() and not np.allclose(out, 1)
  with pytest.raises(ValueError, match="dropout_p"):
    Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), dropout_p=1.5)


def test_sdpa_shape_errors_name_the_shapes():
  with pytest.raises(ValueError, match="last dim E"):
    Tensor(randn(3, 4)).scaled_dot_product_attention(Tensor(randn(5, 3)), Tensor(randn(5, 2)))


def test_clip_grad_norm_returns_norm_and_scales_grads():
  a, b, c = (Tensor(randn(*s), requires_grad=True) for s in ((3, 4), (4,), (2,)))
  ga, gb = randn(3, 4), randn(4)
  ((a * Tensor(ga)).sum() + (b * Tensor(gb)).sum()).backward()  # grads ga and gb; c has none
  norm = np.sqrt((ga ** 2).sum() + (gb ** 2).sum())
  total = nn.utils.clip_grad_norm_([a, b, c], max_norm=0.5)
  assert total.shape == ()
  assert total.item() == pytest.approx(norm, rel=1e-5)
  coef = 0.5 / (norm + 1e-6)
  assert_close(a.grad, ga * coef, rtol=1e-5)
  assert_close(b.grad, gb * coef, rtol=1e-5)
  assert c.grad is None
  # below max_norm nothing changes; one tensor is accepted as torch does
  assert nn.utils.clip_grad_norm_(a, max_norm=100.0).item() == pytest.approx(np.sqrt((ga ** 2).sum()) * coef,
                                                                             rel=1e-5)
  assert_close(a.grad, ga * coef, rtol=1e-5)
  with pytest.raises(ValueError, match="norm_type"):
    nn.utils.clip_grad_norm_([a], 1.0, norm_type=1.0)


def test_clip_grad_norm_in_a_jitted_sgd_step():
  # the clipping is lazy: it fuses into the optimizer's step, so TinyJit replays clip the new grads
  w0 = randn(3, 2)
  batches = [randn(4, 3) * (i + 1) for i in range(5)]
  w = Tensor(w0.copy(), requires_grad=True)
  opt = nn.optim.SGD([w], lr=0.1)

  @TinyJit
  def step(x):
    opt.zero_grad()
    loss = (x @ w).square().sum()
    loss.backward()
    norm = nn.utils.clip_grad_norm_([w], max_norm=1.0)
    opt.step()
    return loss, norm

  ref = w0.astype(np.float64)
  for x in batches:
    _, norm = step(Tensor(x))
    g = 2 * x.T @ (x @ ref)
    want_norm = np.sqrt((g ** 2).sum())
    assert norm.item() == pytest.approx(want_norm, rel=1e-4)
    ref = ref - 0.1 * g * min(1.0, 1.0 / (want_norm + 1e-6))
    assert_close(w, ref, rtol=1e-4, atol=1e-5)
  assert step.captured


def test_optimizer_group_matches_separate_optimizers():
  # tinygrad's form of parameter groups: weight decay for the matrix, none for the bias
  w0, b0 = randn(4, 3), randn(3)
  batches = [(randn(5, 4), randn(5, 3)) for _ in range(3)]

  def run(grouped):
    w, b = Tensor(w0.copy(), requires_grad=True), Tensor(b0.copy(), requires_grad=True)
    decay, no_decay = nn.optim.AdamW([w], lr=0.01, weight_decay=0.1), nn.optim.AdamW([b], lr=0.01, weight_decay=0.0)
    group = nn.optim.OptimizerGroup(decay, no_decay)
    assert group[1] is no_decay and len(group.params) == 2
    for x, y in batches:
      group.zero_grad()
      ((Tensor(x) @ w + b - Tensor(y)) ** 2).mean().backward()
      if grouped: group.step()
      else:
        decay.step()
        no_decay.step()
    return w.numpy(), b.numpy(), decay.step_count

  gw, gb, steps = run(True)
  sw, sb, _ = run(False)
  assert steps == len(batches)
  np.testing.assert_allclose(gw, sw, rtol=1e-6, atol=1e-7)
  np.testing.assert_allclose(gb, sb, rtol=1e-6, atol=1e-7)
  assert not np.allclose(gb, b0)
