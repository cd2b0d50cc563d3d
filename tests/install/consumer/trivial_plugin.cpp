// The smallest plugin an outside project can build with tg_add_plugin from the installed
// package: one device that reports its properties (no memory, no compiler). It links the SDK's
// static library for its error functions.
#include <tg/abi.h>
#include <tg/sdk/plugin.hpp>

#include <cstring>

struct tg_device {
  int index;
};

namespace {

tg_error* device_count(int32_t* out) {
  *out = 1;
  return nullptr;
}

tg_error* device_open(const tg_device_open_args* args, tg_device** out) {
  return tg::sdk::guard("trivial.device_open", [&] {
    tg::sdk::require(args, "args");
    if (args->index != 0) throw tg::sdk::PluginError(TG_ERROR_INVALID_ARGUMENT, "no such device");
    *out = new tg_device{args->index};
  });
}

void device_close(tg_device* device) { delete device; }

tg_error* device_properties(tg_device*, tg_device_properties* out) {
  tg_device_properties p{};
  p.struct_size = sizeof p;
  std::strcpy(p.name, "trivial device");
  std::strcpy(p.vendor, "consumer");
  std::strcpy(p.arch, tg::sdk::dtype_name(TG_DTYPE_FLOAT32)); // any SDK call: proves it links
  p.max_local_size[0] = p.max_local_size[1] = p.max_local_size[2] = 1;
  p.max_local_threads = 1;
  p.buffer_alignment = 16;
  p.dtype_mask = TG_DTYPE_BIT(TG_DTYPE_FLOAT32);
  size_t n = out->struct_size < sizeof p ? out->struct_size : sizeof p;
  std::memcpy(out, &p, n);
  out->struct_size = n;
  return nullptr;
}

tg_plugin_api make_api() {
  tg_plugin_api api{};
  api.struct_size = sizeof api;
  api.abi_major = TG_ABI_VERSION_MAJOR;
  api.abi_minor = TG_ABI_VERSION_MINOR;
  api.plugin_name = "trivial";
  api.plugin_version = "1.0";
  api.build_info = "tests/install/consumer";
  tg::sdk::set_error_functions(api);
  api.device_count = device_count;
  api.device_open = device_open;
  api.device_close = device_close;
  api.device_properties = device_properties;
  return api;
}

} // namespace

extern "C" TG_PLUGIN_EXPORT const tg_plugin_api* tg_plugin_query_v1(const tg_host_info* host) {
  static const tg_plugin_api api = make_api();
  return host && host->abi_major == TG_ABI_VERSION_MAJOR ? &api : nullptr;
}
