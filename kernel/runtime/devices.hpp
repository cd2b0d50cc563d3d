// Named devices: "CPU", "CPU:1", "CUDA:0" -> plugin "cpu"/"cuda", device index. Each device is
// opened once per process and shared (with its allocator); this registry and the plugin
// registry are the runtime's only process-wide state, both thread-safe.
#pragma once

#include "kernel/runtime/allocator.hpp"

#include <memory>
#include <string>

namespace tg {

struct DeviceName {
  std::string plugin; // lower case: "cpu"
  int index = 0;
  std::string canonical() const; // "CPU" or "CPU:1"
};

// Parses "cpu", "CPU", "CPU:1"; throws Error on a malformed name.
DeviceName parse_device_name(const std::string& name);

// The default device: $TG_DEVICE, else "CPU".
std::string default_device();

struct OpenDevice {
  std::shared_ptr<Device> device;
  std::shared_ptr<Allocator> allocator;
};

// Opens (once) and returns the named device. Throws the plugin's load error, UnknownPluginError,
// or DeviceUnavailableError.
OpenDevice& open_device(const std::string& name);

} // namespace tg
