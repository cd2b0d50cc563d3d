// tinygrad_cpp._onnx: tg::onnx::Model for Python (python/tinygrad_cpp/onnx.py wraps it). A module
// of its own, so `import tinygrad_cpp` loads no protobuf; tensors cross as _core's Tensor class.
#include <tinygrad/onnx.hpp>
#include <tinygrad/tinygrad.hpp>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

namespace py = pybind11;

namespace {

// Ctrl-C during a run raises KeyboardInterrupt at the next kernel, as in _core.
void check_signals() {
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
}

// A declared input or output: (name, ONNX dtype name, dims or None, DType or None), each dim an
// int, a name or None (unknown); the DType is None where tg lacks the ONNX one.
py::tuple info_of(const tg::onnx::ValueInfo& v) {
  py::object dims = py::none();
  if (v.dims) {
    py::list out;
    for (const auto& d : *v.dims) {
      if (auto n = std::get_if<int64_t>(&d))
        out.append(*n);
      else if (auto s = std::get_if<std::string>(&d))
        out.append(*s);
      else
        out.append(py::none());
    }
    dims = py::tuple(out);
  }
  py::object dtype = v.dtype ? py::cast(*v.dtype) : py::none();
  return py::make_tuple(v.name, v.dtype_name, dims, dtype);
}

py::list infos_of(const std::vector<tg::onnx::ValueInfo>& vs) {
  py::list out;
  for (const auto& v : vs) out.append(info_of(v));
  return out;
}

} // namespace

PYBIND11_MODULE(_onnx, m) {
  m.doc() = "tinygrad.cpp's ONNX runtime (tg::onnx::Model)";
  // _core first: it registers the Tensor class this module's signatures use, and the base Error
  py::object base = py::module_::import("tinygrad_cpp._core").attr("Error");
  auto error = py::register_exception<tg::onnx::OnnxError>(m, "OnnxError", base.ptr());
  py::register_exception<tg::onnx::OnnxUnsupportedError>(m, "OnnxUnsupportedError", error.ptr());

  py::class_<tg::onnx::Model>(m, "Model")
      .def_static(
          "load",
          [](const std::filesystem::path& file, const std::string& device, bool replay) {
            return tg::onnx::Model::load(file, {.device = device, .replay = replay});
          },
          py::arg("file"), py::arg("device") = "", py::arg("replay") = true)
      .def_static(
          "from_bytes",
          [](const py::bytes& data, const std::string& device, bool replay) {
            return tg::onnx::Model::from_bytes(std::string_view(data), {},
                                               {.device = device, .replay = replay});
          },
          py::arg("data"), py::arg("device") = "", py::arg("replay") = true)
      .def(
          "run",
          [](const tg::onnx::Model& model, const std::map<std::string, tg::Tensor>& inputs) {
            tg::InterruptCheck interrupt(&check_signals);
            return model.run(inputs);
          },
          py::arg("inputs"))
      .def_property_readonly("inputs", [](const tg::onnx::Model& model) { return infos_of(model.inputs()); })
      .def_property_readonly("outputs",
                             [](const tg::onnx::Model& model) { return infos_of(model.outputs()); })
      .def_property_readonly("device", &tg::onnx::Model::device)
      .def_property_readonly("replays", &tg::onnx::Model::replays)
      .def("opset", &tg::onnx::Model::opset, py::arg("domain") = "");
}
