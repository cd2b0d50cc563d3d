"""tinygrad.nn: layers as plain Python objects holding Tensors (so nn.state finds them by walking
attributes, as tinygrad does); their forward passes are the core's tensor ops."""
import math
from tinygrad_cpp.tensor import Tensor
from tinygrad_cpp.nn import optim, state, utils


def _pair(x, n=2): return tuple(x) if isinstance(x, (tuple, list)) else (x,) * n


class Linear:
  def __init__(self, in_features: int, out_features: int, bias: bool = True):
    bound = 1 / math.sqrt(in_features)
    self.weight = Tensor.uniform(out_features, in_features, low=-bound, high=bound)
    self.bias = Tensor.uniform(out_features, low=-bound, high=bound) if bias else None

  def __call__(self, x: Tensor) -> Tensor: return x.linear(self.weight.transpose(), self.bias)


class Conv2d:
  def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1, groups=1,
               bias=True):
    self.kernel_size = _pair(kernel_size)
    self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
    scale = 1 / math.sqrt(in_channels * math.prod(self.kernel_size) / groups)
    self.weight = Tensor.uniform(out_channels, in_channels // groups, *self.kernel_size, low=-scale, high=scale)
    self.bias = Tensor.uniform(out_channels, low=-scale, high=scale) if bias else None

  def __call__(self, x: Tensor) -> Tensor:
    return x.conv2d(self.weight, self.bias, groups=self.groups, stride=self.stride, dilation=self.dilation,
                    padding=self.padding)


class BatchNorm:
  def __init__(self, sz: int, eps=1e-5, affine=True, track_running_stats=True, momentum=0.1):
    self.eps, self.track_running_stats, self.momentum = eps, track_running_stats, momentum
    self.weight = Tensor.ones(sz) if affine else None
    self.bias = Tensor.zeros(sz) if affine else None
    # buffers, never trained: an optimizer given get_parameters(model) only realizes them
    self.num_batches_tracked = Tensor.zeros(1, dtype="int32", requires_grad=False)
    if track_running_stats:
      self.running_mean, self.running_var = Tensor.zeros(sz, requires_grad=False), Tensor.ones(sz, requires_grad=False)

  def calc_stats(self, x: Tensor):
    shape_mask = [1, -1, *([1] * (x.ndim - 2))]
    if self.track_running_stats and not Tensor.training:
      return self.running_mean, self.running_var.reshape(shape_mask).expand(x.shape)
    reduce_axes = tuple(a for a in range(x.ndim) if a != 1)
    batch_mean = x.mean(axis=reduce_axes)
    y = x - batch_mean.detach().reshape(shape_mask)
    batch_var = (y * y).mean(axis=reduce_axes)
    return batch_mean, batch_var

  def __call__(self, x: Tensor) -> Tensor:
    batch_mean, batch_var = self.calc_stats(x)
    if self.track_running_stats and Tensor.training:
      n = x.numel() / x.shape[1]
      self.running_mean.assign((1 - self.momentum) * self.running_mean + self.momentum * batch_mean.detach())
      self.running_var.assign((1 - self.momentum) * self.running_var +
                              self.momentum * n / (n - 1) * batch_var.detach())
      self.num_batches_tracked.assign(self.num_batches_tracked + 1)
    return x.batchnorm(self.weight, self.bias, batch_mean, batch_var.add(self.eps).rsqrt())


BatchNorm2d = BatchNorm


class LayerNorm:
  def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True):
    self.normalized_shape = tuple(normalized_shape) if isinstance(normalized_shape, (tuple, list)) else (normalized_shape,)
    self.axis, self.eps = tuple(-1 - i for i in range(len(self.normalized_shape))), eps
    self.weight = Tensor.ones(*self.normalized_shape) if elementwise_affine else None
    self.bias = Tensor.zeros(*self.normalized_shape) if elementwise_affine else None

  def __call__(self, x: Tensor) -> Tensor:
    if x.shape[-len(self.normalized_shape):] != self.normalized_shape:
      raise ValueError(f"LayerNorm: last dims of {x.shape} must be {self.normalized_shape}")
    x = x.layernorm(axis=self.axis, eps=self.eps)
    return x if self.weight is None else x * self.weight + self.bias


class GroupNorm:
  def __init__(self, num_groups: int, num_channels: int, eps=1e-5, affine=True):
    self.num_groups, self.num_channels, self.eps = num_groups, num_channels, eps
    self.weight = Tensor.ones(num_channels) if affine else None
    self.bias = Tensor.zeros(num_channels) if affine else None

  def __call__(self, x: Tensor) -> Tensor:
    x = x.reshape(x.shape[0], self.num_groups, -1).layernorm(axis=-1, eps=self.eps).reshape(x.shape)
    if self.weight is None: return x
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return x * self.weight.reshape(shape) + self.bias.reshape(shape)


class RMSNorm:
  def __init__(self, dim: int, eps=1e-6):
    self.eps, self.weight = eps, Tensor.ones(dim)

  def __call__(self, x: Tensor) -> Tensor:
    return x * (x.square().mean(axis=-1, keepdim=True) + self.eps).rsqrt() * self.weight


class Embedding:
  def __init__(self, vocab_size: int, embed_size: int):
    self.vocab_sz, self.embed_sz = vocab_size, embed_size
    self.weight = Tensor.glorot_uniform(vocab_size, embed_size)

  def __call__(self, idx: Tensor) -> Tensor: return self.weight[idx]


__all__ = ["Linear", "Conv2d", "BatchNorm", "BatchNorm2d", "LayerNorm", "GroupNorm", "RMSNorm", "Embedding",
           "optim", "state"]
