// Buffers: aligned host memory, allocated here or imported (ABI 1.3: memory another library owns,
// never freed here). The adaptor has checked every range before a copy arrives here.
#pragma once

#include <tg/sdk/adaptor.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace tg::cpu {

inline constexpr uint32_t kBufferAlignment = 64; // every buffer base, at least

// The methods are inline, so the class has no key function: its type info is emitted wherever it
// is used, which lets a white-box test (UBSan's vptr check included) cast to it without linking the
// plugin.
class Buffer final : public sdk::Buffer {
public:
  // alignment 0 = kBufferAlignment; a power of two (the adaptor checked).
  Buffer(uint64_t size, uint64_t alignment);
  // Imported: `size` bytes at `data` (NULL only when size is 0), owned by the caller.
  struct Imported {};
  Buffer(Imported, char* data, uint64_t size);
  ~Buffer() override {
    if (owned_) std::free(data_);
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  char* data() const { return data_; } // never NULL, even for size 0
  uint64_t size() const { return size_; }

  void copy_from_host(uint64_t offset, const void* src, uint64_t size) override {
    std::memcpy(data_ + offset, src, size_t(size));
  }
  void copy_to_host(uint64_t offset, void* dst, uint64_t size) override {
    std::memcpy(dst, data_ + offset, size_t(size));
  }
  void copy_from(uint64_t offset, sdk::Buffer& src, uint64_t src_offset, uint64_t size) override {
    std::memmove(data_ + offset, static_cast<Buffer&>(src).data_ + src_offset, size_t(size)); // may overlap
  }
  std::optional<uint64_t> address() const override { return reinterpret_cast<uintptr_t>(data_); }

private:
  char* data_;
  uint64_t size_;
  bool owned_ = true;
};

} // namespace tg::cpu
