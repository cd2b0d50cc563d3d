from tinygrad_cpp.dtype import dtypes, DType  # noqa: F401
