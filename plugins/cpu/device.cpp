#include "device.hpp"

#include "buffer.hpp"
#include "target.hpp"

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <utility>

namespace tg::cpu {
namespace {

constexpr uint32_t kMaxLocalThreads = 1024;
constexpr uint32_t kMaxGlobalSize[3] = {0x7fffffffu, 65535u, 65535u};
constexpr uint32_t kMaxArgs = 1024; // buffers and scalars each

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

uint64_t physical_memory_bytes() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return uint64_t(pages) * uint64_t(page_size);
}

} // namespace

Device::Device(std::shared_ptr<ThreadPool> pool) : pool_(std::move(pool)) {}

tg_device_properties Device::properties() const {
  const HostTarget& host = host_target();
  std::string model = cpuinfo_field("model name");
  if (model.empty()) model = host.cpu;
  tg_device_properties p{};
  sdk::copy_name(p.name, model + " (" + std::to_string(pool_->size()) + " threads)");
  sdk::copy_name(p.vendor, vendor_name(cpuinfo_field("vendor_id")));
  sdk::copy_name(p.arch, host.cpu);
  p.memory_bytes = physical_memory_bytes();
  p.max_buffer_bytes = p.memory_bytes;
  p.local_memory_bytes = 0;
  for (int i = 0; i < 3; ++i) {
    p.max_local_size[i] = kMaxLocalThreads;
    p.max_global_size[i] = kMaxGlobalSize[i];
  }
  p.max_local_threads = kMaxLocalThreads;
  p.max_buffer_args = kMaxArgs;
  p.max_scalar_args = kMaxArgs;
  p.buffer_alignment = kBufferAlignment;
  p.compute_units = pool_->size();
  p.subgroup_size = 1;
  p.vector_bytes = host.vector_bytes;
  for (tg_dtype d = TG_DTYPE_BOOL; d < TG_DTYPE_COUNT; ++d) p.dtype_mask |= TG_DTYPE_BIT(d);
  p.features = TG_FEATURE_TIMING | TG_FEATURE_HOST_MEMORY;
  return p;
}

std::vector<sdk::Attribute> Device::attributes() const {
  const HostTarget& host = host_target();
  return {
      {"llvm_version", llvm_version_string()},
      {"target_triple", host.triple},
      {"cpu_name", host.cpu},
      {"cpu_features", host.features},
      {"threads", std::to_string(pool_->size())},
      {"plugin_version", TG_CPU_PLUGIN_VERSION},
      {"codegen", "LLVM IR -> ORC LLJIT (in process)"},
      {"lane_gates", "load"}, // masked vector loads (IR 1.4)
  };
}

std::string Device::target() const { return target_string(resolve_target(nullptr)); }

std::unique_ptr<sdk::Buffer> Device::alloc(uint64_t size, uint64_t alignment, uint32_t) {
  return std::make_unique<Buffer>(size, alignment);
}

std::unique_ptr<sdk::Buffer> Device::import_buffer(uint64_t address, uint64_t size, std::function<void()>) {
  return std::make_unique<Buffer>(Buffer::Imported{}, reinterpret_cast<char*>(uintptr_t(address)), size);
}

std::unique_ptr<sdk::Program> Device::load_program(const sdk::Blob& blob) {
  return std::make_unique<Program>(jit(), blob);
}

namespace {

// The kernel's argument arrays (base + offset per buffer, raw scalar bytes), reusing `buffers`
// and `scalars` so a batch allocates nothing per launch once they have grown.
void marshal(const sdk::Launch& launch, std::vector<void*>& buffers, std::vector<int64_t>& scalars) {
  buffers.clear();
  for (const sdk::BufferArg& arg : launch.buffers)
    buffers.push_back(static_cast<Buffer*>(arg.buffer)->data() + arg.offset);
  scalars.resize(launch.scalars.size());
  for (size_t i = 0; i < scalars.size(); ++i)
    std::memcpy(&scalars[i], &launch.scalars[i].value, sizeof(int64_t));
}

uint64_t since(std::chrono::steady_clock::time_point start) {
  return uint64_t(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
}

} // namespace

uint64_t Device::launch(const sdk::Launch& launch) {
  std::vector<void*> buffers;
  std::vector<int64_t> scalars;
  marshal(launch, buffers, scalars);
  auto start = std::chrono::steady_clock::now();
  static_cast<const Program&>(launch.program)
      .run(*pool_, buffers.data(), scalars.data(), launch.global, launch.local);
  return since(start);
}

uint64_t Device::launch_batch(std::span<const sdk::Launch> launches, bool timed) {
  // All argument arrays first, in one pass: after a large kernel the handles they come from are
  // out of the caches, and independent loads in a row miss in parallel instead of one by one
  // between kernels. Then the kernels back to back on the pool. Timed: the kernels' run time
  // only, as launch() reports it, so a caller can tell host overhead from kernel time.
  std::vector<void*> buffers;
  std::vector<int64_t> scalars;
  std::vector<std::pair<size_t, size_t>> first(launches.size()); // each launch's offsets into them
  for (size_t i = 0; i < launches.size(); ++i) {
    first[i] = {buffers.size(), scalars.size()};
    for (const sdk::BufferArg& arg : launches[i].buffers)
      buffers.push_back(static_cast<Buffer*>(arg.buffer)->data() + arg.offset);
    for (const tg_scalar_arg& s : launches[i].scalars) {
      int64_t raw = 0;
      std::memcpy(&raw, &s.value, sizeof raw);
      scalars.push_back(raw);
    }
  }
  uint64_t total = 0;
  for (size_t i = 0; i < launches.size(); ++i) {
    auto start = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    static_cast<const Program&>(launches[i].program)
        .run(*pool_, buffers.data() + first[i].first, scalars.data() + first[i].second, launches[i].global,
             launches[i].local);
    if (timed) total += since(start);
  }
  return total;
}

Jit& Device::jit() {
  if (!jit_) jit_ = std::make_unique<Jit>();
  return *jit_;
}

} // namespace tg::cpu
