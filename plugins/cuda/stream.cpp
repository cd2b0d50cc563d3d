#include "stream_wait.hpp"

#include <tg/sdk/plugin.hpp>

#include <chrono>
#include <cstdlib>
#include <string>

namespace tg::cuda {

namespace {

int read_spin_us() {
  const char* v = std::getenv("TG_CUDA_SYNC_SPIN_US");
  if (!v || !*v) return 0; // measured: polling gained nothing on an H200 (docs/cuda.md)
  char* end = nullptr;
  const long us = std::strtol(v, &end, 10);
  if (*end || us < 0 || us > 1000000)
    throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT, std::string("TG_CUDA_SYNC_SPIN_US is \"") + v +
                                                          "\", not microseconds in 0..1000000");
  return int(us);
}

} // namespace

int sync_spin_us() {
  static const int us = read_spin_us();
  return us;
}

void wait_stream(CUstream stream, const char* what) {
  const Driver& d = driver();
  if (const int spin = sync_spin_us()) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(spin);
    do {
      const CUresult r = d.cuStreamQuery(stream);
      if (r == CUDA_SUCCESS) return;
      if (r != CUDA_ERROR_NOT_READY) check(r, what);
    } while (std::chrono::steady_clock::now() < until);
  }
  check(d.cuStreamSynchronize(stream), what);
}

} // namespace tg::cuda
