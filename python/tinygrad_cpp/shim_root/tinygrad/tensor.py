from tinygrad_cpp.tensor import Tensor  # noqa: F401
