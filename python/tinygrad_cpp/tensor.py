"""The Tensor class: the core's tg::Tensor (bound in _core) plus the few tinygrad methods that are
compositions written here (training mode, dropout, batchnorm) or argument handling around the core's
(scaled_dot_product_attention)."""
from tinygrad_cpp import _core

Tensor = _core.Tensor
Tensor.__module__ = "tinygrad_cpp"

# tinygrad's global modes: Tensor.training (dropout, BatchNorm statistics) and Tensor.no_grad.
Tensor.training = False
Tensor.no_grad = False

# tinygrad's requires_grad has three values: None (the default: no gradient, but an optimizer given
# the tensor trains it), True, and False (an optimizer keeps it as a buffer, e.g. BatchNorm's running
# statistics). The core's flag is a bool, so an explicit False is remembered on the Python object.
_core_requires_grad = Tensor.requires_grad


def _get_requires_grad(self):
  if _core_requires_grad.fget(self): return True
  return False if self.__dict__.get("_requires_grad_false") else None


def _set_requires_grad(self, v):
  _core_requires_grad.fset(self, v)
  self.__dict__["_requires_grad_false"] = v is False


Tensor.requires_grad = property(_get_requires_grad, _set_requires_grad)
_core_init = Tensor.__init__


def _init(self, data, device=None, dtype=None, requires_grad=None):
  _core_init(self, data, device=device, dtype=dtype, requires_grad=requires_grad)
  if requires_grad is False: self.__dict__["_requires_grad_false"] = True


Tensor.__init__ = _init


def _marks_false(factory):
  def wrapper(*args, **kwargs):
    t = factory(*args, **kwargs)
    if kwargs.get("requires_grad") is False: t.__dict__["_requires_grad_false"] = True
    return t
  return staticmethod(wrapper)


for _name in ("zeros", "ones", "empty", "rand", "randn", "glorot_uniform", "uniform"):
  setattr(Tensor, _name, _marks_false(getattr(Tensor, _name)))


class _train:
  """with Tensor.train(): ... (or @Tensor.train()) sets Tensor.training inside, as tinygrad."""

  def __init__(self, mode: bool = True): self.mode = mode

  def __enter__(self):
    self.prev, Tensor.training = Tensor.training, self.mode

  def __exit__(self, *exc):
    Tensor.training = self.prev
    return False

  def __call__(self, fn):
    def wrapper(*args, **kwargs):
      with _train(self.mode): return fn(*args, **kwargs)
    return wrapper


Tensor.train = staticmethod(lambda mode=True: _train(mode))
Tensor.test = staticmethod(lambda: _train(False))


def _dropout(self, p: float = 0.5):
  if not Tensor.training or p == 0: return self
  return self * (Tensor.rand(*self.shape, device=self.device) >= p).cast(self.dtype) * (1 / (1.0 - p))


def _batchnorm(self, weight, bias, mean, invstd, axis=1):
  axes = tuple(a % self.ndim for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
  shape = tuple(s if i in axes else 1 for i, s in enumerate(self.shape))
  x = self - mean.reshape(shape)
  if weight is not None: x = x * weight.reshape(shape)
  ret = x * (invstd.reshape(shape) if invstd.ndim == len(axes) else invstd)
  return ret + bias.reshape(shape) if bias is not None else ret


def _sequential(self, layers):
  x = self
  for f in layers: x = f(x)
  return x


def _repeat_heads(t, heads: int):
  """t (..., H, S, E) -> (..., heads, S, E), each of the H heads repeated heads // H times in a row
  (repeat_interleave on dim -3, tinygrad's enable_gqa)."""
  h = t.shape[-3]
  if heads % h != 0: raise ValueError(f"enable_gqa: {heads} query heads are not a multiple of {h} key/value heads")
  lead, (s, e) = t.shape[:-3], t.shape[-2:]
  return t.reshape(*lead, h, 1, s, e).expand(*lead, h, heads // h, s, e).reshape(*lead, heads, s, e)


def _scaled_dot_product_attention(self, key, value, attn_mask=None, dropout_p: float = 0.0, is_causal: bool = False,
                                  enable_gqa: bool = False, *, scale=None):
  """tinygrad's arguments over the core's tg::scaled_dot_product_attention: dropout only in training
  mode, is_causal replacing attn_mask (as tinygrad), enable_gqa repeating key/value heads. `scale`
  (torch's, keyword only here) multiplies q @ k^T instead of 1 / sqrt(E)."""
  if not 0 <= dropout_p <= 1: raise ValueError(f"dropout_p={dropout_p} is out of range [0, 1]")
  if enable_gqa: key, value = _repeat_heads(key, self.shape[-3]), _repeat_heads(value, self.shape[-3])
  return _core.scaled_dot_product_attention(self, key, value, None if is_causal else attn_mask,
                                            dropout_p if Tensor.training else 0.0, is_causal, scale)


def _mean_square_error(self, Y): return ((self - Y) ** 2).mean()


Tensor.dropout = _dropout
Tensor.batchnorm = _batchnorm
Tensor.sequential = _sequential
Tensor.scaled_dot_product_attention = _scaled_dot_product_attention
Tensor.mse = _mean_square_error
Tensor.clamp = Tensor.clip
