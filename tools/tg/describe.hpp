// Human-readable descriptions of plugins and devices, shared by `tg devices` and `tg info`.
#pragma once

#include "kernel/runtime/device.hpp"

#include <ostream>
#include <string>

namespace tg::cli {

std::string dtype_list(uint64_t mask);
std::string feature_list(uint64_t features);
void describe_device(std::ostream& os, const Device& device, const std::string& indent);
// Devices of a loaded plugin; UNAVAILABLE is reported as such, not as a failure. Returns the number
// of failures printed (device_count failing for another reason, a device that did not open).
int describe_plugin_devices(std::ostream& os, const std::shared_ptr<Plugin>& plugin,
                            const std::string& indent);

} // namespace tg::cli
