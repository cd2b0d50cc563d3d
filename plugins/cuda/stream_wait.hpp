// Waiting for a stream. cuStreamSynchronize (the default) optionally after polling cuStreamQuery
// for a while (TG_CUDA_SYNC_SPIN_US; 0 by default: on an H200 polling for 20 or 100 us changed
// the tiny op by less than the noise, docs/cuda.md). Or, with TG_CUDA_SYNC=word, no driver wait:
// the stream writes a sequence number into mapped host memory after the queued work
// (cuStreamWriteValue32, which fences the work's writes first) and the thread spins on that word.
#pragma once

#include "driver.hpp"

#include <cstdint>

namespace tg::cuda {

// Microseconds to poll before blocking: TG_CUDA_SYNC_SPIN_US, read once (a malformed value
// throws PluginError naming it).
int sync_spin_us();

// Returns when every call queued on `stream` has finished; throws PluginError naming `what`.
void wait_stream(CUstream stream, const char* what);

// How Device::synchronize waits: TG_CUDA_SYNC unset or "stream" (wait_stream), or "word".
enum class SyncMode { Stream, Word };
// The mode a TG_CUDA_SYNC value names (null or empty: Stream); anything else throws
// PluginError(INVALID_ARGUMENT) quoting the value.
SyncMode parse_sync_mode(const char* value);
SyncMode sync_mode(); // TG_CUDA_SYNC, read once

// A device's synchronize. In Word mode it owns one word of mapped, pinned host memory. While it
// spins it asks cuStreamQuery every 20 us, so a failed kernel (after which the stream never
// writes the word) still raises its error instead of hanging.
class StreamWaiter {
public:
  StreamWaiter(CUstream stream, SyncMode mode); // the context must be current
  ~StreamWaiter();
  StreamWaiter(const StreamWaiter&) = delete;
  StreamWaiter& operator=(const StreamWaiter&) = delete;

  SyncMode mode() const { return mode_; }
  void wait(const char* what);

private:
  CUstream stream_;
  SyncMode mode_;
  void* host_word_ = nullptr;
  CUdeviceptr device_word_ = 0;
  uint32_t sequence_ = 0;
};

} // namespace tg::cuda
