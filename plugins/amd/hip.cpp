#include "hip.hpp"

#include <tg/sdk/adaptor.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

namespace tg::amd {
namespace {

// The library handle and its functions, loaded once and never closed (HIP keeps process-wide
// state); a cache, so guarded by a once_flag.
struct Loaded {
  HipRuntime runtime;
  std::string error; // why the runtime is unusable; "" when loaded
};

const Loaded& loaded() {
  static Loaded l;
  static std::once_flag once;
  std::call_once(once, [] {
    // TG_AMD_HIP_LIBRARY names another path (a ROCm install outside the loader's search path, or
    // the recording stub of the tests).
    const char* env = std::getenv("TG_AMD_HIP_LIBRARY");
    const std::string name = env && *env ? env : "libamdhip64.so";
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = dlerror();
      l.error = "amd plugin: cannot load the HIP runtime " + name + " (" + (why ? why : "?") +
                "); install ROCm or set TG_AMD_HIP_LIBRARY";
      return;
    }
#define TG_HIP_LOAD(fn, ...)                                                                                 \
  if (l.error.empty()) {                                                                                     \
    l.runtime.fn = reinterpret_cast<decltype(l.runtime.fn)>(dlsym(handle, #fn));                             \
    if (!l.runtime.fn) l.error = "amd plugin: the HIP runtime " + name + " lacks " #fn;                      \
  }
    TG_HIP_FUNCTIONS(TG_HIP_LOAD)
#undef TG_HIP_LOAD
    void* props = dlsym(handle, "hipGetDevicePropertiesR0600");
    if (!props) props = dlsym(handle, "hipGetDeviceProperties");
    l.runtime.get_device_properties = reinterpret_cast<decltype(l.runtime.get_device_properties)>(props);
    if (!props && l.error.empty())
      l.error = "amd plugin: the HIP runtime " + name + " lacks hipGetDeviceProperties";
  });
  return l;
}

// The start of gcnArchName in a filled hipDeviceProp_t of either layout: the first string field
// (NUL before it, 4-byte aligned, past `name`) that reads "gfx" + hex digits, ending in NUL or ':'.
// The struct's other fields are numbers and short strings that never read so.
std::string find_arch_name(const std::vector<char>& props) {
  constexpr size_t kNameBytes = 256; // char name[256] opens both layouts
  for (size_t at = kNameBytes; at + 4 < props.size(); at += 4) {
    if (props[at - 1] != 0 || std::strncmp(&props[at], "gfx", 3) != 0) continue;
    size_t end = at + 3;
    while (end < props.size() && std::isxdigit(static_cast<unsigned char>(props[end]))) ++end;
    if (end == at + 3 || end >= props.size() || (props[end] != 0 && props[end] != ':')) continue;
    return std::string(&props[at], strnlen(&props[at], std::min<size_t>(256, props.size() - at)));
  }
  return {};
}

} // namespace

const HipRuntime& hip_runtime() {
  const Loaded& l = loaded();
  if (!l.error.empty()) throw sdk::PluginError(TG_ERROR_UNAVAILABLE, l.error);
  return l.runtime;
}

int hip_device_count() {
  const HipRuntime& h = hip_runtime();
  int n = 0;
  if (hip::Error rc = h.hipGetDeviceCount(&n); rc != hip::kSuccess)
    throw sdk::PluginError(TG_ERROR_UNAVAILABLE, "amd plugin: hipGetDeviceCount failed with " +
                                                     error_text(rc) + " (no ROCm driver or GPU?)");
  if (n <= 0) throw sdk::PluginError(TG_ERROR_UNAVAILABLE, "amd plugin: the HIP runtime sees no GPU");
  return n;
}

std::string device_arch_name(int device) {
  std::vector<char> props(8192, 0); // larger than either layout (792 and ~1.5 KiB bytes)
  check(hip_runtime().get_device_properties(props.data(), device), "hipGetDeviceProperties");
  std::string arch = find_arch_name(props);
  if (arch.empty())
    throw sdk::PluginError(TG_ERROR_UNAVAILABLE, "amd plugin: hipGetDeviceProperties(" +
                                                     std::to_string(device) +
                                                     ") names no gfx architecture (gcnArchName)");
  return arch;
}

std::string error_text(hip::Error e) {
  const char* name = nullptr;
  if (const Loaded& l = loaded(); l.error.empty()) name = l.runtime.hipGetErrorName(e);
  return std::string(name ? name : "hipError") + " (" + std::to_string(e) + ")";
}

void check(hip::Error e, const std::string& what) {
  if (e == hip::kSuccess) return;
  const tg_error_code code = e == hip::kOutOfMemory ? TG_ERROR_RESOURCE_EXHAUSTED : TG_ERROR_INTERNAL;
  throw sdk::PluginError(code, "amd: " + what + " failed: " + error_text(e));
}

} // namespace tg::amd
