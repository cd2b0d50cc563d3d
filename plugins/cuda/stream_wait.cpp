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

SyncMode parse_sync_mode(const char* value) {
  const std::string v = value ? value : "";
  if (v.empty() || v == "stream") return SyncMode::Stream;
  if (v == "word") return SyncMode::Word;
  throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT,
                         "TG_CUDA_SYNC is \"" + v +
                             "\", not stream (cuStreamSynchronize) or word (a spin on host memory)");
}

SyncMode sync_mode() {
  static const SyncMode mode = parse_sync_mode(std::getenv("TG_CUDA_SYNC"));
  return mode;
}

StreamWaiter::StreamWaiter(CUstream stream, SyncMode mode) : stream_(stream), mode_(mode) {
  if (mode_ != SyncMode::Word) return;
  const Driver& d = driver();
  check(d.cuMemHostAlloc(&host_word_, sizeof(uint32_t), CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE),
        "cuMemHostAlloc(synchronize word)");
  *static_cast<volatile uint32_t*>(host_word_) = 0;
  const CUresult mapped = d.cuMemHostGetDevicePointer(&device_word_, host_word_, 0);
  if (mapped != CUDA_SUCCESS) {
    d.cuMemFreeHost(host_word_);
    check(mapped, "cuMemHostGetDevicePointer(synchronize word)");
  }
}

StreamWaiter::~StreamWaiter() {
  if (host_word_) driver().cuMemFreeHost(host_word_);
}

void StreamWaiter::wait(const char* what) {
  if (mode_ != SyncMode::Word) return wait_stream(stream_, what);
  const Driver& d = driver();
  const uint32_t want = ++sequence_;
  check(d.cuStreamWriteValue32(stream_, device_word_, want, 0), what);
  const volatile uint32_t* word = static_cast<const volatile uint32_t*>(host_word_);
  auto next_query = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
  for (uint32_t spins = 0; *word != want; ++spins) {
    if ((spins & 63) != 63 || std::chrono::steady_clock::now() < next_query) continue;
    const CUresult r = d.cuStreamQuery(stream_); // a failed kernel: the word never comes
    if (r == CUDA_SUCCESS) return;               // everything ran, the write included
    if (r != CUDA_ERROR_NOT_READY) check(r, what);
    next_query = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
  }
}

} // namespace tg::cuda
