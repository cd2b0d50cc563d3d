"""Errors as Python exceptions (never an escaped C++ exception), Context and the engine's settings."""
import numpy as np
import pytest

import tinygrad_cpp
from tinygrad_cpp import Context, KernelCounter, Tensor, dtypes, getenv
from tinygrad_cpp._core import settings


def test_error_hierarchy():
  assert issubclass(tinygrad_cpp.Error, RuntimeError)
  assert issubclass(tinygrad_cpp.DeviceError, tinygrad_cpp.Error)
  assert issubclass(tinygrad_cpp.PluginLoadError, tinygrad_cpp.Error)
  assert issubclass(tinygrad_cpp.TensorError, ValueError)


@pytest.mark.parametrize("fn, shapes", [
    (lambda: Tensor.ones(2, 3) + Tensor.ones(4, 5), ["(2, 3)", "(4, 5)"]),
    (lambda: Tensor.ones(2, 3) @ Tensor.ones(4, 5), ["(2, 3)", "(4, 5)"]),
    (lambda: Tensor.ones(2, 3).reshape(4, 2), ["(2, 3)", "(4, 2)"]),
    (lambda: Tensor.ones(2, 3).expand(3, 3), ["(2, 3)", "(3, 3)"]),
    (lambda: Tensor.ones(2, 3).cat(Tensor.ones(3, 4), dim=0), ["(2, 3)", "(3, 4)"]),
    (lambda: Tensor.ones(2, 3).where(Tensor.ones(5), 0.0), ["(2, 3)", "(5,)"]),
])
def test_shape_mismatch_is_value_error_naming_the_shapes(fn, shapes):
  with pytest.raises(ValueError) as e:
    fn()
  for s in shapes: assert s in str(e.value), str(e.value)


@pytest.mark.parametrize("fn", [
    lambda: Tensor([1, 2], dtype="floaty"),
    lambda: Tensor([1, 2], dtype=3.5),
    lambda: Tensor.zeros(2, dtype="int4"),
    lambda: Tensor([1.0]).cast("nope"),
    lambda: Tensor(np.array(["a", "b"])),
    lambda: Tensor(np.array([1 + 2j])),
    lambda: Tensor([[1, 2], [3]]),
    lambda: Tensor({"a": 1}),
    lambda: Tensor([1.0], dtype=dtypes.bfloat16).numpy(),
])
def test_bad_dtype_or_data_is_type_or_value_error(fn):
  with pytest.raises((TypeError, ValueError)):
    fn()


@pytest.mark.parametrize("device", ["NOPE", "nope:3", "CPU:99"])
def test_unknown_device_is_runtime_error(device):
  with pytest.raises(RuntimeError) as e:
    Tensor([1, 2], device=device).realize()
  assert isinstance(e.value, tinygrad_cpp.Error), type(e.value)
  assert device.split(":")[0].lower() in str(e.value).lower()


def test_bad_plugin_path_is_plugin_load_error(tmp_path):
  with pytest.raises(tinygrad_cpp.PluginLoadError):
    tinygrad_cpp.load_plugin(tmp_path / "libtg_device_missing.so")
  junk = tmp_path / "libtg_device_junk.so"
  junk.write_bytes(b"not an elf file")
  with pytest.raises(tinygrad_cpp.PluginLoadError):
    tinygrad_cpp.load_plugin(junk)


LEAF = Tensor.ones(2, requires_grad=True)


@pytest.mark.parametrize("fn", [
    lambda: Tensor.ones(2, 3).permute(0, 0), lambda: Tensor.ones(2, 3).permute(0, 5),
    lambda: Tensor.ones(2, 3).sum(axis=4), lambda: Tensor.ones(2, 3).transpose(0, 7),
    lambda: Tensor.ones(2).reshape(-1, -1), lambda: Tensor.ones(2, 3).shrink(((0, 5), (0, 3))),
    lambda: Tensor.ones(2, 3).pad(((0, 0),)), lambda: Tensor.ones(3)[::0], lambda: Tensor.ones(3)[1.5],
    lambda: Tensor.ones(3)[True], lambda: Tensor.ones(3)[Tensor([0.5])],
    lambda: Tensor.ones(3)[Tensor([0]), Tensor([0])], lambda: Tensor.ones(2, 3).conv2d(Tensor.ones(3)),
    lambda: Tensor.ones(2, 3).one_hot(-1), lambda: Tensor.zeros(-1), lambda: (LEAF * 2).backward(),
    lambda: Tensor.arange(0, 5, 0), lambda: Tensor.ones(2, 3).squeeze(5), lambda: Tensor.ones(2).pad((1, 1), mode="bogus"),
    lambda: Tensor.ones(2, 2).gather(3, Tensor([[0]])), lambda: Tensor.eye(-2), lambda: Tensor.randint(3, low=5, high=2),
    lambda: Tensor.ones(4).max_pool2d(), lambda: len(Tensor(1.0)), lambda: Tensor.ones(2).reshape("a"),
    lambda: Tensor.ones(2).assign(Tensor.ones(3)), lambda: tinygrad_cpp.nn.optim.SGD([Tensor([1.0])], lr=-1),
])
def test_misuse_raises_python_exceptions(fn):
  # each is a clear Python exception; a C++ exception that escaped translation would be a bare
  # RuntimeError saying "Unknown internal error" / "Caught an unknown exception", or abort the process
  with pytest.raises((ValueError, TypeError, IndexError, RuntimeError)) as e:
    fn()
  assert type(e.value) is not RuntimeError or isinstance(e.value, tinygrad_cpp.Error), repr(e.value)
  assert "unknown exception" not in str(e.value).lower() and "internal error" not in str(e.value).lower()
  assert (Tensor([1, 2]) + 1).tolist() == [2, 3]  # and the library still works afterwards


def test_context_sets_and_restores_settings(capfd):
  assert settings.debug() == 0
  with Context(DEBUG=2, NOOPT=1):
    assert settings.debug() == 2 and settings.noopt() is True
    (Tensor.ones(7) * 3 + 1).realize()
  assert settings.debug() == 0 and settings.noopt() is False
  out = capfd.readouterr().out
  assert "realize: 1 kernel" in out and "*** CPU" in out, out
  (Tensor.ones(9) * 5).realize()
  assert capfd.readouterr().out == ""  # DEBUG=0 again: silent
  with pytest.raises(KeyError):
    Context(NOT_A_SETTING=1)


def test_context_restores_on_exception():
  with pytest.raises(ZeroDivisionError):
    with Context(DEBUG=1, BEAM=0):
      1 / 0
  assert settings.debug() == 0


def test_noopt_gives_the_same_values():
  x = Tensor.rand(33, 17).realize()
  with Context(NOOPT=1):
    a = (x @ x.T).numpy()
  b = (x @ x.T + 0).numpy()
  np.testing.assert_allclose(a, b, rtol=1e-5)


def test_getenv(monkeypatch):
  monkeypatch.setenv("TG_TEST_VALUE", "3")
  assert getenv("TG_TEST_VALUE") == 3 and getenv("TG_TEST_MISSING", 7) == 7 and getenv("TG_TEST_MISSING", "x") == "x"


def test_kernel_counter_counts_fused_and_stepwise_kernels():
  a, b = Tensor([-1.0, 2.0, -3.0, 4.0]).realize(), Tensor([3.0, -1.0, 1.0, -5.0]).realize()
  with KernelCounter() as fused:
    r = (a + b).relu().sum().realize()
  assert fused.kernel_count == 1 and r.item() == 3.0
  with KernelCounter() as steps:
    r2 = (a + b).realize().relu().realize().sum().realize()
  assert steps.kernel_count == 3 and r2.item() == 3.0
