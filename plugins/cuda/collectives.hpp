// Collectives over a group of the plugin's GPUs (ABI 1.2 collective) through NCCL (nccl.hpp):
// one communicator set per ordered device list, made by ncclCommInitAll on first use and kept
// until the plugin goes (each keeps its devices' primary contexts retained, so it outlives
// device_close). The calls go to every device's own stream inside one NCCL group, so they are
// ordered after the work queued there and before the work queued later (abi.md §3.6) with no
// host wait. Without NCCL, or for what NCCL lacks (16-bit integers, a BOOL sum), the entry
// answers UNIMPLEMENTED and the host serves the call.
#pragma once

#include "device.hpp"
#include "nccl.hpp"

#include <map>
#include <mutex>
#include <vector>

namespace tg::cuda {

class Collectives {
public:
  Collectives() = default;
  Collectives(const Collectives&) = delete;
  Collectives& operator=(const Collectives&) = delete;
  ~Collectives();

  void run(const sdk::Collective& collective);

private:
  struct Group {
    std::vector<nccl::Comm> comms;  // rank order
    std::vector<CUdevice> retained; // primary contexts held for the communicators
  };
  const Group& group(const std::vector<int>& ordinals); // mutex_ held

  std::mutex mutex_; // the cache, and one NCCL group call at a time
  std::map<std::vector<int>, Group> groups_;
};

} // namespace tg::cuda
