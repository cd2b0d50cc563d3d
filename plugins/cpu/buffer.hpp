// Buffers: aligned host memory. The adaptor has checked every range before a copy arrives here.
#pragma once

#include <tg/sdk/adaptor.hpp>

#include <cstdint>

namespace tg::cpu {

inline constexpr uint32_t kBufferAlignment = 64; // every buffer base, at least

class Buffer final : public sdk::Buffer {
public:
  // alignment 0 = kBufferAlignment; a power of two (the adaptor checked).
  Buffer(uint64_t size, uint64_t alignment);
  ~Buffer() override;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  char* data() const { return data_; } // never NULL, even for size 0
  uint64_t size() const { return size_; }

  void copy_from_host(uint64_t offset, const void* src, uint64_t size) override;
  void copy_to_host(uint64_t offset, void* dst, uint64_t size) override;
  void copy_from(uint64_t offset, sdk::Buffer& src, uint64_t src_offset, uint64_t size) override;

private:
  char* data_;
  uint64_t size_;
};

} // namespace tg::cpu
