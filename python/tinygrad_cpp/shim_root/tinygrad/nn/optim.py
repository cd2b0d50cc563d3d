from tinygrad_cpp.nn.optim import *  # noqa: F401,F403
