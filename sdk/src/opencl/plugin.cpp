#include <tg/sdk/opencl/device.hpp>
#include <tg/sdk/opencl/plugin.hpp>

namespace tg::sdk::opencl {

int32_t Plugin::device_count() { return int32_t(find_devices(policy_).size()); }

std::unique_ptr<tg::sdk::Device> Plugin::open_device(int32_t index) {
  std::vector<DeviceEntry> devices = find_devices(policy_);
  if (index < 0 || size_t(index) >= devices.size())
    throw PluginError(TG_ERROR_NOT_FOUND, "no OpenCL device " + std::to_string(index));
  return std::make_unique<Device>(std::move(devices[size_t(index)]), policy_);
}

} // namespace tg::sdk::opencl
