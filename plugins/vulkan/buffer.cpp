#include "buffer.hpp"

#include <cstring>

namespace tg::vulkan {
namespace {

// Vulkan has no empty buffers and binds storage ranges in 4-byte words: round up.
uint64_t allocation_size(uint64_t size) { return size == 0 ? 16 : (size + 15) / 16 * 16; }

void record_copy(VkCommandBuffer cb, VkBuffer src, uint64_t src_offset, VkBuffer dst, uint64_t dst_offset,
                 uint64_t size) {
  VkBufferCopy region{src_offset, dst_offset, size};
  vkCmdCopyBuffer(cb, src, dst, 1, &region);
}

} // namespace

Buffer::Buffer(std::shared_ptr<Context> context, uint64_t size)
    : context_(std::move(context)), memory_(context_->device_buffer(allocation_size(size))) {}

void Buffer::copy_from_host(uint64_t offset, const void* src, uint64_t size) {
  if (memory_->mapped()) {
    std::memcpy(memory_->mapped() + offset, src, size);
    return;
  }
  auto staging = context_->staging_buffer(size);
  std::memcpy(staging->mapped(), src, size);
  context_->submit(
      [&](VkCommandBuffer cb) { record_copy(cb, staging->handle(), 0, handle(), offset, size); });
}

void Buffer::copy_to_host(uint64_t offset, void* dst, uint64_t size) {
  if (memory_->mapped()) {
    std::memcpy(dst, memory_->mapped() + offset, size);
    return;
  }
  auto staging = context_->staging_buffer(size);
  context_->submit(
      [&](VkCommandBuffer cb) { record_copy(cb, handle(), offset, staging->handle(), 0, size); });
  std::memcpy(dst, staging->mapped(), size);
}

void Buffer::copy_from(uint64_t offset, sdk::Buffer& src_base, uint64_t src_offset, uint64_t size) {
  auto& src = static_cast<Buffer&>(src_base);
  if (memory_->mapped() && src.memory_->mapped()) {
    std::memmove(memory_->mapped() + offset, src.memory_->mapped() + src_offset, size); // may overlap
    return;
  }
  // vkCmdCopyBuffer forbids overlapping regions: an overlapping copy inside one buffer goes through
  // a temporary buffer.
  const bool overlap = &src == this && offset < src_offset + size && src_offset < offset + size;
  if (!overlap) {
    context_->submit(
        [&](VkCommandBuffer cb) { record_copy(cb, src.handle(), src_offset, handle(), offset, size); });
    return;
  }
  auto temp = context_->staging_buffer(size);
  context_->submit([&](VkCommandBuffer cb) {
    record_copy(cb, handle(), src_offset, temp->handle(), 0, size);
    VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    barrier.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &barrier,
                         0, nullptr, 0, nullptr);
    record_copy(cb, temp->handle(), 0, handle(), offset, size);
  });
}

} // namespace tg::vulkan
