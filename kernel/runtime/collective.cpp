// The collectives of collective.hpp. Every call checks its group first (one buffer per device,
// ranges inside the buffers). Then, when every buffer is on a device of one plugin whose table
// has the ABI 1.2 entry (peer_copy, collective), that one call does it, holding every device's
// call lock. Otherwise, or when the plugin answers UNIMPLEMENTED/UNAVAILABLE for the call, it
// runs on the host: each buffer read to host memory, combined there (tg::sdk::reduce_into, every
// dtype), written back. Correct for any mix of plugins, and slow. TG_COLLECTIVE_HOST=1 forces the
// host path (tests compare both; `tg bench collective` measures both).
#include "kernel/runtime/collective.hpp"

#include "kernel/runtime/errors.hpp"

#include <tg/sdk/reduce.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
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

bool host_only() {
  const char* env = std::getenv("TG_COLLECTIVE_HOST");
  return env != nullptr && std::string_view(env) == "1";
}

// The plugin every buffer's device belongs to, when it is one plugin whose table has `entry`
// (and TG_COLLECTIVE_HOST does not force the host path).
template <class F> const Plugin* common_plugin(std::span<const GroupBuffer> group, F tg_plugin_api::*entry) {
  if (host_only()) return nullptr;
  const Plugin* plugin = &group[0].buffer->device()->plugin();
  for (const GroupBuffer& b : group)
    if (&b.buffer->device()->plugin() != plugin) return nullptr;
  return plugin->has(entry) ? plugin : nullptr;
}

// Makes the plugin's call holding the lock of every device; false when the plugin declined this
// call (UNIMPLEMENTED: the group, dtype or op; UNAVAILABLE: a library it needs is missing), so
// the caller goes through the host instead.
template <class Call>
bool plugin_call(const Plugin& plugin, std::span<const GroupBuffer> group, const char* name, Call&& call) {
  std::vector<const Device*> devices;
  for (const GroupBuffer& b : group) devices.push_back(b.buffer->device().get());
  try {
    plugin.check(Device::serialized_all(devices, std::forward<Call>(call)), name);
    return true;
  } catch (const UnimplementedError&) {
    return false;
  } catch (const DeviceUnavailableError&) {
    return false;
  }
}

std::vector<tg_buffer_arg> abi_args(std::span<const GroupBuffer> group) {
  std::vector<tg_buffer_arg> args;
  for (const GroupBuffer& b : group) args.push_back({b.buffer->raw(), b.offset});
  return args;
}

// The ABI arguments of one collective over `devices` (inputs and outputs one per device).
tg_collective_args collective_args(int32_t op, int32_t reduce, DType dtype, int root, uint64_t count,
                                   std::span<tg_device* const> devices, const tg_buffer_arg* inputs,
                                   const tg_buffer_arg* outputs, tg_comm* comm = nullptr) {
  tg_collective_args args{};
  args.struct_size = sizeof args;
  args.op = op;
  args.reduce = reduce;
  args.dtype = to_abi(dtype);
  args.root = root;
  args.count = count;
  args.device_count = uint32_t(devices.size());
  args.devices = devices.data();
  args.inputs = inputs;
  args.outputs = outputs;
  args.comm = comm;
  return args;
}

// The ABI 1.2 collective over `inputs` -> `outputs` (one group); false when there is none or the
// plugin declined.
bool plugin_collective(int32_t op, int32_t reduce, std::span<const GroupBuffer> inputs,
                       std::span<const GroupBuffer> outputs, DType dtype, uint64_t count, int root = 0) {
  const Plugin* plugin = common_plugin(inputs, &tg_plugin_api::collective);
  if (plugin == nullptr || common_plugin(outputs, &tg_plugin_api::collective) != plugin) return false;
  std::vector<tg_device*> devices;
  for (const GroupBuffer& b : inputs) devices.push_back(b.buffer->device()->raw());
  std::vector<tg_buffer_arg> in = abi_args(inputs), out = abi_args(outputs);
  tg_collective_args args = collective_args(op, reduce, dtype, root, count, devices, in.data(), out.data());
  auto fn = plugin->api().collective;
  return plugin_call(*plugin, inputs, "collective", [&] { return fn(&args); });
}

} // namespace

void all_reduce(std::span<const GroupBuffer> buffers, DType dtype, uint64_t count, CollectiveReduce op) {
  const char* call = "all_reduce";
  uint64_t bytes = bytes_of(call, dtype, count);
  check_group(call, buffers, bytes, "buffers");
  if (count == 0) return;
  int32_t reduce = op == CollectiveReduce::sum ? TG_REDUCE_SUM : TG_REDUCE_MAX;
  if (plugin_collective(TG_COLLECTIVE_ALL_REDUCE, reduce, buffers, buffers, dtype, count)) return;
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
  if (plugin_collective(TG_COLLECTIVE_ALL_GATHER, 0, inputs, outputs, dtype, count)) return;
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
  if (plugin_collective(TG_COLLECTIVE_BROADCAST, 0, buffers, buffers, dtype, count, root)) return;
  std::vector<std::byte> data = read(buffers[size_t(root)], bytes);
  for (size_t i = 0; i < buffers.size(); ++i)
    if (i != size_t(root)) write(buffers[i], data);
}

std::array<std::byte, TG_COMM_ID_BYTES> Communicator::unique_id(const Device& device) {
  const Plugin& plugin = device.plugin();
  auto fn =
      plugin.fn(&tg_plugin_api::comm_unique_id, "comm_unique_id (collectives across processes, ABI 1.6)");
  std::array<std::byte, TG_COMM_ID_BYTES> id{};
  plugin.check(fn(reinterpret_cast<uint8_t*>(id.data()), id.size()), "comm_unique_id");
  return id;
}

Communicator::Communicator(std::shared_ptr<Device> device, int rank, int size,
                           std::span<const std::byte, TG_COMM_ID_BYTES> id, std::chrono::milliseconds timeout)
    : device_(std::move(device)), rank_(rank), size_(size) {
  if (!device_) invalid("Communicator", "no device");
  const Plugin& plugin = device_->plugin();
  auto fn = plugin.fn(&tg_plugin_api::comm_init, "comm_init (collectives across processes, ABI 1.6)");
  tg_comm_init_args args{};
  args.struct_size = sizeof args;
  args.device = device_->raw();
  args.rank = rank;
  args.size = size;
  args.timeout_ms = uint64_t(std::max<int64_t>(0, timeout.count()));
  std::memcpy(args.id, id.data(), id.size());
  plugin.check(device_->serialized([&] { return fn(&args, &comm_); }),
               "comm_init (rank " + std::to_string(rank) + " of " + std::to_string(size) + ")");
}

Communicator::~Communicator() {
  if (comm_ != nullptr) device_->serialized([&] { device_->plugin().api().comm_destroy(comm_); });
}

void Communicator::run(const char* call, int32_t op, int32_t reduce, const GroupBuffer& in,
                       const GroupBuffer& out, DType dtype, uint64_t count, int root) const {
  const uint64_t bytes = bytes_of(call, dtype, count);
  check_member(call, in, bytes, "input");
  check_member(call, out,
               op == TG_COLLECTIVE_ALL_GATHER ? bytes_of(call, dtype, count, uint64_t(size_)) : bytes,
               "output");
  if (in.buffer->device() != device_ || out.buffer->device() != device_)
    invalid(call, "a buffer is not on the communicator's device (" + device_->plugin().name() + ":" +
                      std::to_string(device_->index()) + ")");
  if (op == TG_COLLECTIVE_BROADCAST && (root < 0 || root >= size_))
    invalid(call, "root " + std::to_string(root) + " is not a rank of " + std::to_string(size_));
  if (count == 0) return;
  tg_device* dev = device_->raw();
  tg_buffer_arg input{in.buffer->raw(), in.offset}, output{out.buffer->raw(), out.offset};
  tg_collective_args args =
      collective_args(op, reduce, dtype, root, count, std::span(&dev, 1), &input, &output, comm_);
  auto fn = device_->plugin().fn(&tg_plugin_api::collective, "collective");
  device_->plugin().check(device_->serialized([&] { return fn(&args); }), std::string(call) + " (rank " +
                                                                              std::to_string(rank_) + " of " +
                                                                              std::to_string(size_) + ")");
}

void Communicator::all_reduce(const GroupBuffer& in, const GroupBuffer& out, DType dtype, uint64_t count,
                              CollectiveReduce op) const {
  run("all_reduce", TG_COLLECTIVE_ALL_REDUCE, op == CollectiveReduce::sum ? TG_REDUCE_SUM : TG_REDUCE_MAX, in,
      out, dtype, count, 0);
}

void Communicator::all_gather(const GroupBuffer& in, const GroupBuffer& out, DType dtype,
                              uint64_t count) const {
  run("all_gather", TG_COLLECTIVE_ALL_GATHER, 0, in, out, dtype, count, 0);
}

void Communicator::broadcast(const GroupBuffer& in, const GroupBuffer& out, int root, DType dtype,
                             uint64_t count) const {
  run("broadcast", TG_COLLECTIVE_BROADCAST, 0, in, out, dtype, count, root);
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
  const GroupBuffer pair[] = {dst, src};
  if (const Plugin* plugin = common_plugin(pair, &tg_plugin_api::peer_copy)) {
    tg_peer_copy_args args{};
    args.struct_size = sizeof args;
    args.dst = dst.buffer->raw();
    args.dst_offset = dst.offset;
    args.src = src.buffer->raw();
    args.src_offset = src.offset;
    args.size = bytes;
    auto fn = plugin->api().peer_copy;
    if (plugin_call(*plugin, pair, "peer_copy", [&] { return fn(&args); })) return;
  }
  write(dst, read(src, bytes));
}

} // namespace tg
