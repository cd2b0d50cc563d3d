// Collectives and copies across the devices of a group. The contract between the
// multi-device tensor (kernel/tensor) and the plugins: the tensor ring calls only these, the
// runtime picks the plugin's ABI 1.2 entries (peer_copy, collective) when every buffer belongs to
// devices of one plugin that has them, and otherwise goes through the host, correctly and slowly.
// Every call completes (on the devices' queues, as a launch does) before the buffers are used by
// the next launch on their devices; host-side reads synchronize as for any buffer.
#pragma once

#include "kernel/ir/dtype.hpp"
#include "kernel/runtime/device.hpp"

#include <cstdint>
#include <span>

namespace tg {

enum class CollectiveReduce { sum, max };

// One buffer of a group: `count` elements of the collective's dtype starting at byte `offset`.
struct GroupBuffer {
  Buffer* buffer = nullptr; // on its device; every buffer of a group on a different device
  uint64_t offset = 0;      // bytes
};

// Every buffer ends up holding the elementwise reduction of all of them (in place).
// `count` elements of `dtype` each. Throws InvalidArgumentError for mismatched groups.
void all_reduce(std::span<const GroupBuffer> buffers, DType dtype, uint64_t count, CollectiveReduce op);

// outputs[i] = concat(inputs[0..n)), each input `count` elements (outputs hold n * count).
void all_gather(std::span<const GroupBuffer> inputs, std::span<const GroupBuffer> outputs, DType dtype,
                uint64_t count);

// Every buffer gets buffers[root]'s first `count` elements.
void broadcast(std::span<const GroupBuffer> buffers, int root, DType dtype, uint64_t count);

// Copies `bytes` between buffers on two devices (same plugin: its peer copy when it has one;
// else through the host).
void copy_between_devices(const GroupBuffer& dst, const GroupBuffer& src, uint64_t bytes);

} // namespace tg
