"""Tensor(...) from Python values and numpy arrays, the factories, dtypes and device strings."""
import numpy as np
import pytest

import tinygrad_cpp
from tinygrad_cpp import Device, Tensor, dtypes


@pytest.mark.parametrize("data, dtype, shape", [
    (1.5, dtypes.float32, ()),
    (3, dtypes.int32, ()),
    (True, dtypes.bool, ()),
    ([1.0, 2.0], dtypes.float32, (2,)),
    ([1, 2, 3], dtypes.int32, (3,)),
    ([[True, False]], dtypes.bool, (1, 2)),
    ([1, 2.5], dtypes.float32, (2,)),  # mixed ints and floats: float
    ((1, 2), dtypes.int32, (2,)),
])
def test_python_values_default_dtypes(data, dtype, shape):
  # tinygrad: Python floats -> float32 (default_float), ints -> int32 (default_int), bools -> bool
  t = Tensor(data)
  assert t.dtype == dtype and t.shape == shape
  np.testing.assert_array_equal(t.numpy(), np.array(data, dtype=t.dtype.np))


@pytest.mark.parametrize("np_dtype, dtype", [
    (np.float32, dtypes.float32), (np.float64, dtypes.float64), (np.float16, dtypes.float16),
    (np.int8, dtypes.int8), (np.uint8, dtypes.uint8), (np.int16, dtypes.int16), (np.int32, dtypes.int32),
    (np.int64, dtypes.int64), (np.uint32, dtypes.uint32), (np.bool_, dtypes.bool),
])
def test_numpy_arrays_keep_their_dtype(np_dtype, dtype):
  a = (np.arange(6).reshape(2, 3) % 2 == 1) if np_dtype is np.bool_ else np.arange(6, dtype=np_dtype).reshape(2, 3)
  t = Tensor(a)
  assert t.dtype == dtype and t.shape == (2, 3)
  assert t.numpy().dtype == a.dtype
  np.testing.assert_array_equal(t.numpy(), a)


def test_numpy_non_contiguous_and_readonly_arrays_are_copied_correctly():
  a = np.arange(24, dtype=np.float32).reshape(4, 6)
  np.testing.assert_array_equal(Tensor(a[:, ::2]).numpy(), a[:, ::2])
  np.testing.assert_array_equal(Tensor(a.T).numpy(), a.T)
  ro = np.arange(5, dtype=np.int32)
  ro.setflags(write=False)
  np.testing.assert_array_equal(Tensor(ro).numpy(), ro)


def test_numpy_scalars_are_0d_tensors_of_their_dtype():
  assert Tensor(np.float32(3.0)).dtype == dtypes.float32 and Tensor(np.float32(3.0)).shape == ()
  assert Tensor(np.int64(3)).dtype == dtypes.int64 and Tensor(np.int64(3)).item() == 3
  assert Tensor(np.bool_(True)).dtype == dtypes.bool
  assert Tensor(np.float64(2.5)).item() == 2.5
  assert (Tensor([1.0, 2.0]) * np.float32(2)).tolist() == [2.0, 4.0]
  assert (Tensor([4.0, 8.0]) / np.prod((2, 2))).tolist() == [1.0, 2.0]  # np.prod returns np.int64


def test_dtype_argument_forms():
  assert Tensor([1, 2], dtype=dtypes.float16).dtype == dtypes.float16
  assert Tensor([1, 2], dtype="float64").dtype == dtypes.float64
  assert Tensor([1, 2], dtype=np.int64).dtype == dtypes.int64
  assert Tensor(np.arange(3, dtype=np.int32), dtype=dtypes.float32).numpy().tolist() == [0.0, 1.0, 2.0]
  assert Tensor([1.7, -1.7], dtype=dtypes.int32).numpy().tolist() == [1, -1]  # truncation, as a C cast
  assert Tensor(7, dtype=dtypes.int64).item() == 7
  assert Tensor(2**40, dtype=dtypes.int64).item() == 2**40  # exact beyond float precision


def test_requires_grad_argument():
  assert Tensor([1.0], requires_grad=True).requires_grad is True
  assert Tensor([1.0], requires_grad=False).requires_grad is False
  assert Tensor([1.0]).requires_grad is None  # tinygrad's default: unset


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "rand", "randn"])
def test_factory_shapes_as_varargs_or_tuples(name):
  f = getattr(Tensor, name)
  for t in (f(2, 3), f((2, 3)), f([2, 3])):
    assert t.shape == (2, 3) and t.dtype == dtypes.float32
  assert f(4, dtype=dtypes.float16).dtype == dtypes.float16
  assert f(()).shape == ()


def test_factory_values():
  np.testing.assert_array_equal(Tensor.zeros(2, 2).numpy(), np.zeros((2, 2), np.float32))
  np.testing.assert_array_equal(Tensor.ones(3, dtype=dtypes.int32).numpy(), np.ones(3, np.int32))
  full = Tensor.full((2, 3), 7)
  assert full.dtype == dtypes.int32 and full.numpy().tolist() == [[7] * 3] * 2
  assert Tensor.full((2,), 2.5).numpy().tolist() == [2.5, 2.5]
  assert Tensor.full((2,), True).dtype == dtypes.bool
  np.testing.assert_array_equal(Tensor.eye(3).numpy(), np.eye(3, dtype=np.float32))
  np.testing.assert_array_equal(Tensor.eye(2, 3).numpy(), np.eye(2, 3, dtype=np.float32))
  np.testing.assert_allclose(Tensor.linspace(0, 1, 5).numpy(), np.linspace(0, 1, 5, dtype=np.float32))
  np.testing.assert_allclose(Tensor.linspace(-2, 3, 7).numpy(), np.linspace(-2, 3, 7), rtol=1e-6)
  assert Tensor.zeros(3).zeros_like().shape == (3,)
  assert Tensor.ones(2, 2).full_like(4).numpy().tolist() == [[4, 4], [4, 4]]


@pytest.mark.parametrize("args, kwargs", [
    ((5,), {}), ((2, 8), {}), ((2, 9, 3), {}), ((5, 0, -1), {}), ((0, 1, 0.25), {}), ((1.5, 4.0), {}),
    ((-3, 3, 2), {}), ((4,), {"dtype": dtypes.float32}),
])
def test_arange_matches_numpy(args, kwargs):
  t = Tensor.arange(*args, **kwargs)
  want = np.arange(*args)
  np.testing.assert_allclose(t.numpy(), want, rtol=1e-6)
  if all(isinstance(a, int) for a in args) and not kwargs: assert t.dtype == dtypes.int32
  else: assert t.dtype == dtypes.float32


def test_random_ranges_and_dtypes():
  Tensor.manual_seed(0)
  r = Tensor.rand(1000).numpy()
  assert r.dtype == np.float32 and r.min() >= 0 and r.max() < 1 and 0.4 < r.mean() < 0.6
  n = Tensor.randn(4000).numpy()
  assert abs(n.mean()) < 0.1 and 0.9 < n.std() < 1.1
  u = Tensor.uniform(1000, low=-3, high=-1).numpy()
  assert u.min() >= -3 and u.max() < -1
  ri = Tensor.randint(1000, low=2, high=5)
  assert ri.dtype == dtypes.int32
  assert set(ri.numpy().tolist()) == {2, 3, 4}
  assert Tensor.randint((3, 4), high=10).shape == (3, 4)


def test_manual_seed_reproducibility():
  def draw():
    return Tensor.rand(2, 3).numpy(), Tensor.randn(5).numpy(), Tensor.randint(6, high=100).numpy()
  Tensor.manual_seed(42)
  a = draw()
  Tensor.manual_seed(42)
  b = draw()
  Tensor.manual_seed(43)
  c = draw()
  for x, y in zip(a, b): np.testing.assert_array_equal(x, y)
  assert not np.array_equal(a[0], c[0])
  assert not np.array_equal(a[0], draw()[0])  # no reseed: the stream advances


def test_dtypes_namespace():
  assert dtypes.float32 == dtypes.float and dtypes.float64 == dtypes.double and dtypes.float16 == dtypes.half
  assert dtypes.default_float == dtypes.float32 and dtypes.default_int == dtypes.int32
  assert dtypes.float32.itemsize == 4 and dtypes.int64.itemsize == 8 and dtypes.bool.itemsize == 1
  assert dtypes.is_float(dtypes.float16) and not dtypes.is_float(dtypes.int8)
  assert dtypes.is_int(dtypes.uint8) and dtypes.is_unsigned(dtypes.uint8) and not dtypes.is_unsigned(dtypes.int8)
  assert dtypes.from_np(np.float16) == dtypes.float16 and dtypes.from_np(np.int64) == dtypes.int64
  assert dtypes.least_upper_dtype(dtypes.int32, dtypes.float16) == dtypes.float16
  assert dtypes.int32.np == np.int32 and dtypes.bfloat16.np is None
  assert len({dtypes.float32, dtypes.float, dtypes.int32}) == 2  # hashable, equal ones hash equal
  assert dtypes.float32 in dtypes.all()


def test_promotion_rules():
  i = Tensor.arange(3)
  assert (i + 1).dtype == dtypes.int32  # a Python int keeps the tensor's dtype
  assert (i * 2.5).dtype == dtypes.float32  # a Python float makes it float
  assert (i + Tensor.ones(3, dtype=dtypes.float16)).dtype == dtypes.float16
  assert (Tensor.ones(2, dtype=dtypes.float16) * 2.5).dtype == dtypes.float16
  assert (Tensor([1, 2], dtype=dtypes.int8) + Tensor([1, 2], dtype=dtypes.int32)).dtype == dtypes.int32
  assert (Tensor([True]) + 1).dtype == dtypes.int32


def test_device_default_and_canonical_names():
  assert Device.DEFAULT == "CPU"
  assert Tensor([1]).device == "CPU"
  for name in ("CPU", "cpu", "CPU:0", "cpu:0"):
    t = Tensor([1, 2], device=name)
    assert t.device == "CPU", name
    assert Device.canonicalize(name) == "CPU"
    assert Tensor([3]).to(name).device == "CPU"
  assert Device.canonicalize(None) == "CPU"
  assert "CPU" in tinygrad_cpp.devices()
  props = Device["CPU"]
  assert props["plugin"] == "cpu" and props["host_memory"] is True


def test_default_device_can_be_set():
  Device.DEFAULT = "cpu"
  assert Device.DEFAULT == "CPU" and Tensor.zeros(2).device == "CPU"


def test_to_moves_between_cpu_devices():
  if "CPU:1" not in tinygrad_cpp.devices(): pytest.skip("skipped: unavailable (no second CPU device)")
  t = Tensor([1.0, 2.0, 3.0])
  u = t.to("cpu:1")
  assert u.device == "CPU:1" and t.device == "CPU"
  assert (u * 2).numpy().tolist() == [2.0, 4.0, 6.0]
  assert u.to("CPU").numpy().tolist() == [1.0, 2.0, 3.0]


def test_realize_returns_self_and_reading():
  t = Tensor([[1, 2], [3, 4]]) * 2
  assert t.realize() is t
  assert t.tolist() == [[2, 4], [6, 8]]
  assert Tensor(3.5).item() == 3.5 and isinstance(Tensor(3).item(), int) and Tensor(True).item() is True
  assert Tensor([[7.0]]).item() == 7.0
  with pytest.raises(ValueError):
    Tensor([1, 2]).item()
  assert Tensor.arange(5).shape == (5,) and Tensor.ones(2, 3).ndim == 2 and Tensor.ones(2, 3).numel() == 6
  assert len(Tensor.ones(4, 2)) == 4
  assert repr(Tensor([1, 2])) == "<Tensor (2,) int CPU>"
  assert Tensor([1.0], dtype=dtypes.bfloat16).tolist() == [1.0]  # through float32 (numpy has no bfloat16)


def test_truth_value_is_ambiguous():
  with pytest.raises(TypeError):
    bool(Tensor([1, 2]))
