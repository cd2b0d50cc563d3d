#include "kernel/schedule/buffer.hpp"

#include <typeinfo>

namespace tg {

namespace {
std::atomic<int64_t> next_buffer_id{1};
} // namespace

BufferArg::BufferArg(std::string device, int64_t size)
    : id_(next_buffer_id.fetch_add(1)), device_(std::move(device)), size_(size) {}

std::shared_ptr<BufferStorage> BufferArg::storage() const {
  std::lock_guard lock(mutex_);
  return storage_;
}

void BufferArg::set_storage(std::shared_ptr<BufferStorage> storage) const {
  std::lock_guard lock(mutex_);
  storage_ = std::move(storage);
  raw_storage_.store(storage_.get(), std::memory_order_release);
}

bool BufferArg::equals(const OpaqueArg& other) const {
  auto* o = dynamic_cast<const BufferArg*>(&other);
  return o != nullptr && o->id_ == id_;
}

std::string BufferArg::str() const {
  return "buf" + std::to_string(id_) + "(" + device_ + ", " + std::to_string(size_) + ")";
}

UOpRef make_buffer(const std::string& device, DType dtype, int64_t size) {
  return UOp::make(Ops::BUFFER, dtype, {}, Arg{OpaqueArgRef(std::make_shared<BufferArg>(device, size))});
}

bool is_buffer(const UOpRef& u) {
  if (u->op() != Ops::BUFFER) return false;
  auto* opaque = u->arg_if<OpaqueArgRef>();
  // The exact type (BufferArg is final), not a dynamic_cast's walk: this runs for every buffer of
  // every launch.
  return opaque && *opaque && typeid(**opaque) == typeid(BufferArg);
}

const BufferArg& buffer_arg(const UOpRef& buffer) {
  if (!is_buffer(buffer)) throw UOpError("expected a BUFFER node, got " + std::string(op_name(buffer->op())));
  return static_cast<const BufferArg&>(**buffer->arg_if<OpaqueArgRef>());
}

} // namespace tg
