"""tinygrad.helpers' getenv and Context (DEBUG, NOOPT, BEAM from code)."""
import os
from tinygrad_cpp import _core


def getenv(key: str, default=0):
  return type(default)(os.getenv(key, default))


class Context:
  """with Context(DEBUG=2, NOOPT=1, BEAM=2): ... sets the engine's settings inside the block.
  The environment variables (DEBUG, NOOPT, BEAM, VIZ, ...) are read when the module is imported."""
  _get = {"DEBUG": _core.settings.debug, "NOOPT": _core.settings.noopt, "BEAM": _core.settings.beam}
  _set = {"DEBUG": _core.settings.set_debug, "NOOPT": _core.settings.set_noopt, "BEAM": _core.settings.set_beam}

  def __init__(self, **kwargs):
    unknown = [k for k in kwargs if k not in self._set]
    if unknown: raise KeyError(f"Context: unknown settings {unknown}; known: {sorted(self._set)}")
    self.kwargs, self.saved = kwargs, {}

  def __enter__(self):
    for k, v in self.kwargs.items():
      self.saved[k] = self._get[k]()
      self._set[k](v)
    return self

  def __exit__(self, *exc):
    for k, v in self.saved.items(): self._set[k](v)
    return False


class KernelCounter:
  """Counts the kernels realizes launch on this thread while a block runs:
  with KernelCounter() as c: ...; c.kernel_count."""

  def __enter__(self):
    self._counter = _core.LaunchCounter()
    return self

  def __exit__(self, *exc):
    self.kernel_count, self.copies = self._counter.kernels, self._counter.copies
    del self._counter
    return False
