// What the binding files share: conversions between Python values and the core's types.
// The bindings only translate; every operation is the C++ core's.
#pragma once

#include <tinygrad/tinygrad.hpp>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>

namespace tgpy {

namespace py = pybind11;

// A DType from a DType, a name ("float32", "int", "half"), a numpy dtype or a numpy scalar type.
// None gives `fallback`. Throws py::type_error naming what was given.
tg::DType to_dtype(py::handle h);
std::optional<tg::DType> to_dtype_or_none(py::handle h);
// The numpy dtype of a DType; throws py::type_error for bfloat16 (numpy has none).
py::dtype numpy_dtype(tg::DType dt);
// A DType for a numpy dtype; throws py::type_error for dtypes the core lacks.
tg::DType dtype_of_numpy(const py::dtype& dt);

// "" for None, else the canonical name of str(h) ("cpu" -> "CPU").
std::string to_device(py::handle h);

// Shapes and axes as tinygrad takes them: f(2, 3), f((2, 3)) or f([2, 3]).
tg::Dims dims_from_args(const py::args& args, const char* what);
tg::Dims dims_from(py::handle h, const char* what);
// None -> {} (all axes), an int -> {axis}, a tuple/list -> the axes.
tg::Axes axes_from(py::handle h);

// A tensor from any value Tensor(...) accepts: a Tensor, numpy array, list/tuple, scalar, bytes.
tg::Tensor tensor_from(py::handle data, std::optional<tg::DType> dtype, const std::string& device);
// An operand of a binary op: a Tensor, or a Python number as a weak scalar of `like`.
tg::Tensor operand(const tg::Tensor& like, py::handle other);

// The host copy of a tensor as a numpy array: shares the tensor's memory when its device keeps
// buffers in host memory and its plugin gives addresses, else one copy.
py::array to_numpy(const tg::Tensor& t);

// Each binds one part of the module.
void bind_dtypes(py::module_& m);
void bind_errors(py::module_& m);
void bind_tensor(py::module_& m);
void bind_dlpack(py::class_<tg::Tensor>& cls);
void bind_runtime(py::module_& m);
void bind_training(py::module_& m);

// Installs the Ctrl-C check for the C++ work of one binding call (tg::InterruptCheck): a pending
// SIGINT raises KeyboardInterrupt at the next kernel.
class InterruptScope {
public:
  InterruptScope();

private:
  tg::InterruptCheck check_;
};

} // namespace tgpy
