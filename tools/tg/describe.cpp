#include "tools/tg/describe.hpp"

#include <tg/sdk/kernel_ir.hpp>

#include <utility>

namespace tg::cli {

std::string dtype_list(uint64_t mask) {
  std::string out;
  for (tg_dtype d = 1; d < TG_DTYPE_COUNT; ++d)
    if (mask & TG_DTYPE_BIT(d)) out += (out.empty() ? "" : " ") + std::string(sdk::dtype_name(d));
  return out.empty() ? "none" : out;
}

std::string feature_list(uint64_t features) {
  static const std::pair<uint64_t, const char*> names[] = {{TG_FEATURE_LOCAL_MEMORY, "local_memory"},
                                                           {TG_FEATURE_BARRIER, "barrier"},
                                                           {TG_FEATURE_TIMING, "timing"},
                                                           {TG_FEATURE_HOST_MEMORY, "host_memory"},
                                                           {TG_FEATURE_FP16_MATH, "fp16_math"},
                                                           {TG_FEATURE_TENSOR_CORES, "tensor_cores"},
                                                           {TG_FEATURE_SUBGROUPS, "subgroups"},
                                                           {TG_FEATURE_ASYNC, "async"}};
  std::string out;
  for (auto [bit, name] : names)
    if (features & bit) out += (out.empty() ? "" : " ") + std::string(name);
  return out.empty() ? "none" : out;
}

namespace {
std::string mib(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }
std::string dims(const uint32_t (&v)[3]) {
  return std::to_string(v[0]) + "x" + std::to_string(v[1]) + "x" + std::to_string(v[2]);
}
} // namespace

void describe_device(std::ostream& os, const Device& device, const std::string& indent) {
  const auto& p = device.properties();
  os << indent << "name:            " << p.name << "\n"
     << indent << "vendor:          " << p.vendor << "\n"
     << indent << "arch:            " << p.arch << "\n"
     << indent << "memory:          " << mib(p.memory_bytes) << " (max buffer " << mib(p.max_buffer_bytes)
     << ")\n"
     << indent << "compute units:   " << p.compute_units << "\n"
     << indent << "local size max:  " << dims(p.max_local_size) << " (" << p.max_local_threads
     << " threads)\n"
     << indent << "global size max: " << dims(p.max_global_size) << "\n"
     << indent << "local memory:    " << p.local_memory_bytes << " bytes\n"
     << indent << "args max:        " << p.max_buffer_args << " buffers, " << p.max_scalar_args
     << " scalars\n"
     << indent << "alignment:       " << p.buffer_alignment << " bytes\n"
     << indent << "subgroup/vector: " << p.subgroup_size << " threads, " << p.vector_bytes << " bytes\n"
     << indent << "dtypes:          " << dtype_list(p.dtype_mask) << "\n"
     << indent << "features:        " << feature_list(p.features) << "\n";
  for (const auto& [key, value] : device.attributes()) os << indent << key << ": " << value << "\n";
}

int describe_plugin_devices(std::ostream& os, const std::shared_ptr<Plugin>& plugin,
                            const std::string& indent) {
  int count = 0;
  try {
    count = plugin->device_count();
  } catch (const DeviceUnavailableError& e) {
    os << indent << "UNAVAILABLE: " << e.what() << "\n";
    return 0; // hardware absent here: the plugin works as it should
  } catch (const std::exception& e) {
    os << indent << "error: " << e.what() << "\n";
    return 1;
  }
  os << indent << count << (count == 1 ? " device" : " devices") << "\n";
  int failed = 0;
  for (int i = 0; i < count; ++i) {
    os << indent << "device " << i << ":\n";
    try {
      auto device = Device::open(plugin, i);
      describe_device(os, *device, indent + "  ");
    } catch (const std::exception& e) {
      os << indent << "  cannot open: " << e.what() << "\n";
      ++failed;
    }
  }
  return failed;
}

} // namespace tg::cli
