#include "launch_plan.hpp"

namespace tg::metal {
namespace {

size_t dtype_bytes(tg_dtype dt) {
  switch (dt) {
  case TG_DTYPE_INT8:
  case TG_DTYPE_UINT8:
    return 1;
  case TG_DTYPE_INT16:
  case TG_DTYPE_UINT16:
    return 2;
  case TG_DTYPE_INT32:
  case TG_DTYPE_UINT32:
  case TG_DTYPE_FLOAT32:
    return 4;
  case TG_DTYPE_INT64:
  case TG_DTYPE_UINT64:
  case TG_DTYPE_FLOAT64:
    return 8;
  default:
    return 0; // BOOL, FLOAT16, BFLOAT16 are never passed as themselves
  }
}

} // namespace

std::vector<EncodedArg> encode_arguments(const Payload& payload, std::span<const sdk::BufferArg> buffers,
                                         std::span<const tg_scalar_arg> scalars) {
  if (buffers.size() != payload.buffer_slots.size() || scalars.size() != payload.scalars.size())
    throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT, "metal: " + std::to_string(buffers.size()) +
                                                          " buffers and " + std::to_string(scalars.size()) +
                                                          " scalars for a kernel of " +
                                                          std::to_string(payload.buffer_slots.size()) +
                                                          " and " + std::to_string(payload.scalars.size()));
  std::vector<EncodedArg> args;
  args.reserve(buffers.size() + scalars.size());
  for (size_t i = 0; i < buffers.size(); ++i)
    args.push_back({payload.buffer_slots[i], buffers[i].buffer, buffers[i].offset, {}});
  for (size_t i = 0; i < scalars.size(); ++i) {
    EncodedArg a;
    a.slot = payload.scalars[i].slot;
    a.bytes = sdk::scalar_bytes(scalars[i]);
    if (a.bytes.size != dtype_bytes(payload.scalars[i].passed_as))
      throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT, "metal: scalar " + std::to_string(i) + " is " +
                                                            std::to_string(a.bytes.size) +
                                                            " bytes, the kernel reads another type");
    args.push_back(a);
  }
  return args;
}

Dispatch plan_dispatch(std::array<uint32_t, 3> global, std::array<uint32_t, 3> local,
                       uint64_t max_total_threads_per_threadgroup) {
  const uint64_t threads = uint64_t(local[0]) * local[1] * local[2];
  if (threads > max_total_threads_per_threadgroup)
    throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT,
                           "metal: a work group of " + std::to_string(threads) +
                               " threads, but this kernel's pipeline takes at most " +
                               std::to_string(max_total_threads_per_threadgroup));
  Dispatch d;
  for (int axis = 0; axis < 3; ++axis) {
    d.threadgroups[size_t(axis)] = global[size_t(axis)];
    d.threads_per_threadgroup[size_t(axis)] = local[size_t(axis)];
  }
  return d;
}

} // namespace tg::metal
