// Device enumeration through the ICD loader.
#include <tg/sdk/bytes.hpp>
#include <tg/sdk/opencl/devices.hpp>
#include <tg/sdk/opencl/error.hpp>
#include <tg/sdk/plugin.hpp>

#include <cstddef>
#include <dlfcn.h>

namespace tg::sdk::opencl {
namespace {

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string make_target(const DeviceEntry& e) {
  const std::string identity = e.platform_info.name + "|" + e.platform_info.version + "|" + e.name + "|" +
                               e.driver_version + "|" + e.device_version;
  const std::string hash = hex64(fnv1a64(std::as_bytes(std::span(identity.data(), identity.size()))));
  const std::string tail = " (" + e.driver_version.substr(0, 40) + ") #" + hash.substr(0, 12);
  return e.name.substr(0, 127 - tail.size()) + tail;
}

} // namespace

bool DeviceEntry::has_extension(const std::string& extension) const {
  return (" " + extensions + " ").find(" " + extension + " ") != std::string::npos;
}

std::string device_string(cl_device_id device, cl_device_info what) {
  size_t size = 0;
  check(clGetDeviceInfo(device, what, 0, nullptr, &size), "clGetDeviceInfo");
  std::string s(size, '\0');
  check(clGetDeviceInfo(device, what, size, s.data(), nullptr), "clGetDeviceInfo");
  return trimmed(s);
}

std::string platform_string(cl_platform_id platform, cl_platform_info what) {
  size_t size = 0;
  check(clGetPlatformInfo(platform, what, 0, nullptr, &size), "clGetPlatformInfo");
  std::string s(size, '\0');
  check(clGetPlatformInfo(platform, what, size, s.data(), nullptr), "clGetPlatformInfo");
  return trimmed(s);
}

std::vector<DeviceEntry> find_devices(const Policy& policy) {
  // Once the ICD loader has loaded a driver, keep both for the life of the process: drivers own
  // worker threads and exit handlers, which must not outlive their code when the host unloads us.
  static void* const pinned = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
  (void)pinned;
  cl_uint count = 0;
  cl_int status = clGetPlatformIDs(0, nullptr, &count);
  if (status == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (status == CL_SUCCESS && count == 0))
    throw PluginError(TG_ERROR_UNAVAILABLE,
                      policy.none_reason +
                          ": the OpenCL ICD loader found no platform (no ICD in /etc/OpenCL/vendors)");
  check(status, "clGetPlatformIDs");
  std::vector<cl_platform_id> platforms(count);
  check(clGetPlatformIDs(count, platforms.data(), nullptr), "clGetPlatformIDs");

  std::vector<DeviceEntry> found;
  std::string seen;
  for (cl_platform_id platform : platforms) {
    PlatformInfo info{platform_string(platform, CL_PLATFORM_NAME),
                      platform_string(platform, CL_PLATFORM_VENDOR),
                      platform_string(platform, CL_PLATFORM_VERSION)};
    seen += (seen.empty() ? "" : "; ") + info.name + " (" + info.vendor + ")";
    if (!policy.accepts(info)) continue;
    cl_uint n = 0;
    status = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &n);
    if (status == CL_DEVICE_NOT_FOUND || n == 0) continue;
    check(status, "clGetDeviceIDs");
    std::vector<cl_device_id> devices(n);
    check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, n, devices.data(), nullptr), "clGetDeviceIDs");
    for (cl_device_id device : devices) {
      DeviceEntry e;
      e.platform = platform;
      e.device = device;
      e.platform_info = info;
      e.name = device_string(device, CL_DEVICE_NAME);
      e.vendor = device_string(device, CL_DEVICE_VENDOR);
      e.driver_version = device_string(device, CL_DRIVER_VERSION);
      e.device_version = device_string(device, CL_DEVICE_VERSION);
      e.c_version = device_string(device, CL_DEVICE_OPENCL_C_VERSION);
      e.extensions = device_string(device, CL_DEVICE_EXTENSIONS);
      cl_device_type type = 0;
      check(clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof type, &type, nullptr),
            "clGetDeviceInfo(CL_DEVICE_TYPE)");
      e.cpu = (type & CL_DEVICE_TYPE_CPU) != 0;
      e.target = make_target(e);
      found.push_back(std::move(e));
    }
  }
  if (found.empty())
    throw PluginError(TG_ERROR_UNAVAILABLE, policy.none_reason + " (platforms here: " + seen + ")");
  return found;
}

} // namespace tg::sdk::opencl
