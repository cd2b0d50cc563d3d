"""TinyJit for Python functions: tensors among the arguments (positional, keyword, or inside
lists/tuples/dicts) are the JIT's inputs; the returned tensors (alone or in a tuple/list/dict)
its outputs. The capture and replay are the core's tg::TinyJit (kernel/tensor/jit.hpp): the
third call and later run only the recorded kernels, without calling the Python function."""
from tinygrad_cpp import _core
from tinygrad_cpp.tensor import Tensor


def _flatten(x, out: list):
  """Replaces each Tensor in x by its index into out (appending it); returns the skeleton."""
  if isinstance(x, Tensor):
    out.append(x)
    return ("T", len(out) - 1)
  if isinstance(x, (list, tuple)): return (type(x), [_flatten(v, out) for v in x])
  if isinstance(x, dict): return (dict, {k: _flatten(v, out) for k, v in x.items()})
  return ("C", x)


def _rebuild(s, tensors):
  kind, v = s
  if kind == "T": return tensors[v]
  if kind == "C": return v
  if kind is dict: return {k: _rebuild(x, tensors) for k, x in v.items()}
  return kind(_rebuild(x, tensors) for x in v)


class TinyJit:
  def __init__(self, fxn):
    self.fxn, self._jit, self._in, self._out = fxn, None, None, None
    self.__wrapped__ = fxn

  def _run(self, tensors):
    args, kwargs = _rebuild(self._in, tensors)
    ret = self.fxn(*args, **kwargs)
    outs = []
    self._out = _flatten(ret, outs)
    return outs

  def __call__(self, *args, **kwargs):
    tensors = []
    skeleton = _flatten((tuple(args), dict(kwargs)), tensors)
    if self._in is not None and _constants(skeleton) != _constants(self._in):
      self.reset()  # other non-tensor arguments: the captured kernels do not apply
    self._in = skeleton
    if self._jit is None: self._jit = _core.TensorJit(self._run)
    outs = self._jit(tensors)  # first: an eager call (1 and 2) sets self._out, the skeleton of its return
    return _rebuild(self._out, outs)

  def reset(self):
    self._jit, self._out = None, None

  @property
  def captured(self) -> bool: return self._jit is not None and self._jit.captured

  @property
  def jit_cache(self) -> list:
    """One entry per kernel a replay launches (tinygrad's jit_cache length is what tests read)."""
    return [None] * (self._jit.kernel_count if self._jit is not None else 0)

  def __get__(self, obj, objtype=None):  # as a method decorator
    if obj is None: return self
    import functools
    return functools.partial(self.__call__, obj)


def _constants(s):
  kind, v = s
  if kind == "T": return "T"
  if kind == "C": return repr(v)
  if kind is dict: return (dict, tuple((k, _constants(x)) for k, x in v.items()))
  return (kind, tuple(_constants(x) for x in v))
