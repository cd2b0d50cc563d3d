// Buffers: aligned host memory owned by a device.
#pragma once

#include <tg/abi.h>

#include <cstdint>

struct tg_buffer {
  tg_device* device = nullptr;
  void* data = nullptr; // never NULL, even for size 0
  uint64_t size = 0;
  uint64_t alignment = 0;
};

namespace tg::cpu {

tg_error* buffer_alloc(tg_device* device, const tg_buffer_alloc_args* args, tg_buffer** out_buffer);
void buffer_free(tg_buffer* buffer);
tg_error* buffer_copy_from_host(tg_buffer* dst, uint64_t dst_offset, const void* src, uint64_t size);
tg_error* buffer_copy_to_host(tg_buffer* src, uint64_t src_offset, void* dst, uint64_t size);
tg_error* buffer_copy(tg_buffer* dst, uint64_t dst_offset, tg_buffer* src, uint64_t src_offset,
                      uint64_t size);

} // namespace tg::cpu
