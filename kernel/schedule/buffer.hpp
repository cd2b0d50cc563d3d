// The tensor-level BUFFER node: a flat array of `size` elements on a device. Its identity is a
// unique id, so two buffers never intern to one node; the device memory behind it (storage) is
// attached by the runtime when a kernel first writes it and lives as long as the node.
#pragma once

#include "kernel/ir/uop.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

namespace tg {

// Implemented by the runtime (device memory); the schedule ring only carries it.
struct BufferStorage {
  virtual ~BufferStorage() = default;
};

class BufferArg final : public OpaqueArg { // final: is_buffer compares the exact type
public:
  BufferArg(std::string device, int64_t size);
  int64_t id() const { return id_; }
  const std::string& device() const { return device_; }
  int64_t size() const { return size_; } // elements

  std::shared_ptr<BufferStorage> storage() const;
  // The storage without a lock or a count, for the launch path: valid while this node lives (it
  // holds the storage; the runtime sets it once, when the buffer is first written). Null if none.
  BufferStorage* storage_if_set() const { return raw_storage_.load(std::memory_order_acquire); }
  void set_storage(std::shared_ptr<BufferStorage> storage) const;

  std::size_t hash() const override { return std::hash<int64_t>{}(id_); }
  bool equals(const OpaqueArg& other) const override;
  std::string str() const override;

private:
  int64_t id_;
  std::string device_;
  int64_t size_;
  mutable std::mutex mutex_;
  mutable std::shared_ptr<BufferStorage> storage_;
  mutable std::atomic<BufferStorage*> raw_storage_{nullptr}; // storage_.get(), published after it
};

// A new BUFFER node (never equal to any other).
UOpRef make_buffer(const std::string& device, DType dtype, int64_t size);
// The BufferArg of a BUFFER node; throws UOpError for anything else.
const BufferArg& buffer_arg(const UOpRef& buffer);
bool is_buffer(const UOpRef& u);

} // namespace tg
