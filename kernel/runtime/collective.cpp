// The collectives of collective.hpp. Every call checks its group first (one buffer per device,
// ranges inside the buffers), then runs on the host: each buffer read to host memory, combined
// there (tg::sdk::reduce_into, every dtype), written back. Correct for any mix of plugins, and
// slow: one round trip through host memory per buffer.
#include "kernel/runtime/collective.hpp"

#include "kernel/runtime/errors.hpp"

#include <tg/sdk/reduce.hpp>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

namespace tg {
namespace {

[[noreturn]] void invalid(const char* call, const std::string& why) {
  throw InvalidArgumentError(TG_ERROR_INVALID_ARGUMENT, std::string(call) + ": " + why);
}

// Bytes of `count` elements of `dtype`; a scalar dtype with a size only.
uint64_t bytes_of(const char* call, DType dtype, uint64_t count, uint64_t groups = 1) {
  if (dtype.ptr || dtype.count != 1 || dtype.is_void())
    invalid(call, "dtype " + dtype.name() + " is not a scalar element type");
  uint64_t item = uint64_t(dtype.itemsize());
  if (count > std::numeric_limits<uint64_t>::max() / item / std::max<uint64_t>(groups, 1))
    invalid(call, std::to_string(count) + " elements overflow a byte count");
  return count * item * groups;
}

// The buffer's range [offset, offset + bytes) lies inside it.
void check_member(const char* call, const GroupBuffer& b, uint64_t bytes, const std::string& which) {
  if (b.buffer == nullptr || b.buffer->device() == nullptr) invalid(call, which + " has no buffer");
  uint64_t size = b.buffer->size();
  if (b.offset > size || bytes > size - b.offset)
    invalid(call, which + ": [offset " + std::to_string(b.offset) + ", " + std::to_string(bytes) +
                      " bytes) lies outside its buffer of " + std::to_string(size) + " bytes");
}

// One buffer per device, every range inside its buffer.
void check_group(const char* call, std::span<const GroupBuffer> group, uint64_t bytes, const char* name) {
  if (group.empty()) invalid(call, "the group is empty");
  for (size_t i = 0; i < group.size(); ++i) {
    std::string which = std::string(name) + "[" + std::to_string(i) + "]";
    check_member(call, group[i], bytes, which);
    for (size_t j = 0; j < i; ++j)
      if (group[j].buffer->device() == group[i].buffer->device())
        invalid(call, which + " is on the same device as " + name + "[" + std::to_string(j) +
                          "] (one buffer per device)");
  }
}

std::vector<std::byte> read(const GroupBuffer& b, uint64_t bytes) {
  std::vector<std::byte> host(bytes);
  b.buffer->copy_to_host(host, b.offset);
  return host;
}

void write(const GroupBuffer& b, std::span<const std::byte> host) {
  b.buffer->copy_from_host(host, b.offset);
}

sdk::ReduceOp reduce_op(CollectiveReduce op) {
  return op == CollectiveReduce::sum ? sdk::ReduceOp::sum : sdk::ReduceOp::max;
}

} // namespace

void all_reduce(std::span<const GroupBuffer> buffers, DType dtype, uint64_t count, CollectiveReduce op) {
  const char* call = "all_reduce";
  uint64_t bytes = bytes_of(call, dtype, count);
  check_group(call, buffers, bytes, "buffers");
  if (count == 0) return;
  std::vector<std::byte> acc = read(buffers[0], bytes);
  for (size_t i = 1; i < buffers.size(); ++i) {
    std::vector<std::byte> in = read(buffers[i], bytes);
    sdk::reduce_into(to_abi(dtype), reduce_op(op), acc.data(), in.data(), count);
  }
  for (const GroupBuffer& b : buffers) write(b, acc);
}

void all_gather(std::span<const GroupBuffer> inputs, std::span<const GroupBuffer> outputs, DType dtype,
                uint64_t count) {
  const char* call = "all_gather";
  uint64_t bytes = bytes_of(call, dtype, count);
  check_group(call, inputs, bytes, "inputs");
  check_group(call, outputs, bytes_of(call, dtype, count, inputs.size()), "outputs");
  if (outputs.size() != inputs.size())
    invalid(call,
            std::to_string(inputs.size()) + " inputs but " + std::to_string(outputs.size()) + " outputs");
  for (size_t i = 0; i < inputs.size(); ++i)
    if (outputs[i].buffer->device() != inputs[i].buffer->device())
      invalid(call,
              "outputs[" + std::to_string(i) + "] is not on the device of inputs[" + std::to_string(i) + "]");
  if (count == 0) return;
  std::vector<std::byte> all;
  all.reserve(bytes * inputs.size());
  for (const GroupBuffer& in : inputs) {
    std::vector<std::byte> part = read(in, bytes);
    all.insert(all.end(), part.begin(), part.end());
  }
  for (const GroupBuffer& out : outputs) write(out, all);
}

void broadcast(std::span<const GroupBuffer> buffers, int root, DType dtype, uint64_t count) {
  const char* call = "broadcast";
  uint64_t bytes = bytes_of(call, dtype, count);
  check_group(call, buffers, bytes, "buffers");
  if (root < 0 || size_t(root) >= buffers.size())
    invalid(call,
            "root " + std::to_string(root) + " is not in the group of " + std::to_string(buffers.size()));
  if (count == 0) return;
  std::vector<std::byte> data = read(buffers[size_t(root)], bytes);
  for (size_t i = 0; i < buffers.size(); ++i)
    if (i != size_t(root)) write(buffers[i], data);
}

void copy_between_devices(const GroupBuffer& dst, const GroupBuffer& src, uint64_t bytes) {
  const char* call = "copy_between_devices";
  check_member(call, dst, bytes, "dst");
  check_member(call, src, bytes, "src");
  if (bytes == 0) return;
  if (dst.buffer->device() == src.buffer->device()) { // one device: the plugin's own copy
    dst.buffer->copy_from(*src.buffer, bytes, dst.offset, src.offset);
    return;
  }
  write(dst, read(src, bytes));
}

} // namespace tg
