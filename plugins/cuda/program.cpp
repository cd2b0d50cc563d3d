#include "program.hpp"
#include "compiler.hpp"

namespace tg::cuda {

Program::Program(CUcontext context, std::span<const std::byte> payload, uint32_t max_shared_bytes,
                 std::function<void(CUfunction)> on_free)
    : context_(context), on_free_(std::move(on_free)) {
  const Image image = unpack_image(payload);
  dynamic_shared_bytes_ = image.dynamic_shared_bytes;
  if (dynamic_shared_bytes_ > max_shared_bytes)
    throw sdk::PluginError(TG_ERROR_RESOURCE_EXHAUSTED,
                           "kernel " + image.entry + " needs " + std::to_string(dynamic_shared_bytes_) +
                               " bytes of shared memory per block; this GPU allows at most " +
                               std::to_string(max_shared_bytes) + " (its opt-in maximum)");
  const Driver& d = driver();
  check(d.cuCtxSetCurrent(context_), "cuCtxSetCurrent");
  const CUresult loaded = d.cuModuleLoadData(&module_, image.code.data());
  if (loaded == CUDA_ERROR_INVALID_IMAGE || loaded == CUDA_ERROR_NO_BINARY_FOR_GPU ||
      loaded == CUDA_ERROR_INVALID_PTX || loaded == CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
    throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT, "the driver refuses the code of kernel " + image.entry +
                                                          " (" + result_text(loaded) +
                                                          "): built for another GPU or a newer toolkit");
  check(loaded, "cuModuleLoadData(" + image.entry + ")");
  const CUresult found = d.cuModuleGetFunction(&function_, module_, image.entry.c_str());
  if (found != CUDA_SUCCESS) {
    d.cuModuleUnload(module_);
    check(found, "cuModuleGetFunction(" + image.entry + ")");
  }
  // More than 48 KiB of dynamic shared memory needs the function's opt-in, once per load.
  if (dynamic_shared_bytes_ > 48 * 1024) {
    const CUresult set = d.cuFuncSetAttribute(function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                              int(dynamic_shared_bytes_));
    if (set != CUDA_SUCCESS) {
      d.cuModuleUnload(module_);
      check(set, "cuFuncSetAttribute(" + image.entry + ", MAX_DYNAMIC_SHARED_SIZE_BYTES, " +
                     std::to_string(dynamic_shared_bytes_) + ")");
    }
  }
}

Program::~Program() {
  if (on_free_) on_free_(function_);
  const Driver& d = driver();
  d.cuCtxSetCurrent(context_);
  d.cuModuleUnload(module_);
}

} // namespace tg::cuda
