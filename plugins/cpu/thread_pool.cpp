#include "thread_pool.hpp"

#include <algorithm>

namespace tg::cpu {

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
  work_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::run_items() {
  for (uint64_t i = next_.fetch_add(1, std::memory_order_relaxed); i < count_;
       i = next_.fetch_add(1, std::memory_order_relaxed))
    (*fn_)(i);
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  std::unique_lock lock(mutex_);
  for (;;) {
    work_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
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
  {
    std::unique_lock lock(mutex_);
    // A worker that woke late for the previous job may still be leaving it.
    done_cv_.wait(lock, [&] { return busy_ == 0; });
    fn_ = &fn;
    count_ = n;
    next_.store(0, std::memory_order_relaxed);
    ++generation_;
  }
  work_cv_.notify_all();
  run_items();
  // Every item has been claimed; wait for workers still running theirs. A worker that wakes late
  // finds no items left and leaves at once.
  std::unique_lock lock(mutex_);
  done_cv_.wait(lock, [&] { return busy_ == 0; });
  fn_ = nullptr;
}

} // namespace tg::cpu
