// Copies between two GPUs of the plugin (ABI 1.2 peer_copy): cuMemcpyPeerAsync on the
// destination's stream, after cuCtxEnablePeerAccess both ways where cuDeviceCanAccessPeer says
// the pair can (NVLink or PCIe P2P: a direct copy). Where it cannot, the same call is staged by
// the driver through pinned host memory. Ordering (abi.md §3.6: as if a launch on both devices):
// the copy waits for the work queued on both streams, and later work on the source's stream
// waits for the copy (it may overwrite what the copy reads), through events between the streams.
#pragma once

#include "device.hpp"

#include <mutex>
#include <set>
#include <utility>

namespace tg::cuda {

// Makes `waiter`'s stream wait for the work queued so far on `signaller`'s stream (no host wait).
void stream_wait(const Device& waiter, const Device& signaller);

class PeerCopies {
public:
  void copy(const sdk::PeerCopy& copy);

private:
  // Enables access between the two contexts both ways, once per pair (thread-safe).
  void enable_access(const Device& a, const Device& b);

  std::mutex mutex_;
  std::set<std::pair<CUdevice, CUdevice>> checked_; // pairs already looked at (either result)
};

} // namespace tg::cuda
