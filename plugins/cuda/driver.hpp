// The CUDA driver API, reached through a dlopen'ed libcuda.so.1: the plugin never links the
// toolkit's stub, so it loads on a machine without a driver and says what is missing. The
// function types come from the toolkit's cuda.h; each pointer is looked up under the name the
// header maps it to (cuMemAlloc -> cuMemAlloc_v2, ...), so the ABI matches the header.
#pragma once

#include <cuda.h>

#include <string>

namespace tg::cuda {

#define TG_CUDA_DRIVER_FUNCTIONS(X)                                                                          \
  X(cuInit)                                                                                                  \
  X(cuDriverGetVersion)                                                                                      \
  X(cuGetErrorName)                                                                                          \
  X(cuGetErrorString)                                                                                        \
  X(cuDeviceGetCount)                                                                                        \
  X(cuDeviceGet)                                                                                             \
  X(cuDeviceGetName)                                                                                         \
  X(cuDeviceGetAttribute)                                                                                    \
  X(cuDeviceTotalMem)                                                                                        \
  X(cuDevicePrimaryCtxRetain)                                                                                \
  X(cuDevicePrimaryCtxRelease)                                                                               \
  X(cuCtxSetCurrent)                                                                                         \
  X(cuCtxGetCurrent)                                                                                         \
  X(cuCtxGetFlags)                                                                                           \
  X(cuCtxSetFlags)                                                                                           \
  X(cuStreamCreate)                                                                                          \
  X(cuStreamDestroy)                                                                                         \
  X(cuStreamSynchronize)                                                                                     \
  X(cuStreamQuery)                                                                                           \
  X(cuEventCreate)                                                                                           \
  X(cuEventDestroy)                                                                                          \
  X(cuEventRecord)                                                                                           \
  X(cuEventSynchronize)                                                                                      \
  X(cuEventElapsedTime)                                                                                      \
  X(cuMemAlloc)                                                                                              \
  X(cuMemFree)                                                                                               \
  X(cuMemAllocHost)                                                                                          \
  X(cuMemFreeHost)                                                                                           \
  X(cuMemcpyHtoDAsync)                                                                                       \
  X(cuMemcpyDtoHAsync)                                                                                       \
  X(cuMemcpyDtoDAsync)                                                                                       \
  X(cuModuleLoadData)                                                                                        \
  X(cuModuleUnload)                                                                                          \
  X(cuModuleGetFunction)                                                                                     \
  X(cuFuncSetAttribute)                                                                                      \
  X(cuLaunchKernel)                                                                                          \
  X(cuGraphCreate)                                                                                           \
  X(cuGraphDestroy)                                                                                          \
  X(cuGraphAddKernelNode)                                                                                    \
  X(cuGraphInstantiate)                                                                                      \
  X(cuGraphExecDestroy)                                                                                      \
  X(cuGraphExecKernelNodeSetParams)                                                                          \
  X(cuGraphLaunch)                                                                                           \
  X(cuDeviceCanAccessPeer)                                                                                   \
  X(cuCtxEnablePeerAccess)                                                                                   \
  X(cuMemcpyPeerAsync)                                                                                       \
  X(cuStreamWaitEvent)                                                                                       \
  X(cuMemHostAlloc)                                                                                          \
  X(cuMemHostGetDevicePointer)                                                                               \
  X(cuPointerGetAttribute)                                                                                   \
  X(cuStreamWriteValue32)

// The loaded driver: every pointer above is set, or load() threw.
struct Driver {
#define TG_CUDA_MEMBER(name) decltype(&::name) name = nullptr;
  TG_CUDA_DRIVER_FUNCTIONS(TG_CUDA_MEMBER)
#undef TG_CUDA_MEMBER
  int version = 0; // cuDriverGetVersion, e.g. 13000
};

// The driver, loaded and initialized once per process (thread-safe). Throws
// PluginError(UNAVAILABLE) saying what is missing: no libcuda.so.1 ("no NVIDIA driver"), the
// toolkit's stub, cuInit failing with a driver present ("driver present but no GPU" for
// CUDA_ERROR_NO_DEVICE). TG_CUDA_DRIVER names another library file (tests use the stub).
const Driver& driver();

// "CUDA_ERROR_X: text" for a result code.
std::string result_text(CUresult r);

// Throws PluginError naming `what` unless r is CUDA_SUCCESS (out of memory -> RESOURCE_EXHAUSTED).
void check(CUresult r, const std::string& what);
// The same for a literal: no string is built on the hot path (launch, synchronize) unless r fails.
inline void check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) check(r, std::string(what));
}

// Makes `context` current on this thread, calling cuCtxSetCurrent only when another one is (a
// launch binds its device's context every call; cuCtxGetCurrent is a thread-local read in the
// driver). The driver is asked rather than a cache of our own, since NCCL or another library in
// the process may switch the thread's context behind our back.
void make_current(CUcontext context);

} // namespace tg::cuda
