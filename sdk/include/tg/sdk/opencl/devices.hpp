// Finding OpenCL devices: every device of every platform a Policy accepts, in platform order, each
// with the strings that identify it and the target string its program binaries are for.
#pragma once

#include <tg/sdk/opencl/error.hpp>
#include <tg/sdk/opencl/policy.hpp>

#include <CL/cl.h>

#include <string>
#include <vector>

namespace tg::sdk::opencl {

struct DeviceEntry {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  PlatformInfo platform_info;
  std::string name;
  std::string vendor;
  std::string driver_version;
  std::string device_version; // "OpenCL 3.0 ..."
  std::string c_version;      // "OpenCL C 1.2 ..."
  std::string extensions;     // space-separated
  bool cpu = false;           // CL_DEVICE_TYPE_CPU: work items of a group run one after another
  // "<name> (<driver>) #<hash>": a binary built for one entry loads only on an entry with the same
  // target. The hash covers platform, device and driver versions; at most 127 bytes.
  std::string target;

  bool has_extension(const std::string& extension) const;
};

// The accepted devices. Throws PluginError(UNAVAILABLE) when the ICD loader finds no platform or
// no accepted platform has a device, naming what was found.
std::vector<DeviceEntry> find_devices(const Policy& policy);

// clGetDeviceInfo / clGetPlatformInfo for strings and fixed-size values (throw on failure).
std::string device_string(cl_device_id device, cl_device_info what);
std::string platform_string(cl_platform_id platform, cl_platform_info what);
template <class T> T device_value(cl_device_id device, cl_device_info what) {
  T value{};
  check(clGetDeviceInfo(device, what, sizeof value, &value, nullptr),
        "clGetDeviceInfo(" + std::to_string(what) + ")");
  return value;
}
// As device_value, but `fallback` when the device does not answer (an older OpenCL, an extension).
template <class T> T device_value_or(cl_device_id device, cl_device_info what, T fallback) {
  T value{};
  return clGetDeviceInfo(device, what, sizeof value, &value, nullptr) == CL_SUCCESS ? value : fallback;
}

} // namespace tg::sdk::opencl
