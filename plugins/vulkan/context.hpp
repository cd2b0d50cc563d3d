// One opened Vulkan device: the VkDevice with the features the dtypes need, its one compute queue,
// one command buffer and one fence. Work is recorded into the command buffer, submitted and waited
// for before submit() returns (launches and copies are synchronous). Buffers and programs hold a
// shared_ptr to it, so the VkDevice outlives everything made from it.
#pragma once

#include "instance.hpp"

#include <vulkan/vulkan.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace tg::vulkan {

// What the physical device offers, read once.
struct Capabilities {
  VkPhysicalDeviceProperties properties{};
  VkPhysicalDeviceSubgroupProperties subgroup{};
  VkPhysicalDeviceMaintenance3Properties maintenance3{};
  VkPhysicalDeviceMemoryProperties memory{};
  VkPhysicalDeviceFeatures features{};
  bool storage_16bit = false, storage_8bit = false, shader_int8 = false, shader_float16 = false;
  bool preserve_inf_nan[3] = {false, false, false};      // float controls for 16, 32, 64 bits (Vulkan 1.2)
  bool round_to_nearest_even[3] = {false, false, false}; // shaderRoundingModeRTEFloat16/32/64
  uint32_t queue_family = 0;
  uint32_t timestamp_bits = 0; // the compute queue's timestampValidBits (0: no timestamps)
  VkDriverId driver_id{};      // Vulkan 1.2; 0 when older
  // Shader cores (NVIDIA SMs, AMD CUs) from a vendor extension, and which one; 0: not reported.
  uint32_t compute_units = 0;
  std::string compute_units_source;
  // Loop iterations one shader invocation may run before the driver silently stops its loops
  // (0: none known). llvmpipe's loop limiter: 65535 in Mesa 22.3 (docs/vulkan.md).
  uint64_t max_loop_iterations() const;
};

Capabilities read_capabilities(VkPhysicalDevice device);

// A VkBuffer with its own VkDeviceMemory, mapped when host-visible.
class RawBuffer {
public:
  RawBuffer(VkDevice device, const VkPhysicalDeviceMemoryProperties& memory, uint64_t size,
            VkMemoryPropertyFlags preferred, VkMemoryPropertyFlags required);
  ~RawBuffer();
  RawBuffer(const RawBuffer&) = delete;
  RawBuffer& operator=(const RawBuffer&) = delete;

  VkBuffer handle() const { return buffer_; }
  uint64_t size() const { return size_; }
  std::byte* mapped() const { return mapped_; } // NULL when not host-visible

private:
  VkDevice device_;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  uint64_t size_;
  std::byte* mapped_ = nullptr;
};

class Context {
public:
  Context(std::shared_ptr<const Instance> instance, VkPhysicalDevice physical);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const Instance& instance() const { return *instance_; }
  VkDevice device() const { return device_; }
  const Capabilities& caps() const { return caps_; }
  VkQueryPool timestamps() const { return timestamps_; } // two queries, or VK_NULL_HANDLE

  // Records with `record`, submits, and waits for the fence.
  void submit(const std::function<void(VkCommandBuffer)>& record);

  // Device-local memory, host-visible where the device has such memory (UMA, lavapipe).
  std::unique_ptr<RawBuffer> device_buffer(uint64_t size) const;
  // Host-visible, coherent memory for copies to and from device-local buffers.
  std::unique_ptr<RawBuffer> staging_buffer(uint64_t size) const;

private:
  void release();
  std::shared_ptr<const Instance> instance_; // destroyed after the device (release())
  VkPhysicalDevice physical_;
  Capabilities caps_;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer commands_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  VkQueryPool timestamps_ = VK_NULL_HANDLE;
};

} // namespace tg::vulkan
