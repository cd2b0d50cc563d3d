// dtypes, errors, devices, plugins and settings.
#include "bindings.hpp"

namespace tgpy {

void bind_dtypes(py::module_& m) {
  py::class_<tg::DType> dt(m, "DType");
  dt.def_property_readonly("itemsize", &tg::DType::itemsize);
  dt.def_property_readonly("name", &tg::DType::name);
  dt.def("__repr__", &tg::DType::repr);
  dt.def("__eq__", [](const tg::DType& a, py::handle b) {
    if (py::isinstance<tg::DType>(b)) return a == b.cast<tg::DType>();
    if (py::isinstance<py::str>(b)) {
      auto other = tg::dtype_from_name(b.cast<std::string>());
      return other && *other == a;
    }
    return false;
  });
  dt.def("__hash__", [](const tg::DType& a) { return std::hash<std::string>{}(a.repr()); });
  dt.def("is_float", &tg::DType::is_float);
  dt.def("is_int", &tg::DType::is_int);
  dt.def("is_unsigned", &tg::DType::is_unsigned);
  dt.def("is_bool", &tg::DType::is_bool);
  dt.def_property_readonly("np", [](const tg::DType& d) -> py::object {
    try {
      return numpy_dtype(d);
    } catch (py::type_error&) {
      return py::none();
    }
  });
  dt.def("min", &tg::DType::min_value);
  dt.def("max", &tg::DType::max_value);
  dt.def_static("from_name", [](const std::string& name) { return to_dtype(py::str(name)); });
  dt.def_static("least_upper", &tg::least_upper_dtype);
}

void bind_errors(py::module_& m) {
  // Registered generic first: pybind11 tries the newest translator first, so the specific ones win.
  auto error = py::register_exception<tg::Error>(m, "Error", PyExc_RuntimeError);
  py::register_exception<tg::DeviceError>(m, "DeviceError", error.ptr());
  py::register_exception<tg::PluginLoadError>(m, "PluginLoadError", error.ptr());
  py::register_exception<tg::UnknownPluginError>(m, "UnknownPluginError", error.ptr());
  py::register_exception<tg::DeviceUnavailableError>(m, "DeviceUnavailableError", error.ptr());
  py::register_exception<tg::JitError>(m, "JitError", error.ptr());
  // Misuse of shapes, dtypes and arguments is ValueError, as numpy and PyTorch raise.
  py::register_exception<tg::TensorError>(m, "TensorError", PyExc_ValueError);
  py::register_exception<tg::ShapeError>(m, "ShapeError", PyExc_ValueError);
  py::register_exception<tg::DTypeError>(m, "DTypeError", PyExc_ValueError);
  py::register_exception<tg::nn::StateDictError>(m, "StateDictError", PyExc_ValueError);
  py::register_exception<tg::SafetensorsError>(m, "SafetensorsError", PyExc_ValueError);
  py::register_exception<tg::DatasetError>(m, "DatasetError", PyExc_ValueError);
}

void bind_runtime(py::module_& m) {
  m.def("default_device", &tg::default_device);
  m.def(
      "set_default_device", [](const std::string& name) { tg::set_default_device(name); }, py::arg("name"));
  m.def("canonical_device", [](const std::string& name) { return tg::parse_device_name(name).canonical(); });
  m.def(
      "open_device",
      [](const std::string& name) {
        tg::OpenDevice d = tg::open_device(name);
        const tg_device_properties& p = d.device->properties();
        py::dict out;
        out["name"] = std::string(p.name);
        out["vendor"] = std::string(p.vendor);
        out["arch"] = std::string(p.arch);
        out["plugin"] = d.device->plugin().name();
        out["memory_bytes"] = p.memory_bytes;
        out["host_memory"] = bool(p.features & TG_FEATURE_HOST_MEMORY);
        return out;
      },
      py::arg("name"), "Opens a device (once per process) and returns its properties.");
  m.def(
      "list_devices",
      [] {
        py::list out;
        for (const tg::PluginDevices& p : tg::list_devices()) {
          py::dict e;
          e["plugin"] = p.plugin;
          e["devices"] = p.devices;
          e["error"] = p.error;
          out.append(e);
        }
        return out;
      },
      "Every plugin found: its devices, or why it has none.");
  m.def(
      "load_plugin", [](const std::string& path) { return tg::load_plugin(path); }, py::arg("path"));
  m.def("unload_plugin", &tg::unload_plugin, py::arg("name"));

  py::module_ s = m.def_submodule("settings", "The engine's settings (DEBUG, NOOPT, BEAM, ...)");
  s.def("debug", [] { return tg::config().debug; });
  s.def("noopt", [] { return tg::config().noopt; });
  s.def("beam", [] { return tg::config().beam; });
  s.def("set_debug", &tg::set_debug_level, py::arg("level"));
  s.def("set_noopt", &tg::set_noopt, py::arg("on"));
  s.def("set_beam", &tg::set_beam, py::arg("width"), py::arg("timeout_s") = 20.0);

  py::class_<tg::LaunchCounter>(m, "LaunchCounter")
      .def(py::init<>())
      .def_property_readonly("kernels", &tg::LaunchCounter::kernels)
      .def_property_readonly("copies", &tg::LaunchCounter::copies)
      .def("reset", &tg::LaunchCounter::reset);
}

} // namespace tgpy
