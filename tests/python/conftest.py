"""Shared fixtures for the tinygrad_cpp pytest suite.

Run from the repository root as
    PYTHONPATH=build/release/python /usr/bin/python3 -m pytest -q tests/python
(ctest's python_api does the same with a scratch kernel cache). Every test compares against numpy,
torch 1.13 or hand-computed values; none passes by asserting nothing.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import tinygrad_cpp
from tinygrad_cpp import Device, Tensor

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


@pytest.fixture(autouse=True)
def _global_modes():
  """Tests that change tinygrad's global modes (training, default device, DEBUG) must not leak them."""
  device, training = Device.DEFAULT, Tensor.training
  yield
  Tensor.training = training
  Device.DEFAULT = device
  tinygrad_cpp._core.settings.set_debug(0)


def aligned_empty(shape, dtype=np.float32, align=64) -> np.ndarray:
  """A writable C-contiguous array whose data starts on an `align`-byte boundary: an over-allocated
  byte buffer, sliced at the first aligned offset and viewed as `dtype`."""
  dtype = np.dtype(dtype)
  nbytes = int(np.prod(shape)) * dtype.itemsize
  raw = np.zeros(nbytes + align, np.uint8)
  offset = (-raw.ctypes.data) % align
  out = raw[offset:offset + nbytes].view(dtype).reshape(shape)
  assert out.ctypes.data % align == 0 and out.flags.c_contiguous and out.flags.writeable
  return out


def child_env(**extra) -> dict:
  """The environment for a child Python: this one's, with the package's directory first on PYTHONPATH."""
  env = dict(os.environ)
  pkg_dir = os.path.dirname(os.path.dirname(os.path.abspath(tinygrad_cpp.__file__)))
  env["PYTHONPATH"] = os.pathsep.join([pkg_dir] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
  env.update({k: str(v) for k, v in extra.items()})
  return env


def run_python(args, timeout=120, **kwargs) -> subprocess.CompletedProcess:
  """Runs this interpreter on `args` (a script path or ["-c", code]) with the package importable."""
  return subprocess.run([sys.executable, *args], env=kwargs.pop("env", child_env()), capture_output=True,
                        text=True, timeout=timeout, **kwargs)


def assert_close(got, want, rtol=1e-5, atol=1e-6):
  got = got.numpy() if isinstance(got, Tensor) else np.asarray(got)
  want = want.detach().numpy() if hasattr(want, "detach") else np.asarray(want)
  assert got.shape == want.shape, f"shape {got.shape} != {want.shape}"
  np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
