#include "kernel/runtime/device_list.hpp"

#include "kernel/runtime/devices.hpp"
#include "kernel/runtime/plugin_registry.hpp"

namespace tg {

std::vector<PluginDevices> list_devices() {
  std::vector<PluginDevices> out;
  for (const PluginEntry& e : PluginRegistry::instance().entries()) {
    if (!e.shadowed_by.empty()) continue;
    PluginDevices p{e.name, {}, {}};
    if (!e.plugin) {
      p.error = e.error_message;
    } else {
      try {
        int n = e.plugin->device_count();
        for (int i = 0; i < n; ++i) p.devices.push_back(DeviceName{e.name, i}.canonical());
      } catch (const std::exception& ex) {
        p.error = ex.what();
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

} // namespace tg
