// What distinguishes one OpenCL plugin from another: which platforms it serves, what it says when
// there are none, and what it changes in the device it reports. The opencl plugin takes every
// platform; qcom takes Qualcomm's and shapes work groups by the wave size.
#pragma once

#include <functional>
#include <string>

namespace tg::sdk::opencl {

struct PlatformInfo {
  std::string name;
  std::string vendor;
  std::string version;
};

struct Policy {
  std::string plugin;     // "opencl": the blob envelope and error prefixes use it
  std::string version;    // the plugin's version
  std::string build_info; // for tg_plugin_api.build_info
  // The platforms whose devices this plugin enumerates.
  std::function<bool(const PlatformInfo&)> accepts = [](const PlatformInfo&) { return true; };
  // The UNAVAILABLE message when no accepted platform has a device; the platforms seen are appended.
  std::string none_reason = "no OpenCL device";
  // Round max_local_threads down to a multiple of the subgroup (wave) size.
  bool work_groups_of_whole_waves = false;
  // Appended to the device name when the device lacks cl_khr_fp16 (half computed in float).
  std::string without_fp16_note;
};

} // namespace tg::sdk::opencl
