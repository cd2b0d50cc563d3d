// A recording stand-in for the HIP runtime (libamdhip64.so), loaded by the AMD plugin through
// TG_AMD_HIP_LIBRARY in amd_runtime_test. Two devices (gfx90a); "device memory" is host memory,
// so a test can follow a kernarg pointer; kernels never run: each launch's function, dimensions
// and kernarg bytes are recorded for the test to check. TG_STUB_HIP_ARCH, read at each properties
// call, replaces gcnArchName (and a gfx11 name makes the wave 32 lanes). Its own control functions
// (stub_hip_*) are found by the test with dlsym on the same library. Error codes and layouts as
// HIP 5's hip_runtime_api.h declares them.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {

constexpr int kSuccess = 0, kInvalidValue = 1, kOutOfMemory = 2, kInvalidDevice = 101, kInvalidImage = 200,
              kNotFound = 500;
constexpr int kDevices = 2;

struct Function {
  std::string name;
};
struct Module {
  std::vector<unsigned char> image;
  std::vector<std::unique_ptr<Function>> functions; // freed with the module, as HIP's are
};

struct Launch {
  std::string kernel;
  unsigned grid[3], block[3], shared;
  std::vector<unsigned char> kernargs;
};

struct State {
  std::mutex mutex;
  std::map<void*, size_t> allocations;
  uint64_t allocated = 0, limit = UINT64_MAX;
  std::vector<Launch> launches;
  std::vector<std::vector<unsigned char>> images;
  std::mutex calls_mutex;
  std::string calls; // "name;name;..."
};
State& state() {
  static State s;
  return s;
}
thread_local int t_device = 0;

void record(const char* name) {
  std::lock_guard lock(state().calls_mutex);
  state().calls += std::string(name) + ";";
}

// The gcnArchName the devices report: TG_STUB_HIP_ARCH, else `fallback`.
const char* arch_name(const char* fallback) {
  const char* env = std::getenv("TG_STUB_HIP_ARCH");
  return env && *env ? env : fallback;
}

// An ELF image's size from its section header table (HIP reads the size from the image, too).
size_t elf_size(const unsigned char* elf) {
  uint64_t shoff = 0;
  uint16_t shentsize = 0, shnum = 0;
  std::memcpy(&shoff, elf + 0x28, 8);
  std::memcpy(&shentsize, elf + 0x3a, 2);
  std::memcpy(&shnum, elf + 0x3c, 2);
  return size_t(shoff + uint64_t(shentsize) * shnum);
}

} // namespace

extern "C" {

// --- the HIP functions the plugin uses ---
int hipGetDeviceCount(int* n) {
  *n = kDevices;
  return kSuccess;
}
const char* hipGetErrorName(int e) { return e == kOutOfMemory ? "hipErrorOutOfMemory" : "hipErrorStub"; }
int hipRuntimeGetVersion(int* v) {
  *v = 50223000;
  return kSuccess;
}
int hipSetDevice(int d) {
  if (d < 0 || d >= kDevices) return kInvalidDevice;
  t_device = d;
  return kSuccess;
}
int hipDeviceGetName(char* name, int len, int d) {
  if (d < 0 || d >= kDevices) return kInvalidDevice;
  std::snprintf(name, size_t(len), "Stub AMD GPU %d", d);
  return kSuccess;
}
int hipDeviceGetAttribute(int* v, int attribute, int d) {
  if (d < 0 || d >= kDevices) return kInvalidDevice;
  switch (attribute) {
  case 5:
    *v = 1700000;
    return kSuccess; // ClockRate
  case 19:
    *v = 8 << 20;
    return kSuccess; // L2CacheSize
  case 26:
  case 27:
    *v = 1024;
    return kSuccess; // MaxBlockDimX, Y
  case 28:
    *v = 512;
    return kSuccess; // MaxBlockDimZ
  case 29:
    *v = INT32_MAX;
    return kSuccess; // MaxGridDimX
  case 30:
  case 31:
    *v = 65535;
    return kSuccess; // MaxGridDimY, Z
  case 56:
    *v = 1024;
    return kSuccess; // MaxThreadsPerBlock
  case 63:
    *v = 104;
    return kSuccess; // MultiprocessorCount
  case 74:
    *v = 65536;
    return kSuccess; // MaxSharedMemoryPerBlock
  case 87:
    *v = std::strncmp(arch_name("gfx90a"), "gfx11", 5) == 0 ? 32 : 64;
    return kSuccess; // WarpSize: RDNA runs HIP kernels in wave32
  default:
    return kInvalidValue;
  }
}
int hipDeviceTotalMem(size_t* bytes, int d) {
  if (d < 0 || d >= kDevices) return kInvalidDevice;
  *bytes = size_t(64) << 30;
  return kSuccess;
}
// ROCm 5's hipDeviceProp_t: char name[256] at 0, char gcnArchName[256] at 396, 792 bytes in all.
// Built with TG_STUB_HIP_R0600 (libtg_stub_hip_r0600.so), the stub also exports ROCm 6's
// hipGetDevicePropertiesR0600, whose struct has gcnArchName elsewhere (here at 1160), and the
// legacy entry answers another processor: the plugin must take the newer entry when it exists.
namespace {
int fill_properties(void* props, int d, size_t size, size_t arch_at, const char* arch) {
  if (d < 0 || d >= kDevices) return kInvalidDevice;
  auto* p = static_cast<char*>(props);
  std::memset(p, 0, size);
  std::snprintf(p, 256, "Stub AMD GPU %d", d);
  const int gcn_arch = 910; // an int field just before the name, as in the legacy struct
  std::memcpy(p + arch_at - 4, &gcn_arch, 4);
  std::strcpy(p + arch_at, arch);
  return kSuccess;
}
} // namespace
#ifdef TG_STUB_HIP_R0600
int hipGetDeviceProperties(void* props, int d) { return fill_properties(props, d, 792, 396, "gfx803"); }
int hipGetDevicePropertiesR0600(void* props, int d) {
  return fill_properties(props, d, 1472, 1160, arch_name("gfx90a:sramecc+:xnack-"));
}
#else
int hipGetDeviceProperties(void* props, int d) {
  return fill_properties(props, d, 792, 396, arch_name("gfx90a:sramecc+:xnack-"));
}
#endif
int hipStreamCreateWithFlags(void** stream, unsigned) {
  *stream = new int(t_device);
  return kSuccess;
}
int hipStreamDestroy(void* stream) {
  delete static_cast<int*>(stream);
  return kSuccess;
}
int hipStreamSynchronize(void*) {
  record("hipStreamSynchronize");
  return kSuccess;
}
int hipEventCreate(void** event) {
  *event = new int(0);
  return kSuccess;
}
int hipEventDestroy(void* event) {
  delete static_cast<int*>(event);
  return kSuccess;
}
int hipEventRecord(void*, void*) {
  record("hipEventRecord");
  return kSuccess;
}
int hipEventSynchronize(void*) { return kSuccess; }
int hipEventElapsedTime(float* ms, void*, void*) {
  *ms = 0.25f;
  return kSuccess;
}
int hipMalloc(void** ptr, size_t size) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  record("hipMalloc");
  if (s.allocated + size > s.limit) return kOutOfMemory;
  *ptr = std::aligned_alloc(256, (size + 255) / 256 * 256);
  s.allocations[*ptr] = size;
  s.allocated += size;
  return kSuccess;
}
int hipFree(void* ptr) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  record("hipFree");
  auto it = s.allocations.find(ptr);
  if (it == s.allocations.end()) return kInvalidValue;
  s.allocated -= it->second;
  s.allocations.erase(it);
  std::free(ptr);
  return kSuccess;
}
int hipMemcpyAsync(void* dst, const void* src, size_t size, int kind, void* stream) {
  if (kind < 1 || kind > 3 || stream == nullptr) return kInvalidValue;
  std::memmove(dst, src, size);
  return kSuccess;
}
int hipModuleLoadData(void** module, const void* image) {
  const auto* bytes = static_cast<const unsigned char*>(image);
  if (std::memcmp(bytes,
                  "\x7f"
                  "ELF",
                  4) != 0 ||
      bytes[0x12] != 224)
    return kInvalidImage;
  auto* m = new Module{{bytes, bytes + elf_size(bytes)}, {}};
  state().images.push_back(m->image);
  *module = m;
  return kSuccess;
}
int hipModuleUnload(void* module) {
  delete static_cast<Module*>(module);
  return kSuccess;
}
int hipModuleGetFunction(void** function, void* module, const char* name) {
  auto* m = static_cast<Module*>(module);
  // The symbol must be in the image (its string table holds it).
  const std::string image(m->image.begin(), m->image.end());
  if (image.find(std::string(name) + '\0') == std::string::npos) return kNotFound;
  *function = m->functions.emplace_back(std::make_unique<Function>(Function{name})).get();
  return kSuccess;
}
int hipModuleLaunchKernel(void* function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                          unsigned bz, unsigned shared, void* stream, void** params, void** extra) {
  // The plugin passes its kernarg buffer through `extra` (buffer pointer, size, end), never params.
  if (function == nullptr || stream == nullptr || params != nullptr || extra == nullptr) return kInvalidValue;
  if (extra[0] != reinterpret_cast<void*>(1) || extra[2] != reinterpret_cast<void*>(2) ||
      extra[4] != reinterpret_cast<void*>(3))
    return kInvalidValue;
  const auto* args = static_cast<const unsigned char*>(extra[1]);
  const size_t size = *static_cast<const size_t*>(extra[3]);
  State& s = state();
  std::lock_guard lock(s.mutex);
  record("hipModuleLaunchKernel");
  s.launches.push_back({static_cast<Function*>(function)->name,
                        {gx, gy, gz},
                        {bx, by, bz},
                        shared,
                        std::vector<unsigned char>(args, args + size)});
  return kSuccess;
}

// --- control for the test ---
size_t stub_hip_launch_count() { return state().launches.size(); }
// Launch i: the kernel's name (returned), dims (grid then block, 6 values), kernarg bytes.
const char* stub_hip_launch(size_t i, unsigned* dims, const unsigned char** kernargs, size_t* kernarg_size) {
  const Launch& l = state().launches.at(i);
  for (int k = 0; k < 3; ++k) dims[k] = l.grid[k], dims[3 + k] = l.block[k];
  *kernargs = l.kernargs.data();
  *kernarg_size = l.kernargs.size();
  return l.kernel.c_str();
}
size_t stub_hip_image_count() { return state().images.size(); }
const unsigned char* stub_hip_image(size_t i, size_t* size) {
  *size = state().images.at(i).size();
  return state().images.at(i).data();
}
void stub_hip_set_memory_limit(uint64_t bytes) { state().limit = bytes; }
uint64_t stub_hip_allocated() { return state().allocated; }
const char* stub_hip_calls() { return state().calls.c_str(); }
void stub_hip_clear_calls() { state().calls.clear(); }
}
