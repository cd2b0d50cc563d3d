"""tinygrad's Python API over tinygrad.cpp's C++ core.

    from tinygrad_cpp import Tensor, nn, dtypes, Device, TinyJit

Every operation builds the core's lazy graph and runs in C++; this package only translates
arguments. docs/python.md describes what is here and how it differs from tinygrad.
"""
from tinygrad_cpp import _core
from tinygrad_cpp.dtype import DType, dtypes
from tinygrad_cpp.tensor import Tensor
from tinygrad_cpp.device import Device, devices, load_plugin, unload_plugin
from tinygrad_cpp.jit import TinyJit
from tinygrad_cpp.helpers import Context, getenv, KernelCounter
from tinygrad_cpp import nn
from tinygrad_cpp.shim import install_shim, shim_path

Error = _core.Error
TensorError = _core.TensorError
DeviceError = _core.DeviceError
PluginLoadError = _core.PluginLoadError

__version__ = "0.1.0"
__all__ = ["Tensor", "dtypes", "DType", "Device", "devices", "load_plugin", "unload_plugin", "TinyJit", "nn",
           "Context", "getenv", "KernelCounter", "install_shim", "shim_path"]
