// tinygrad's Tensor API over tg::Tensor: names, defaults and argument forms as tinygrad spells
// them (shapes as varargs or tuples, `axis=`, Python operators); every operation is the core's.
#include "bindings.hpp"

#include <pybind11/operators.h>

namespace tgpy {

namespace {

using tg::Tensor;

py::object py_scalar(const Tensor& t) {
  if (t.numel() != 1)
    throw py::value_error("item(): the tensor has " + std::to_string(t.numel()) + " elements, not 1");
  if (t.dtype().is_bool()) return py::bool_(t.item<bool>());
  if (t.dtype().is_int()) {
    if (t.dtype() == tg::dtypes::uint64) return py::int_(t.item<uint64_t>());
    return py::int_(t.item<int64_t>());
  }
  return py::float_(t.item<double>());
}

// Python's index forms -> Tensor::slice: ints, slices, None (a new axis), Ellipsis, and one
// integer Tensor (gathered along its axis).
Tensor getitem(const Tensor& t, py::handle index) {
  std::vector<py::handle> items;
  if (py::isinstance<py::tuple>(index))
    for (auto h : index) items.push_back(h);
  else
    items.push_back(index);
  int64_t consuming = 0;
  bool ellipsis = false;
  for (auto h : items) {
    if (h.is(py::ellipsis())) {
      if (ellipsis) throw py::index_error("an index can only have a single ellipsis ('...')");
      ellipsis = true;
    } else if (!h.is_none()) {
      ++consuming;
    }
  }
  if (consuming > t.ndim())
    throw py::index_error("too many indices for a tensor of " + std::to_string(t.ndim()) + " dimensions");
  std::vector<tg::Slice> slices;
  std::vector<int64_t> new_axes;                   // positions in the result
  std::optional<std::pair<int64_t, Tensor>> fancy; // (input axis, index)
  int64_t out_axis = 0;
  for (auto h : items) {
    if (h.is(py::ellipsis())) {
      for (int64_t i = 0; i < t.ndim() - consuming; ++i, ++out_axis) slices.push_back(tg::Slice::all());
    } else if (h.is_none()) {
      new_axes.push_back(out_axis++);
    } else if (py::isinstance<py::slice>(h)) {
      auto s = py::reinterpret_borrow<py::slice>(h);
      auto opt = [](py::handle v) { return v.is_none() ? std::optional<int64_t>() : v.cast<int64_t>(); };
      tg::Slice sl{opt(s.attr("start")), opt(s.attr("stop")), 1, false};
      if (!s.attr("step").is_none()) sl.step = s.attr("step").cast<int64_t>();
      if (sl.step == 0) throw py::value_error("slice step cannot be zero");
      slices.push_back(sl);
      ++out_axis;
    } else if (py::isinstance<Tensor>(h) || py::isinstance<py::list>(h) || py::isinstance<py::array>(h)) {
      if (fancy) throw py::index_error("indexing with more than one tensor is not supported");
      Tensor idx = py::isinstance<Tensor>(h) ? h.cast<Tensor>() : tensor_from(h, std::nullopt, t.device());
      fancy.emplace(int64_t(slices.size()), idx);
      slices.push_back(tg::Slice::all());
      ++out_axis;
    } else if (py::isinstance<py::bool_>(h)) {
      throw py::index_error("boolean indices are not supported");
    } else {
      PyObject* as_int = PyNumber_Index(h.ptr());
      if (!as_int) { // a float, a string...: an error, not a null object cast (which crashed)
        PyErr_Clear();
        throw py::index_error("only integers, slices, None, ... and integer tensors are valid indices, got " +
                              std::string(py::str(py::type::of(h).attr("__name__"))));
      }
      int64_t i = py::reinterpret_steal<py::object>(as_int).cast<int64_t>();
      // IndexError, as numpy and tinygrad raise: it also ends Python's iteration over t[0], t[1], ...
      int64_t dim = t.shape()[slices.size()];
      if (i < -dim || i >= dim)
        throw py::index_error("index " + std::to_string(i) + " is out of bounds for dimension " +
                              std::to_string(slices.size()) + " with size " + std::to_string(dim));
      slices.push_back(tg::Slice::at(i));
    }
  }
  while (int64_t(slices.size()) < t.ndim()) slices.push_back(tg::Slice::all());
  Tensor out = t.slice(slices);
  tg::Dims kept; // integer indices remove their dim
  for (size_t i = 0; i < slices.size(); ++i)
    if (!slices[i].index) kept.push_back(out.shape()[i]);
  if (kept.size() != slices.size()) out = out.reshape(kept);
  if (fancy) {
    // The index's dims replace the indexed axis: gather along it with the index broadcast.
    int64_t axis = 0; // the indexed axis in `out` (integer indices before it removed their dims)
    for (int64_t i = 0; i < fancy->first; ++i) axis += slices[size_t(i)].index ? 0 : 1;
    const Tensor& idx = fancy->second;
    if (!idx.dtype().is_int()) throw py::index_error("tensor indices must be integers");
    tg::Dims before(out.shape().begin(), out.shape().begin() + axis);
    tg::Dims after(out.shape().begin() + axis + 1, out.shape().end());
    tg::Dims ishape = before;
    for (auto d : idx.shape()) ishape.push_back(d);
    for (auto d : after) ishape.push_back(d);
    tg::Dims view(before.size(), 1);
    for (auto d : idx.shape()) view.push_back(d);
    view.resize(view.size() + after.size(), 1);
    // Negative indices count from the end, as in numpy.
    int64_t n = out.shape()[size_t(axis)];
    Tensor wrapped = idx.lt(Tensor::zeros({}, idx.dtype(), idx.device())).where(idx + n, idx);
    tg::Dims src_view = before;
    src_view.resize(src_view.size() + idx.ndim(), 1);
    src_view.push_back(n);
    for (auto d : after) src_view.push_back(d);
    tg::Dims src_expand = ishape;
    src_expand.insert(src_expand.begin() + int64_t(before.size() + size_t(idx.ndim())), n);
    Tensor src = out.reshape(src_view).expand(src_expand);
    tg::Dims gidx_view = view;
    gidx_view.insert(gidx_view.begin() + int64_t(before.size() + size_t(idx.ndim())), 1);
    tg::Dims gidx_expand = ishape;
    gidx_expand.insert(gidx_expand.begin() + int64_t(before.size() + size_t(idx.ndim())), 1);
    Tensor gidx = wrapped.reshape(gidx_view).expand(gidx_expand);
    out = src.gather(int64_t(before.size() + size_t(idx.ndim())), gidx)
              .squeeze(int64_t(before.size() + size_t(idx.ndim())));
  }
  for (int64_t a : new_axes) out = out.unsqueeze(a);
  return out;
}

std::vector<std::pair<int64_t, int64_t>> pairs_from(py::handle h, const char* what) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (auto p : h) {
    if (p.is_none()) {
      out.emplace_back(0, -1); // marked below
      continue;
    }
    auto v = dims_from(p, what);
    if (v.size() != 2) throw py::value_error(std::string(what) + ": each entry is a (begin, end) pair");
    out.emplace_back(v[0], v[1]);
  }
  return out;
}

std::optional<int64_t> opt_axis(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return h.cast<int64_t>();
}

// tinygrad's per-dim arguments of conv2d and the pools: an int for both spatial dims, or a tuple.
tg::Dims per_dim(py::handle h, const char* what) {
  tg::Dims v = dims_from(h, what);
  if (v.size() == 1) v.push_back(v[0]);
  if (v.size() != 2) throw py::value_error(std::string(what) + ": an int or one value per spatial dim (2)");
  return v;
}

// tinygrad's padding: an int, (pH, pW), or (left, right, top, bottom) (last dim first, as torch's pad).
tg::Pads pads_2d(py::handle h) {
  tg::Dims v = dims_from(h, "padding");
  if (v.size() == 1) return {{v[0], v[0]}, {v[0], v[0]}};
  if (v.size() == 2) return {{v[0], v[0]}, {v[1], v[1]}};
  if (v.size() == 4) return {{v[2], v[3]}, {v[0], v[1]}};
  throw py::value_error("padding: an int, (pH, pW) or (left, right, top, bottom)");
}

// The value of a square argument (the 2d fast paths of the core take one int), else nullopt.
std::optional<int64_t> square(const tg::Dims& v) {
  return v[0] == v[1] ? std::optional<int64_t>(v[0]) : std::nullopt;
}
std::optional<int64_t> square(const tg::Pads& p) {
  return p[0].first == p[0].second && p[0] == p[1] ? std::optional<int64_t>(p[0].first) : std::nullopt;
}

template <class F> auto binary(F f) {
  return [f](const Tensor& a, py::handle b) { return f(a, operand(a, b)); };
}
template <class F> auto rbinary(F f) {
  return [f](const Tensor& a, py::handle b) { return f(operand(a, b), a); };
}

} // namespace

void bind_tensor(py::module_& m) {
  py::class_<Tensor> cls(m, "Tensor", py::dynamic_attr());
  cls.def(py::init([](py::handle data, py::handle device, py::handle dtype, py::handle requires_grad) {
            Tensor t = tensor_from(data, to_dtype_or_none(dtype), to_device(device));
            if (!requires_grad.is_none()) t.requires_grad_(requires_grad.cast<bool>());
            return t;
          }),
          py::arg("data"), py::arg("device") = py::none(), py::arg("dtype") = py::none(),
          py::arg("requires_grad") = py::none());

  // ---- factories: shapes as varargs or one tuple ----
  auto factory = [&](const char* name, auto make) {
    cls.def_static(
        name,
        [make](py::args shape, py::handle dtype, py::handle device, py::handle requires_grad) {
          Tensor t = make(dims_from_args(shape, "shape"), to_dtype_or_none(dtype), to_device(device));
          if (!requires_grad.is_none()) t.requires_grad_(requires_grad.cast<bool>());
          return t;
        },
        py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
        py::arg("requires_grad") = py::none());
  };
  namespace d = tg::dtypes;
  factory("zeros", [](tg::Dims s, std::optional<tg::DType> dt, std::string dev) {
    return Tensor::zeros(s, dt.value_or(d::default_float), dev);
  });
  factory("ones", [](tg::Dims s, std::optional<tg::DType> dt, std::string dev) {
    return Tensor::ones(s, dt.value_or(d::default_float), dev);
  });
  factory("empty", [](tg::Dims s, std::optional<tg::DType> dt, std::string dev) {
    return Tensor::zeros(s, dt.value_or(d::default_float), dev);
  });
  factory("rand", [](tg::Dims s, std::optional<tg::DType> dt, std::string dev) {
    return Tensor::rand(s, dt.value_or(d::default_float), dev);
  });
  factory("randn", [](tg::Dims s, std::optional<tg::DType> dt, std::string dev) {
    return Tensor::randn(s, dt.value_or(d::default_float), dev);
  });
  factory("glorot_uniform", [](tg::Dims s, std::optional<tg::DType> dt, std::string dev) {
    return tg::nn::glorot_uniform(s, dt.value_or(d::default_float), dev);
  });
  cls.def_static(
      "kaiming_uniform",
      [](py::args shape, double a, py::handle dtype, py::handle device) {
        return tg::nn::kaiming_uniform(dims_from_args(shape, "shape"), a,
                                       to_dtype_or_none(dtype).value_or(d::default_float), to_device(device));
      },
      py::kw_only(), py::arg("a") = 0.01, py::arg("dtype") = py::none(), py::arg("device") = py::none());
  cls.def_static(
      "uniform",
      [](py::args shape, double low, double high, py::handle dtype, py::handle device, py::handle rg) {
        Tensor t = Tensor::uniform(dims_from_args(shape, "shape"), low, high,
                                   to_dtype_or_none(dtype).value_or(d::default_float), to_device(device));
        if (!rg.is_none()) t.requires_grad_(rg.cast<bool>());
        return t;
      },
      py::kw_only(), py::arg("low") = 0.0, py::arg("high") = 1.0, py::arg("dtype") = py::none(),
      py::arg("device") = py::none(), py::arg("requires_grad") = py::none());
  cls.def_static(
      "randint",
      [](py::args shape, int64_t low, int64_t high, py::handle dtype, py::handle device) {
        return Tensor::randint(dims_from_args(shape, "shape"), low, high,
                               to_dtype_or_none(dtype).value_or(d::int32), to_device(device));
      },
      py::kw_only(), py::arg("low") = 0, py::arg("high") = 10, py::arg("dtype") = py::none(),
      py::arg("device") = py::none());
  cls.def_static(
      "full",
      [](py::handle shape, py::handle fill, py::handle dtype, py::handle device) {
        auto dt = to_dtype_or_none(dtype);
        if (!dt)
          dt = py::isinstance<py::bool_>(fill)  ? d::bool_
               : py::isinstance<py::int_>(fill) ? d::default_int
                                                : d::default_float;
        return Tensor::full(dims_from(shape, "shape"), fill.cast<double>(), *dt, to_device(device));
      },
      py::arg("shape"), py::arg("fill_value"), py::kw_only(), py::arg("dtype") = py::none(),
      py::arg("device") = py::none());
  cls.def_static(
      "arange",
      [](double start, py::handle stop, double step, py::handle dtype, py::handle device) {
        double lo = stop.is_none() ? 0 : start, hi = stop.is_none() ? start : stop.cast<double>();
        auto dt = to_dtype_or_none(dtype);
        return Tensor::arange(lo, hi, step, dt, to_device(device));
      },
      py::arg("start"), py::arg("stop") = py::none(), py::arg("step") = 1, py::kw_only(),
      py::arg("dtype") = py::none(), py::arg("device") = py::none());
  cls.def_static(
      "linspace",
      [](double start, double stop, int64_t steps, py::handle dtype, py::handle device) {
        return Tensor::linspace(start, stop, steps, to_dtype_or_none(dtype).value_or(d::default_float),
                                to_device(device));
      },
      py::arg("start"), py::arg("stop"), py::arg("steps"), py::kw_only(), py::arg("dtype") = py::none(),
      py::arg("device") = py::none());
  cls.def_static(
      "eye",
      [](int64_t n, py::handle cols, py::handle dtype, py::handle device) {
        return Tensor::eye(n, cols.is_none() ? std::optional<int64_t>() : cols.cast<int64_t>(),
                           to_dtype_or_none(dtype).value_or(d::default_float), to_device(device));
      },
      py::arg("n"), py::arg("m") = py::none(), py::kw_only(), py::arg("dtype") = py::none(),
      py::arg("device") = py::none());
  cls.def_static("manual_seed", &Tensor::manual_seed, py::arg("seed") = 0);
  cls.def(
      "full_like",
      [](const Tensor& t, double v, py::handle dtype) {
        return Tensor::full(t.shape(), v, to_dtype_or_none(dtype).value_or(t.dtype()), t.device());
      },
      py::arg("fill_value"), py::kw_only(), py::arg("dtype") = py::none());
  cls.def(
      "zeros_like",
      [](const Tensor& t, py::handle dtype) {
        return Tensor::zeros(t.shape(), to_dtype_or_none(dtype).value_or(t.dtype()), t.device());
      },
      py::kw_only(), py::arg("dtype") = py::none());
  cls.def(
      "ones_like",
      [](const Tensor& t, py::handle dtype) {
        return Tensor::ones(t.shape(), to_dtype_or_none(dtype).value_or(t.dtype()), t.device());
      },
      py::kw_only(), py::arg("dtype") = py::none());
  cls.def("rand_like", [](const Tensor& t) { return t.rand_like(); });

  // ---- properties ----
  cls.def_property_readonly("shape", [](const Tensor& t) {
    py::tuple out(t.shape().size());
    for (size_t i = 0; i < t.shape().size(); ++i) out[i] = py::int_(t.shape()[i]);
    return out;
  });
  cls.def_property_readonly("dtype", &Tensor::dtype);
  cls.def_property_readonly("device", &Tensor::device);
  cls.def_property_readonly("ndim", &Tensor::ndim);
  cls.def("numel", &Tensor::numel);
  cls.def("element_size", [](const Tensor& t) { return t.dtype().itemsize(); });
  cls.def("nbytes", [](const Tensor& t) { return t.numel() * t.dtype().itemsize(); });
  cls.def("__len__", [](const Tensor& t) {
    if (t.ndim() == 0) throw py::type_error("len() of a 0-d tensor");
    return t.shape()[0];
  });
  // A failed __init__ leaves an instance without a Tensor inside, which debuggers and pytest still
  // print: answer for it instead of reading unconstructed memory.
  cls.def("__repr__", [](py::handle self) -> std::string {
    auto* inst = reinterpret_cast<py::detail::instance*>(self.ptr());
    py::detail::value_and_holder vh = inst->get_value_and_holder(py::detail::get_type_info(typeid(Tensor)));
    if (!vh.holder_constructed()) return "<Tensor (not constructed)>";
    return vh.value_ptr<Tensor>()->str();
  });
  cls.def_property("requires_grad", &Tensor::requires_grad,
                   [](Tensor& t, py::handle v) { t.requires_grad_(!v.is_none() && v.cast<bool>()); });
  cls.def(
      "requires_grad_", [](Tensor& t, bool v) -> Tensor& { return t.requires_grad_(v); },
      py::arg("requires_grad") = true, py::return_value_policy::reference_internal);
  cls.def_property(
      "grad", [](const Tensor& t) { return t.grad(); },
      [](Tensor& t, std::optional<Tensor> g) { t.set_grad(std::move(g)); });
  cls.attr("__hash__") =
      py::module_::import("builtins").attr("object").attr("__hash__"); // identity, as tinygrad

  // ---- realization and reading ----
  cls.def(
      "realize",
      [](Tensor& t, py::args more) -> Tensor& {
        InterruptScope interrupt;
        if (more.empty()) return t.realize();
        // tinygrad's t.realize(*lst): all of them in one schedule (a loss with the optimizer's update)
        std::vector<Tensor> others;
        for (auto o : more) others.push_back(o.cast<Tensor>());
        std::vector<Tensor*> all{&t};
        for (auto& o : others) all.push_back(&o);
        Tensor::realize_all(all);
        return t;
      },
      py::return_value_policy::reference_internal);
  cls.def("numpy", [](const Tensor& t) {
    InterruptScope interrupt;
    return to_numpy(t);
  });
  cls.def("item", [](const Tensor& t) {
    InterruptScope interrupt;
    return py_scalar(t);
  });
  cls.def("tolist", [](const Tensor& t) {
    InterruptScope interrupt;
    if (t.dtype() == d::bfloat16) return to_numpy(t.cast(d::float32)).attr("tolist")();
    return to_numpy(t).attr("tolist")();
  });
  cls.def("data", [](const Tensor& t) {
    InterruptScope interrupt;
    return py::memoryview(to_numpy(t));
  });
  cls.def(
      "to", [](const Tensor& t, py::handle device) { return t.to(to_device(device)); }, py::arg("device"));
  cls.def(
      "to_",
      [](Tensor& t, py::handle device) -> Tensor& {
        t = t.to(to_device(device));
        return t;
      },
      py::arg("device"), py::return_value_policy::reference_internal);
  cls.def("contiguous", &Tensor::contiguous);
  cls.def("detach", &Tensor::detach);
  cls.def("clone", [](const Tensor& t) { return t.contiguous(); });
  cls.def(
      "cast", [](const Tensor& t, py::handle dt) { return t.cast(to_dtype(dt)); }, py::arg("dtype"));
  cls.def(
      "bitcast", [](const Tensor& t, py::handle dt) { return t.bitcast(to_dtype(dt)); }, py::arg("dtype"));
  cls.def("float", [](const Tensor& t) { return t.cast(d::float32); });
  cls.def("half", [](const Tensor& t) { return t.cast(d::float16); });
  cls.def("double", [](const Tensor& t) { return t.cast(d::float64); });
  cls.def("int", [](const Tensor& t) { return t.cast(d::int32); });
  cls.def("long", [](const Tensor& t) { return t.cast(d::int64); });
  cls.def("bool", [](const Tensor& t) { return t.cast(d::bool_); });
  cls.def(
      "assign",
      [](Tensor& t, py::handle v) -> Tensor& {
        return t.assign(operand(t, v).cast(t.dtype()).expand(t.shape()));
      },
      py::return_value_policy::reference_internal);

  // ---- unary ----
#define TG_UNARY(name) cls.def(#name, &Tensor::name)
  TG_UNARY(neg);
  TG_UNARY(abs);
  TG_UNARY(exp);
  TG_UNARY(exp2);
  TG_UNARY(log);
  TG_UNARY(log2);
  TG_UNARY(sqrt);
  TG_UNARY(rsqrt);
  TG_UNARY(reciprocal);
  TG_UNARY(sin);
  TG_UNARY(cos);
  TG_UNARY(tan);
  TG_UNARY(tanh);
  TG_UNARY(sigmoid);
  TG_UNARY(relu);
  TG_UNARY(silu);
  TG_UNARY(square);
  TG_UNARY(sign);
  TG_UNARY(trunc);
  TG_UNARY(floor);
  TG_UNARY(ceil);
  TG_UNARY(erf);
  TG_UNARY(round);
  TG_UNARY(isnan);
  TG_UNARY(asin);
  TG_UNARY(acos);
  TG_UNARY(atan);
  TG_UNARY(sinh);
  TG_UNARY(cosh);
  TG_UNARY(asinh);
  TG_UNARY(acosh);
  TG_UNARY(atanh);
  TG_UNARY(selu);
  TG_UNARY(hardswish);
  TG_UNARY(mish);
  TG_UNARY(softsign);
  TG_UNARY(logical_not);
  TG_UNARY(bitwise_not);
#undef TG_UNARY
  cls.def("gelu", &Tensor::gelu);
  cls.def("swish", &Tensor::silu);
  cls.def("leaky_relu", &Tensor::leaky_relu, py::arg("neg_slope") = 0.01);
  cls.def("softplus", &Tensor::softplus, py::arg("beta") = 1.0);
  cls.def("elu", &Tensor::elu, py::arg("alpha") = 1.0);
  cls.def("celu", &Tensor::celu, py::arg("alpha") = 1.0);
  cls.def("hardsigmoid", &Tensor::hardsigmoid, py::arg("alpha") = 1.0 / 6, py::arg("beta") = 0.5);
  cls.def("relu6", [](const Tensor& t) { return t.clip(0, 6); });
  cls.def("isinf", &Tensor::isinf, py::arg("detect_positive") = true, py::arg("detect_negative") = true);
  cls.def(
      "clip",
      [](const Tensor& t, py::handle lo, py::handle hi) {
        Tensor out = t;
        if (!lo.is_none()) out = out.maximum(operand(t, lo));
        if (!hi.is_none()) out = out.minimum(operand(t, hi));
        return out;
      },
      py::arg("min_") = py::none(), py::arg("max_") = py::none());
  cls.attr("clamp") = cls.attr("clip");

  // ---- binary, with Python numbers as weak scalars ----
  cls.def("add", binary([](const Tensor& a, const Tensor& b) { return a + b; }));
  cls.def("sub", binary([](const Tensor& a, const Tensor& b) { return a - b; }));
  cls.def("mul", binary([](const Tensor& a, const Tensor& b) { return a * b; }));
  cls.def("div", binary([](const Tensor& a, const Tensor& b) { return a / b; }));
  cls.def("pow", binary([](const Tensor& a, const Tensor& b) { return a.pow(b); }));
  cls.def("maximum", binary([](const Tensor& a, const Tensor& b) { return a.maximum(b); }));
  cls.def("minimum", binary([](const Tensor& a, const Tensor& b) { return a.minimum(b); }));
  cls.def("idiv", binary([](const Tensor& a, const Tensor& b) { return a.idiv(b); }));
  cls.def("mod", binary([](const Tensor& a, const Tensor& b) { return a.mod(b); }));
  cls.def("logical_and", binary([](const Tensor& a, const Tensor& b) { return a.logical_and(b); }));
  cls.def("logical_or", binary([](const Tensor& a, const Tensor& b) { return a.logical_or(b); }));
  cls.def("bitwise_and", binary([](const Tensor& a, const Tensor& b) { return a.bitwise_and(b); }));
  cls.def("bitwise_or", binary([](const Tensor& a, const Tensor& b) { return a.bitwise_or(b); }));
  cls.def("xor", binary([](const Tensor& a, const Tensor& b) { return a.bitwise_xor(b); }));
  cls.def("__add__", binary([](const Tensor& a, const Tensor& b) { return a + b; }), py::is_operator());
  cls.def("__radd__", rbinary([](const Tensor& a, const Tensor& b) { return a + b; }), py::is_operator());
  cls.def("__sub__", binary([](const Tensor& a, const Tensor& b) { return a - b; }), py::is_operator());
  cls.def("__rsub__", rbinary([](const Tensor& a, const Tensor& b) { return a - b; }), py::is_operator());
  cls.def("__mul__", binary([](const Tensor& a, const Tensor& b) { return a * b; }), py::is_operator());
  cls.def("__rmul__", rbinary([](const Tensor& a, const Tensor& b) { return a * b; }), py::is_operator());
  cls.def("__truediv__", binary([](const Tensor& a, const Tensor& b) { return a / b; }), py::is_operator());
  cls.def("__rtruediv__", rbinary([](const Tensor& a, const Tensor& b) { return a / b; }), py::is_operator());
  cls.def("__floordiv__", binary([](const Tensor& a, const Tensor& b) {
            if (a.dtype().is_int() && b.dtype().is_int()) { // Python's floor division of integers
              Tensor q = a.idiv(b);
              Tensor fix = (a.mod(b).ne(Tensor::zeros({}, a.dtype(), a.device())))
                               .logical_and(a.lt(Tensor::zeros({}, a.dtype(), a.device()))
                                                .bitwise_xor(b.lt(Tensor::zeros({}, b.dtype(), b.device()))));
              return fix.where(q - 1, q);
            }
            return (a / b).floor();
          }),
          py::is_operator());
  cls.def("__mod__", binary([](const Tensor& a, const Tensor& b) {
            if (a.dtype().is_int() && b.dtype().is_int()) { // Python's modulo: the divisor's sign
              Tensor r = a.mod(b);
              Tensor zero = Tensor::zeros({}, r.dtype(), r.device());
              Tensor fix = r.ne(zero).logical_and(r.lt(zero).bitwise_xor(b.lt(zero)));
              return fix.where(r + b, r);
            }
            return a - (a / b).floor() * b;
          }),
          py::is_operator());
  cls.def(
      "__rfloordiv__",
      [](const Tensor& a, py::handle b) { return py::cast(operand(a, b)).attr("__floordiv__")(a); },
      py::is_operator());
  cls.def(
      "__rmod__", [](const Tensor& a, py::handle b) { return py::cast(operand(a, b)).attr("__mod__")(a); },
      py::is_operator());
  cls.def("__pow__", binary([](const Tensor& a, const Tensor& b) { return a.pow(b); }), py::is_operator());
  cls.def("__rpow__", rbinary([](const Tensor& a, const Tensor& b) { return a.pow(b); }), py::is_operator());
  cls.def(
      "__matmul__", [](const Tensor& a, const Tensor& b) { return a.matmul(b); }, py::is_operator());
  cls.def(
      "__rmatmul__", [](const Tensor& a, const Tensor& b) { return b.matmul(a); }, py::is_operator());
  cls.def("__neg__", &Tensor::neg);
  cls.def("__abs__", &Tensor::abs);
  cls.def("__invert__",
          [](const Tensor& t) { return t.dtype().is_bool() ? t.logical_not() : t.bitwise_not(); });
  cls.def("__and__", binary([](const Tensor& a, const Tensor& b) { return a.bitwise_and(b); }),
          py::is_operator());
  cls.def("__rand__", rbinary([](const Tensor& a, const Tensor& b) { return a.bitwise_and(b); }),
          py::is_operator());
  cls.def("__or__", binary([](const Tensor& a, const Tensor& b) { return a.bitwise_or(b); }),
          py::is_operator());
  cls.def("__ror__", rbinary([](const Tensor& a, const Tensor& b) { return a.bitwise_or(b); }),
          py::is_operator());
  cls.def("__xor__", binary([](const Tensor& a, const Tensor& b) { return a.bitwise_xor(b); }),
          py::is_operator());
  cls.def("__rxor__", rbinary([](const Tensor& a, const Tensor& b) { return a.bitwise_xor(b); }),
          py::is_operator());
  cls.def(
      "__lshift__", [](const Tensor& a, int64_t b) { return a.lshift(b); }, py::is_operator());
  cls.def(
      "__rshift__", [](const Tensor& a, int64_t b) { return a.rshift(b); }, py::is_operator());
  cls.def("__lt__", binary([](const Tensor& a, const Tensor& b) { return a.lt(b); }), py::is_operator());
  cls.def("__gt__", binary([](const Tensor& a, const Tensor& b) { return a.gt(b); }), py::is_operator());
  cls.def("__le__", binary([](const Tensor& a, const Tensor& b) { return a.le(b); }), py::is_operator());
  cls.def("__ge__", binary([](const Tensor& a, const Tensor& b) { return a.ge(b); }), py::is_operator());
  cls.def("__eq__", binary([](const Tensor& a, const Tensor& b) { return a.eq(b); }), py::is_operator());
  cls.def("__ne__", binary([](const Tensor& a, const Tensor& b) { return a.ne(b); }), py::is_operator());
  cls.def("__bool__", [](const Tensor&) -> bool {
    throw py::type_error("the truth value of a Tensor is ambiguous: use .item() or .numpy()");
  });
  cls.def(
      "__iadd__", [](Tensor& a, py::handle b) -> Tensor& { return a.assign(a + operand(a, b)); },
      py::return_value_policy::reference_internal);
  cls.def(
      "__isub__", [](Tensor& a, py::handle b) -> Tensor& { return a.assign(a - operand(a, b)); },
      py::return_value_policy::reference_internal);
  cls.def(
      "__imul__", [](Tensor& a, py::handle b) -> Tensor& { return a.assign(a * operand(a, b)); },
      py::return_value_policy::reference_internal);
  cls.def(
      "__itruediv__", [](Tensor& a, py::handle b) -> Tensor& { return a.assign(a / operand(a, b)); },
      py::return_value_policy::reference_internal);
  cls.def("lt", binary([](const Tensor& a, const Tensor& b) { return a.lt(b); }));
  cls.def("eq", binary([](const Tensor& a, const Tensor& b) { return a.eq(b); }));
  cls.def("ne", binary([](const Tensor& a, const Tensor& b) { return a.ne(b); }));
  cls.def(
      "where",
      [](const Tensor& c, py::handle x, py::handle y) {
        Tensor tx = py::isinstance<Tensor>(x)   ? x.cast<Tensor>()
                    : py::isinstance<Tensor>(y) ? operand(y.cast<Tensor>(), x)
                                                : tensor_from(x, std::nullopt, c.device());
        Tensor ty = operand(tx, y);
        if (!py::isinstance<Tensor>(x)) tx = operand(ty, x);
        return c.where(tx, ty);
      },
      py::arg("x"), py::arg("y"));
  cls.def("dot", [](const Tensor& a, const Tensor& b) { return a.matmul(b); });
  cls.def("matmul", [](const Tensor& a, const Tensor& b) { return a.matmul(b); });
  cls.def(
      "linear",
      [](const Tensor& x, const Tensor& w, std::optional<Tensor> b) {
        Tensor y = w.ndim() == 1 ? x * w : x.matmul(w); // tinygrad: x @ weight (weight is (in, out))
        return b ? y + *b : y;
      },
      py::arg("weight"), py::arg("bias") = py::none());

  // ---- reductions: axis=None (all), an int or a tuple ----
  auto reduce = [&](const char* name, Tensor (Tensor::*f)(tg::Axes, bool) const) {
    cls.def(
        name,
        [f](const Tensor& t, py::handle axis, bool keepdim) { return (t.*f)(axes_from(axis), keepdim); },
        py::arg("axis") = py::none(), py::arg("keepdim") = false);
  };
  reduce("sum", &Tensor::sum);
  reduce("prod", &Tensor::prod);
  reduce("max", &Tensor::max);
  reduce("min", &Tensor::min);
  reduce("mean", &Tensor::mean);
  cls.def(
      "var",
      [](const Tensor& t, py::handle axis, bool keepdim, double correction) {
        return t.var(axes_from(axis), keepdim, correction);
      },
      py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("correction") = 1.0);
  cls.def(
      "std",
      [](const Tensor& t, py::handle axis, bool keepdim, double correction) {
        return t.std(axes_from(axis), keepdim, correction);
      },
      py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("correction") = 1.0);
  cls.def(
      "argmax",
      [](const Tensor& t, py::handle axis, bool keepdim) { return t.argmax(opt_axis(axis), keepdim); },
      py::arg("axis") = py::none(), py::arg("keepdim") = false);
  cls.def(
      "argmin",
      [](const Tensor& t, py::handle axis, bool keepdim) { return t.argmin(opt_axis(axis), keepdim); },
      py::arg("axis") = py::none(), py::arg("keepdim") = false);
  cls.def("softmax", &Tensor::softmax, py::arg("axis") = -1);
  cls.def("log_softmax", &Tensor::log_softmax, py::arg("axis") = -1);
  cls.def("logsumexp", &Tensor::logsumexp, py::arg("axis") = -1, py::arg("keepdim") = false);
  cls.def("cumsum", &Tensor::cumsum, py::arg("axis") = 0);
  cls.def(
      "any",
      [](const Tensor& t, py::handle axis, bool keepdim) {
        return t.cast(d::bool_).cast(d::int32).max(axes_from(axis), keepdim).cast(d::bool_);
      },
      py::arg("axis") = py::none(), py::arg("keepdim") = false);
  cls.def(
      "all",
      [](const Tensor& t, py::handle axis, bool keepdim) {
        return t.cast(d::bool_).cast(d::int32).min(axes_from(axis), keepdim).cast(d::bool_);
      },
      py::arg("axis") = py::none(), py::arg("keepdim") = false);

  // ---- movement: shapes as varargs or one tuple ----
  cls.def("reshape",
          [](const Tensor& t, py::args shape) { return t.reshape(dims_from_args(shape, "reshape")); });
  cls.def("view", [](const Tensor& t, py::args shape) { return t.reshape(dims_from_args(shape, "view")); });
  cls.def("permute",
          [](const Tensor& t, py::args order) { return t.permute(dims_from_args(order, "permute")); });
  cls.def("expand",
          [](const Tensor& t, py::args shape) { return t.expand(dims_from_args(shape, "expand")); });
  cls.def("repeat", [](const Tensor& t, py::args r) { return t.repeat(dims_from_args(r, "repeat")); });
  cls.def("flip", [](const Tensor& t, py::args axes) { return t.flip(dims_from_args(axes, "flip")); });
  cls.def("transpose", &Tensor::transpose, py::arg("dim0") = 1, py::arg("dim1") = 0);
  cls.def_property_readonly("T", [](const Tensor& t) {
    if (t.ndim() < 2) return t;
    return t.transpose(-1, -2);
  });
  cls.def(
      "squeeze", [](const Tensor& t, py::handle dim) { return t.squeeze(opt_axis(dim)); },
      py::arg("dim") = py::none());
  cls.def("unsqueeze", &Tensor::unsqueeze, py::arg("dim"));
  cls.def("flatten", &Tensor::flatten, py::arg("start_dim") = 0, py::arg("end_dim") = -1);
  cls.def(
      "pad",
      [](const Tensor& t, py::handle padding, std::string mode, double value) {
        // tinygrad: one (begin, end) pair per dim, or a flat torch-style tuple (last dim first).
        std::vector<std::pair<int64_t, int64_t>> pairs;
        bool flat = true;
        for (auto p : padding)
          flat = flat && !(py::isinstance<py::tuple>(p) || py::isinstance<py::list>(p) || p.is_none());
        if (flat) {
          auto v = dims_from(padding, "pad");
          if (v.size() % 2) throw py::value_error("pad: a flat padding has an even number of entries");
          pairs.assign(size_t(t.ndim()), {0, 0});
          for (size_t i = 0; i < v.size() / 2; ++i)
            pairs[size_t(t.ndim()) - 1 - i] = {v[2 * i], v[2 * i + 1]};
        } else {
          for (auto p : padding)
            pairs.push_back(p.is_none() ? std::pair<int64_t, int64_t>{0, 0}
                                        : std::pair<int64_t, int64_t>{dims_from(p, "pad").at(0),
                                                                      dims_from(p, "pad").at(1)});
        }
        tg::PadMode pm = mode == "constant"                      ? tg::PadMode::constant
                         : mode == "reflect"                     ? tg::PadMode::reflect
                         : mode == "replicate" || mode == "edge" ? tg::PadMode::edge
                         : mode == "circular" || mode == "wrap"
                             ? tg::PadMode::wrap
                             : throw py::value_error("pad: unknown mode '" + mode + "'");
        return t.pad(tg::Pads(pairs.begin(), pairs.end()), pm, value);
      },
      py::arg("padding"), py::arg("mode") = "constant", py::arg("value") = 0.0);
  cls.def("shrink", [](const Tensor& t, py::handle arg) {
    auto pairs = pairs_from(arg, "shrink");
    for (size_t i = 0; i < pairs.size() && i < t.shape().size(); ++i)
      if (pairs[i] == std::pair<int64_t, int64_t>{0, -1}) pairs[i] = {0, t.shape()[i]};
    return t.shrink(pairs);
  });
  cls.def("__getitem__", &getitem);
  cls.def("__setitem__", [](Tensor&, py::handle, py::handle) {
    throw py::type_error("Tensor does not support item assignment: build the value and use assign()");
  });
  cls.def(
      "cat",
      [](const Tensor& t, py::args others, int64_t dim) {
        std::vector<Tensor> all{t};
        for (auto o : others) all.push_back(o.cast<Tensor>());
        return Tensor::cat(all, dim);
      },
      py::kw_only(), py::arg("dim") = 0);
  cls.def(
      "stack",
      [](const Tensor& t, py::args others, int64_t dim) {
        std::vector<Tensor> all{t};
        for (auto o : others) all.push_back(o.cast<Tensor>());
        return Tensor::stack(all, dim);
      },
      py::kw_only(), py::arg("dim") = 0);
  cls.def(
      "gather", [](const Tensor& t, int64_t dim, const Tensor& index) { return t.gather(dim, index); },
      py::arg("dim"), py::arg("index"));
  cls.def("one_hot", &Tensor::one_hot, py::arg("num_classes"));
  cls.def("tril", &Tensor::tril, py::arg("diagonal") = 0);
  cls.def("triu", &Tensor::triu, py::arg("diagonal") = 0);
  cls.def(
      "topk", [](const Tensor& t, int64_t k, int64_t dim, bool largest) { return t.topk(k, dim, largest); },
      py::arg("k"), py::arg("dim") = -1, py::arg("largest") = true);
  cls.def(
      "sort", [](const Tensor& t, int64_t dim, bool descending) { return t.sort(dim, descending); },
      py::arg("dim") = -1, py::arg("descending") = false);
  cls.def_static("einsum", [](const std::string& formula, py::args operands) {
    std::vector<Tensor> ops;
    if (operands.size() == 1 &&
        (py::isinstance<py::list>(operands[0]) || py::isinstance<py::tuple>(operands[0])))
      for (auto o : operands[0]) ops.push_back(o.cast<Tensor>());
    else
      for (auto o : operands) ops.push_back(o.cast<Tensor>());
    return Tensor::einsum(formula, ops);
  });

  // ---- nn functions ----
  cls.def(
      "conv2d",
      [](const Tensor& x, const Tensor& w, std::optional<Tensor> b, int64_t groups, py::handle stride,
         py::handle dilation, py::handle padding) {
        tg::Dims st = per_dim(stride, "stride"), di = per_dim(dilation, "dilation");
        tg::Pads pa = pads_2d(padding);
        if (square(st) && square(di) && square(pa)) return x.conv2d(w, b, st[0], pa[0].first, di[0], groups);
        return x.conv(w, b, tg::ConvOptions{st, di, pa, groups}); // other values per dim: the n-d form
      },
      py::arg("weight"), py::arg("bias") = py::none(), py::arg("groups") = 1, py::arg("stride") = 1,
      py::arg("dilation") = 1, py::arg("padding") = 0);
  cls.def(
      "max_pool2d",
      [](const Tensor& x, py::handle kernel, py::handle stride, py::handle dilation, py::handle padding) {
        tg::Dims k = per_dim(kernel, "kernel_size"), di = per_dim(dilation, "dilation");
        tg::Dims st = stride.is_none() ? k : per_dim(stride, "stride");
        tg::Pads pa = pads_2d(padding);
        if (square(k) && square(st) && square(di) && square(pa))
          return x.max_pool2d(k[0], st[0], pa[0].first, di[0]);
        return x.max_pool(tg::PoolOptions{k, st, di, pa});
      },
      py::arg("kernel_size") = 2, py::arg("stride") = py::none(), py::arg("dilation") = 1,
      py::arg("padding") = 0);
  cls.def(
      "avg_pool2d",
      [](const Tensor& x, py::handle kernel, py::handle stride, py::handle padding) {
        tg::Dims k = per_dim(kernel, "kernel_size"), st = stride.is_none() ? k : per_dim(stride, "stride");
        tg::Pads pa = pads_2d(padding);
        if (square(k) && square(st) && square(pa)) return x.avg_pool2d(k[0], st[0], pa[0].first);
        return x.avg_pool(tg::PoolOptions{k, st, {1, 1}, pa}, true); // padding counted, as avg_pool2d
      },
      py::arg("kernel_size") = 2, py::arg("stride") = py::none(), py::arg("padding") = 0);
  cls.def(
      "layernorm",
      [](const Tensor& x, py::handle axis, double eps) {
        tg::Axes a = axes_from(axis);
        return x.layernorm(a.empty() ? tg::Axes{-1} : a, eps);
      },
      py::arg("axis") = -1, py::arg("eps") = 1e-5);
  cls.def(
      "sparse_categorical_crossentropy",
      [](const Tensor& x, const Tensor& y, int64_t ignore_index, double label_smoothing) {
        return tg::nn::sparse_categorical_crossentropy(x, y, ignore_index, label_smoothing);
      },
      py::arg("Y"), py::arg("ignore_index") = -1, py::arg("label_smoothing") = 0.0);
  cls.def(
      "cross_entropy",
      [](const Tensor& x, const Tensor& y, double label_smoothing) {
        return tg::nn::cross_entropy(x, y, label_smoothing);
      },
      py::arg("Y"), py::arg("label_smoothing") = 0.0);
  // tg::scaled_dot_product_attention; Tensor.scaled_dot_product_attention (tensor.py) adds tinygrad's
  // argument handling (dropout only in training mode, is_causal replacing attn_mask, enable_gqa).
  m.def(
      "scaled_dot_product_attention",
      [](const Tensor& q, const Tensor& k, const Tensor& v, std::optional<Tensor> mask, double dropout_p,
         bool is_causal, std::optional<double> scale) {
        return tg::scaled_dot_product_attention(
            q, k, v, tg::AttentionOptions{std::move(mask), dropout_p, is_causal, scale});
      },
      py::arg("query"), py::arg("key"), py::arg("value"), py::arg("attn_mask") = py::none(),
      py::arg("dropout_p") = 0.0, py::arg("is_causal") = false, py::arg("scale") = py::none());
  cls.def("binary_crossentropy",
          [](const Tensor& x, const Tensor& y) { return tg::nn::binary_crossentropy(x, y); });
  cls.def("binary_crossentropy_logits",
          [](const Tensor& x, const Tensor& y) { return tg::nn::binary_crossentropy_with_logits(x, y); });
  cls.def(
      "interpolate",
      [](const Tensor& x, py::handle size, const std::string& mode, bool align_corners) {
        return x.interpolate(dims_from(size, "size"), mode, align_corners);
      },
      py::arg("size"), py::arg("mode") = "linear", py::arg("align_corners") = false);

  // ---- autograd ----
  cls.def(
      "backward",
      [](const Tensor& t, std::optional<Tensor> gradient) {
        InterruptScope interrupt;
        t.backward(gradient);
        return t;
      },
      py::arg("gradient") = py::none());
  cls.def("gradient", [](const Tensor& t, py::args targets) {
    std::vector<Tensor> ts;
    for (auto x : targets) ts.push_back(x.cast<Tensor>());
    return t.gradient(ts);
  });

  bind_dlpack(cls);
}

} // namespace tgpy
