// Python values <-> the core's types (bindings.hpp).
#include "bindings.hpp"

#include <Python.h>

#include <algorithm>
#include <cstring>

namespace tgpy {

tg::DType to_dtype(py::handle h) {
  if (py::isinstance<tg::DType>(h)) return h.cast<tg::DType>();
  if (py::isinstance<py::str>(h)) {
    std::string name = h.cast<std::string>();
    if (name.rfind("dtypes.", 0) == 0) name = name.substr(7);
    if (auto dt = tg::dtype_from_name(name)) return *dt;
    throw py::type_error("unknown dtype name '" + name + "'");
  }
  if (py::isinstance<py::dtype>(h)) return dtype_of_numpy(h.cast<py::dtype>());
  if (py::isinstance<py::type>(h)) { // numpy scalar types (np.float32), and bool/int/float
    if (h.ptr() == reinterpret_cast<PyObject*>(&PyBool_Type)) return tg::dtypes::bool_;
    if (h.ptr() == reinterpret_cast<PyObject*>(&PyLong_Type)) return tg::dtypes::default_int;
    if (h.ptr() == reinterpret_cast<PyObject*>(&PyFloat_Type)) return tg::dtypes::default_float;
    return dtype_of_numpy(py::dtype::from_args(py::reinterpret_borrow<py::object>(h)));
  }
  throw py::type_error("expected a dtype (tinygrad_cpp.dtypes.float32, a name or a numpy dtype), got " +
                       std::string(py::str(py::type::of(h).attr("__name__"))));
}

std::optional<tg::DType> to_dtype_or_none(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return to_dtype(h);
}

py::dtype numpy_dtype(tg::DType dt) {
  using S = tg::Scalar;
  switch (dt.scalar) {
  case S::Bool:
    return py::dtype("bool");
  case S::Int8:
    return py::dtype("int8");
  case S::UInt8:
    return py::dtype("uint8");
  case S::Int16:
    return py::dtype("int16");
  case S::UInt16:
    return py::dtype("uint16");
  case S::Int32:
    return py::dtype("int32");
  case S::UInt32:
    return py::dtype("uint32");
  case S::Int64:
    return py::dtype("int64");
  case S::UInt64:
    return py::dtype("uint64");
  case S::Float16:
    return py::dtype("float16");
  case S::Float32:
    return py::dtype("float32");
  case S::Float64:
    return py::dtype("float64");
  default:
    break;
  }
  throw py::type_error("numpy has no dtype for " + dt.repr() + ": cast the tensor first (e.g. .float())");
}

tg::DType dtype_of_numpy(const py::dtype& dt) {
  // Through Python attributes: pybind11 2.10 reads itemsize from the descriptor struct, whose layout
  // numpy 2 changed (it would read 0 there).
  char kind = dt.attr("kind").cast<std::string>().at(0);
  auto size = dt.attr("itemsize").cast<int64_t>();
  namespace d = tg::dtypes;
  if (kind == 'b') return d::bool_;
  if (kind == 'f' && size == 2) return d::float16;
  if (kind == 'f' && size == 4) return d::float32;
  if (kind == 'f' && size == 8) return d::float64;
  if (kind == 'i' && size == 1) return d::int8;
  if (kind == 'i' && size == 2) return d::int16;
  if (kind == 'i' && size == 4) return d::int32;
  if (kind == 'i' && size == 8) return d::int64;
  if (kind == 'u' && size == 1) return d::uint8;
  if (kind == 'u' && size == 2) return d::uint16;
  if (kind == 'u' && size == 4) return d::uint32;
  if (kind == 'u' && size == 8) return d::uint64;
  throw py::type_error("numpy dtype " + std::string(py::str(py::handle(dt))) + " has no tinygrad_cpp dtype");
}

std::string to_device(py::handle h) {
  if (h.is_none()) return {};
  if (!py::isinstance<py::str>(h)) throw py::type_error("a device is a string such as \"CPU\" or \"CUDA:1\"");
  return tg::parse_device_name(h.cast<std::string>()).canonical();
}

namespace {
int64_t to_int(py::handle h, const char* what) {
  if (py::isinstance<py::bool_>(h) || !(py::isinstance<py::int_>(h) || py::hasattr(h, "__index__")))
    throw py::type_error(std::string(what) + ": expected integers, got " +
                         std::string(py::str(py::type::of(h).attr("__name__"))));
  PyObject* as_int = PyNumber_Index(h.ptr());
  if (!as_int) throw py::error_already_set(); // an __index__ that raised
  return py::reinterpret_steal<py::object>(as_int).cast<int64_t>();
}
} // namespace

tg::Dims dims_from(py::handle h, const char* what) {
  tg::Dims out;
  if (py::isinstance<py::tuple>(h) || py::isinstance<py::list>(h)) {
    for (auto x : h) out.push_back(to_int(x, what));
  } else {
    out.push_back(to_int(h, what));
  }
  return out;
}

tg::Dims dims_from_args(const py::args& args, const char* what) {
  if (args.size() == 1 && (py::isinstance<py::tuple>(args[0]) || py::isinstance<py::list>(args[0])))
    return dims_from(args[0], what);
  tg::Dims out;
  for (auto x : args) out.push_back(to_int(x, what));
  return out;
}

tg::Axes axes_from(py::handle h) {
  if (h.is_none()) return {};
  return dims_from(h, "axis");
}

namespace {

// An array's size in bytes, numpy 1 and 2 alike (see dtype_of_numpy).
size_t nbytes(const py::array& a) { return size_t(a.size()) * a.attr("itemsize").cast<size_t>(); }

// Keeps a Python object alive until the core frees the buffer made over its memory; the core may
// free it on any thread, and after the interpreter has gone.
std::function<void()> python_reference(py::handle obj) {
  PyObject* p = obj.ptr();
  Py_INCREF(p);
  return [p] {
    if (!Py_IsInitialized()) return;
    py::gil_scoped_acquire gil;
    Py_DECREF(p);
  };
}

tg::Tensor from_numpy(py::array arr, std::optional<tg::DType> dtype, const std::string& device) {
  tg::DType have = dtype_of_numpy(arr.dtype());
  tg::Dims shape(arr.shape(), arr.shape() + arr.ndim());
  bool c_contiguous = (arr.flags() & py::array::c_style) != 0;
  std::string dev = device.empty() ? tg::default_device() : device;
  // Zero-copy over the array's memory where the device keeps host memory and can import it; the
  // tensor then shares memory with the array (as torch.from_numpy does).
  if (c_contiguous && arr.writeable() && arr.size() > 0) {
    auto address = reinterpret_cast<uint64_t>(arr.data());
    if (auto t = tg::tensor_from_memory(address, shape, have, dev, python_reference(arr)))
      return dtype && *dtype != have ? t->cast(*dtype) : *t;
  }
  py::array c = py::array::ensure(arr, py::array::c_style);
  auto bytes = std::span<const std::byte>(static_cast<const std::byte*>(c.data()), nbytes(c));
  tg::Tensor t = tg::Tensor::from_bytes(bytes, shape, have, dev);
  return dtype && *dtype != have ? t.cast(*dtype) : t;
}

} // namespace

tg::Tensor tensor_from(py::handle data, std::optional<tg::DType> dtype, const std::string& device) {
  namespace d = tg::dtypes;
  if (py::isinstance<tg::Tensor>(data)) {
    tg::Tensor t = data.cast<tg::Tensor>();
    if (!device.empty()) t = t.to(device);
    return dtype ? t.cast(*dtype) : t;
  }
  if (py::isinstance<py::bool_>(data))
    return tg::Tensor::full({}, data.cast<bool>() ? 1 : 0, dtype.value_or(d::bool_), device);
  if (py::isinstance<py::int_>(data)) {
    tg::DType dt = dtype.value_or(d::default_int);
    if (dt.is_int()) { // exact for any int64, which a double would round
      int64_t v = data.cast<int64_t>();
      return tg::Tensor::from_bytes(std::as_bytes(std::span<const int64_t>(&v, 1)), {}, d::int64, device)
          .cast(dt);
    }
    return tg::Tensor::full({}, data.cast<double>(), dt, device);
  }
  if (py::isinstance<py::float_>(data))
    return tg::Tensor::full({}, data.cast<double>(), dtype.value_or(d::default_float), device);
  if (py::isinstance<py::bytes>(data)) {
    std::string s = data.cast<std::string>();
    auto bytes = std::as_bytes(std::span<const char>(s.data(), s.size()));
    tg::Tensor t = tg::Tensor::from_bytes(bytes, {int64_t(s.size())}, d::uint8, device);
    return dtype ? t.cast(*dtype) : t;
  }
  if (py::isinstance<py::array>(data))
    return from_numpy(py::reinterpret_borrow<py::array>(data), dtype, device);
  // numpy scalars (np.float32(2), np.int64(3), what np.prod returns) as 0-d arrays of their dtype
  if (py::module_ np = py::module_::import("numpy"); py::isinstance(data, np.attr("generic")))
    return from_numpy(np.attr("asarray")(data), dtype, device);
  if (py::isinstance<py::list>(data) || py::isinstance<py::tuple>(data)) {
    py::module_ np = py::module_::import("numpy");
    py::array arr;
    try {
      arr = np.attr("array")(data);
    } catch (py::error_already_set& e) {
      throw py::value_error(std::string("Tensor(): cannot make an array of the list: ") + e.what());
    }
    char kind = arr.dtype().attr("kind").cast<std::string>().at(0);
    if (kind == 'O' || kind == 'U' || kind == 'S')
      throw py::value_error("Tensor(): a list must be rectangular and hold only numbers or bools");
    // tinygrad's defaults: Python floats are float32, ints int32 (unless a dtype is given).
    tg::DType want = dtype         ? *dtype
                     : kind == 'b' ? d::bool_
                     : kind == 'f' ? d::default_float
                                   : d::default_int;
    if (arr.size() == 0 && !dtype) want = d::default_float;
    tg::DType via = want == d::bfloat16 ? d::float32 : want;
    arr = np.attr("ascontiguousarray")(arr, numpy_dtype(via));
    tg::Dims shape(arr.shape(), arr.shape() + arr.ndim());
    auto bytes = std::span<const std::byte>(static_cast<const std::byte*>(arr.data()), nbytes(arr));
    tg::Tensor t = tg::Tensor::from_bytes(bytes, shape, via, device);
    return via == want ? t : t.cast(want);
  }
  if (data.is_none()) return tg::Tensor::zeros({0}, dtype.value_or(d::default_float), device);
  if (py::hasattr(data, "__dlpack__"))
    return py::module_::import("tinygrad_cpp._core")
        .attr("Tensor")
        .attr("from_dlpack")(data)
        .cast<tg::Tensor>();
  throw py::type_error("Tensor(): cannot make a tensor from " +
                       std::string(py::str(py::type::of(data).attr("__name__"))));
}

tg::Tensor operand(const tg::Tensor& like, py::handle other) {
  if (py::isinstance<tg::Tensor>(other)) return other.cast<tg::Tensor>();
  if (py::isinstance<py::bool_>(other))
    return tg::weak_scalar(like, other.cast<bool>(), tg::WeakScalar::Bool);
  if (py::isinstance<py::int_>(other))
    return tg::weak_scalar(like, other.cast<double>(), tg::WeakScalar::Int);
  if (py::isinstance<py::float_>(other))
    return tg::weak_scalar(like, other.cast<double>(), tg::WeakScalar::Float);
  return tensor_from(other, std::nullopt, like.device());
}

py::array to_numpy(const tg::Tensor& t) {
  py::dtype dt = numpy_dtype(t.dtype());
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  // Row-major strides from our itemsize: pybind11 2.10 would read it from numpy's descriptor struct,
  // whose layout numpy 2 changed.
  std::vector<py::ssize_t> strides(shape.size());
  py::ssize_t step = t.dtype().itemsize();
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = step;
    step *= std::max<py::ssize_t>(shape[i], 1);
  }
  if (auto view = tg::memory_view(t); view && view->host) {
    // The array reads the tensor's buffer; the capsule keeps that buffer alive. Read-only: the
    // buffer may be shared with other tensors.
    auto* owner = new std::shared_ptr<const void>(view->owner);
    py::capsule base(owner, [](void* p) { delete static_cast<std::shared_ptr<const void>*>(p); });
    py::array out(dt, shape, strides, reinterpret_cast<const void*>(view->address), base);
    out.attr("setflags")(py::arg("write") = false);
    return out;
  }
  std::vector<std::byte> bytes = t.to_bytes();
  py::array out(dt, shape, strides);
  if (!bytes.empty()) std::memcpy(out.mutable_data(), bytes.data(), bytes.size());
  return out;
}

namespace {
void check_signals() {
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
}
} // namespace

InterruptScope::InterruptScope() : check_(&check_signals) {}

} // namespace tgpy
