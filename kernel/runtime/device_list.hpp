// Every device the plugins found can open, by name: what a front end lists (Python's
// tinygrad_cpp.devices()). Loads every plugin on the search path and asks each for its count.
#pragma once

#include <string>
#include <vector>

namespace tg {

struct PluginDevices {
  std::string plugin;               // lower case, e.g. "cuda"
  std::vector<std::string> devices; // canonical names, e.g. "CUDA", "CUDA:1"; empty when unavailable
  std::string error;                // why none: the load error or the plugin's UNAVAILABLE reason
};

// One entry per registered plugin (shadowed files are left out), in search order.
std::vector<PluginDevices> list_devices();

} // namespace tg
