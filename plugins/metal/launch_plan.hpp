// How a validated launch reaches a Metal compute encoder, in plain C++ (compiled and tested on
// every platform; device.mm only forwards it to Metal): each argument's [[buffer(n)]] slot and
// either a buffer and offset (setBuffer:offset:atIndex:) or the scalar's bytes in the type the
// kernel declares (setBytes:length:atIndex:), and the dispatch's sizes
// (dispatchThreadgroups:threadsPerThreadgroup:, launch.global being threadgroups per grid).
#pragma once

#include "payload.hpp"

#include <tg/sdk/adaptor.hpp>
#include <tg/sdk/scalar_bytes.hpp>

#include <array>
#include <span>
#include <vector>

namespace tg::metal {

struct EncodedArg {
  uint32_t slot = 0;
  sdk::Buffer* buffer = nullptr; // a buffer argument; nullptr for a scalar
  uint64_t offset = 0;           // into the buffer
  sdk::ScalarBytes bytes;        // a scalar's value as its `constant T&` reads it
};

// In slot order of the payload: buffers, then scalars. Throws PluginError(INVALID_ARGUMENT) when
// the counts differ from the payload's or a scalar's bytes do not have its passed_as type's size.
std::vector<EncodedArg> encode_arguments(const Payload& payload, std::span<const sdk::BufferArg> buffers,
                                         std::span<const tg_scalar_arg> scalars);

struct Dispatch {
  std::array<uint64_t, 3> threadgroups{};            // per grid
  std::array<uint64_t, 3> threads_per_threadgroup{}; // launch.local
};

// Throws PluginError(INVALID_ARGUMENT) when the work-group has more threads than the pipeline
// takes (maxTotalThreadsPerThreadgroup, which register use can make lower than the device's).
Dispatch plan_dispatch(std::array<uint32_t, 3> global, std::array<uint32_t, 3> local,
                       uint64_t max_total_threads_per_threadgroup);

} // namespace tg::metal
