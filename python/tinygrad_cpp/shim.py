"""An opt-in `tinygrad` module name for unmodified tinygrad scripts.

    PYTHONPATH=$(python3 -c "import tinygrad_cpp; print(tinygrad_cpp.shim_path())") python3 script.py

or, inside a program, tinygrad_cpp.install_shim() before `from tinygrad import Tensor`. The shim
lives inside this package (never as a top-level `tinygrad` in site-packages), so a real tinygrad is
never replaced unless the user asks; install_shim() refuses when a real tinygrad is already imported.
"""
import os
import sys


def shim_path() -> str:
  """The directory holding the `tinygrad` shim package (put it first on PYTHONPATH)."""
  return os.path.join(os.path.dirname(os.path.abspath(__file__)), "shim_root")


def install_shim():
  existing = sys.modules.get("tinygrad")
  if existing is not None and not getattr(existing, "__tinygrad_cpp_shim__", False):
    raise RuntimeError(f"a real tinygrad is already imported ({getattr(existing, '__file__', '?')}); "
                       "the tinygrad_cpp shim never replaces it")
  path = shim_path()
  if path not in sys.path: sys.path.insert(0, path)
