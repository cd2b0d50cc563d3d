// Waiting for a stream: optionally polls cuStreamQuery for a while before blocking in
// cuStreamSynchronize, in case the driver's blocking wait adds wake-up latency to a tiny kernel.
// TG_CUDA_SYNC_SPIN_US sets how long to poll (default 0: block at once; on an H200 polling for
// 20 or 100 us changed the tiny op by less than the noise, docs/cuda.md).
#pragma once

#include "driver.hpp"

namespace tg::cuda {

// Microseconds to poll before blocking: TG_CUDA_SYNC_SPIN_US, read once (a malformed value
// throws PluginError naming it).
int sync_spin_us();

// Returns when every call queued on `stream` has finished; throws PluginError naming `what`.
void wait_stream(CUstream stream, const char* what);

} // namespace tg::cuda
