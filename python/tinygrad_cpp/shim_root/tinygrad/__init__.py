"""The tinygrad_cpp shim: `tinygrad` names resolve to tinygrad_cpp (see tinygrad_cpp/shim.py)."""
from tinygrad_cpp import *  # noqa: F401,F403
from tinygrad_cpp import Tensor, dtypes, Device, TinyJit, nn, Context, getenv  # noqa: F401

__tinygrad_cpp_shim__ = True
