// Tensors across processes: a ProcessGroup is this rank's device in a communicator over every
// rank of the World (distributed::init()). Its collectives realize their input, run one ABI
// collective on the device's plugin (MPI on CPU devices, NCCL on CUDA; there is no second path)
// into a fresh buffer, and return a tensor over it. Every rank makes the same calls in the same
// order with tensors of the same shape and dtype.
#pragma once

#include "kernel/distributed/world.hpp"
#include "kernel/runtime/collective.hpp"
#include "kernel/tensor/tensor.hpp"

#include <memory>
#include <string>
#include <vector>

namespace tg::distributed {

class ProcessGroup {
public:
  // Every rank calls it (collectively) with its own device; rank 0's plugin makes the id, the
  // rendezvous sends it. init() runs first if it has not. Throws DistributedError when the
  // plugin has no collectives across processes or the ranks do not meet within the timeout.
  explicit ProcessGroup(const std::string& device);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const;
  int size() const;
  const std::string& device() const { return device_; }

  // The elementwise sum (or max) of every rank's `t`.
  Tensor all_reduce(const Tensor& t, CollectiveReduce op = CollectiveReduce::sum) const;
  // Every rank's `t` concatenated along axis 0, in rank order (a scalar becomes a vector).
  Tensor all_gather(const Tensor& t) const;
  // Rank root's `t` on every rank.
  Tensor broadcast(const Tensor& t, int root = 0) const;

private:
  std::string device_;
  std::unique_ptr<Communicator> comm_;
};

} // namespace tg::distributed
