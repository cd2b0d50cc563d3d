#include "thread_pool.hpp"

#include <algorithm>
#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace tg::cpu {

namespace {

// How long a thread polls before it sleeps: longer than the host's work between two kernels of a
// model (a schedule-cache hit, buffer bookkeeping), short enough that an idle pool soon sleeps.
constexpr auto kPoll = std::chrono::microseconds(200);

void relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// Polls `done` for up to kPoll; true once it holds.
template <class Done> bool poll(Done done) {
  const auto until = std::chrono::steady_clock::now() + kPoll;
  for (unsigned i = 1;; ++i) {
    if (done()) return true;
    relax();
    if (i % 64 == 0 && std::chrono::steady_clock::now() > until) return done();
  }
}

} // namespace

ThreadPool::ThreadPool(unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  workers_.reserve(threads - 1);
  for (unsigned i = 0; i + 1 < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  work_cv_.notify_all(); // sleeping workers; polling ones see stop_
  for (auto& t : workers_) t.join();
}

void ThreadPool::run_items() {
  for (uint64_t i = next_.fetch_add(1, std::memory_order_relaxed); i < count_;
       i = next_.fetch_add(1, std::memory_order_relaxed))
    (*fn_)(i);
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  for (;;) {
    poll([&] { return stop_.load() || generation_.load() != seen; });
    std::unique_lock lock(mutex_);
    ++sleeping_;
    work_cv_.wait(lock, [&] { return stop_.load() || generation_.load() != seen; });
    --sleeping_;
    if (stop_) return;
    seen = generation_;
    ++busy_;
    lock.unlock();
    run_items();
    lock.lock();
    if (--busy_ == 0) done_cv_.notify_all();
  }
}

void ThreadPool::parallel_for(uint64_t n, const std::function<void(uint64_t)>& fn) {
  if (n == 0) return;
  if (workers_.empty() || n == 1) {
    for (uint64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::lock_guard submit(submit_mutex_);
  bool wake = false;
  {
    std::unique_lock lock(mutex_);
    // A worker that woke late for the previous job may still be leaving it.
    done_cv_.wait(lock, [&] { return busy_ == 0; });
    fn_ = &fn;
    count_ = n;
    next_.store(0, std::memory_order_relaxed);
    ++generation_;
    wake = sleeping_ > 0;
  }
  if (wake) work_cv_.notify_all();
  run_items();
  // Every item has been claimed; wait for workers still running theirs. A worker that wakes late
  // finds no items left and leaves at once.
  poll([&] { return busy_.load() == 0; });
  std::unique_lock lock(mutex_);
  done_cv_.wait(lock, [&] { return busy_ == 0; });
  fn_ = nullptr;
}

} // namespace tg::cpu
