// Device memory: a caching allocator (freed blocks wait in a per-size free list for the next
// allocation of that size, as a training step frees and re-allocates the same sizes every
// iteration; cuMemFree is synchronous and slow), pinned host staging for copies, and Buffer
// (allocated here, or imported: ABI 1.3, device memory another library owns, never freed here).
// One Memory per device; the host serializes calls per device (abi.h), so no lock.
#pragma once

#include "driver.hpp"
#include "stream.hpp"

#include <tg/sdk/adaptor.hpp>
#include <tg/sdk/block_cache.hpp>

#include <cstdint>
#include <optional>
#include <vector>

namespace tg::cuda {

class Memory {
public:
  Memory(CUcontext context, Stream& stream);
  ~Memory();
  Memory(const Memory&) = delete;
  Memory& operator=(const Memory&) = delete;

  // Blocks are rounded up (sdk::BlockCache::rounded: to 512 bytes, or to 2 MiB above 1 MiB) so
  // near sizes share a list.
  CUdeviceptr allocate(uint64_t size);
  void release(CUdeviceptr ptr, uint64_t size); // back to the cache; the stream may still use it
  void trim();                                  // frees every cached block
  static uint64_t rounded(uint64_t size);

  // Host <-> device through pinned staging; both return with the host memory free to reuse.
  void upload(CUdeviceptr dst, const void* src, uint64_t size);
  void download(void* dst, CUdeviceptr src, uint64_t size);

  CUcontext context() const { return context_; }
  Stream& stream() const { return stream_; }

private:
  static constexpr uint64_t kStagingBytes = 8ull << 20; // two halves, used in turn
  CUcontext context_;
  Stream& stream_;
  sdk::BlockCache<CUdeviceptr> cache_; // freed blocks by rounded size
  void* staging_ = nullptr;
  CUevent staging_done_[2] = {nullptr, nullptr};
};

class Buffer final : public sdk::Buffer {
public:
  // alignment: 0 or a power of two; above cuMemAlloc's 256 bytes the block is over-allocated
  // (sdk::AlignedBlock).
  Buffer(Memory& memory, uint64_t size, uint64_t alignment);
  // Imported: `size` bytes at `address`, device memory of this device that the caller owns.
  struct Imported {};
  Buffer(Imported, Memory& memory, CUdeviceptr address, uint64_t size);
  ~Buffer() override;
  void copy_from_host(uint64_t offset, const void* src, uint64_t size) override;
  void copy_to_host(uint64_t offset, void* dst, uint64_t size) override;
  void copy_from(uint64_t offset, sdk::Buffer& src, uint64_t src_offset, uint64_t size) override;
  std::optional<uint64_t> address() const override { return uint64_t(ptr_); }
  CUdeviceptr device_address() const { return ptr_; }

private:
  static constexpr uint64_t kNaturalAlignment = 256; // cuMemAlloc's
  Memory& memory_;
  uint64_t size_;         // of the block (the buffer's size plus any alignment slack)
  CUdeviceptr block_ = 0; // 0 for an imported buffer: nothing to give back
  CUdeviceptr ptr_ = 0;   // the buffer's start inside the block
};

} // namespace tg::cuda
