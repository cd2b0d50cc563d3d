// The HIP runtime (libamdhip64.so), dlopen'ed: the plugin must load on machines without ROCm
// (docs/amd.md). The few types, constants and functions the plugin uses are declared here from the
// HIP C API (hip_runtime_api.h, stable from ROCm 5 to 7 for these), so building needs no ROCm.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tg::amd {

namespace hip {
using Error = int;       // hipError_t
using Stream = void*;    // hipStream_t
using Event = void*;     // hipEvent_t
using Module = void*;    // hipModule_t
using Function = void*;  // hipFunction_t
using DevicePtr = void*; // device memory (HIP uses plain pointers)

constexpr Error kSuccess = 0;
constexpr Error kOutOfMemory = 2;      // hipErrorOutOfMemory (== hipErrorMemoryAllocation)
constexpr Error kNoDevice = 100;       // hipErrorNoDevice
constexpr Error kInvalidImage = 200;   // hipErrorInvalidImage
constexpr Error kNoBinaryForGpu = 209; // hipErrorNoBinaryForGpu

// hipDeviceAttribute_t values used here.
enum Attribute : int {
  kClockRate = 5,
  kL2CacheSize = 19,
  kMaxBlockDimX = 26, // Y, Z follow
  kMaxGridDimX = 29,  // Y, Z follow
  kMaxThreadsPerBlock = 56,
  kMultiprocessorCount = 63,
  kMaxSharedMemoryPerBlock = 74,
  kWarpSize = 87,
};

constexpr int kMemcpyHostToDevice = 1, kMemcpyDeviceToHost = 2, kMemcpyDeviceToDevice = 3; // hipMemcpyKind
constexpr unsigned kStreamNonBlocking = 1; // hipStreamNonBlocking
// hipModuleLaunchKernel's `extra`: the packed kernarg buffer, its size, end.
inline void* const kLaunchParamBufferPointer = reinterpret_cast<void*>(1);
inline void* const kLaunchParamBufferSize = reinterpret_cast<void*>(2);
inline void* const kLaunchParamEnd = reinterpret_cast<void*>(3);
} // namespace hip

// name, return type, parameters
#define TG_HIP_FUNCTIONS(X)                                                                                  \
  X(hipGetDeviceCount, hip::Error, int*)                                                                     \
  X(hipGetErrorName, const char*, hip::Error)                                                                \
  X(hipRuntimeGetVersion, hip::Error, int*)                                                                  \
  X(hipSetDevice, hip::Error, int)                                                                           \
  X(hipDeviceGetName, hip::Error, char*, int, int)                                                           \
  X(hipDeviceGetAttribute, hip::Error, int*, int, int)                                                       \
  X(hipDeviceTotalMem, hip::Error, size_t*, int)                                                             \
  X(hipStreamCreateWithFlags, hip::Error, hip::Stream*, unsigned)                                            \
  X(hipStreamDestroy, hip::Error, hip::Stream)                                                               \
  X(hipStreamSynchronize, hip::Error, hip::Stream)                                                           \
  X(hipEventCreate, hip::Error, hip::Event*)                                                                 \
  X(hipEventDestroy, hip::Error, hip::Event)                                                                 \
  X(hipEventRecord, hip::Error, hip::Event, hip::Stream)                                                     \
  X(hipEventSynchronize, hip::Error, hip::Event)                                                             \
  X(hipEventElapsedTime, hip::Error, float*, hip::Event, hip::Event)                                         \
  X(hipMalloc, hip::Error, void**, size_t)                                                                   \
  X(hipFree, hip::Error, void*)                                                                              \
  X(hipMemcpyAsync, hip::Error, void*, const void*, size_t, int, hip::Stream)                                \
  X(hipModuleLoadData, hip::Error, hip::Module*, const void*)                                                \
  X(hipModuleUnload, hip::Error, hip::Module)                                                                \
  X(hipModuleGetFunction, hip::Error, hip::Function*, hip::Module, const char*)                              \
  X(hipModuleLaunchKernel, hip::Error, hip::Function, unsigned, unsigned, unsigned, unsigned, unsigned,      \
    unsigned, unsigned, hip::Stream, void**, void**)

// The loaded runtime: every pointer above is set, or hip_runtime() threw.
struct HipRuntime {
#define TG_HIP_MEMBER(name, ret, ...) ret (*name)(__VA_ARGS__) = nullptr;
  TG_HIP_FUNCTIONS(TG_HIP_MEMBER)
#undef TG_HIP_MEMBER
  // hipGetDeviceProperties fills a struct whose layout differs between ROCm 5 (hipGetDeviceProperties)
  // and ROCm 6+ (hipGetDevicePropertiesR0600, which the 6.x header maps the name to): the newer one
  // when exported. Only read through device_arch_name (hip.cpp).
  hip::Error (*get_device_properties)(void* props, int device) = nullptr;
};

// The runtime, loaded once per process (thread-safe). Throws PluginError(UNAVAILABLE) saying what
// is missing: the library (TG_AMD_HIP_LIBRARY, default libamdhip64.so), one of its functions.
const HipRuntime& hip_runtime();

// How many HIP devices the runtime sees; throws PluginError(TG_ERROR_UNAVAILABLE) saying why not
// (no libamdhip64.so, a missing symbol, the driver's error) when there are none.
int hip_device_count();

// The device's gcnArchName ("gfx90a:sramecc+:xnack-"), read from hipGetDeviceProperties.
std::string device_arch_name(int device);

// "hipErrorX (N)" for an error code.
std::string error_text(hip::Error e);

// Throws PluginError naming `what` unless e is hipSuccess (out of memory -> RESOURCE_EXHAUSTED).
void check(hip::Error e, const std::string& what);

} // namespace tg::amd
