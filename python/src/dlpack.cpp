// DLPack both ways (the 0.6 header, Debian's libdlpack-dev): Tensor.__dlpack__/__dlpack_device__
// hand a tensor's memory to numpy/PyTorch without copying; Tensor.from_dlpack wraps theirs.
#include "bindings.hpp"

#include <dlpack/dlpack.h>

#include <cstring>

namespace tgpy {

namespace {

using tg::Tensor;

constexpr uint8_t kDLBoolCode = 6; // DLPack >= 0.8's kDLBool (PyTorch uses it for bool)

// DLPack's device type for a device: host memory is kDLCPU; others by their plugin.
std::pair<int, int> dl_device_of(const std::string& device) {
  tg::OpenDevice open = tg::open_device(device);
  if (open.device->properties().features & TG_FEATURE_HOST_MEMORY) return {kDLCPU, 0};
  const std::string& plugin = open.device->plugin().name();
  int index = open.device->index();
  if (plugin == "cuda") return {kDLCUDA, index};
  if (plugin == "amd") return {kDLROCM, index};
  if (plugin == "opencl" || plugin == "qcom") return {kDLOpenCL, index};
  if (plugin == "vulkan") return {kDLVulkan, index};
  if (plugin == "metal") return {kDLMetal, index};
  return {kDLExtDev, index};
}

DLDataType dl_dtype(tg::DType dt) {
  DLDataType out{};
  out.lanes = 1;
  out.bits = uint8_t(dt.itemsize() * 8);
  if (dt.is_bool())
    out.code = kDLBoolCode;
  else if (dt == tg::dtypes::bfloat16)
    out.code = kDLBfloat;
  else if (dt.is_float())
    out.code = kDLFloat;
  else if (dt.is_unsigned())
    out.code = kDLUInt;
  else
    out.code = kDLInt;
  return out;
}

tg::DType dtype_of_dl(DLDataType t) {
  namespace d = tg::dtypes;
  if (t.lanes != 1) throw py::type_error("from_dlpack: vector dtypes (lanes > 1) are not supported");
  if (t.code == kDLBoolCode && t.bits == 8) return d::bool_;
  if (t.code == kDLBfloat && t.bits == 16) return d::bfloat16;
  if (t.code == kDLFloat && t.bits == 16) return d::float16;
  if (t.code == kDLFloat && t.bits == 32) return d::float32;
  if (t.code == kDLFloat && t.bits == 64) return d::float64;
  if (t.code == kDLInt && t.bits == 8) return d::int8;
  if (t.code == kDLInt && t.bits == 16) return d::int16;
  if (t.code == kDLInt && t.bits == 32) return d::int32;
  if (t.code == kDLInt && t.bits == 64) return d::int64;
  if (t.code == kDLUInt && t.bits == 8) return d::uint8;
  if (t.code == kDLUInt && t.bits == 16) return d::uint16;
  if (t.code == kDLUInt && t.bits == 32) return d::uint32;
  if (t.code == kDLUInt && t.bits == 64) return d::uint64;
  throw py::type_error("from_dlpack: dtype (code " + std::to_string(t.code) + ", " + std::to_string(t.bits) +
                       " bits) has no tinygrad_cpp dtype");
}

struct Exported {
  DLManagedTensor managed{};
  std::vector<int64_t> shape;
  std::shared_ptr<const void> owner;
};

void delete_exported(DLManagedTensor* m) { delete static_cast<Exported*>(m->manager_ctx); }

py::capsule export_tensor(const Tensor& t) {
  InterruptScope interrupt;
  auto view = tg::memory_view(t);
  if (!view && t.numel() == 0) { // no memory to share: a DLTensor of zero elements and no data
    view.emplace();
    view->device = t.device(), view->dtype = t.dtype(), view->shape = t.shape();
  }
  if (!view)
    throw py::buffer_error("__dlpack__: device " + t.device() +
                           " cannot give its buffers' addresses (its plugin lacks ABI 1.3 buffer_address); "
                           "move the tensor first, e.g. .to(\"CPU\")");
  auto* e = new Exported;
  e->shape.assign(view->shape.begin(), view->shape.end());
  e->owner = view->owner;
  auto [type, id] = dl_device_of(view->device);
  DLTensor& dl = e->managed.dl_tensor;
  dl.data = reinterpret_cast<void*>(view->address);
  dl.device = DLDevice{DLDeviceType(type), id};
  dl.ndim = int(e->shape.size());
  dl.dtype = dl_dtype(view->dtype);
  dl.shape = e->shape.data();
  dl.strides = nullptr; // compact row-major
  dl.byte_offset = 0;
  e->managed.manager_ctx = e;
  e->managed.deleter = &delete_exported;
  // A capsule a consumer never took still owns the tensor: free it then.
  return py::capsule(&e->managed, "dltensor", [](PyObject* cap) {
    if (PyCapsule_IsValid(cap, "dltensor")) {
      auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
      if (m && m->deleter) m->deleter(m);
    }
  });
}

Tensor import_capsule(py::capsule cap) {
  if (!PyCapsule_IsValid(cap.ptr(), "dltensor"))
    throw py::value_error("from_dlpack: expected an unused \"dltensor\" capsule (each may be consumed once)");
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap.ptr(), "dltensor"));
  const DLTensor& dl = m->dl_tensor;
  tg::DType dt = dtype_of_dl(dl.dtype);
  tg::Dims shape(dl.shape, dl.shape + dl.ndim);
  // Compact row-major only (strides NULL, or equal to the compact ones; size-1 dims are free).
  if (dl.strides) {
    int64_t expect = 1;
    for (int i = dl.ndim - 1; i >= 0; --i) {
      if (dl.shape[i] != 1 && dl.strides[i] != expect)
        throw py::value_error("from_dlpack: only contiguous (row-major) tensors can be shared; call "
                              ".contiguous() on the source first");
      expect *= dl.shape[i];
    }
  }
  std::string device;
  if (dl.device.device_type == kDLCPU)
    device = "CPU";
  else if (dl.device.device_type == kDLCUDA)
    device = "CUDA:" + std::to_string(dl.device.device_id);
  else
    throw py::value_error("from_dlpack: device type " + std::to_string(int(dl.device.device_type)) +
                          " is not supported (CPU and CUDA are)");
  device = tg::parse_device_name(device).canonical();
  uint64_t address = reinterpret_cast<uint64_t>(dl.data) + dl.byte_offset;
  // From here the tensor owns the DLPack tensor: the capsule is marked used.
  PyCapsule_SetName(cap.ptr(), "used_dltensor");
  auto release = [m] {
    if (m->deleter) m->deleter(m);
  };
  int64_t n = tg::dims_prod(shape);
  if (n > 0) {
    try {
      if (auto t = tg::tensor_from_memory(address, shape, dt, device, release)) return *t;
    } catch (...) {
      release();
      throw;
    }
  }
  // The device cannot import (or the memory is misaligned): copy host memory; device memory it
  // cannot reach is an error.
  if (dl.device.device_type != kDLCPU) {
    release();
    throw py::value_error("from_dlpack: device " + device +
                          " cannot import this memory (misaligned, or its "
                          "plugin lacks ABI 1.3 buffer_import)");
  }
  std::vector<std::byte> bytes(size_t(n) * size_t(dt.itemsize()));
  if (!bytes.empty()) std::memcpy(bytes.data(), reinterpret_cast<const void*>(address), bytes.size());
  release();
  return Tensor::from_bytes(bytes, shape, dt, device);
}

} // namespace

void bind_dlpack(py::class_<Tensor>& cls) {
  cls.def(
      "__dlpack__",
      [](const Tensor& t, py::handle /*stream*/, py::kwargs) {
        // The memory is complete when this returns (memory_view synchronizes the device), so the
        // consumer's stream needs no event.
        return export_tensor(t);
      },
      py::arg("stream") = py::none());
  cls.def("__dlpack_device__", [](const Tensor& t) {
    auto [type, id] = dl_device_of(t.device());
    return py::make_tuple(type, id);
  });
  cls.def_static(
      "from_dlpack",
      [](py::object x) {
        if (py::isinstance<py::capsule>(x)) return import_capsule(x);
        if (!py::hasattr(x, "__dlpack__"))
          throw py::type_error("from_dlpack: the object has no __dlpack__ method");
        py::object capsule;
        py::tuple dev = x.attr("__dlpack_device__")();
        if (dev[0].cast<int>() == kDLCUDA)
          capsule = x.attr("__dlpack__")(py::arg("stream") = 1); // ordered after the legacy default stream
        else
          capsule = x.attr("__dlpack__")();
        return import_capsule(capsule);
      },
      py::arg("x"));
}

} // namespace tgpy
