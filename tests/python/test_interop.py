"""Memory shared with numpy and torch: zero-copy Tensor(np_array), .numpy() views, DLPack both ways."""
import numpy as np
import pytest

from tinygrad_cpp import Device, Tensor, dtypes

from conftest import aligned_empty

CPU_ALIGNMENT = 64  # plugins/cpu/buffer.hpp kBufferAlignment: imported host memory must start on it


def test_cpu_device_keeps_host_memory():
  assert Device["CPU"]["host_memory"] is True


def test_tensor_from_aligned_numpy_shares_memory():
  a = aligned_empty((2, 4), np.float32, CPU_ALIGNMENT)
  a[:] = np.arange(8).reshape(2, 4)
  t = Tensor(a)
  a[0, 0] = 100.0  # after construction: the tensor sees it
  a[1, 3] = -1.0
  assert t.numpy()[0, 0] == 100.0 and t.numpy()[1, 3] == -1.0
  assert (t + 1).numpy()[0, 0] == 101.0
  assert np.shares_memory(t.numpy(), a)


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.uint8, np.bool_])
def test_zero_copy_other_dtypes(dtype):
  a = aligned_empty((16,), dtype, CPU_ALIGNMENT)
  a[:] = 0
  t = Tensor(a)
  a[3] = 1
  assert t.numpy()[3] == 1


def test_the_array_outlives_its_python_name():
  a = aligned_empty((1000,), np.float32, CPU_ALIGNMENT)
  a[:] = 7.0
  t = Tensor(a)
  del a  # the tensor holds a reference to the array's memory
  import gc
  gc.collect()
  assert t.sum().item() == 7000.0


def test_unaligned_or_strided_or_readonly_arrays_are_copied():
  base = aligned_empty((17,), np.float32, CPU_ALIGNMENT)
  base[:] = np.arange(17)
  unaligned = base[1:]  # 4 bytes past a 64-byte boundary
  t = Tensor(unaligned)
  unaligned[0] = 99.0
  assert t.numpy()[0] == 1.0  # a copy: unchanged
  strided = base[::2]
  t2 = Tensor(strided)
  strided[1] = 55.0
  assert t2.numpy()[1] == 2.0
  ro = aligned_empty((4,), np.float32, CPU_ALIGNMENT)
  ro[:] = 1.0
  ro.setflags(write=False)
  np.testing.assert_array_equal(Tensor(ro).numpy(), ro)


def test_numpy_of_realized_tensor_is_a_readonly_view_on_a_capsule():
  t = (Tensor([1.0, 2.0, 3.0]) * 2).realize()
  n1, n2 = t.numpy(), t.numpy()
  assert np.shares_memory(n1, n2)  # no copy: both read the tensor's buffer
  assert not n1.flags.writeable
  with pytest.raises(ValueError):
    n1[0] = 5.0
  chain, base = [], n1
  while base is not None:
    chain.append(type(base).__name__)
    base = getattr(base, "base", None)
  assert "PyCapsule" in chain, chain
  np.testing.assert_array_equal(n1, [2.0, 4.0, 6.0])


def test_numpy_view_keeps_the_buffer_alive():
  t = (Tensor.arange(1000) * 3).realize()
  view = t.numpy()
  del t
  import gc
  gc.collect()
  assert view[999] == 2997 and view.sum() == 3 * 999 * 1000 // 2


def test_numpy_of_unrealized_tensor_realizes_it():
  t = Tensor.arange(6).reshape(2, 3) + 10
  n = t.numpy()
  assert n.dtype == np.int32 and n.shape == (2, 3) and n.tolist() == [[10, 11, 12], [13, 14, 15]]


torch = pytest.importorskip("torch")

TORCH_DTYPES = [(torch.float32, dtypes.float32), (torch.int64, dtypes.int64), (torch.float16, dtypes.float16),
                (torch.uint8, dtypes.uint8), (torch.int32, dtypes.int32), (torch.float64, dtypes.float64)]


@pytest.mark.parametrize("tdt, dt", TORCH_DTYPES)
def test_torch_from_dlpack_shares_memory(tdt, dt):
  t = (Tensor([1, 2, 3], dtype=dt) * 2).realize()
  tt = torch.from_dlpack(t)
  assert tt.dtype == tdt and tt.tolist() == [2, 4, 6]
  tt[0] = 42  # the same memory: the tensor sees torch's write
  assert t.tolist()[0] == 42


@pytest.mark.parametrize("tdt, dt", TORCH_DTYPES)
def test_tensor_from_dlpack_of_torch_shares_memory(tdt, dt):
  src = torch.tensor([1, 0, 3], dtype=tdt)
  t = Tensor.from_dlpack(src)
  assert t.dtype == dt and t.shape == (3,)
  src[1] = 9
  assert t.tolist() == [1, 9, 3]
  assert (t + 1).tolist() == [2, 10, 4]


def test_dlpack_bool():
  # torch 1.13 and numpy 1.24 speak DLPack 0.6, which has no bool: both reject it cleanly; our own
  # capsule (kDLBool, DLPack >= 0.8) round-trips.
  t = Tensor([True, False, True]).realize()
  u = Tensor.from_dlpack(t)
  assert u.dtype == dtypes.bool and u.tolist() == [True, False, True]
  with pytest.raises((RuntimeError, TypeError, BufferError)):
    torch.from_dlpack(t)
  with pytest.raises((RuntimeError, TypeError)):
    Tensor.from_dlpack(torch.tensor([True, False]))


def test_dlpack_shapes_and_non_contiguous_sources():
  src = torch.arange(12, dtype=torch.float32).reshape(3, 4)
  t = Tensor.from_dlpack(src)
  assert t.shape == (3, 4) and t[2, 1].item() == 9.0
  with pytest.raises(ValueError):
    Tensor.from_dlpack(src.T)  # not row-major: refused, not silently wrong
  assert Tensor.from_dlpack(src.T.contiguous()).tolist() == src.T.tolist()
  scalar = torch.from_dlpack((Tensor(3.0) + 1).realize())
  assert scalar.shape == () and scalar.item() == 4.0
  assert tuple(torch.from_dlpack(Tensor.ones(2, 0, 3).realize()).shape) == (2, 0, 3)


def test_tensor_constructor_accepts_dlpack_objects():
  src = torch.tensor([1.5, 2.5])
  t = Tensor(src)
  assert t.dtype == dtypes.float32 and t.tolist() == [1.5, 2.5]


def test_numpy_from_dlpack():
  if not hasattr(np, "from_dlpack"): pytest.skip("skipped: unavailable (numpy without from_dlpack)")
  t = (Tensor([1.0, 2.0, 3.0]) + 0).realize()
  a = np.from_dlpack(t)
  np.testing.assert_array_equal(a, [1.0, 2.0, 3.0])
  assert np.shares_memory(a, t.numpy())
  b = np.arange(4.0)
  u = Tensor.from_dlpack(b)
  assert u.dtype == dtypes.float64 and u.tolist() == [0.0, 1.0, 2.0, 3.0]
