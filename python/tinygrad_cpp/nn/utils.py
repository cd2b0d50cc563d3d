"""tinygrad_cpp.nn.utils: helpers tinygrad's core API lacks, under torch.nn.utils' names."""
from tinygrad_cpp import _core
from tinygrad_cpp.tensor import Tensor


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0) -> Tensor:
  """torch.nn.utils.clip_grad_norm_ over the core's tg::nn::clip_grad_norm: returns the L2 norm of all
  the gradients together as a lazy 0-d tensor and scales each gradient by
  min(1, max_norm / (norm + 1e-6)), lazily (nothing is read on the host, so the scaling fuses into
  the optimizer's step and replays under TinyJit). Parameters without a gradient are skipped."""
  if norm_type != 2.0: raise ValueError(f"clip_grad_norm_: only norm_type=2.0 (L2) is supported, got {norm_type}")
  params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
  return _core.clip_grad_norm(params, max_norm)


__all__ = ["clip_grad_norm_"]
