// The process's one VkInstance and the physical devices it can compute on (Vulkan 1.1+ with a
// compute queue), made on first use. Every open device holds a reference, so the instance outlives
// devices that the host closes during static destruction, after this plugin's statics.
// TG_VULKAN_VALIDATION=1 enables VK_LAYER_KHRONOS_validation when it is installed, with a
// debug-utils messenger that prints every warning and error to stderr and aborts on an error, so
// a test that provokes one fails (the tests set it; never set it in production).
#pragma once

#include <vulkan/vulkan.h>

#include <memory>
#include <string>
#include <vector>

namespace tg::vulkan {

class Instance {
public:
  // The instance, or PluginError(UNAVAILABLE) saying why there is none (no driver, no device).
  static std::shared_ptr<const Instance> get();

  VkInstance handle() const { return instance_; }
  const std::vector<VkPhysicalDevice>& devices() const { return devices_; }
  bool validation() const { return messenger_ != VK_NULL_HANDLE; }

  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

private:
  Instance();
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  std::vector<VkPhysicalDevice> devices_;
  std::string unavailable_; // why there is no usable device ("" when there is one)
};

} // namespace tg::vulkan
