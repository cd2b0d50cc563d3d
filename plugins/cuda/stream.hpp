// The device's one stream, which every launch and copy goes to, and how the host waits for it.
//
// A launch of one block may carry the completion word: its kernel's last act (the renderer's
// epilogue, sdk::render::Options::cuda_completion_word) stores the launch's number into host
// memory the GPU writes directly. When that launch is the last work queued, wait() spins on the
// word instead of calling cuStreamSynchronize: on an H200 the word arrives 1.2-1.5 us before the
// driver's synchronize returns (tg_cuda_floor; docs/cuda.md, "Synchronize: the completion word and
// the driver's wait"). Every other way of queuing work (a copy, a larger launch, a graph, an
// event) takes the handle from get(), which makes the next wait the driver's. While spinning,
// wait() asks cuStreamQuery every 20 us, so a kernel that faults (and never stores its number)
// raises its error.
//
// TG_CUDA_SYNC_SPIN_US=N makes the driver's wait poll cuStreamQuery for N us before blocking in
// cuStreamSynchronize (default 0; on an H200 polling for 20 or 100 us changes the tiny op by less
// than the noise). The host serializes calls per device (abi.h), so no lock.
#pragma once

#include "driver.hpp"

#include <cstdint>

namespace tg::cuda {

// Microseconds to poll before blocking: TG_CUDA_SYNC_SPIN_US, read once (a malformed value
// throws PluginError naming it).
int sync_spin_us();

class Stream {
public:
  Stream(); // a non-blocking stream and the mapped word, on the current context
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // The handle, to queue work on: the next wait is the driver's.
  CUstream get() {
    word_last_ = false;
    return stream_;
  }

  // What a one-block launch passes as tg_done and tg_seq (a fresh number each call).
  struct Completion {
    CUdeviceptr word = 0; // 0: no word (any launch may pass that)
    uint32_t number = 0;
  };
  Completion next_completion();
  // Says that the launch given `c` was queued (through get()) and is the last work so far.
  void completion_queued(const Completion& c) {
    word_last_ = true;
    expected_ = c.number;
  }

  // Returns when every call queued so far has finished; throws PluginError naming `what`.
  void wait(const char* what);
  // The same for destructors: errors are dropped.
  void drain() noexcept;

private:
  void wait_for_word(const char* what);

  CUstream stream_ = nullptr;
  volatile uint32_t* word_ = nullptr; // host side of the mapped word
  CUdeviceptr word_device_ = 0;
  uint32_t issued_ = 0;
  uint32_t expected_ = 0;
  bool word_last_ = false;
};

} // namespace tg::cuda
