#include "instance.hpp"

#include "vk_error.hpp"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tg::vulkan {
namespace {

bool validation_requested() {
  const char* v = std::getenv("TG_VULKAN_VALIDATION");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

bool layer_installed(const char* name) {
  uint32_t count = 0;
  vkEnumerateInstanceLayerProperties(&count, nullptr);
  std::vector<VkLayerProperties> layers(count);
  vkEnumerateInstanceLayerProperties(&count, layers.data());
  for (const auto& l : layers)
    if (std::strcmp(l.layerName, name) == 0) return true;
  return false;
}

VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                          VkDebugUtilsMessageTypeFlagsEXT,
                                          const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  const bool error = (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) != 0;
  std::fprintf(stderr, "tg vulkan validation %s: %s\n", error ? "ERROR" : "warning",
               data && data->pMessage ? data->pMessage : "(no message)");
  std::fflush(stderr);
  if (error) std::abort(); // a validation error is a bug: fail the test that provoked it
  return VK_FALSE;
}

// Usable for compute: Vulkan 1.1 or newer (subgroup properties, 16-bit storage) and a queue
// family with compute.
bool usable(VkPhysicalDevice device) {
  VkPhysicalDeviceProperties p;
  vkGetPhysicalDeviceProperties(device, &p);
  if (p.apiVersion < VK_API_VERSION_1_1) return false;
  uint32_t count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(device, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vkGetPhysicalDeviceQueueFamilyProperties(device, &count, families.data());
  for (const auto& f : families)
    if (f.queueFlags & VK_QUEUE_COMPUTE_BIT) return true;
  return false;
}

std::vector<std::string> loaded_libraries() {
  std::vector<std::string> names;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        if (info->dlpi_name && *info->dlpi_name)
          static_cast<std::vector<std::string>*>(out)->push_back(info->dlpi_name);
        return 0;
      },
      &names);
  return names;
}

// Keeps the Vulkan loader and the drivers and layers it opened for the instance loaded until the process
// ends. Drivers built on LLVM (lavapipe) do not survive being unloaded and loaded again, and memory they keep
// in globals would show as leaks from "<unknown module>" once unloaded.
void pin_libraries_loaded_since(const std::vector<std::string>& before) {
  Dl_info loader{};
  if (dladdr(reinterpret_cast<void*>(&vkCreateInstance), &loader) && loader.dli_fname)
    dlopen(loader.dli_fname, RTLD_NOW | RTLD_NOLOAD); // the loader itself, which owns their state
  for (const std::string& name : loaded_libraries())
    if (std::find(before.begin(), before.end(), name) == before.end())
      dlopen(name.c_str(), RTLD_NOW | RTLD_NOLOAD); // one more reference, never dropped
}

} // namespace

std::shared_ptr<const Instance> Instance::get() {
  static const std::shared_ptr<const Instance> instance(new Instance()); // thread-safe initialization
  if (!instance->unavailable_.empty()) throw sdk::PluginError(TG_ERROR_UNAVAILABLE, instance->unavailable_);
  return instance;
}

Instance::Instance() {
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "tinygrad.cpp";
  app.pEngineName = "tinygrad.cpp";
  app.apiVersion = VK_API_VERSION_1_2;
  const char* layer = "VK_LAYER_KHRONOS_validation";
  const char* extension = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  const bool validate = validation_requested() && layer_installed(layer);
  if (validation_requested() && !validate)
    std::fprintf(stderr, "tg vulkan: TG_VULKAN_VALIDATION=1 but %s is not installed; running without it\n",
                 layer);
  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pApplicationInfo = &app;
  if (validate) {
    info.enabledLayerCount = 1;
    info.ppEnabledLayerNames = &layer;
    info.enabledExtensionCount = 1;
    info.ppEnabledExtensionNames = &extension;
  }
  const std::vector<std::string> before = loaded_libraries();
  VkResult r = vkCreateInstance(&info, nullptr, &instance_);
  if (r != VK_SUCCESS) {
    instance_ = VK_NULL_HANDLE;
    unavailable_ = std::string("no Vulkan driver: vkCreateInstance failed with ") + result_name(r) +
                   (r == VK_ERROR_INCOMPATIBLE_DRIVER ? " (no installable client driver found)" : "");
    return;
  }
  if (validate) {
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
    VkDebugUtilsMessengerCreateInfoEXT m{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    m.messageSeverity =
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    m.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    m.pfnUserCallback = on_message;
    if (create) create(instance_, &m, nullptr, &messenger_);
  }
  uint32_t count = 0;
  vkEnumeratePhysicalDevices(instance_, &count, nullptr);
  std::vector<VkPhysicalDevice> all(count);
  vkEnumeratePhysicalDevices(instance_, &count, all.data());
  for (VkPhysicalDevice d : all)
    if (usable(d)) devices_.push_back(d);
  pin_libraries_loaded_since(before);
  if (devices_.empty())
    unavailable_ = count == 0 ? "no Vulkan physical device (the loader found no driver with a device)"
                              : std::to_string(count) +
                                    " Vulkan physical device(s), none with Vulkan 1.1 and a compute queue";
}

Instance::~Instance() {
  if (messenger_ != VK_NULL_HANDLE) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy) destroy(instance_, messenger_, nullptr);
  }
  if (instance_ != VK_NULL_HANDLE) vkDestroyInstance(instance_, nullptr);
}

} // namespace tg::vulkan
