// The ABI 1.2 entries between devices: every argument checked before the plugin's peer_copy or
// collective runs, so a bad call changes nothing and every plugin rejects it with one message.
#include "handles.hpp"

#include <limits>
#include <span>
#include <vector>

namespace tg::sdk {

void Plugin::peer_copy(const PeerCopy&) {
  throw PluginError(TG_ERROR_UNIMPLEMENTED, "this plugin has no peer copy");
}

void Plugin::collective(const Collective&) {
  throw PluginError(TG_ERROR_UNIMPLEMENTED, "this plugin has no collectives");
}

std::array<std::byte, TG_COMM_ID_BYTES> Plugin::comm_unique_id() {
  throw PluginError(TG_ERROR_UNIMPLEMENTED, "this plugin has no communicators across processes");
}

std::unique_ptr<Comm> Plugin::comm_init(const CommInit&) {
  throw PluginError(TG_ERROR_UNIMPLEMENTED, "this plugin has no communicators across processes");
}

namespace detail {
namespace {

[[noreturn]] void invalid(const std::string& why) { throw PluginError(TG_ERROR_INVALID_ARGUMENT, why); }

void check_range(const tg_buffer& b, uint64_t offset, uint64_t size, const std::string& which) {
  if (offset > b.size || size > b.size - offset)
    invalid(which + " range [offset " + std::to_string(offset) + ", size " + std::to_string(size) +
            ") lies outside the buffer of " + std::to_string(b.size) + " bytes");
}

// The buffer argument is set, on `device`, element-aligned and holds `bytes` from its offset.
tg_buffer& check_member(const tg_buffer_arg& arg, const tg_device* device, uint64_t bytes, size_t element,
                        const char* name, const std::string& rank) {
  const std::string which = std::string(name) + "[" + rank + "]";
  if (arg.buffer == nullptr) invalid(which + ".buffer is NULL");
  if (arg.buffer->device != device) invalid(which + " is not on devices[" + rank + "]");
  if (arg.offset % element != 0)
    invalid(which + ".offset " + std::to_string(arg.offset) + " is not a multiple of the " +
            std::to_string(element) + "-byte element");
  check_range(*arg.buffer, arg.offset, bytes, which);
  return *arg.buffer;
}

bool overlap(uint64_t a, uint64_t a_size, uint64_t b, uint64_t b_size) {
  return a < b + b_size && b < a + a_size;
}

CollectiveOp collective_op(int32_t op) {
  return op == TG_COLLECTIVE_ALL_REDUCE   ? CollectiveOp::all_reduce
         : op == TG_COLLECTIVE_ALL_GATHER ? CollectiveOp::all_gather
                                          : CollectiveOp::broadcast;
}

// A collective across processes: one member (this rank) on the comm's device.
void validate_and_run_rank_collective(PluginState& s, const tg_collective_args& a, size_t element) {
  const tg_comm& comm = *a.comm;
  if (comm.device == nullptr || comm.device->plugin != &s) invalid("comm belongs to another plugin");
  if (a.device_count != 1)
    invalid("device_count is " + std::to_string(a.device_count) + "; a collective on a comm names 1 device");
  if (a.devices[0] != comm.device) invalid("devices[0] is not the comm's device");
  const uint64_t n = uint64_t(comm.size);
  if (a.op == TG_COLLECTIVE_BROADCAST && (a.root < 0 || uint64_t(a.root) >= n))
    invalid("root " + std::to_string(a.root) + " is not a rank of the comm of " + std::to_string(n));
  if (a.count > std::numeric_limits<uint64_t>::max() / element / n)
    invalid("count " + std::to_string(a.count) + " overflows a byte size");
  const uint64_t in_bytes = a.count * element;
  const uint64_t out_bytes = a.op == TG_COLLECTIVE_ALL_GATHER ? in_bytes * n : in_bytes;
  const std::string rank = "0";
  tg_buffer& in = check_member(a.inputs[0], comm.device, in_bytes, element, "inputs", rank);
  tg_buffer& out = check_member(a.outputs[0], comm.device, out_bytes, element, "outputs", rank);
  const uint64_t in_place =
      a.outputs[0].offset + (a.op == TG_COLLECTIVE_ALL_GATHER ? uint64_t(comm.rank) * in_bytes : 0);
  if (&in == &out && a.inputs[0].offset != in_place &&
      overlap(a.inputs[0].offset, in_bytes, a.outputs[0].offset, out_bytes))
    invalid("outputs[0] overlaps inputs[0] without being in place");
  if (a.count == 0) return;
  comm.impl->collective({collective_op(a.op), a.reduce == TG_REDUCE_MAX ? ReduceOp::max : ReduceOp::sum,
                         a.dtype, a.root, a.count, in.impl.get(), a.inputs[0].offset, out.impl.get(),
                         a.outputs[0].offset});
}

} // namespace

void validate_and_peer_copy(PluginState& s, const tg_peer_copy_args& a) {
  require(a.dst, "args->dst");
  require(a.src, "args->src");
  if (a.dst->device->plugin != &s || a.src->device->plugin != &s)
    invalid("a buffer belongs to another plugin");
  check_range(*a.dst, a.dst_offset, a.size, "destination");
  check_range(*a.src, a.src_offset, a.size, "source");
  if (a.size == 0) return;
  s.plugin->peer_copy({a.dst->device->impl.get(), a.dst->impl.get(), a.dst_offset, a.src->device->impl.get(),
                       a.src->impl.get(), a.src_offset, a.size});
}

tg_comm* validate_and_init_comm(PluginState& s, const tg_comm_init_args& a) {
  require(a.device, "args->device");
  if (a.device->plugin != &s) invalid("args->device belongs to another plugin");
  if (a.size < 1) invalid("size is " + std::to_string(a.size) + "; a communicator has >= 1 ranks");
  if (a.rank < 0 || a.rank >= a.size)
    invalid("rank " + std::to_string(a.rank) + " is not in [0, " + std::to_string(a.size) + ")");
  auto comm = std::make_unique<tg_comm>();
  comm->device = a.device;
  comm->rank = a.rank;
  comm->size = a.size;
  std::span<const std::byte, TG_COMM_ID_BYTES> id(reinterpret_cast<const std::byte*>(a.id), TG_COMM_ID_BYTES);
  comm->impl = s.plugin->comm_init({*a.device->impl, a.rank, a.size, a.timeout_ms, id});
  if (!comm->impl) throw PluginError(TG_ERROR_INTERNAL, "comm_init returned nothing");
  return comm.release();
}

void validate_and_run_collective(PluginState& s, const tg_collective_args& a) {
  if (a.op < TG_COLLECTIVE_ALL_REDUCE || a.op > TG_COLLECTIVE_BROADCAST)
    invalid("op " + std::to_string(a.op) + " is not a TG_COLLECTIVE_*");
  if (a.op == TG_COLLECTIVE_ALL_REDUCE && a.reduce != TG_REDUCE_SUM && a.reduce != TG_REDUCE_MAX)
    invalid("reduce " + std::to_string(a.reduce) + " is not a TG_REDUCE_*");
  size_t element = a.dtype == TG_DTYPE_VOID ? 0 : dtype_size(a.dtype);
  if (element == 0) invalid("dtype " + std::to_string(a.dtype) + " is not an element type");
  if (a.device_count == 0) invalid("device_count is 0");
  require(a.devices, "args->devices");
  require(a.inputs, "args->inputs");
  require(a.outputs, "args->outputs");
  if (a.comm != nullptr) {
    validate_and_run_rank_collective(s, a, element);
    return;
  }
  const uint64_t n = a.device_count;
  if (a.op == TG_COLLECTIVE_BROADCAST && (a.root < 0 || uint64_t(a.root) >= n))
    invalid("root " + std::to_string(a.root) + " is not a rank of the group of " + std::to_string(n));
  const uint64_t limit = std::numeric_limits<uint64_t>::max() / element / n;
  if (a.count > limit) invalid("count " + std::to_string(a.count) + " overflows a byte size");
  const uint64_t in_bytes = a.count * element;
  const uint64_t out_bytes = a.op == TG_COLLECTIVE_ALL_GATHER ? in_bytes * n : in_bytes;

  std::vector<CollectiveMember> members;
  members.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    const std::string rank = std::to_string(i);
    const tg_device* device = a.devices[i];
    if (device == nullptr) invalid("devices[" + rank + "] is NULL");
    if (device->plugin != &s) invalid("devices[" + rank + "] belongs to another plugin");
    for (uint64_t j = 0; j < i; ++j)
      if (a.devices[j] == device) invalid("devices[" + rank + "] repeats devices[" + std::to_string(j) + "]");
    tg_buffer& in = check_member(a.inputs[i], device, in_bytes, element, "inputs", rank);
    tg_buffer& out = check_member(a.outputs[i], device, out_bytes, element, "outputs", rank);
    uint64_t in_place = a.outputs[i].offset + (a.op == TG_COLLECTIVE_ALL_GATHER ? i * in_bytes : 0);
    if (&in == &out && a.inputs[i].offset != in_place &&
        overlap(a.inputs[i].offset, in_bytes, a.outputs[i].offset, out_bytes))
      invalid("outputs[" + rank + "] overlaps inputs[" + rank + "] without being in place");
    members.push_back(
        {device->impl.get(), in.impl.get(), a.inputs[i].offset, out.impl.get(), a.outputs[i].offset});
  }
  if (a.count == 0) return;
  s.plugin->collective({collective_op(a.op), a.reduce == TG_REDUCE_MAX ? ReduceOp::max : ReduceOp::sum,
                        a.dtype, a.root, a.count, members});
}

} // namespace detail
} // namespace tg::sdk
