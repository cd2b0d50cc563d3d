#include "device.hpp"
#include "compiler.hpp"
#include "matrix_units.hpp"
#include "nccl.hpp"
#include "program.hpp"

#include <tg/sdk/scalar_bytes.hpp>

#include <nvrtc.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace tg::cuda {
namespace {

// mma.sync m16n8k16 with float16 and bfloat16 inputs exists from sm_80 on (the kernel IR's WMMA).
// TG_CUDA_TENSOR_CORES=0 hides it (to compare against the kernels without it).
bool tensor_cores(int cc) {
  const char* env = std::getenv("TG_CUDA_TENSOR_CORES");
  return cc >= 80 && !(env && std::string(env) == "0");
}

// The `tensor_cores` attribute: mma.sync's shape from sm_80 on; on sm_90 (Hopper) also the
// warpgroup shapes of IR 1.2 WGMMA ("@wg": wgmma.mma_async, built for sm_90a; warpgroup_mma). On
// by default: the core's warpgroup matmul beats the mma.sync one (8192 f16 on an H200: 578 vs ~245
// TFLOPS; docs/cuda.md, "Tensor cores").
std::string tensor_core_shapes(int cc) {
  if (!tensor_cores(cc)) return "none";
  std::string s = "m16n8k16:f16,bf16->f32";
  if (warpgroup_mma(cc))
    s += "; m64n64k16:f16,bf16->f32@wg; m64n128k16:f16,bf16->f32@wg; m64n256k16:f16,bf16->f32@wg";
  return s;
}

int attribute(CUdevice device, CUdevice_attribute which) {
  int value = 0;
  check(driver().cuDeviceGetAttribute(&value, which, device), "cuDeviceGetAttribute");
  return value;
}

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

// An import's memory: device memory (cuMemAlloc, cudaMalloc, a PyTorch tensor) of GPU `device`,
// the whole range inside one allocation. Throws INVALID_ARGUMENT saying what it is instead.
void check_importable(CUdeviceptr address, uint64_t size, CUdevice device) {
  const Driver& d = driver();
  const std::string where = "address " + hex(address);
  auto invalid = [](const std::string& why) { throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT, why); };
  unsigned int type = 0;
  CUresult r = d.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, address);
  if (r != CUDA_SUCCESS)
    invalid(where + " is not memory CUDA knows (cuPointerGetAttribute: " + result_text(r) + ")");
  if (type != CU_MEMORYTYPE_DEVICE)
    invalid(where + " is not device memory (CUmemorytype " + std::to_string(type) +
            "); import host memory through the CPU device");
  int ordinal = -1;
  r = d.cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, address);
  if (r != CUDA_SUCCESS || ordinal != int(device))
    invalid(where + " is memory of " +
            (r == CUDA_SUCCESS ? "CUDA:" + std::to_string(ordinal) : "another GPU") +
            ", not of this device (CUDA:" + std::to_string(int(device)) + ")");
  CUdeviceptr start = 0;
  size_t range = 0;
  if (d.cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, address) == CUDA_SUCCESS &&
      d.cuPointerGetAttribute(&range, CU_POINTER_ATTRIBUTE_RANGE_SIZE, address) == CUDA_SUCCESS &&
      (address - start) + size > range)
    invalid(where + " + " + std::to_string(size) + " bytes reaches past the end of its allocation (" +
            std::to_string(range) + " bytes from " + hex(start) + ")");
}

tg_device_properties read_properties(CUdevice dev) {
  const Driver& d = driver();
  tg_device_properties p{};
  char name[256] = {};
  check(d.cuDeviceGetName(name, sizeof name, dev), "cuDeviceGetName");
  sdk::copy_name(p.name, name);
  sdk::copy_name(p.vendor, "NVIDIA");
  const int cc = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10 +
                 attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  sdk::copy_name(p.arch, "sm_" + std::to_string(cc));
  size_t total = 0;
  check(d.cuDeviceTotalMem(&total, dev), "cuDeviceTotalMem");
  p.memory_bytes = total;
  p.max_buffer_bytes = total;
  // Static __shared__ arrays are limited to 48 KiB per block: what the heuristics plan with. More
  // (up to the attribute max_local_memory_bytes) goes through dynamic shared memory.
  p.local_memory_bytes = uint64_t(attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK));
  p.max_local_threads = uint32_t(attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
  const CUdevice_attribute block[3] = {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X,
                                       CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,
                                       CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z};
  const CUdevice_attribute grid[3] = {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
                                      CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z};
  for (int axis = 0; axis < 3; ++axis) {
    p.max_local_size[axis] = std::min<uint32_t>(uint32_t(attribute(dev, block[axis])), p.max_local_threads);
    p.max_global_size[axis] = uint32_t(attribute(dev, grid[axis]));
  }
  // 4 KiB of kernel parameters: half for buffers (8-byte pointers), half for scalars (<= 8 bytes).
  p.max_buffer_args = 256;
  p.max_scalar_args = 256;
  p.buffer_alignment = 256; // cuMemAlloc's alignment
  p.compute_units = uint32_t(attribute(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
  p.subgroup_size = uint32_t(attribute(dev, CU_DEVICE_ATTRIBUTE_WARP_SIZE));
  p.vector_bytes = 16; // 128-bit loads
  for (tg_dtype dt = TG_DTYPE_BOOL; dt <= TG_DTYPE_FLOAT64; ++dt) p.dtype_mask |= TG_DTYPE_BIT(dt);
  p.features = TG_FEATURE_LOCAL_MEMORY | TG_FEATURE_BARRIER | TG_FEATURE_TIMING | TG_FEATURE_ASYNC;
  if (tensor_cores(cc)) p.features |= TG_FEATURE_TENSOR_CORES;
  return p;
}

// Packs a launch's arguments into `call` (its vectors reused: no allocation once they have grown):
// each buffer's device address (base + offset), then the scalars in their parameter types, then
// the completion word's address and number (stream.hpp; none: 0, 0), each at an 8-byte aligned
// offset.
void pack_call(const sdk::Launch& launch, KernelCall& call, const Stream::Completion& done = {}) {
  const Program& program = static_cast<Program&>(launch.program);
  call.function = program.function();
  call.shared_bytes = program.dynamic_shared_bytes();
  call.grid = launch.global;
  call.block = launch.local;
  call.name = launch.signature.kernel_name;
  const size_t count = launch.buffers.size() + launch.scalars.size() + 2;
  call.args.assign(8 * count, 0);
  call.offsets.clear();
  size_t at = 0;
  auto append = [&](const void* bytes, size_t size) {
    std::memcpy(call.args.data() + at, bytes, size);
    call.offsets.push_back(at);
    at += 8;
  };
  for (const sdk::BufferArg& b : launch.buffers) {
    const CUdeviceptr address = static_cast<Buffer*>(b.buffer)->device_address() + b.offset;
    append(&address, sizeof address);
  }
  for (const tg_scalar_arg& s : launch.scalars) {
    const sdk::ScalarBytes value = sdk::scalar_bytes(s);
    append(value.bytes, value.size);
  }
  append(&done.word, sizeof done.word);
  append(&done.number, sizeof done.number);
}

KernelCall kernel_call(const sdk::Launch& launch) {
  KernelCall call;
  pack_call(launch, call);
  return call;
}

void launch_call(const KernelCall& call, CUstream stream, const std::string& name,
                 std::vector<void*>& params) {
  params.clear();
  for (size_t offset : call.offsets) params.push_back(const_cast<unsigned char*>(call.args.data() + offset));
  const CUresult r = driver().cuLaunchKernel(call.function, call.grid[0], call.grid[1], call.grid[2],
                                             call.block[0], call.block[1], call.block[2], call.shared_bytes,
                                             stream, params.data(), nullptr);
  if (r != CUDA_SUCCESS) // the message only on failure: not built on every launch
    check(r, "cuLaunchKernel(" + name + ", grid " + std::to_string(call.grid[0]) + "x" +
                 std::to_string(call.grid[1]) + "x" + std::to_string(call.grid[2]) + ", block " +
                 std::to_string(call.block[0]) + "x" + std::to_string(call.block[1]) + "x" +
                 std::to_string(call.block[2]) + ")");
}

} // namespace

Device::Device(int32_t index) {
  const Driver& d = driver();
  check(d.cuDeviceGet(&device_, index), "cuDeviceGet(" + std::to_string(index) + ")");
  properties_ = read_properties(device_);
  max_shared_bytes_ = uint32_t(attribute(device_, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN));
  check(d.cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
  try {
    bind();
    stream_ = std::make_unique<Stream>();
    check(d.cuEventCreate(&start_, CU_EVENT_DEFAULT), "cuEventCreate");
    check(d.cuEventCreate(&end_, CU_EVENT_DEFAULT), "cuEventCreate");
    memory_ = std::make_unique<Memory>(context_, *stream_);
    graphs_ = std::make_unique<Graphs>(*stream_);
  } catch (...) {
    graphs_.reset();
    memory_.reset();
    if (start_) d.cuEventDestroy(start_);
    if (end_) d.cuEventDestroy(end_);
    stream_.reset();
    d.cuDevicePrimaryCtxRelease(device_);
    throw;
  }
  const char* graphs = std::getenv("TG_CUDA_GRAPHS");
  use_graphs_ = !(graphs && std::string(graphs) == "0");
}

Device::~Device() {
  const Driver& d = driver();
  d.cuCtxSetCurrent(context_);
  if (stream_) stream_->drain();
  graphs_.reset();
  memory_.reset();
  if (start_) d.cuEventDestroy(start_);
  if (end_) d.cuEventDestroy(end_);
  stream_.reset();
  d.cuDevicePrimaryCtxRelease(device_);
}

void Device::bind() const { make_current(context_); }

std::vector<tg_matrix_unit> Device::matrix_units() const {
  return cuda::matrix_units(attribute(device_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10 +
                            attribute(device_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
}

std::vector<sdk::Attribute> Device::attributes() const {
  const Driver& d = driver();
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  const int cc_major = attribute(device_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  const int cc_minor = attribute(device_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  std::vector<sdk::Attribute> a = {
      {"cuda.compute_capability", std::to_string(cc_major) + "." + std::to_string(cc_minor)},
      {"cuda.driver_version", std::to_string(d.version / 1000) + "." + std::to_string(d.version % 1000 / 10)},
      {"cuda.nvrtc_version", std::to_string(major) + "." + std::to_string(minor)},
      {"cuda.l2_bytes", std::to_string(attribute(device_, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE))},
      {"cuda.memory_bus_bits",
       std::to_string(attribute(device_, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH))},
      {"cuda.launch_batch", use_graphs_ ? "CUDA graphs" : "plain launches (TG_CUDA_GRAPHS=0)"},
      {"work_group_execution", "parallel"},
      {"tensor_cores", tensor_core_shapes(cc_major * 10 + cc_minor)},
      // the most local memory a kernel may use (the opt-in maximum through dynamic shared memory);
      // local_memory_bytes stays the 48 KiB the heuristics plan with (docs/abi.md, attributes)
      {"max_local_memory_bytes", std::to_string(max_shared_bytes_)},
      {"cuda.nccl", nccl::status()}, // collectives between GPUs (collectives.hpp)
  };
  // sm_80 and newer copy 16 bytes global -> shared without registers (cp.async; the renderer's
  // tg_copy16): double-buffered staged tiles then copy ahead of each step (docs/abi.md, attributes)
  if (cc_major >= 8) a.push_back({"async_local_copies", "16"});
  return a;
}

std::unique_ptr<sdk::Buffer> Device::alloc(uint64_t size, uint64_t alignment, uint32_t) {
  bind();
  return std::make_unique<Buffer>(*memory_, size, alignment);
}

std::unique_ptr<sdk::Buffer> Device::import_buffer(uint64_t address, uint64_t size, std::function<void()>) {
  bind();
  if (size != 0) check_importable(CUdeviceptr(address), size, device_);
  // The producer (DLPack: PyTorch asked with stream=1) ordered its writes before the legacy
  // default stream; waiting for that stream makes them complete before our stream reads.
  check(driver().cuStreamSynchronize(nullptr), "cuStreamSynchronize(legacy default stream)");
  return std::make_unique<Buffer>(Buffer::Imported{}, *memory_, CUdeviceptr(address), size);
}

std::unique_ptr<sdk::Program> Device::load_program(const sdk::Blob& blob) {
  Graphs* graphs = graphs_.get();
  return std::make_unique<Program>(context_, blob.payload, max_shared_bytes_,
                                   [graphs](CUfunction f) { graphs->forget(f); });
}

uint64_t Device::elapsed_since_start() {
  const Driver& d = driver();
  check(d.cuEventRecord(end_, stream_->get()), "cuEventRecord(end)");
  check(d.cuEventSynchronize(end_), "cuEventSynchronize(end)");
  float ms = 0;
  check(d.cuEventElapsedTime(&ms, start_, end_), "cuEventElapsedTime");
  return uint64_t(double(ms) * 1e6);
}

uint64_t Device::launch(const sdk::Launch& launch) {
  bind();
  const Driver& d = driver();
  // One block, untimed: it carries the completion word, so a synchronize right after it needs no
  // driver call (stream.hpp). Larger grids finish block by block and cannot say when all are done.
  const bool one_block = !launch.timed && launch.global == std::array<uint32_t, 3>{1, 1, 1};
  const Stream::Completion done = one_block ? stream_->next_completion() : Stream::Completion{};
  pack_call(launch, call_, done); // into the device's scratch: no allocation once it has grown
  if (launch.timed) check(d.cuEventRecord(start_, stream_->get()), "cuEventRecord(start)");
  launch_call(call_, stream_->get(), launch.signature.kernel_name, params_);
  if (one_block) stream_->completion_queued(done);
  return launch.timed ? elapsed_since_start() : 0;
}

uint64_t Device::launch_batch(std::span<const sdk::Launch> launches, bool timed) {
  bind();
  const Driver& d = driver();
  std::vector<KernelCall> calls;
  calls.reserve(launches.size());
  for (const sdk::Launch& l : launches) calls.push_back(kernel_call(l));
  if (timed) check(d.cuEventRecord(start_, stream_->get()), "cuEventRecord(start)");
  if (use_graphs_ && calls.size() > 1)
    graphs_->launch(calls);
  else {
    std::vector<void*> params;
    for (size_t i = 0; i < calls.size(); ++i)
      launch_call(calls[i], stream_->get(), launches[i].signature.kernel_name, params);
  }
  return timed ? elapsed_since_start() : 0;
}

void Device::synchronize() {
  bind();
  stream_->wait("cuStreamSynchronize");
}

} // namespace tg::cuda
