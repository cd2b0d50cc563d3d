"""DLPack with PyTorch on CUDA device memory (the GPU machine): both directions share memory.
Skipped here ("skipped: unavailable") without a CUDA device or without a CUDA build of torch.
Runs under pytest, or as a plain script on a machine without pytest."""
import numpy as np
import pytest

import tinygrad_cpp
from tinygrad_cpp import Tensor


def _cuda_or_skip():
  if not any(d.startswith("CUDA") for d in tinygrad_cpp.devices()):
    pytest.skip("skipped: unavailable (no CUDA device: " +
                "; ".join(f"{e['plugin']}: {e['error']}" for e in tinygrad_cpp.devices(False) if e["plugin"] == "cuda") + ")")
  torch = pytest.importorskip("torch")
  if not torch.cuda.is_available(): pytest.skip("skipped: unavailable (torch has no CUDA)")
  return torch


def test_to_torch_shares_device_memory():
  torch = _cuda_or_skip()
  t = (Tensor.arange(1024, device="CUDA") * 2).float().realize()
  x = torch.from_dlpack(t)
  assert x.device.type == "cuda" and x.dtype == torch.float32 and tuple(x.shape) == (1024,)
  assert np.array_equal(x.cpu().numpy(), np.arange(1024, dtype=np.float32) * 2)
  x.add_(1)  # through PyTorch, into our buffer
  torch.cuda.synchronize()
  assert np.array_equal(t.numpy(), np.arange(1024, dtype=np.float32) * 2 + 1)


def test_from_torch_shares_device_memory():
  torch = _cuda_or_skip()
  y = torch.arange(4096, device="cuda", dtype=torch.float32)
  t = Tensor.from_dlpack(y)
  assert t.device == "CUDA" and t.dtype == "float32" and t.shape == (4096,)
  assert np.array_equal((t * 2).numpy(), np.arange(4096, dtype=np.float32) * 2)
  y.mul_(-1)  # PyTorch writes; our tensor is the same memory
  assert np.array_equal((t + 0).numpy(), -np.arange(4096, dtype=np.float32))
  del y  # the capsule keeps PyTorch's storage alive while our tensor lives
  assert float((t.sum()).item()) == float(-np.arange(4096).sum())


@pytest.mark.parametrize("name", ["float16", "bfloat16", "int64", "bool", "uint8"])
def test_round_trip_dtypes(name):
  torch = _cuda_or_skip()
  src = (torch.arange(256, device="cuda") % 7).to(getattr(torch, name))
  t = Tensor.from_dlpack(src)
  back = torch.from_dlpack(t)
  assert back.dtype == src.dtype and torch.equal(back, src)
  assert back.data_ptr() == src.data_ptr()  # no copy either way


if __name__ == "__main__":
  import sys
  sys.exit(pytest.main([__file__, "-q", "-rs"]))
