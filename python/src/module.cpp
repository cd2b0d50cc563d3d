// tinygrad_cpp._core: the Python bindings' one extension module (the package around it is
// python/tinygrad_cpp/).
#include "bindings.hpp"

PYBIND11_MODULE(_core, m) {
  m.doc() = "tinygrad.cpp's C++ core, with tinygrad's Python API";
  tgpy::bind_errors(m);
  tgpy::bind_dtypes(m);
  tgpy::bind_tensor(m);
  tgpy::bind_runtime(m);
  tgpy::bind_training(m);
}
