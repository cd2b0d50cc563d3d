from tinygrad_cpp.device import Device  # noqa: F401
