"""tinygrad_cpp.onnx.OnnxRunner: models built here with onnx.helper (Debian's python3-onnx), values
against numpy, replays from the third call, and the typed errors for bad models and inputs."""
import textwrap

import numpy as np
import pytest

from tinygrad_cpp import Tensor

from conftest import assert_close, run_python

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from tinygrad_cpp.onnx import OnnxError, OnnxRunner, OnnxUnsupportedError  # noqa: E402

W = np.array([[1, -1], [2, 0.5], [-3, 1]], np.float32)
B = np.array([0.5, -0.5], np.float32)


def linear_relu(op="Relu"):
  """y = relu(x @ W + B), x (N, 3) with N named."""
  g = helper.make_graph(
      [helper.make_node("MatMul", ["x", "W"], ["xw"]), helper.make_node("Add", ["xw", "B"], ["z"]),
       helper.make_node(op, ["z"], ["y"])], "g",
      [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
      [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 2])],
      [numpy_helper.from_array(W, "W"), numpy_helper.from_array(B, "B")])
  m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
  m.ir_version = 8
  return m


def test_runs_from_a_path_bytes_or_proto_and_replays(tmp_path):
  path = tmp_path / "m.onnx"
  onnx.save(linear_relu(), str(path))
  rng = np.random.default_rng(3)
  for model in (str(path), path, path.read_bytes(), linear_relu()):
    run = OnnxRunner(model)
    assert run.inputs == [("x", "FLOAT", ("N", 3))]
    assert run.outputs == [("y", "FLOAT", ("N", 2))]
    assert run.opset() == 13
    spec = run.graph_inputs["x"]
    assert spec.shape == ("N", 3) and spec.dtype == "float32" and spec.onnx_dtype == "FLOAT"
    for i in range(4):
      x = rng.standard_normal((5, 3)).astype(np.float32)
      y = run({"x": x if i % 2 else Tensor(x)})["y"]
      assert_close(y, np.maximum(x @ W + B, 0), rtol=1e-6, atol=1e-6)
    assert run.replays == 2  # calls 3 and 4
  eager = OnnxRunner(path, replay=False)
  for _ in range(3):
    assert_close(eager({"x": np.ones((1, 3), np.float32)})["y"], [[0.5, 0.0]], rtol=0, atol=0)
  assert eager.replays == 0


def test_bad_inputs_and_models_raise_typed_errors(tmp_path):
  run = OnnxRunner(linear_relu())
  with pytest.raises(OnnxError, match=r"input 'x'.*\(N, 3\).*\(2, 4\)"):
    run({"x": np.zeros((2, 4), np.float32)})
  with pytest.raises(OnnxError, match="input 'x' must be FLOAT"):
    run({"x": np.zeros((2, 3), np.int32)})
  with pytest.raises(OnnxError, match="no input named 'q'"):
    run({"x": np.zeros((1, 3), np.float32), "q": np.zeros(1, np.float32)})
  with pytest.raises(OnnxUnsupportedError, match="FancyOp"):
    OnnxRunner(linear_relu("FancyOp"))({"x": np.zeros((1, 3), np.float32)})
  with pytest.raises(OnnxError, match="not a valid ONNX model"):
    OnnxRunner(b"garbage, not a protobuf")
  with pytest.raises(OnnxError, match="cannot open"):
    OnnxRunner(tmp_path / "missing.onnx")
  assert issubclass(OnnxError, RuntimeError)


def test_a_tinygrad_onnx_script_runs_through_the_shim(tmp_path):
  path = tmp_path / "m.onnx"
  onnx.save(linear_relu(), str(path))
  code = textwrap.dedent(f"""
    import numpy as np, tinygrad_cpp
    tinygrad_cpp.install_shim()
    from tinygrad import Tensor
    from tinygrad.frontend.onnx import OnnxRunner, onnx_load
    run_onnx = OnnxRunner(onnx_load({str(path)!r}))
    out = run_onnx({{"x": Tensor([[1.0, 1.0, 1.0]])}}, debug=False)
    print(list(run_onnx.graph_inputs), out["y"].tolist())
  """)
  r = run_python(["-c", code])
  assert r.returncode == 0, r.stderr
  assert r.stdout.strip() == "['x'] [[0.5, 0.0]]"
