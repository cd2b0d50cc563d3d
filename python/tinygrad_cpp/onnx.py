"""ONNX models on tinygrad.cpp's devices: the core's tg::onnx::Model (docs/onnx.md).

    from tinygrad_cpp.onnx import OnnxRunner
    run = OnnxRunner("resnet18.onnx")            # a path, the file's bytes, or an onnx.ModelProto
    out = run({"input": np.zeros((1, 3, 224, 224), np.float32)})   # {output name: Tensor}

Inputs are Tensors or anything Tensor() takes (numpy arrays, lists); each is checked against the
model's declaration (dtype exactly, rank, fixed and named dims) and a mismatch raises OnnxError
naming the input. From the third call with inputs of the same shapes on, a call replays the
kernels captured in the second (replay=False: every call builds the graph).
"""
import os
from typing import NamedTuple

from tinygrad_cpp import _onnx
from tinygrad_cpp.tensor import Tensor

OnnxError = _onnx.OnnxError
OnnxUnsupportedError = _onnx.OnnxUnsupportedError


class InputSpec(NamedTuple):
  """A graph input as the model declares it: dims are ints, names (bound per call) or None."""
  shape: tuple | None
  dtype: object  # a DType, or None where tinygrad_cpp lacks the ONNX dtype
  onnx_dtype: str


def onnx_load(path) -> bytes:
  """tinygrad's onnx_load: the model file, as OnnxRunner takes it."""
  with open(os.fspath(path), "rb") as f: return f.read()


class OnnxRunner:
  def __init__(self, model, device=None, replay: bool = True):
    dev = "" if device is None else str(device)
    if hasattr(model, "SerializeToString"): model = model.SerializeToString()  # an onnx.ModelProto
    if isinstance(model, (bytes, bytearray, memoryview)):
      self._model = _onnx.Model.from_bytes(bytes(model), dev, replay)
    else:
      self._model = _onnx.Model.load(os.fspath(model), dev, replay)

  def __call__(self, inputs: dict, debug=False) -> dict:
    # (debug: tinygrad's argument; DEBUG=... in the environment is what prints here)
    device = self._model.device
    feed = {name: v if isinstance(v, Tensor) else Tensor(v, device=device) for name, v in inputs.items()}
    return self._model.run(feed)

  @property
  def inputs(self) -> list:
    """(name, ONNX dtype name, dims) per graph input; a dim is an int, a name or None."""
    return [v[:3] for v in self._model.inputs]

  @property
  def outputs(self) -> list:
    return [v[:3] for v in self._model.outputs]

  @property
  def graph_inputs(self) -> dict:
    """tinygrad's form: {name: InputSpec(shape, dtype, onnx_dtype)}."""
    return {name: InputSpec(dims, dtype, onnx_dtype) for name, onnx_dtype, dims, dtype in self._model.inputs}

  @property
  def device(self) -> str: return self._model.device

  @property
  def replays(self) -> int:
    """How many calls so far replayed captured kernels."""
    return self._model.replays

  def opset(self, domain: str = "") -> int: return self._model.opset(domain)


__all__ = ["OnnxRunner", "InputSpec", "onnx_load", "OnnxError", "OnnxUnsupportedError"]
