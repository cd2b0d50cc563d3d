#include "program.hpp"
#include "compiler.hpp"

namespace tg::cuda {

Program::Program(CUcontext context, std::span<const std::byte> payload,
                 std::function<void(CUfunction)> on_free)
    : context_(context), on_free_(std::move(on_free)) {
  const Image image = unpack_image(payload);
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
}

Program::~Program() {
  if (on_free_) on_free_(function_);
  const Driver& d = driver();
  d.cuCtxSetCurrent(context_);
  d.cuModuleUnload(module_);
}

} // namespace tg::cuda
