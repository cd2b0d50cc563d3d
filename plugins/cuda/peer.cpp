#include "peer.hpp"

namespace tg::cuda {
namespace {

CUdeviceptr address(sdk::Buffer* b, uint64_t offset) {
  return static_cast<Buffer*>(b)->device_address() + offset;
}

// `from`'s context may access `to`'s memory from now on (already enabled is fine).
void enable_one_way(const Device& from, const Device& to) {
  const Driver& d = driver();
  check(d.cuCtxSetCurrent(from.context()), "cuCtxSetCurrent");
  const CUresult r = d.cuCtxEnablePeerAccess(to.context(), 0);
  if (r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) check(r, "cuCtxEnablePeerAccess");
}

} // namespace

void stream_wait(const Device& waiter, const Device& signaller) {
  const Driver& d = driver();
  check(d.cuCtxSetCurrent(signaller.context()), "cuCtxSetCurrent");
  CUevent event = nullptr;
  check(d.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  CUresult r = d.cuEventRecord(event, signaller.stream());
  if (r == CUDA_SUCCESS) r = d.cuStreamWaitEvent(waiter.stream(), event, 0); // any context's event
  d.cuEventDestroy(event); // released by the driver once the wait has passed
  check(r, "cuEventRecord/cuStreamWaitEvent between CUDA:" + std::to_string(int(signaller.ordinal())) +
               " and CUDA:" + std::to_string(int(waiter.ordinal())));
}

void PeerCopies::enable_access(const Device& a, const Device& b) {
  const std::pair<CUdevice, CUdevice> key = std::minmax(a.ordinal(), b.ordinal());
  std::lock_guard lock(mutex_);
  if (!checked_.insert(key).second) return;
  int can_ab = 0, can_ba = 0;
  const Driver& d = driver();
  check(d.cuDeviceCanAccessPeer(&can_ab, a.ordinal(), b.ordinal()), "cuDeviceCanAccessPeer");
  check(d.cuDeviceCanAccessPeer(&can_ba, b.ordinal(), a.ordinal()), "cuDeviceCanAccessPeer");
  if (can_ab && can_ba) { // else cuMemcpyPeerAsync stages through host memory
    enable_one_way(a, b);
    enable_one_way(b, a);
  }
}

void PeerCopies::copy(const sdk::PeerCopy& c) {
  const Driver& d = driver();
  auto& dst = static_cast<Device&>(*c.dst_device);
  auto& src = static_cast<Device&>(*c.src_device);
  const CUdeviceptr to = address(c.dst, c.dst_offset), from = address(c.src, c.src_offset);
  if (&dst == &src) { // one stream: already ordered
    check(d.cuCtxSetCurrent(dst.context()), "cuCtxSetCurrent");
    check(d.cuMemcpyDtoDAsync(to, from, c.size, dst.stream()), "cuMemcpyDtoDAsync");
    return;
  }
  enable_access(dst, src);
  stream_wait(dst, src);
  check(d.cuCtxSetCurrent(dst.context()), "cuCtxSetCurrent");
  check(d.cuMemcpyPeerAsync(to, dst.context(), from, src.context(), c.size, dst.stream()),
        "cuMemcpyPeerAsync(CUDA:" + std::to_string(int(src.ordinal())) +
            " -> CUDA:" + std::to_string(int(dst.ordinal())) + ", " + std::to_string(c.size) + " bytes)");
  stream_wait(src, dst);
}

} // namespace tg::cuda
