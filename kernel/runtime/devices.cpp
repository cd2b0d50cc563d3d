#include "kernel/runtime/devices.hpp"

#include "kernel/runtime/plugin_registry.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>

namespace tg {

namespace {

struct OpenDevices {
  std::mutex mutex;
  std::map<std::string, OpenDevice, std::less<>> by_name; // canonical name -> device
  std::map<std::size_t, DeviceCloseListener> close_listeners;
  std::size_t next_listener = 1;
  struct {
    std::mutex mutex;
    std::optional<std::string> name;
  } default_device; // its own lock: setting it opens the device (which takes `mutex`)
};
// Never destroyed (nor the caches holding programs and buffers): at exit a driver may already have
// torn itself down from its own exit handler, so closing devices from a static destructor could
// crash it. The process's exit reclaims the memory.
OpenDevices& open_devices() {
  static OpenDevices& devices = *new OpenDevices;
  return devices;
}

// The default device (set from code; else $TG_DEVICE), in the same registry.
auto& default_device_state() { return open_devices().default_device; }

} // namespace

std::string DeviceName::canonical() const {
  std::string up = plugin;
  std::transform(up.begin(), up.end(), up.begin(), [](unsigned char c) { return char(std::toupper(c)); });
  return index == 0 ? up : up + ":" + std::to_string(index);
}

bool is_canonical_device_name(std::string_view name) {
  const size_t colon = name.find(':');
  const std::string_view plugin = name.substr(0, colon);
  if (plugin.empty()) return false;
  for (unsigned char c : plugin)
    if (std::toupper(c) != c) return false;
  if (colon == std::string_view::npos) return true;
  const std::string_view index = name.substr(colon + 1); // as canonical() prints it: no ":0", no leading 0
  if (index.empty() || index.size() >= 6 || index[0] == '0') return false;
  return std::all_of(index.begin(), index.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
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
  {
    auto& state = default_device_state();
    std::lock_guard lock(state.mutex);
    if (state.name) return *state.name;
  }
  const char* env = std::getenv("TG_DEVICE");
  return parse_device_name(env && *env ? env : "CPU").canonical();
}

void set_default_device(const std::string& name) {
  std::optional<std::string> canonical;
  if (!name.empty()) {
    canonical = parse_device_name(name).canonical();
    open_device(*canonical);
  }
  auto& state = default_device_state();
  std::lock_guard lock(state.mutex);
  state.name = std::move(canonical);
}

OpenDevice open_device(const std::string& name) {
  OpenDevices& devices = open_devices();
  std::lock_guard lock(devices.mutex);
  // Tensors and buffers carry canonical names: found as given, without parsing (once per launch).
  if (auto it = devices.by_name.find(name); it != devices.by_name.end()) return it->second;
  DeviceName parsed = parse_device_name(name);
  auto it = devices.by_name.find(parsed.canonical());
  if (it != devices.by_name.end()) return it->second;
  auto plugin = PluginRegistry::instance().get(parsed.plugin);
  auto device = Device::open(plugin, parsed.index);
  OpenDevice entry{device, std::make_shared<Allocator>(device)};
  return devices.by_name.emplace(parsed.canonical(), std::move(entry)).first->second;
}

std::vector<std::pair<std::string, OpenDevice>> close_devices(const std::string& plugin) {
  std::vector<std::pair<std::string, OpenDevice>> closed;
  OpenDevices& devices = open_devices();
  {
    std::lock_guard lock(devices.mutex);
    for (auto it = devices.by_name.begin(); it != devices.by_name.end();) {
      if (parse_device_name(it->first).plugin != plugin) {
        ++it;
        continue;
      }
      closed.emplace_back(it->first, std::move(it->second));
      it = devices.by_name.erase(it);
    }
  }
  for (auto& [name, device] : closed) device.allocator->free_cache();
  std::vector<DeviceCloseListener> listeners; // called outside the lock: they may open devices
  {
    std::lock_guard lock(devices.mutex);
    for (const auto& [handle, l] : devices.close_listeners) listeners.push_back(l);
  }
  for (auto& [name, device] : closed)
    for (const auto& l : listeners) l(name, device);
  return closed;
}

std::size_t add_device_close_listener(DeviceCloseListener listener) {
  OpenDevices& devices = open_devices();
  std::lock_guard lock(devices.mutex);
  const std::size_t handle = devices.next_listener++;
  devices.close_listeners.emplace(handle, std::move(listener));
  return handle;
}

void remove_device_close_listener(std::size_t handle) {
  OpenDevices& devices = open_devices();
  std::lock_guard lock(devices.mutex);
  devices.close_listeners.erase(handle);
}

} // namespace tg
