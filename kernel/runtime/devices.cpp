#include "kernel/runtime/devices.hpp"

#include "kernel/runtime/plugin_registry.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <mutex>

namespace tg {

std::string DeviceName::canonical() const {
  std::string up = plugin;
  std::transform(up.begin(), up.end(), up.begin(), [](unsigned char c) { return char(std::toupper(c)); });
  return index == 0 ? up : up + ":" + std::to_string(index);
}

DeviceName parse_device_name(const std::string& name) {
  DeviceName out;
  auto colon = name.find(':');
  out.plugin = name.substr(0, colon);
  std::transform(out.plugin.begin(), out.plugin.end(), out.plugin.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  bool ok = !out.plugin.empty();
  if (colon != std::string::npos) {
    std::string idx = name.substr(colon + 1);
    ok = ok && !idx.empty() && idx.size() < 6 && std::all_of(idx.begin(), idx.end(), ::isdigit);
    if (ok) out.index = std::stoi(idx);
  }
  if (!ok) throw Error("bad device name '" + name + "' (expected NAME or NAME:INDEX, e.g. CPU or CUDA:1)");
  return out;
}

std::string default_device() {
  const char* env = std::getenv("TG_DEVICE");
  return parse_device_name(env && *env ? env : "CPU").canonical();
}

OpenDevice& open_device(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, OpenDevice> open;
  DeviceName parsed = parse_device_name(name);
  std::lock_guard lock(mutex);
  auto it = open.find(parsed.canonical());
  if (it != open.end()) return it->second;
  auto plugin = PluginRegistry::instance().get(parsed.plugin);
  auto device = Device::open(plugin, parsed.index);
  OpenDevice entry{device, std::make_shared<Allocator>(device)};
  return open.emplace(parsed.canonical(), std::move(entry)).first->second;
}

} // namespace tg
