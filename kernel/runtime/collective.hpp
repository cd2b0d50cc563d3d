// Collectives and copies across the devices of a group. The contract between the
// multi-device tensor (kernel/tensor) and the plugins: the tensor ring calls only these, the
// runtime picks the plugin's ABI 1.2 entries (peer_copy, collective) when every buffer belongs to
// devices of one plugin that has them, and otherwise goes through the host, correctly and slowly.
// Every call completes (on the devices' queues, as a launch does) before the buffers are used by
// the next launch on their devices; host-side reads synchronize as for any buffer.
// Communicator: the same collectives across processes, one device per process (ABI 1.6); they
// have no host path, since the other ranks' memory is out of reach.
#pragma once

#include "kernel/ir/dtype.hpp"
#include "kernel/runtime/device.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
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

// This process's rank of a communicator over `size` processes, one device each (ABI 1.6
// comm_init; RAII over the tg_comm). Every rank makes the same calls in the same order. Errors:
// UnimplementedError when the device's plugin has no communicators; a rank that does not join
// within `timeout` makes the call throw DeviceError (DEADLINE_EXCEEDED) on the ranks that waited.
class Communicator {
public:
  // Rank 0's id for a new communicator on devices of `device`'s plugin; the caller sends it to
  // every rank (tg::distributed does, over MPI or its TCP rendezvous).
  static std::array<std::byte, TG_COMM_ID_BYTES> unique_id(const Device& device);
  // Joins; returns once every rank has. timeout 0: wait without limit.
  Communicator(std::shared_ptr<Device> device, int rank, int size,
               std::span<const std::byte, TG_COMM_ID_BYTES> id, std::chrono::milliseconds timeout);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  const std::shared_ptr<Device>& device() const { return device_; }

  // out = the reduction over every rank's `in` (`count` elements; out may be in: in place).
  void all_reduce(const GroupBuffer& in, const GroupBuffer& out, DType dtype, uint64_t count,
                  CollectiveReduce op) const;
  // out (size * count elements) = every rank's `in`, in rank order.
  void all_gather(const GroupBuffer& in, const GroupBuffer& out, DType dtype, uint64_t count) const;
  // out = rank root's `in` (other ranks' `in` is not read).
  void broadcast(const GroupBuffer& in, const GroupBuffer& out, int root, DType dtype, uint64_t count) const;

private:
  void run(const char* call, int32_t op, int32_t reduce, const GroupBuffer& in, const GroupBuffer& out,
           DType dtype, uint64_t count, int root) const;
  std::shared_ptr<Device> device_;
  int rank_;
  int size_;
  tg_comm* comm_ = nullptr;
};

} // namespace tg
