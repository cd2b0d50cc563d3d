#include "context.hpp"

#include "vk_error.hpp"

#include <cstring>
#include <vector>

namespace tg::vulkan {
namespace {

uint32_t memory_type(const VkPhysicalDeviceMemoryProperties& memory, uint32_t allowed,
                     VkMemoryPropertyFlags preferred, VkMemoryPropertyFlags required) {
  for (VkMemoryPropertyFlags want : {preferred | required, required})
    for (uint32_t i = 0; i < memory.memoryTypeCount; ++i)
      if ((allowed & (1u << i)) && (memory.memoryTypes[i].propertyFlags & want) == want) return i;
  throw sdk::PluginError(TG_ERROR_INTERNAL, "no Vulkan memory type has the required properties");
}

} // namespace

uint64_t Capabilities::max_loop_iterations() const {
  return driver_id == VK_DRIVER_ID_MESA_LLVMPIPE ? 65535 : 0;
}

namespace {

bool has_extension(VkPhysicalDevice device, const char* name) {
  uint32_t count = 0;
  vkEnumerateDeviceExtensionProperties(device, nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> all(count);
  vkEnumerateDeviceExtensionProperties(device, nullptr, &count, all.data());
  for (const auto& e : all)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

// Core Vulkan has no core count; NVIDIA and AMD report theirs through extensions that need not
// be enabled to be queried. The heuristic sizes its grids from it (compute_units).
void read_core_count(VkPhysicalDevice device, Capabilities& c) {
  if (has_extension(device, VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME)) {
    VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
    VkPhysicalDeviceProperties2 p{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &sm, {}};
    vkGetPhysicalDeviceProperties2(device, &p);
    c.compute_units = sm.shaderSMCount;
    c.compute_units_source = VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME;
  } else if (has_extension(device, VK_AMD_SHADER_CORE_PROPERTIES_EXTENSION_NAME)) {
    VkPhysicalDeviceShaderCorePropertiesAMD core{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_AMD};
    VkPhysicalDeviceProperties2 p{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &core, {}};
    vkGetPhysicalDeviceProperties2(device, &p);
    c.compute_units =
        core.shaderEngineCount * core.shaderArraysPerEngineCount * core.computeUnitsPerShaderArray;
    c.compute_units_source = VK_AMD_SHADER_CORE_PROPERTIES_EXTENSION_NAME;
  }
}

} // namespace

Capabilities read_capabilities(VkPhysicalDevice device) {
  Capabilities c;
  c.subgroup.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
  c.maintenance3.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES;
  c.subgroup.pNext = &c.maintenance3;
  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &c.subgroup, {}};
  vkGetPhysicalDeviceProperties2(device, &p2);
  c.properties = p2.properties;
  c.subgroup.pNext = nullptr;
  c.maintenance3.pNext = nullptr;
  if (c.properties.apiVersion >= VK_API_VERSION_1_2) {
    VkPhysicalDeviceVulkan12Properties v12p{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES};
    VkPhysicalDeviceProperties2 p12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &v12p, {}};
    vkGetPhysicalDeviceProperties2(device, &p12);
    c.preserve_inf_nan[0] = v12p.shaderSignedZeroInfNanPreserveFloat16;
    c.preserve_inf_nan[1] = v12p.shaderSignedZeroInfNanPreserveFloat32;
    c.preserve_inf_nan[2] = v12p.shaderSignedZeroInfNanPreserveFloat64;
    c.round_to_nearest_even[0] = v12p.shaderRoundingModeRTEFloat16;
    c.round_to_nearest_even[1] = v12p.shaderRoundingModeRTEFloat32;
    c.round_to_nearest_even[2] = v12p.shaderRoundingModeRTEFloat64;
    c.driver_id = v12p.driverID;
  }
  vkGetPhysicalDeviceMemoryProperties(device, &c.memory);
  read_core_count(device, c);

  VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDevice16BitStorageFeatures s16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  const bool has12 = c.properties.apiVersion >= VK_API_VERSION_1_2;
  s16.pNext = has12 ? &v12 : nullptr;
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &s16, {}};
  vkGetPhysicalDeviceFeatures2(device, &f2);
  c.features = f2.features;
  c.storage_16bit = s16.storageBuffer16BitAccess;
  c.storage_8bit = has12 && v12.storageBuffer8BitAccess;
  c.shader_int8 = has12 && v12.shaderInt8;
  c.shader_float16 = has12 && v12.shaderFloat16;

  uint32_t count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(device, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vkGetPhysicalDeviceQueueFamilyProperties(device, &count, families.data());
  for (uint32_t i = 0; i < count; ++i)
    if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
      c.queue_family = i;
      c.timestamp_bits = families[i].timestampValidBits;
      break;
    }
  return c;
}

RawBuffer::RawBuffer(VkDevice device, const VkPhysicalDeviceMemoryProperties& memory, uint64_t size,
                     VkMemoryPropertyFlags preferred, VkMemoryPropertyFlags required)
    : device_(device), size_(size) {
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = size;
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check(vkCreateBuffer(device_, &info, nullptr, &buffer_),
        "vkCreateBuffer of " + std::to_string(size) + " bytes");
  try {
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(device_, buffer_, &req);
    const uint32_t type = memory_type(memory, req.memoryTypeBits, preferred, required);
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = type;
    check(vkAllocateMemory(device_, &alloc, nullptr, &memory_),
          "vkAllocateMemory of " + std::to_string(req.size) + " bytes");
    check(vkBindBufferMemory(device_, buffer_, memory_, 0), "vkBindBufferMemory");
    const VkMemoryPropertyFlags host =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    if ((memory.memoryTypes[type].propertyFlags & host) == host) {
      void* p = nullptr;
      check(vkMapMemory(device_, memory_, 0, VK_WHOLE_SIZE, 0, &p), "vkMapMemory");
      mapped_ = static_cast<std::byte*>(p);
    }
  } catch (...) {
    if (memory_ != VK_NULL_HANDLE) vkFreeMemory(device_, memory_, nullptr);
    vkDestroyBuffer(device_, buffer_, nullptr);
    throw;
  }
}

RawBuffer::~RawBuffer() {
  vkDestroyBuffer(device_, buffer_, nullptr);
  vkFreeMemory(device_, memory_, nullptr); // unmaps too
}

Context::Context(std::shared_ptr<const Instance> instance, VkPhysicalDevice physical)
    : instance_(std::move(instance)), physical_(physical), caps_(read_capabilities(physical)) {
  // Enable exactly the features the dtypes need (Device::properties declares the same ones).
  VkPhysicalDeviceFeatures base{};
  base.shaderInt16 = caps_.features.shaderInt16;
  base.shaderInt64 = caps_.features.shaderInt64;
  base.shaderFloat64 = caps_.features.shaderFloat64;
  VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  v12.storageBuffer8BitAccess = caps_.storage_8bit;
  v12.shaderInt8 = caps_.shader_int8;
  v12.shaderFloat16 = caps_.shader_float16;
  VkPhysicalDevice16BitStorageFeatures s16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  s16.storageBuffer16BitAccess = caps_.storage_16bit;
  s16.pNext = caps_.properties.apiVersion >= VK_API_VERSION_1_2 ? &v12 : nullptr;
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &s16, base};

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue.queueFamilyIndex = caps_.queue_family;
  queue.queueCount = 1;
  queue.pQueuePriorities = &priority;
  VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  info.pNext = &features;
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queue;
  check(vkCreateDevice(physical_, &info, nullptr, &device_), "vkCreateDevice");
  try {
    vkGetDeviceQueue(device_, caps_.queue_family, 0, &queue_);
    VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool.queueFamilyIndex = caps_.queue_family;
    check(vkCreateCommandPool(device_, &pool, nullptr, &pool_), "vkCreateCommandPool");
    VkCommandBufferAllocateInfo cb{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cb.commandPool = pool_;
    cb.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cb.commandBufferCount = 1;
    check(vkAllocateCommandBuffers(device_, &cb, &commands_), "vkAllocateCommandBuffers");
    VkFenceCreateInfo fence{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    check(vkCreateFence(device_, &fence, nullptr, &fence_), "vkCreateFence");
    if (caps_.timestamp_bits > 0) {
      VkQueryPoolCreateInfo q{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
      q.queryType = VK_QUERY_TYPE_TIMESTAMP;
      q.queryCount = 2;
      check(vkCreateQueryPool(device_, &q, nullptr, &timestamps_), "vkCreateQueryPool");
    }
  } catch (...) {
    release();
    throw;
  }
}

Context::~Context() { release(); }

void Context::release() {
  if (device_ == VK_NULL_HANDLE) return;
  vkDeviceWaitIdle(device_);
  if (timestamps_ != VK_NULL_HANDLE) vkDestroyQueryPool(device_, timestamps_, nullptr);
  if (fence_ != VK_NULL_HANDLE) vkDestroyFence(device_, fence_, nullptr);
  if (pool_ != VK_NULL_HANDLE) vkDestroyCommandPool(device_, pool_, nullptr); // frees commands_
  vkDestroyDevice(device_, nullptr);
  device_ = VK_NULL_HANDLE;
}

void Context::submit(const std::function<void(VkCommandBuffer)>& record) {
  check(vkResetCommandBuffer(commands_, 0), "vkResetCommandBuffer");
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(vkBeginCommandBuffer(commands_, &begin), "vkBeginCommandBuffer");
  record(commands_);
  // Make the shader's and the copies' writes visible to the host and to later commands.
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT;
  vkCmdPipelineBarrier(commands_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier, 0, nullptr, 0, nullptr);
  check(vkEndCommandBuffer(commands_), "vkEndCommandBuffer");
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &commands_;
  check(vkQueueSubmit(queue_, 1, &submit, fence_), "vkQueueSubmit");
  check(vkWaitForFences(device_, 1, &fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences");
  check(vkResetFences(device_, 1, &fence_), "vkResetFences");
}

std::unique_ptr<RawBuffer> Context::device_buffer(uint64_t size) const {
  // A discrete GPU's host-visible device memory is a small PCIe window: keep buffers out of it and
  // copy through staging. Integrated and CPU devices share memory with the host: map it.
  const bool discrete = caps_.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU;
  const VkMemoryPropertyFlags preferred =
      discrete ? 0 : VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  return std::make_unique<RawBuffer>(device_, caps_.memory, size, preferred,
                                     VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
}

std::unique_ptr<RawBuffer> Context::staging_buffer(uint64_t size) const {
  return std::make_unique<RawBuffer>(device_, caps_.memory, size, 0,
                                     VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                         VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
}

} // namespace tg::vulkan
