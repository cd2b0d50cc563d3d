"""tinygrad.nn.optim: the core's SGD, Adam and AdamW (one fused schedule per step), and tinygrad's
OptimizerGroup over them."""
from tinygrad_cpp import _core
from tinygrad_cpp._core import Optimizer


def _trainable(params) -> list:
  """As tinygrad's Optimizer: a tensor whose requires_grad is None (nn layers' weights) becomes
  trainable; an explicit False (BatchNorm's running statistics) stays a buffer the step realizes."""
  params = list(params)
  for x in params:
    if x.requires_grad is None and x.dtype.is_float(): x.requires_grad = True
  return params


class SGD(_core.SGD):
  def __init__(self, params, lr=0.001, momentum=0.0, weight_decay=0.0, nesterov=False):
    super().__init__(_trainable(params), lr, momentum, weight_decay, nesterov)


class Adam(_core.Adam):
  def __init__(self, params, lr=0.001, b1=0.9, b2=0.999, eps=1e-8, weight_decay=0.0):
    super().__init__(_trainable(params), lr, b1, b2, eps, weight_decay)


class AdamW(_core.AdamW):
  def __init__(self, params, lr=0.001, b1=0.9, b2=0.999, eps=1e-8, weight_decay=0.01):
    super().__init__(_trainable(params), lr, b1, b2, eps, weight_decay)


class OptimizerGroup:
  """tinygrad's OptimizerGroup: several optimizers stepped as one, e.g. AdamW with weight decay for
  the matrices and one without for biases and norms (tinygrad's form of parameter groups). step()
  realizes all their updates in one schedule."""

  def __init__(self, *optimizers):
    self.optimizers = optimizers
    self.params = [p for o in optimizers for p in o.params]
    self.buffers = [b for o in optimizers for b in o.buffers]

  def __getitem__(self, i): return self.optimizers[i]

  def zero_grad(self):
    for o in self.optimizers: o.zero_grad()

  def schedule_step(self) -> list: return [t for o in self.optimizers for t in o.schedule_step()]

  def step(self):
    targets = self.schedule_step()
    if targets: targets[0].realize(*targets[1:])


__all__ = ["Optimizer", "OptimizerGroup", "SGD", "Adam", "AdamW"]
