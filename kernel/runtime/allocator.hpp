// A caching allocator per device: freed buffers go to a free list keyed by size and are handed
// out again, so repeated realizes of the same shapes allocate nothing. On RESOURCE_EXHAUSTED it
// releases the whole cache and retries once.
#pragma once

#include "kernel/runtime/device.hpp"
#include "kernel/schedule/buffer.hpp"

#include <map>
#include <memory>
#include <mutex>

namespace tg {

// Device memory behind a BUFFER node; returns itself to its allocator when released.
class DeviceStorage : public BufferStorage {
public:
  DeviceStorage(std::shared_ptr<class Allocator> owner, Buffer buffer)
      : owner_(std::move(owner)), buffer_(std::move(buffer)) {}
  ~DeviceStorage() override;
  Buffer& buffer() { return buffer_; }

private:
  std::shared_ptr<class Allocator> owner_;
  Buffer buffer_;
};

class Allocator : public std::enable_shared_from_this<Allocator> {
public:
  explicit Allocator(std::shared_ptr<Device> device) : device_(std::move(device)) {}
  std::shared_ptr<DeviceStorage> alloc(uint64_t bytes);
  void release(Buffer buffer); // back to the cache
  void free_cache();
  const std::shared_ptr<Device>& device() const { return device_; }
  uint64_t cached_bytes() const; // freed, kept for reuse
  uint64_t live_bytes() const;   // handed out and not yet released: what results hold now

private:
  std::shared_ptr<Device> device_;
  mutable std::mutex mutex_;
  std::multimap<uint64_t, Buffer> free_;
  uint64_t cached_bytes_ = 0;
  uint64_t live_bytes_ = 0;
};

} // namespace tg
