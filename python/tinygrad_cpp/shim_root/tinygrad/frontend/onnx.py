from tinygrad_cpp.onnx import OnnxRunner, onnx_load  # noqa: F401
