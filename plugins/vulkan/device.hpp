// A VULKAN device (VULKAN:N is the N-th physical device with Vulkan 1.1 and a compute queue):
// properties read from the driver, buffers, programs, and synchronous launches timed with
// timestamp queries; a launch_batch records the whole list into one command buffer.
#pragma once

#include "context.hpp"

#include <tg/sdk/adaptor.hpp>

#include <memory>

namespace tg::vulkan {

class Device final : public sdk::Device {
public:
  Device(std::shared_ptr<const Instance> instance, VkPhysicalDevice physical);

  tg_device_properties properties() const override;
  std::vector<sdk::Attribute> attributes() const override;
  std::string target() const override;
  std::unique_ptr<sdk::Buffer> alloc(uint64_t size, uint64_t alignment, uint32_t flags) override;
  std::unique_ptr<sdk::Program> load_program(const sdk::Blob& blob) override;
  uint64_t launch(const sdk::Launch& launch) override;
  uint64_t launch_batch(std::span<const sdk::Launch> launches, bool timed) override; // ABI 1.1

private:
  std::shared_ptr<Context> context_;
};

} // namespace tg::vulkan
