"""What needs a process of its own: the `tinygrad` shim, the out-of-tree MY plugin, Ctrl-C."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import tinygrad_cpp
from tinygrad_cpp import Tensor

from conftest import child_env, run_python


def test_shim_makes_tinygrad_names_resolve_to_tinygrad_cpp():
  code = textwrap.dedent("""
    import tinygrad_cpp
    tinygrad_cpp.install_shim()
    from tinygrad import Tensor, nn, dtypes, Device, TinyJit
    from tinygrad.nn.state import get_parameters, safe_save, safe_load
    from tinygrad.nn.optim import Adam
    from tinygrad.helpers import Context, getenv
    from tinygrad.engine.jit import TinyJit as JitFromEngine
    import tinygrad
    assert Tensor is tinygrad_cpp.Tensor and nn is tinygrad_cpp.nn and JitFromEngine is tinygrad_cpp.TinyJit
    assert tinygrad.__file__.startswith(tinygrad_cpp.shim_path()), tinygrad.__file__
    model = nn.Linear(2, 1)
    assert len(get_parameters(model)) == 2 and Adam(get_parameters(model)).params
    print((Tensor([1, 2]) + 1).tolist(), Device.DEFAULT)
  """)
  r = run_python(["-c", code])
  assert r.returncode == 0, r.stderr
  assert r.stdout.strip() == "[2, 3] CPU"


def test_shim_refuses_to_replace_a_real_tinygrad(tmp_path):
  fake = tmp_path / "tinygrad"
  fake.mkdir()
  (fake / "__init__.py").write_text("REAL = True\n")
  code = "import tinygrad, tinygrad_cpp\ntry:\n  tinygrad_cpp.install_shim()\nexcept RuntimeError as e:\n  print('refused:', e)\n"
  env = child_env()
  env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env["PYTHONPATH"]])
  r = run_python(["-c", code], env=env)
  assert r.returncode == 0 and r.stdout.startswith("refused:"), (r.stdout, r.stderr)


def test_shim_path_on_pythonpath():
  env = child_env()
  env["PYTHONPATH"] = os.pathsep.join([tinygrad_cpp.shim_path(), env["PYTHONPATH"]])
  r = run_python(["-c", "from tinygrad import Tensor; import tinygrad_cpp; print(Tensor is tinygrad_cpp.Tensor)"], env=env)
  assert r.returncode == 0 and r.stdout.strip() == "True", r.stderr


def my_plugin_path() -> str:
  path = os.environ.get("TG_MY_PLUGIN", "")
  if not path: pytest.skip("skipped: unavailable (TG_MY_PLUGIN is not set; ctest sets it to the built libtg_device_my.so)")
  if not os.path.isfile(path): pytest.skip(f"skipped: unavailable (TG_MY_PLUGIN={path} does not exist)")
  return path


def test_out_of_tree_plugin_my():
  path = my_plugin_path()
  name = tinygrad_cpp.load_plugin(path)
  assert name == "my"
  assert "MY" in tinygrad_cpp.devices()
  a, b = Tensor([1, 2, 3], device="MY"), Tensor([4, 5, 6], device="MY")
  out = a + b
  assert out.device == "MY"
  assert out.numpy().tolist() == [5, 7, 9]
  # and across devices: computed on MY, compared with the same on CPU
  x = Tensor.arange(12, dtype=tinygrad_cpp.dtypes.float32).reshape(3, 4)
  on_my = (x.to("MY") @ x.T.to("MY")).relu().to("CPU").numpy()
  assert on_my.tolist() == (x @ x.T).relu().numpy().tolist()


def test_ctrl_c_raises_keyboard_interrupt_from_inside_a_realize(tmp_path):
  # A long realize (a chain of big matmuls scheduled as one realize): SIGINT lands while the C++
  # engine runs kernels; the next kernel boundary raises KeyboardInterrupt in Python.
  code = textwrap.dedent("""
    import sys, time
    from tinygrad_cpp import Tensor
    x = Tensor.rand(768, 768).realize()
    y = x
    for _ in range(300): y = (y @ x) * 0.001
    print("realizing", flush=True)
    t0 = time.time()
    y.realize()
    print("finished without interruption after", time.time() - t0, flush=True)
  """)
  script = tmp_path / "child.py"  # a file, so the traceback shows the line
  script.write_text(code)
  p = subprocess.Popen([sys.executable, str(script)], env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
  try:
    assert p.stdout.readline().strip() == "realizing"
    time.sleep(1.0)
    start = time.time()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    latency = time.time() - start
  finally:
    if p.poll() is None: p.kill()
  assert "finished without interruption" not in out, out
  assert "KeyboardInterrupt" in err, err
  assert "y.realize()" in err  # raised from the realize call, with its traceback
  # Python ends an uncaught KeyboardInterrupt by SIGINT (or exit status 130 / 1); never SIGABRT/SIGSEGV
  assert p.returncode in (-signal.SIGINT, 130, 1), (p.returncode, err)
  assert "Fatal Python error" not in err and "terminate called" not in err
  assert latency < 20, latency


def test_ctrl_c_leaves_the_library_usable(tmp_path):
  # The SIGINT comes from outside (as a terminal's Ctrl-C does): a timer thread in the child could not
  # send it while the realize holds the GIL.
  code = textwrap.dedent("""
    from tinygrad_cpp import Tensor
    x = Tensor.rand(768, 768).realize()
    y = x
    for _ in range(300): y = (y @ x) * 0.001
    print("realizing", flush=True)
    try:
      y.realize()
      print("not interrupted")
    except KeyboardInterrupt:
      print("interrupted")
    print((Tensor([1, 2, 3]) * 2).tolist(), (Tensor.rand(64, 64) @ Tensor.ones(64, 1)).shape)
  """)
  script = tmp_path / "child.py"
  script.write_text(code)
  p = subprocess.Popen([sys.executable, str(script)], env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
  try:
    assert p.stdout.readline().strip() == "realizing"
    time.sleep(1.0)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
  finally:
    if p.poll() is None: p.kill()
  assert p.returncode == 0, err
  assert out.split("\n")[:2] == ["interrupted", "[2, 4, 6] (64, 1)"], (out, err)
