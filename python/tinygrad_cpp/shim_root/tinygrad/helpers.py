from tinygrad_cpp.helpers import Context, getenv  # noqa: F401
