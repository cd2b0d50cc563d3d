// The null buffers: device memory. The adaptor checks every range before a copy arrives.
#pragma once

#include <tg/sdk/adaptor.hpp>

namespace tg::null {

class Buffer final : public sdk::Buffer {
public:
  void copy_from_host(uint64_t offset, const void* src, uint64_t size) override;
  void copy_to_host(uint64_t offset, void* dst, uint64_t size) override;
  void copy_from(uint64_t offset, sdk::Buffer& src, uint64_t src_offset, uint64_t size) override;
  // TODO(copy): hold the device allocation and free it in the destructor.
};

} // namespace tg::null
