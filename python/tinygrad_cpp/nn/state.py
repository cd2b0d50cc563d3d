"""tinygrad.nn.state: finding a model's tensors by walking its attributes, and safetensors files."""
from collections import OrderedDict
from tinygrad_cpp import _core
from tinygrad_cpp.tensor import Tensor


def get_state_dict(obj, prefix: str = "") -> dict:
  """Every Tensor reachable from obj through attributes, lists, tuples and dicts, named by path."""
  if isinstance(obj, Tensor): return {prefix.strip("."): obj}
  if hasattr(obj, "_asdict"): return get_state_dict(obj._asdict(), prefix)
  if isinstance(obj, OrderedDict): return get_state_dict(dict(obj), prefix)
  if hasattr(obj, "__dict__") and not isinstance(obj, type): return get_state_dict(obj.__dict__, prefix)
  out = {}
  if isinstance(obj, (list, tuple)):
    for i, x in enumerate(obj): out.update(get_state_dict(x, f"{prefix}{i}."))
  elif isinstance(obj, dict):
    for k, v in obj.items(): out.update(get_state_dict(v, f"{prefix}{k}."))
  return out


def get_parameters(obj) -> list:
  return list(get_state_dict(obj).values())


def load_state_dict(model, state_dict: dict, strict: bool = True, verbose: bool = False, consume: bool = False):
  """Assigns each tensor of state_dict to the model's tensor of that name (same shape required)."""
  model_state = get_state_dict(model)
  missing = [k for k in model_state if k not in state_dict]
  if strict and missing: raise KeyError(f"load_state_dict: missing {missing}")
  unexpected = [k for k in state_dict if k not in model_state]
  if strict and unexpected: raise KeyError(f"load_state_dict: unexpected {unexpected}")
  for k, v in model_state.items():
    if k not in state_dict: continue
    src = state_dict[k]
    if tuple(v.shape) != tuple(src.shape):
      raise ValueError(f"Shape mismatch in layer `{k}`: Expected shape {v.shape}, but found {src.shape} in state dict.")
    if v.dtype != src.dtype: src = src.cast(v.dtype)
    v.assign(src.to(v.device)).realize()
    if consume: del state_dict[k]


def safe_save(tensors: dict, fn, metadata: dict = None):
  _core.safe_save(tensors, str(fn), metadata or {})


def safe_load(fn, device=None) -> dict:
  return _core.safe_load(str(fn), device)


def safe_load_metadata(fn) -> dict:
  return _core.safe_load_metadata(str(fn))


__all__ = ["get_state_dict", "get_parameters", "load_state_dict", "safe_save", "safe_load", "safe_load_metadata"]
