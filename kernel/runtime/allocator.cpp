#include "kernel/runtime/allocator.hpp"

namespace tg {

DeviceStorage::~DeviceStorage() {
  if (owner_) owner_->release(std::move(buffer_));
}

std::shared_ptr<DeviceStorage> Allocator::alloc(uint64_t bytes) {
  {
    std::lock_guard lock(mutex_);
    if (auto it = free_.find(bytes); it != free_.end()) {
      Buffer b = std::move(it->second);
      free_.erase(it);
      cached_bytes_ -= bytes;
      live_bytes_ += bytes;
      return std::make_shared<DeviceStorage>(shared_from_this(), std::move(b));
    }
  }
  Buffer buffer;
  try {
    buffer = device_->alloc(bytes);
  } catch (const OutOfMemoryError&) {
    free_cache(); // give cached memory back to the device, then try once more
    buffer = device_->alloc(bytes);
  }
  {
    std::lock_guard lock(mutex_);
    live_bytes_ += buffer.size();
  }
  return std::make_shared<DeviceStorage>(shared_from_this(), std::move(buffer));
}

void Allocator::release(Buffer buffer) {
  std::lock_guard lock(mutex_);
  cached_bytes_ += buffer.size();
  live_bytes_ -= buffer.size();
  free_.emplace(buffer.size(), std::move(buffer));
}

void Allocator::free_cache() {
  std::multimap<uint64_t, Buffer> drop;
  {
    std::lock_guard lock(mutex_);
    drop.swap(free_);
    cached_bytes_ = 0;
  }
}

uint64_t Allocator::cached_bytes() const {
  std::lock_guard lock(mutex_);
  return cached_bytes_;
}

uint64_t Allocator::live_bytes() const {
  std::lock_guard lock(mutex_);
  return live_bytes_;
}

} // namespace tg
