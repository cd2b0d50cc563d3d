// Named devices: "CPU", "CPU:1", "CUDA:0" -> plugin "cpu"/"cuda", device index. Each device is
// opened once per process and shared (with its allocator); this registry (with its close
// listeners) and the plugin registry are the runtime's only process-wide state, both thread-safe.
#pragma once

#include "kernel/runtime/allocator.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tg {

struct DeviceName {
  std::string plugin; // lower case: "cpu"
  int index = 0;
  std::string canonical() const; // "CPU" or "CPU:1"
};

// Parses "cpu", "CPU", "CPU:1"; throws Error on a malformed name.
DeviceName parse_device_name(const std::string& name);
// Whether `name` is already what parse_device_name(name).canonical() returns (no parse, no
// allocation: tensors carry canonical names, and every op with a plain number checks one).
bool is_canonical_device_name(std::string_view name);

// The default device: the one set with set_default_device, else $TG_DEVICE, else "CPU".
std::string default_device();
// Makes `name` the default device of this process (tensors created without a device go there).
// Opens it first, so a device that cannot be used fails here with the plugin's reason.
// An empty name goes back to $TG_DEVICE / "CPU".
void set_default_device(const std::string& name);

struct OpenDevice {
  std::shared_ptr<Device> device;
  std::shared_ptr<Allocator> allocator;
};

// Opens (once) and returns the named device. Throws the plugin's load error, UnknownPluginError,
// or DeviceUnavailableError.
OpenDevice open_device(const std::string& name);

// Forgets the open devices of plugin `plugin` (lower case) and frees their allocators' caches;
// tells the close listeners about each; returns them with their canonical names. Buffers and
// programs still in use keep their device (and so the plugin) alive. Used by tg::unload_plugin.
std::vector<std::pair<std::string, OpenDevice>> close_devices(const std::string& plugin);

// Called for each device close_devices closes: whoever keeps programs or kernels for devices (the
// engine) drops that device's. Returns a handle for remove_device_close_listener.
using DeviceCloseListener = std::function<void(const std::string& name, const OpenDevice& device)>;
std::size_t add_device_close_listener(DeviceCloseListener listener);
void remove_device_close_listener(std::size_t handle);

} // namespace tg
