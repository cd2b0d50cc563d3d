// A fixed pool of worker threads with one blocking operation, parallel_for. The calling thread
// takes part in the work, so a pool of N threads has N-1 workers. A worker that finished a job
// polls for the next one for a short while before it sleeps, and the caller polls for the
// workers' end before it sleeps: a model's kernels follow each other within microseconds, and a
// sleeping thread's wake-up (a futex and, in a VM, an interrupt to a halted vCPU) took 15-40 us,
// longer than a small kernel itself.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tg::cpu {

class ThreadPool {
public:
  // threads = total parallelism including the caller; 0 = std::thread::hardware_concurrency().
  explicit ThreadPool(unsigned threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned size() const { return unsigned(workers_.size()) + 1; }

  // Calls fn(i) for every i in [0, n), spread over the pool; returns when all calls are done.
  // fn must not throw. Calls from several threads at once are serialized.
  void parallel_for(uint64_t n, const std::function<void(uint64_t)>& fn);

private:
  void worker_loop();
  void run_items();

  std::vector<std::thread> workers_;
  std::mutex submit_mutex_; // one parallel_for at a time
  std::mutex mutex_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  // Written under mutex_; atomic so the polling loops may read them without it.
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
  std::atomic<unsigned> busy_{0}; // workers inside the current job
  unsigned sleeping_ = 0;         // workers waiting on work_cv_ (under mutex_)
  // The current job.
  const std::function<void(uint64_t)>* fn_ = nullptr;
  uint64_t count_ = 0;
  std::atomic<uint64_t> next_{0};
};

} // namespace tg::cpu
