#include "driver.hpp"

#include <tg/sdk/plugin.hpp>

#include <dlfcn.h>

#include <cstdlib>

namespace tg::cuda {
namespace {

#define TG_CUDA_STRINGIFY_EXPANDED(x) TG_CUDA_STRINGIFY(x)
#define TG_CUDA_STRINGIFY(x) #x

[[noreturn]] void unavailable(const std::string& why) { throw sdk::PluginError(TG_ERROR_UNAVAILABLE, why); }

// Loads and initializes; the result (or the failure's message) is kept for the process.
Driver load() {
  const char* override_path = std::getenv("TG_CUDA_DRIVER");
  const std::string path = override_path && *override_path ? override_path : "libcuda.so.1";
  // Never closed: the driver keeps process-wide state (contexts, threads) until exit.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* error = dlerror();
    unavailable("no NVIDIA driver: " + path + " cannot be loaded (" + (error ? error : "unknown") + ")");
  }
  Driver d;
#define TG_CUDA_LOAD(name)                                                                                   \
  d.name = reinterpret_cast<decltype(d.name)>(dlsym(handle, TG_CUDA_STRINGIFY_EXPANDED(name)));              \
  if (!d.name)                                                                                               \
    unavailable("the NVIDIA driver " + path + " is too old: it lacks " TG_CUDA_STRINGIFY_EXPANDED(name));
  TG_CUDA_DRIVER_FUNCTIONS(TG_CUDA_LOAD)
#undef TG_CUDA_LOAD
  const CUresult init = d.cuInit(0);
  if (init == CUDA_ERROR_STUB_LIBRARY)
    unavailable("no NVIDIA driver: " + path +
                " is the CUDA toolkit's stub library (cuInit: CUDA_ERROR_STUB_LIBRARY)");
  if (init == CUDA_ERROR_NO_DEVICE)
    unavailable("NVIDIA driver present but no GPU (cuInit: CUDA_ERROR_NO_DEVICE)");
  if (init != CUDA_SUCCESS) {
    const char* name = nullptr;
    d.cuGetErrorName(init, &name);
    unavailable("NVIDIA driver present but cuInit failed (" + std::string(name ? name : "unknown") + ", " +
                std::to_string(int(init)) + "): no usable GPU");
  }
  d.cuDriverGetVersion(&d.version);
  return d;
}

struct Loaded {
  Driver driver;
  std::string error; // non-empty: load() failed with this UNAVAILABLE message
};

} // namespace

const Driver& driver() {
  static const Loaded loaded = [] {
    try {
      return Loaded{load(), {}};
    } catch (const sdk::PluginError& e) {
      return Loaded{{}, e.what()};
    }
  }();
  if (!loaded.error.empty()) unavailable(loaded.error);
  return loaded.driver;
}

std::string result_text(CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  const Driver& d = driver();
  d.cuGetErrorName(r, &name);
  d.cuGetErrorString(r, &text);
  return std::string(name ? name : "CUDA error " + std::to_string(int(r))) +
         (text ? std::string(": ") + text : "");
}

void check(CUresult r, const std::string& what) {
  if (r == CUDA_SUCCESS) return;
  const tg_error_code code = r == CUDA_ERROR_OUT_OF_MEMORY   ? TG_ERROR_RESOURCE_EXHAUSTED
                             : r == CUDA_ERROR_INVALID_VALUE ? TG_ERROR_INVALID_ARGUMENT
                                                             : TG_ERROR_INTERNAL;
  throw sdk::PluginError(code, what + " failed: " + result_text(r));
}

void make_current(CUcontext context) {
  const Driver& d = driver();
  CUcontext current = nullptr;
  if (d.cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == context) return;
  check(d.cuCtxSetCurrent(context), "cuCtxSetCurrent");
}

} // namespace tg::cuda
