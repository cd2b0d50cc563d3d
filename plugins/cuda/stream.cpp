#include "stream.hpp"

#include <tg/sdk/plugin.hpp>

#include <atomic>
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

Stream::Stream() {
  const Driver& d = driver();
  check(d.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  void* host = nullptr;
  CUresult r = d.cuMemHostAlloc(&host, sizeof(uint32_t), CU_MEMHOSTALLOC_DEVICEMAP);
  if (r == CUDA_SUCCESS) r = d.cuMemHostGetDevicePointer(&word_device_, host, 0);
  if (r != CUDA_SUCCESS) {
    if (host) d.cuMemFreeHost(host);
    d.cuStreamDestroy(stream_);
    check(r, "cuMemHostAlloc/cuMemHostGetDevicePointer(completion word)");
  }
  word_ = static_cast<volatile uint32_t*>(host);
  *word_ = 0;
}

Stream::~Stream() {
  drain();
  const Driver& d = driver();
  d.cuMemFreeHost(const_cast<uint32_t*>(word_));
  d.cuStreamDestroy(stream_);
}

Stream::Completion Stream::next_completion() {
  if (++issued_ == 0) ++issued_; // 0 is what the word holds before any launch stored one
  return {word_device_, issued_};
}

void Stream::wait(const char* what) {
  if (word_last_) return wait_for_word(what);
  const Driver& d = driver();
  if (const int spin = sync_spin_us()) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(spin);
    do {
      const CUresult r = d.cuStreamQuery(stream_);
      if (r == CUDA_SUCCESS) return;
      if (r != CUDA_ERROR_NOT_READY) check(r, what);
    } while (std::chrono::steady_clock::now() < until);
  }
  check(d.cuStreamSynchronize(stream_), what);
}

void Stream::wait_for_word(const char* what) {
  using Clock = std::chrono::steady_clock;
  constexpr auto kQueryEvery = std::chrono::microseconds(20);
  Clock::time_point query_at{}; // the clock is read only once the word is late
  for (uint32_t spin = 1; *word_ != expected_; ++spin) {
    if (spin % 1024 != 0) continue;
    const Clock::time_point now = Clock::now();
    if (query_at == Clock::time_point{}) {
      query_at = now + kQueryEvery;
      continue;
    }
    if (now < query_at) continue;
    const CUresult r = driver().cuStreamQuery(stream_);
    if (r == CUDA_SUCCESS) return; // the stream ended, so did the kernel
    if (r != CUDA_ERROR_NOT_READY) check(r, what);
    query_at = now + kQueryEvery;
  }
  std::atomic_thread_fence(std::memory_order_acquire); // nothing of the host's moves above the word
}

void Stream::drain() noexcept { driver().cuStreamSynchronize(stream_); }

} // namespace tg::cuda
