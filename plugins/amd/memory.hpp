// AMD device memory: hipMalloc'ed blocks behind the SDK's caching allocator (sdk/block_cache.hpp),
// copies on the device's stream, and Buffer. One Memory per device; the host serializes calls per
// device (abi.h), so no lock. Every call makes the device current first (HIP's current device is
// per thread).
#pragma once

#include "hip.hpp"

#include <tg/sdk/adaptor.hpp>
#include <tg/sdk/block_cache.hpp>

#include <cstdint>

namespace tg::amd {

class Memory {
public:
  Memory(int device, hip::Stream stream) : device_(device), stream_(stream) {}
  ~Memory();
  Memory(const Memory&) = delete;
  Memory& operator=(const Memory&) = delete;

  // A block of at least `size` bytes (rounded, see BlockCache); out of memory after giving the
  // cache back to HIP -> PluginError(RESOURCE_EXHAUSTED).
  hip::DevicePtr allocate(uint64_t size);
  void release(hip::DevicePtr block, uint64_t size); // back to the cache; the stream may still use it
  void trim();                                       // frees every cached block

  // Host <-> device; both return with the host memory free to reuse (they wait for the stream).
  void upload(hip::DevicePtr dst, const void* src, uint64_t size);
  void download(void* dst, hip::DevicePtr src, uint64_t size);
  void copy(hip::DevicePtr dst, hip::DevicePtr src, uint64_t size); // queued on the stream

  void bind() const; // hipSetDevice
  hip::Stream stream() const { return stream_; }

private:
  int device_;
  hip::Stream stream_;
  sdk::BlockCache<hip::DevicePtr> cache_;
};

class Buffer final : public sdk::Buffer {
public:
  // alignment: 0 or a power of two; above hipMalloc's 256 bytes the block is over-allocated
  // (sdk::AlignedBlock).
  Buffer(Memory& memory, uint64_t size, uint64_t alignment);
  ~Buffer() override;
  void copy_from_host(uint64_t offset, const void* src, uint64_t size) override;
  void copy_to_host(uint64_t offset, void* dst, uint64_t size) override;
  void copy_from(uint64_t offset, sdk::Buffer& src, uint64_t src_offset, uint64_t size) override;
  uint64_t device_address() const { return address_; } // the buffer's start, as a kernel argument

private:
  static constexpr uint64_t kNaturalAlignment = 256; // hipMalloc's
  Memory& memory_;
  uint64_t size_; // of the block (the buffer's size plus any alignment slack)
  hip::DevicePtr block_;
  uint64_t address_; // inside the block
};

} // namespace tg::amd
