// Entry point of the CPU plugin: the static function table behind tg_plugin_query_v1.
#include "compiler.hpp"
#include "device.hpp"
#include "memory.hpp"
#include "program.hpp"

#include <tg/abi.h>
#include <tg/sdk/plugin.hpp>

#include <llvm/Config/llvm-config.h>

namespace {

#define TG_CPU_STR2(x) #x
#define TG_CPU_STR(x) TG_CPU_STR2(x)

tg_plugin_api make_api() {
  using namespace tg::cpu;
  tg_plugin_api api{};
  api.struct_size = sizeof(api);
  api.abi_major = TG_ABI_VERSION_MAJOR;
  api.abi_minor = TG_ABI_VERSION_MINOR;
  api.plugin_name = "cpu";
  api.plugin_version = TG_CPU_PLUGIN_VERSION;
  api.build_info = "tg_device_cpu " TG_CPU_PLUGIN_VERSION ", LLVM " LLVM_VERSION_STRING " (ORC LLJIT), "
#if defined(__clang__)
                   "clang " __clang_version__
#elif defined(__GNUC__)
                   "gcc " TG_CPU_STR(__GNUC__) "." TG_CPU_STR(__GNUC_MINOR__)
#endif
#ifdef NDEBUG
                   ", release";
#else
                       ", debug";
#endif
  tg::sdk::set_error_functions(api);
  api.device_count = &device_count;
  api.device_open = &device_open;
  api.device_close = &device_close;
  api.device_properties = &device_properties;
  api.device_attribute_count = &device_attribute_count;
  api.device_attribute = &device_attribute;
  api.buffer_alloc = &buffer_alloc;
  api.buffer_free = &buffer_free;
  api.buffer_copy_from_host = &buffer_copy_from_host;
  api.buffer_copy_to_host = &buffer_copy_to_host;
  api.buffer_copy = &buffer_copy;
  api.compile = &compile;
  api.compile_result_get = &compile_result_get;
  api.compile_result_destroy = &compile_result_destroy;
  api.compile_cache_key = &compile_cache_key;
  api.program_load = &program_load;
  api.program_free = &program_free;
  api.launch = &launch;
  api.synchronize = &synchronize;
  return api;
}

const tg_plugin_api kApi = make_api();

} // namespace

extern "C" TG_PLUGIN_EXPORT const tg_plugin_api* tg_plugin_query_v1(const tg_host_info* host) {
  if (host == nullptr || host->struct_size < offsetof(tg_host_info, abi_minor) + sizeof(uint32_t) ||
      host->abi_major != TG_ABI_VERSION_MAJOR)
    return nullptr;
  return &kApi;
}
