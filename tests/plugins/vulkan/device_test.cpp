// VULKAN:N selection and the declared properties, checked against the test's own Vulkan queries
// (an independent reading of the same driver).
#include "vulkan_fixture.hpp"

#include <vulkan/vulkan.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace tgtest;

BOOST_TEST_GLOBAL_FIXTURE(RequireVulkanDevice);

namespace {

// The test's own instance: the physical devices that can compute (Vulkan 1.1+, a compute queue),
// in the loader's order.
struct Reference {
  VkInstance instance = VK_NULL_HANDLE;
  std::vector<VkPhysicalDeviceProperties> devices;
  Reference() {
    VkApplicationInfo app{};
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.apiVersion = VK_API_VERSION_1_2;
    VkInstanceCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    info.pApplicationInfo = &app;
    BOOST_REQUIRE(vkCreateInstance(&info, nullptr, &instance) == VK_SUCCESS);
    uint32_t n = 0;
    vkEnumeratePhysicalDevices(instance, &n, nullptr);
    std::vector<VkPhysicalDevice> all(n);
    vkEnumeratePhysicalDevices(instance, &n, all.data());
    for (VkPhysicalDevice d : all) {
      VkPhysicalDeviceProperties p;
      vkGetPhysicalDeviceProperties(d, &p);
      uint32_t families = 0;
      vkGetPhysicalDeviceQueueFamilyProperties(d, &families, nullptr);
      std::vector<VkQueueFamilyProperties> f(families);
      vkGetPhysicalDeviceQueueFamilyProperties(d, &families, f.data());
      bool compute = false;
      for (const auto& q : f) compute = compute || (q.queueFlags & VK_QUEUE_COMPUTE_BIT);
      if (compute && p.apiVersion >= VK_API_VERSION_1_1) devices.push_back(p);
    }
  }
  ~Reference() { vkDestroyInstance(instance, nullptr); }
};

// The device's attribute `key` through the ABI, "" when it declares none.
std::string attribute(Device& device, const std::string& key) {
  int32_t count = 0;
  check(api().device_attribute_count(device.get(), &count), "device_attribute_count");
  for (int32_t i = 0; i < count; ++i) {
    const char *k = nullptr, *value = nullptr;
    check(api().device_attribute(device.get(), i, &k, &value), "device_attribute");
    if (key == k) return value;
  }
  return "";
}

} // namespace

BOOST_AUTO_TEST_CASE(every_compute_device_is_vulkan_n_in_loader_order) {
  Reference ref;
  int32_t count = 0;
  check(api().device_count(&count), "device_count");
  BOOST_REQUIRE_EQUAL(size_t(count), ref.devices.size());
  for (int32_t n = 0; n < count; ++n) {
    Device device(n);
    tg_device_properties p = device.properties();
    BOOST_TEST(std::string(p.name) == std::string(ref.devices[size_t(n)].deviceName));
  }
}

BOOST_AUTO_TEST_CASE(an_out_of_range_index_is_refused_and_says_so) {
  int32_t count = 0;
  check(api().device_count(&count), "device_count");
  tg_device_open_args args{sizeof(args), count, 0};
  tg_device* device = nullptr;
  Status s = take(api().device_open(&args, &device));
  BOOST_TEST(s.code == TG_ERROR_INVALID_ARGUMENT); // the adaptor's check, before the plugin
  BOOST_TEST(s.message.find("device index " + std::to_string(count) + " out of range") != std::string::npos,
             s.message);
}

BOOST_AUTO_TEST_CASE(properties_are_the_drivers_limits) {
  Reference ref;
  const VkPhysicalDeviceLimits& l = ref.devices[0].limits;
  Device device;
  tg_device_properties p = device.properties();
  for (int k = 0; k < 3; ++k) {
    BOOST_TEST(p.max_local_size[k] == l.maxComputeWorkGroupSize[k]);
    BOOST_TEST(p.max_global_size[k] == l.maxComputeWorkGroupCount[k]);
  }
  BOOST_TEST(p.max_local_threads == l.maxComputeWorkGroupInvocations);
  BOOST_TEST(p.local_memory_bytes == l.maxComputeSharedMemorySize);
  BOOST_TEST(p.max_buffer_bytes <= l.maxStorageBufferRange);
  BOOST_TEST(p.max_buffer_bytes > 0u);
  BOOST_TEST(p.subgroup_size >= 1u);
  BOOST_TEST(std::string(p.arch) == "spirv1.3-vulkan1.1");
  BOOST_TEST(((p.features & TG_FEATURE_LOCAL_MEMORY) != 0) == (l.maxComputeSharedMemorySize > 0));
  const uint64_t always =
      TG_DTYPE_BIT(TG_DTYPE_INT32) | TG_DTYPE_BIT(TG_DTYPE_UINT32) | TG_DTYPE_BIT(TG_DTYPE_FLOAT32);
  BOOST_TEST((p.dtype_mask & always) == always);
  if (std::string(p.name).find("llvmpipe") != std::string::npos) { // lavapipe, as ENVIRONMENT.md measured it
    BOOST_TEST(p.max_buffer_bytes == 128u << 20);
    BOOST_TEST(p.subgroup_size == 8u);
    for (tg_dtype d : {TG_DTYPE_FLOAT16, TG_DTYPE_INT8, TG_DTYPE_FLOAT64, TG_DTYPE_INT64})
      BOOST_TEST((p.dtype_mask & TG_DTYPE_BIT(d)) != 0, "lavapipe computes with " << tg::sdk::dtype_name(d));
    BOOST_TEST((p.features & TG_FEATURE_TIMING) != 0);
  }
}

BOOST_AUTO_TEST_CASE(validation_layer_is_on_when_asked_and_installed) {
  const char* asked = std::getenv("TG_VULKAN_VALIDATION");
  uint32_t n = 0;
  vkEnumerateInstanceLayerProperties(&n, nullptr);
  std::vector<VkLayerProperties> layers(n);
  vkEnumerateInstanceLayerProperties(&n, layers.data());
  bool installed = false;
  for (const auto& l : layers)
    installed = installed || std::strcmp(l.layerName, "VK_LAYER_KHRONOS_validation") == 0;
  Device device;
  const std::string state = attribute(device, "validation_layer");
  const bool expected = asked && std::string(asked) == "1" && installed;
  BOOST_TEST(state == (expected ? "on" : "off"));
  if (!expected)
    BOOST_TEST_MESSAGE("validation layer not checked: TG_VULKAN_VALIDATION unset or layer absent");
}

// llvmpipe stops an invocation's loops after 65535 iterations without an error; the plugin says
// so through max_loop_iterations (the core keeps kernels below it). Other drivers declare nothing.
BOOST_AUTO_TEST_CASE(llvmpipe_declares_its_loop_limit) {
  Reference ref;
  for (size_t n = 0; n < ref.devices.size(); ++n) {
    Device device(static_cast<int>(n));
    const std::string limit = attribute(device, "max_loop_iterations");
    const std::string name = ref.devices[n].deviceName;
    BOOST_TEST_CONTEXT(name) { BOOST_TEST(limit == (name.starts_with("llvmpipe") ? "65535" : "")); }
  }
}
