#include "device.hpp"

#include "compiler.hpp"
#include "program.hpp"

#include <tg/sdk/plugin.hpp>

#include <unistd.h>

#include <fstream>
#include <thread>

using tg::sdk::guard;
using tg::sdk::PluginError;
using tg::sdk::require;

namespace tg::cpu {
namespace {

// "model name" and "vendor_id" from /proc/cpuinfo (empty when absent).
std::string cpuinfo_field(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    auto value = line.substr(colon + 1);
    auto first = value.find_first_not_of(" \t");
    return first == std::string::npos ? std::string() : value.substr(first);
  }
  return {};
}

std::string vendor_name(const std::string& vendor_id) {
  if (vendor_id == "GenuineIntel") return "Intel";
  if (vendor_id == "AuthenticAMD") return "AMD";
  if (vendor_id.empty()) return "unknown";
  return vendor_id;
}

uint64_t all_dtypes_mask() {
  uint64_t mask = 0;
  for (tg_dtype d = TG_DTYPE_BOOL; d < TG_DTYPE_COUNT; ++d) mask |= TG_DTYPE_BIT(d);
  return mask;
}

} // namespace

uint64_t physical_memory_bytes() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return uint64_t(pages) * uint64_t(page_size);
}

tg_error* device_count(int32_t* out_count) {
  return guard("cpu.device_count", [&] { *require(out_count, "out_count") = 1; });
}

tg_error* device_open(const tg_device_open_args* args, tg_device** out_device) {
  return guard("cpu.device_open", [&] {
    auto a = tg::sdk::read_args(args, "args");
    require(out_device, "out_device");
    if (a.index != 0)
      throw PluginError(TG_ERROR_INVALID_ARGUMENT, "device index " + std::to_string(a.index) +
                                                       " out of range (this plugin has 1 device)");
    *out_device = new tg_device();
  });
}

void device_close(tg_device* device) { delete device; }

tg_error* device_properties(tg_device* device, tg_device_properties* out) {
  return guard("cpu.device_properties", [&] {
    require(device, "device");
    tg::sdk::write_out(out, device->properties, "out");
  });
}

tg_error* device_attribute_count(tg_device* device, int32_t* out_count) {
  return guard("cpu.device_attribute_count", [&] {
    require(device, "device");
    *require(out_count, "out_count") = int32_t(device->attributes.size());
  });
}

tg_error* device_attribute(tg_device* device, int32_t index, const char** out_key, const char** out_value) {
  return guard("cpu.device_attribute", [&] {
    require(device, "device");
    require(out_key, "out_key");
    require(out_value, "out_value");
    if (index < 0 || size_t(index) >= device->attributes.size())
      throw PluginError(TG_ERROR_NOT_FOUND, "attribute index " + std::to_string(index) + " out of range (" +
                                                std::to_string(device->attributes.size()) + " attributes)");
    *out_key = device->attributes[size_t(index)].first.c_str();
    *out_value = device->attributes[size_t(index)].second.c_str();
  });
}

tg_error* synchronize(tg_device* device) {
  return guard("cpu.synchronize", [&] { require(device, "device"); }); // launches are synchronous
}

} // namespace tg::cpu

tg_device::tg_device() {
  using namespace tg::cpu;
  const HostTarget& host = host_target();
  unsigned threads = pool.size();
  std::string model = cpuinfo_field("model name");
  if (model.empty()) model = host.cpu;
  auto& p = properties;
  p.struct_size = sizeof(p);
  tg::sdk::copy_name(p.name, model + " (" + std::to_string(threads) + " threads)");
  tg::sdk::copy_name(p.vendor, vendor_name(cpuinfo_field("vendor_id")));
  tg::sdk::copy_name(p.arch, host.cpu);
  p.memory_bytes = physical_memory_bytes();
  p.max_buffer_bytes = p.memory_bytes;
  p.local_memory_bytes = 0;
  for (int i = 0; i < 3; ++i) {
    p.max_local_size[i] = kMaxLocalThreads;
    p.max_global_size[i] = kMaxGlobalSize[i];
  }
  p.max_local_threads = kMaxLocalThreads;
  p.max_buffer_args = kMaxBufferArgs;
  p.max_scalar_args = kMaxScalarArgs;
  p.buffer_alignment = kBufferAlignment;
  p.compute_units = threads;
  p.subgroup_size = 1;
  p.vector_bytes = host.vector_bytes;
  p.dtype_mask = all_dtypes_mask();
  p.features = TG_FEATURE_TIMING | TG_FEATURE_HOST_MEMORY;

  attributes = {
      {"llvm_version", llvm_version_string()},
      {"target_triple", host.triple},
      {"cpu_name", host.cpu},
      {"cpu_features", host.features},
      {"threads", std::to_string(threads)},
      {"plugin_version", TG_CPU_PLUGIN_VERSION},
      {"codegen", "LLVM IR -> ORC LLJIT (in process)"},
  };
}

tg_device::~tg_device() = default;

tg::cpu::Jit& tg_device::jit() {
  if (!jit_) jit_ = std::make_unique<tg::cpu::Jit>();
  return *jit_;
}
