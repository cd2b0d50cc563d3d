#include "kernel/runtime/plugin_lifetime.hpp"

#include "kernel/runtime/devices.hpp"
#include "kernel/runtime/plugin_registry.hpp"

namespace tg {

std::string load_plugin(const std::filesystem::path& path) { return PluginRegistry::instance().add(path); }

bool unload_plugin(const std::string& name) {
  const std::string plugin = parse_device_name(name).plugin; // "MY", "my" and "my:0" all mean "my"
  bool removed = PluginRegistry::instance().remove(plugin);
  close_devices(plugin); // its listeners (the engine) drop the devices' kernels and programs
  return removed;
}

} // namespace tg
