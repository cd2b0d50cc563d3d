// A VULKAN buffer: device-local memory, mapped and copied with memcpy when it is also host-visible
// (lavapipe, integrated GPUs), otherwise copied through a temporary staging buffer.
#pragma once

#include "context.hpp"

#include <tg/sdk/adaptor.hpp>

#include <memory>

namespace tg::vulkan {

class Buffer final : public sdk::Buffer {
public:
  Buffer(std::shared_ptr<Context> context, uint64_t size);

  VkBuffer handle() const { return memory_->handle(); }
  uint64_t allocated() const { return memory_->size(); } // >= the size asked for, never 0

  void copy_from_host(uint64_t offset, const void* src, uint64_t size) override;
  void copy_to_host(uint64_t offset, void* dst, uint64_t size) override;
  void copy_from(uint64_t offset, sdk::Buffer& src, uint64_t src_offset, uint64_t size) override;

private:
  std::shared_ptr<Context> context_;
  std::unique_ptr<RawBuffer> memory_;
};

} // namespace tg::vulkan
