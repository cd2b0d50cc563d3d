from tinygrad_cpp.jit import TinyJit  # noqa: F401
