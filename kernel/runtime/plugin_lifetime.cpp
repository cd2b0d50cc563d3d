#include "kernel/runtime/plugin_lifetime.hpp"

#include "kernel/runtime/devices.hpp"
#include "kernel/runtime/plugin_registry.hpp"
#include "kernel/runtime/realize.hpp"

namespace tg {

std::string load_plugin(const std::filesystem::path& path) { return PluginRegistry::instance().add(path); }

bool unload_plugin(const std::string& name) {
  const std::string plugin = parse_device_name(name).plugin; // "MY", "my" and "my:0" all mean "my"
  bool removed = PluginRegistry::instance().remove(plugin);
  for (const auto& [device_name, device] : close_devices(plugin)) {
    forget_kernels(device_name);
    forget_programs(*device.device);
  }
  return removed;
}

} // namespace tg
