// MY's memory is host memory: a buffer is an aligned heap block.
#pragma once

#include <tg/sdk/adaptor.hpp>

#include <cstring>
#include <memory>
#include <new>

namespace my {

class Buffer final : public tg::sdk::Buffer {
public:
  Buffer(uint64_t size, uint64_t alignment)
      : alignment_(std::align_val_t(alignment)),
        data_(static_cast<std::byte*>(::operator new(size ? size : 1, alignment_))) {}
  ~Buffer() override { ::operator delete(data_, alignment_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  std::byte* data() { return data_; }
  // The adaptor has checked every range against the buffer's size.
  void copy_from_host(uint64_t offset, const void* src, uint64_t size) override {
    std::memcpy(data_ + offset, src, size);
  }
  void copy_to_host(uint64_t offset, void* dst, uint64_t size) override {
    std::memcpy(dst, data_ + offset, size);
  }
  void copy_from(uint64_t offset, tg::sdk::Buffer& src, uint64_t src_offset, uint64_t size) override {
    std::memmove(data_ + offset, static_cast<Buffer&>(src).data_ + src_offset, size); // may overlap
  }

private:
  std::align_val_t alignment_;
  std::byte* data_;
};

} // namespace my
