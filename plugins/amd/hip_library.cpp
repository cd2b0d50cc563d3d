#include "hip_library.hpp"

#include <tg/sdk/adaptor.hpp>

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

namespace tg::amd {
namespace {

using GetDeviceCount = int (*)(int*); // hipError_t hipGetDeviceCount(int*); hipSuccess == 0

// The library handle, opened once and never closed (HIP keeps process-wide state); a cache, so
// guarded by a once_flag.
struct Hip {
  void* handle = nullptr;
  std::string error;
};

const Hip& hip() {
  static Hip h;
  static std::once_flag once;
  std::call_once(once, [] {
    // TG_AMD_HIP_LIBRARY names another path (a ROCm install outside the loader's search path).
    const char* env = std::getenv("TG_AMD_HIP_LIBRARY");
    const char* name = env && *env ? env : "libamdhip64.so";
    h.handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h.handle) {
      const char* why = dlerror();
      h.error = std::string("amd plugin: cannot load the HIP runtime ") + name + " (" + (why ? why : "?") +
                "); install ROCm or set TG_AMD_HIP_LIBRARY";
    }
  });
  return h;
}

} // namespace

int hip_device_count() {
  const Hip& h = hip();
  if (!h.handle) throw sdk::PluginError(TG_ERROR_UNAVAILABLE, h.error);
  auto fn = reinterpret_cast<GetDeviceCount>(dlsym(h.handle, "hipGetDeviceCount"));
  if (!fn)
    throw sdk::PluginError(TG_ERROR_UNAVAILABLE, "amd plugin: the HIP runtime lacks hipGetDeviceCount");
  int n = 0;
  if (int rc = fn(&n); rc != 0)
    throw sdk::PluginError(TG_ERROR_UNAVAILABLE, "amd plugin: hipGetDeviceCount failed with hipError " +
                                                     std::to_string(rc) + " (no ROCm driver or GPU?)");
  if (n <= 0) throw sdk::PluginError(TG_ERROR_UNAVAILABLE, "amd plugin: the HIP runtime sees no GPU");
  return n;
}

} // namespace tg::amd
