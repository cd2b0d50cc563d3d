/* A stand-in for libcuda.so.1 on machines without a GPU, so the CUDA plugin's "driver present"
 * paths run in CI: FAKE_NO_DEVICE makes cuInit fail as a real driver does when no GPU is visible
 * (CUDA_ERROR_NO_DEVICE = 100, e.g. CUDA_VISIBLE_DEVICES=""); otherwise cuInit succeeds and
 * cuDeviceGetCount reports zero devices. Every other entry the plugin looks up exists and fails
 * (CUDA_ERROR_NOT_SUPPORTED = 801): nothing past device_count may be reached. The names are the
 * versioned symbols cuda.h maps them to (cuMemAlloc -> cuMemAlloc_v2), as the plugin looks them up;
 * an entry the plugin gains must be added here. */
#define FAIL(name)                                                                                           \
  int name(void);                                                                                            \
  int name(void) { return 801; }

int cuInit(unsigned flags);
int cuInit(unsigned flags) {
  (void)flags;
#ifdef FAKE_NO_DEVICE
  return 100;
#else
  return 0;
#endif
}
int cuDriverGetVersion(int* version);
int cuDriverGetVersion(int* version) {
  *version = 13000;
  return 0;
}
int cuDeviceGetCount(int* count);
int cuDeviceGetCount(int* count) {
  *count = 0;
  return 0;
}
int cuGetErrorName(int result, const char** name);
int cuGetErrorName(int result, const char** name) {
  *name = result == 100 ? "CUDA_ERROR_NO_DEVICE" : "CUDA_ERROR_NOT_SUPPORTED";
  return 0;
}
int cuGetErrorString(int result, const char** text);
int cuGetErrorString(int result, const char** text) {
  *text = result == 100 ? "no CUDA-capable device is detected" : "operation not supported";
  return 0;
}
FAIL(cuDeviceGet)
FAIL(cuDeviceGetName)
FAIL(cuDeviceGetAttribute)
FAIL(cuDeviceTotalMem_v2)
FAIL(cuDevicePrimaryCtxRetain)
FAIL(cuDevicePrimaryCtxRelease_v2)
FAIL(cuCtxSetCurrent)
FAIL(cuCtxGetCurrent)
FAIL(cuCtxGetFlags)
FAIL(cuCtxSetFlags)
FAIL(cuStreamCreate)
FAIL(cuStreamDestroy_v2)
FAIL(cuStreamSynchronize)
FAIL(cuStreamQuery)
FAIL(cuEventCreate)
FAIL(cuEventDestroy_v2)
FAIL(cuEventRecord)
FAIL(cuEventSynchronize)
FAIL(cuEventElapsedTime_v2)
FAIL(cuMemAlloc_v2)
FAIL(cuMemFree_v2)
FAIL(cuMemAllocHost_v2)
FAIL(cuMemFreeHost)
FAIL(cuMemcpyHtoDAsync_v2)
FAIL(cuMemcpyDtoHAsync_v2)
FAIL(cuMemcpyDtoDAsync_v2)
FAIL(cuModuleLoadData)
FAIL(cuModuleUnload)
FAIL(cuModuleGetFunction)
FAIL(cuFuncSetAttribute)
FAIL(cuLaunchKernel)
FAIL(cuGraphCreate)
FAIL(cuGraphDestroy)
FAIL(cuGraphAddKernelNode_v2)
FAIL(cuGraphInstantiateWithFlags)
FAIL(cuGraphExecDestroy)
FAIL(cuGraphExecKernelNodeSetParams_v2)
FAIL(cuGraphLaunch)
FAIL(cuDeviceCanAccessPeer)
FAIL(cuCtxEnablePeerAccess)
FAIL(cuMemcpyPeerAsync)
FAIL(cuStreamWaitEvent)
FAIL(cuMemHostAlloc)
FAIL(cuMemHostGetDevicePointer_v2)
FAIL(cuPointerGetAttribute)
FAIL(cuStreamWriteValue32_v2)
