#include "device.hpp"
#include "matrix_units.hpp"
#include "program.hpp"

#include <algorithm>

namespace tg::amd {
namespace {

int attribute(int device, hip::Attribute which) {
  int value = 0;
  check(hip_runtime().hipDeviceGetAttribute(&value, which, device),
        "hipDeviceGetAttribute(" + std::to_string(int(which)) + ")");
  return value;
}

// "gfx90a:sramecc+:xnack-" -> "gfx90a": the processor LLVM compiles for; the feature suffixes are
// the defaults of a code object that does not name them.
std::string processor(const std::string& arch_name) { return arch_name.substr(0, arch_name.find(':')); }

tg_device_properties read_properties(int dev, const std::string& arch_name) {
  const HipRuntime& h = hip_runtime();
  tg_device_properties p{};
  char name[256] = {};
  check(h.hipDeviceGetName(name, sizeof name, dev), "hipDeviceGetName");
  sdk::copy_name(p.name, name);
  sdk::copy_name(p.vendor, "AMD");
  sdk::copy_name(p.arch, processor(arch_name));
  size_t total = 0;
  check(h.hipDeviceTotalMem(&total, dev), "hipDeviceTotalMem");
  p.memory_bytes = total;
  p.max_buffer_bytes = total;
  p.local_memory_bytes = uint64_t(attribute(dev, hip::kMaxSharedMemoryPerBlock));
  p.max_local_threads = uint32_t(attribute(dev, hip::kMaxThreadsPerBlock));
  for (int axis = 0; axis < 3; ++axis) {
    const uint32_t block = uint32_t(attribute(dev, hip::Attribute(hip::kMaxBlockDimX + axis)));
    p.max_local_size[axis] = std::min(block, p.max_local_threads);
    p.max_global_size[axis] = uint32_t(attribute(dev, hip::Attribute(hip::kMaxGridDimX + axis)));
  }
  // The kernarg segment holds 8 bytes per argument (hsaco.cpp); HIP takes 4 KiB of kernargs, of
  // which the hidden arguments need up to 256 bytes.
  p.max_buffer_args = 224;
  p.max_scalar_args = 224;
  p.buffer_alignment = 256; // hipMalloc's alignment
  p.compute_units = uint32_t(attribute(dev, hip::kMultiprocessorCount));
  p.subgroup_size = uint32_t(attribute(dev, hip::kWarpSize)); // 64 (CDNA) or 32 (RDNA)
  p.vector_bytes = 16;                                        // 128-bit loads
  for (tg_dtype dt = TG_DTYPE_BOOL; dt <= TG_DTYPE_FLOAT64; ++dt) p.dtype_mask |= TG_DTYPE_BIT(dt);
  p.features = TG_FEATURE_LOCAL_MEMORY | TG_FEATURE_BARRIER | TG_FEATURE_TIMING | TG_FEATURE_ASYNC;
  return p;
}

} // namespace

Device::Device(int32_t index) : index_(index) {
  const HipRuntime& h = hip_runtime();
  bind();
  arch_name_ = device_arch_name(index_);
  properties_ = read_properties(index_, arch_name_);
  try {
    check(h.hipStreamCreateWithFlags(&stream_, hip::kStreamNonBlocking), "hipStreamCreateWithFlags");
    check(h.hipEventCreate(&start_), "hipEventCreate");
    check(h.hipEventCreate(&end_), "hipEventCreate");
    memory_ = std::make_unique<Memory>(index_, stream_);
  } catch (...) {
    if (end_) h.hipEventDestroy(end_);
    if (start_) h.hipEventDestroy(start_);
    if (stream_) h.hipStreamDestroy(stream_);
    throw;
  }
}

Device::~Device() {
  const HipRuntime& h = hip_runtime();
  h.hipSetDevice(index_);
  h.hipStreamSynchronize(stream_);
  memory_.reset();
  h.hipEventDestroy(start_);
  h.hipEventDestroy(end_);
  h.hipStreamDestroy(stream_);
}

void Device::bind() const { check(hip_runtime().hipSetDevice(index_), "hipSetDevice"); }

std::vector<sdk::Attribute> Device::attributes() const {
  int version = 0;
  hip_runtime().hipRuntimeGetVersion(&version);
  return {
      {"amd.gcn_arch_name", arch_name_},
      {"amd.hip_runtime_version", std::to_string(version)},
      {"amd.l2_bytes", std::to_string(attribute(index_, hip::kL2CacheSize))},
      {"amd.launch_batch", "plain launches on one stream"},
      {"work_group_execution", "parallel"},
  };
}

std::vector<tg_matrix_unit> Device::matrix_units() const {
  return matrix_unit_descriptions(properties_.arch);
}

std::unique_ptr<sdk::Buffer> Device::alloc(uint64_t size, uint64_t alignment, uint32_t) {
  bind();
  return std::make_unique<Buffer>(*memory_, size, alignment);
}

std::unique_ptr<sdk::Program> Device::load_program(const sdk::Blob& blob) {
  return std::make_unique<Program>(index_, blob.payload, blob.signature);
}

void Device::enqueue(const sdk::Launch& launch) {
  const auto& program = static_cast<const Program&>(launch.program);
  const auto& g = launch.global;
  const auto& l = launch.local;
  if (const uint64_t threads = uint64_t(l[0]) * l[1] * l[2];
      threads > program.layout().max_flat_workgroup_size)
    throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT,
                           "amd: a work group of " + std::to_string(threads) + " items, but " +
                               launch.signature.kernel_name + " was compiled for at most " +
                               std::to_string(program.layout().max_flat_workgroup_size));
  std::vector<std::byte> args = program.kernargs(launch);
  size_t size = args.size();
  void* extra[] = {hip::kLaunchParamBufferPointer, args.data(), hip::kLaunchParamBufferSize, &size,
                   hip::kLaunchParamEnd};
  // HIP copies the kernarg buffer when the launch is queued, so `args` may go at return.
  check(hip_runtime().hipModuleLaunchKernel(program.function(), g[0], g[1], g[2], l[0], l[1], l[2], 0,
                                            stream_, nullptr, extra),
        "hipModuleLaunchKernel(" + launch.signature.kernel_name + ", grid " + std::to_string(g[0]) + "x" +
            std::to_string(g[1]) + "x" + std::to_string(g[2]) + ", block " + std::to_string(l[0]) + "x" +
            std::to_string(l[1]) + "x" + std::to_string(l[2]) + ")");
}

uint64_t Device::elapsed_since_start() {
  const HipRuntime& h = hip_runtime();
  check(h.hipEventRecord(end_, stream_), "hipEventRecord(end)");
  check(h.hipEventSynchronize(end_), "hipEventSynchronize(end)");
  float ms = 0;
  check(h.hipEventElapsedTime(&ms, start_, end_), "hipEventElapsedTime");
  return uint64_t(double(ms) * 1e6);
}

uint64_t Device::launch(const sdk::Launch& launch) { return launch_batch({&launch, 1}, launch.timed); }

// A loop of launches on the one stream, between the timing events (hipGraph would save launch
// overhead; not written).
uint64_t Device::launch_batch(std::span<const sdk::Launch> launches, bool timed) {
  bind();
  if (timed) check(hip_runtime().hipEventRecord(start_, stream_), "hipEventRecord(start)");
  for (const sdk::Launch& l : launches) enqueue(l);
  return timed ? elapsed_since_start() : 0;
}

void Device::synchronize() {
  bind();
  check(hip_runtime().hipStreamSynchronize(stream_), "hipStreamSynchronize");
}

} // namespace tg::amd
