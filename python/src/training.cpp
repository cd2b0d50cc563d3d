// Optimizers, gradient clipping, the JIT, safetensors and datasets: the core's, with tinygrad's
// argument names.
#include "bindings.hpp"

namespace tgpy {

namespace {
using tg::Tensor;
namespace optim = tg::optim;
} // namespace

void bind_training(py::module_& m) {
  py::class_<optim::Optimizer> opt(m, "Optimizer");
  opt.def("zero_grad", &optim::Optimizer::zero_grad);
  opt.def("step", [](optim::Optimizer& o) {
    InterruptScope interrupt;
    o.step();
  });
  opt.def("schedule_step", &optim::Optimizer::schedule_step);
  opt.def_readwrite("lr", &optim::Optimizer::lr);
  // A 0-d tensor the steps read the learning rate from instead of lr (None: lr): set from an input
  // of a TinyJit'd step, a schedule's value reaches the replays too (host values stay as captured).
  opt.def_readwrite("lr_tensor", &optim::Optimizer::lr_tensor);
  opt.def_property_readonly("params", &optim::Optimizer::params);
  opt.def_property_readonly("buffers", &optim::Optimizer::buffers);
  opt.def_property_readonly("step_count", &optim::Optimizer::step_count);

  py::class_<optim::SGD, optim::Optimizer>(m, "SGD").def(
      py::init<std::vector<Tensor>, double, double, double, bool>(), py::arg("params"), py::arg("lr") = 0.001,
      py::arg("momentum") = 0.0, py::arg("weight_decay") = 0.0, py::arg("nesterov") = false);
  py::class_<optim::Adam, optim::Optimizer>(m, "Adam").def(
      py::init<std::vector<Tensor>, double, double, double, double, double>(), py::arg("params"),
      py::arg("lr") = 0.001, py::arg("b1") = 0.9, py::arg("b2") = 0.999, py::arg("eps") = 1e-8,
      py::arg("weight_decay") = 0.0);
  py::class_<optim::AdamW, optim::Adam>(m, "AdamW")
      .def(py::init<std::vector<Tensor>, double, double, double, double, double>(), py::arg("params"),
           py::arg("lr") = 0.001, py::arg("b1") = 0.9, py::arg("b2") = 0.999, py::arg("eps") = 1e-8,
           py::arg("weight_decay") = 0.01);

  // torch.nn.utils.clip_grad_norm_ (L2): the norm as a lazy 0-d tensor; the gradients are scaled lazily.
  m.def(
      "clip_grad_norm",
      [](const std::vector<Tensor>& params, double max_norm) {
        return tg::nn::clip_grad_norm(params, max_norm);
      },
      py::arg("parameters"), py::arg("max_norm"));

  // The JIT over a function of tensors to tensors; tinygrad_cpp.TinyJit (jit.py) adapts any
  // Python signature to it.
  py::class_<tg::TinyJit>(m, "TensorJit")
      .def(py::init([](py::function fn) {
             return std::make_unique<tg::TinyJit>(
                 [fn](const std::vector<Tensor>& in) { return fn(in).cast<std::vector<Tensor>>(); });
           }),
           py::arg("fn"))
      .def("__call__",
           [](tg::TinyJit& jit, const std::vector<Tensor>& in) {
             InterruptScope interrupt;
             return jit(in);
           })
      .def_property_readonly("captured", &tg::TinyJit::captured)
      .def_property_readonly("calls", &tg::TinyJit::calls)
      .def_property_readonly("replays", &tg::TinyJit::replays)
      .def_property_readonly("captures", &tg::TinyJit::captures)
      .def_property_readonly("kernel_count", &tg::TinyJit::kernel_count)
      .def("reset", &tg::TinyJit::reset);

  m.def(
      "safe_save",
      [](const std::map<std::string, Tensor>& tensors, const std::string& path,
         const std::map<std::string, std::string>& metadata) {
        InterruptScope interrupt;
        tg::safe_save(path, tensors, metadata);
      },
      py::arg("tensors"), py::arg("fn"), py::arg("metadata") = std::map<std::string, std::string>{});
  m.def(
      "safe_load",
      [](const std::string& path, py::handle device) { return tg::safe_load(path, to_device(device)); },
      py::arg("fn"), py::arg("device") = py::none());
  m.def(
      "safe_load_metadata", [](const std::string& path) { return tg::safe_load_metadata(path); },
      py::arg("fn"));

  m.def(
      "load_mnist",
      [](py::handle dir, py::handle device) {
        tg::MnistData d = dir.is_none() ? tg::load_mnist(tg::default_mnist_dir(), to_device(device))
                                        : tg::load_mnist(dir.cast<std::string>(), to_device(device));
        return py::make_tuple(d.x_train, d.y_train, d.x_test, d.y_test);
      },
      py::arg("dir") = py::none(), py::arg("device") = py::none(),
      "Fashion-MNIST (Debian's dataset-fashion-mnist, or $TG_MNIST_DIR): X_train, Y_train, X_test, Y_test as "
      "uint8 tensors, images (N, 1, 28, 28).");
}

} // namespace tgpy
