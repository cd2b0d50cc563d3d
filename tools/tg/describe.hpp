// Human-readable descriptions of plugins and devices, shared by `tg devices` and `tg info`.
#pragma once

#include "kernel/runtime/device.hpp"

#include <chrono>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace tg::cli {

std::string dtype_list(uint64_t mask);
std::string feature_list(uint64_t features);

// One device, as read from the plugin.
struct DeviceReport {
  int index = 0;
  bool opened = false;
  tg_device_properties properties{}; // when opened
  std::vector<std::pair<std::string, std::string>> attributes;
  std::vector<tg_matrix_unit> matrix_units; // ABI 1.4, in the device's order
  std::string error;                        // why it did not open, or why its attributes could not be read
};

// A loaded plugin's devices. UNAVAILABLE (no hardware here) is not a failure; an error from
// device_count (a count outside 0..kMaxDeviceCount included) is, and so is a plugin that did not
// answer in time.
struct PluginReport {
  enum class State { ok, unavailable, failed, hung } state = State::ok;
  std::string message; // unavailable, failed, hung: why
  std::vector<DeviceReport> devices;
  // 1 for a failed or hung plugin, else the number of devices that did not open.
  int failures() const;
};

// Reads the plugin's device count, each device's properties and attributes on a worker thread
// and waits at most `deadline`. A plugin that has not answered by then is reported hung, naming
// the call it was in; its thread is left running (nothing can stop a call into a plugin) and
// nothing else calls that plugin, so the listing goes on and the process can still exit.
PluginReport query_plugin_devices(const std::shared_ptr<Plugin>& plugin, std::chrono::milliseconds deadline);

// The full listing: "N devices", then each device's properties and attributes.
void describe_plugin_devices(std::ostream& os, const PluginReport& report, const std::string& indent);

// One line per device (or per plugin without devices) of the short listing.
struct DeviceRow {
  std::string device; // what a program names it: "CPU", "CPU:1"
  std::string name;   // the device's own name
  std::string plugin;
  std::string vendor_arch;
  std::string memory;
  std::string status; // "ok", "UNAVAILABLE: ...", "HUNG: ...", ...
};
// The rows of one plugin's report; `plugin` is the name programs use for it (lower case).
std::vector<DeviceRow> device_rows(const std::string& plugin, const PluginReport& report);
// The rows as an aligned table with a header line.
void print_device_table(std::ostream& os, const std::vector<DeviceRow>& rows, const std::string& indent);

} // namespace tg::cli
