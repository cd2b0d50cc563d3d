// Waiting for a stream: polls cuStreamQuery for a short while before blocking in
// cuStreamSynchronize. A tiny kernel finishes within a few microseconds; polling sees that at
// once, while a blocking wait may add the driver's wake-up latency. TG_CUDA_SYNC_SPIN_US sets how
// long to poll (default 20; 0: block at once).
#pragma once

#include "driver.hpp"

namespace tg::cuda {

// Microseconds to poll before blocking: TG_CUDA_SYNC_SPIN_US, read once (a malformed value
// throws PluginError naming it).
int sync_spin_us();

// Returns when every call queued on `stream` has finished; throws PluginError naming `what`.
void wait_stream(CUstream stream, const char* what);

} // namespace tg::cuda
