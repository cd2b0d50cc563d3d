from tinygrad_cpp.nn import *  # noqa: F401,F403
