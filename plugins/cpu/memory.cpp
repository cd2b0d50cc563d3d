#include "memory.hpp"

#include "device.hpp"

#include <tg/sdk/plugin.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

using tg::sdk::guard;
using tg::sdk::PluginError;
using tg::sdk::require;

namespace tg::cpu {
namespace {

// Throws INVALID_ARGUMENT unless [offset, offset + size) lies inside the buffer.
void check_range(const tg_buffer* buffer, uint64_t offset, uint64_t size, const char* which) {
  if (offset > buffer->size || size > buffer->size - offset)
    throw PluginError(TG_ERROR_INVALID_ARGUMENT, std::string(which) + " range [offset " +
                                                     std::to_string(offset) + ", size " +
                                                     std::to_string(size) + ") lies outside the buffer of " +
                                                     std::to_string(buffer->size) + " bytes");
}

} // namespace

tg_error* buffer_alloc(tg_device* device, const tg_buffer_alloc_args* args, tg_buffer** out_buffer) {
  return guard("cpu.buffer_alloc", [&] {
    require(device, "device");
    auto a = tg::sdk::read_args(args, "args");
    require(out_buffer, "out_buffer");
    uint64_t alignment = a.alignment == 0 ? kBufferAlignment : a.alignment;
    if ((alignment & (alignment - 1)) != 0)
      throw PluginError(TG_ERROR_INVALID_ARGUMENT,
                        "alignment " + std::to_string(a.alignment) + " is not a power of two");
    if (alignment < kBufferAlignment) alignment = kBufferAlignment;
    uint64_t limit = device->properties.max_buffer_bytes;
    if ((limit != 0 && a.size > limit) || alignment > (uint64_t(1) << 30))
      throw PluginError(TG_ERROR_RESOURCE_EXHAUSTED, "cannot allocate " + std::to_string(a.size) +
                                                         " bytes (aligned to " + std::to_string(alignment) +
                                                         "): the host has " + std::to_string(limit) +
                                                         " bytes of memory");
    // aligned_alloc wants a size that is a multiple of the alignment; size 0 still gets real memory.
    uint64_t padded = (std::max<uint64_t>(a.size, 1) + alignment - 1) / alignment * alignment;
    void* data = std::aligned_alloc(size_t(alignment), size_t(padded));
    if (data == nullptr)
      throw PluginError(TG_ERROR_RESOURCE_EXHAUSTED,
                        "out of host memory allocating " + std::to_string(a.size) + " bytes");
    auto buffer = std::unique_ptr<tg_buffer>(new (std::nothrow) tg_buffer{device, data, a.size, alignment});
    if (!buffer) {
      std::free(data);
      throw PluginError(TG_ERROR_RESOURCE_EXHAUSTED, "out of host memory");
    }
    *out_buffer = buffer.release();
  });
}

void buffer_free(tg_buffer* buffer) {
  if (buffer == nullptr) return;
  std::free(buffer->data);
  delete buffer;
}

tg_error* buffer_copy_from_host(tg_buffer* dst, uint64_t dst_offset, const void* src, uint64_t size) {
  return guard("cpu.buffer_copy_from_host", [&] {
    require(dst, "dst");
    if (size != 0) require(src, "src");
    check_range(dst, dst_offset, size, "destination");
    if (size != 0) std::memcpy(static_cast<char*>(dst->data) + dst_offset, src, size_t(size));
  });
}

tg_error* buffer_copy_to_host(tg_buffer* src, uint64_t src_offset, void* dst, uint64_t size) {
  return guard("cpu.buffer_copy_to_host", [&] {
    require(src, "src");
    if (size != 0) require(dst, "dst");
    check_range(src, src_offset, size, "source");
    if (size != 0) std::memcpy(dst, static_cast<const char*>(src->data) + src_offset, size_t(size));
  });
}

tg_error* buffer_copy(tg_buffer* dst, uint64_t dst_offset, tg_buffer* src, uint64_t src_offset,
                      uint64_t size) {
  return guard("cpu.buffer_copy", [&] {
    require(dst, "dst");
    require(src, "src");
    if (dst->device != src->device)
      throw PluginError(TG_ERROR_INVALID_ARGUMENT, "source and destination belong to different devices");
    check_range(dst, dst_offset, size, "destination");
    check_range(src, src_offset, size, "source");
    if (size != 0)
      std::memmove(static_cast<char*>(dst->data) + dst_offset,
                   static_cast<const char*>(src->data) + src_offset, size_t(size));
  });
}

} // namespace tg::cpu
