// The CPU plugin's thread pool (plugins/cpu/thread_pool.hpp): every index of every job runs exactly
// once, whether the workers are polling (jobs back to back) or asleep (a job after an idle gap
// longer than their polling), with calls from two threads at once, and with one thread (no workers).
#include "thread_pool.hpp"

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

using tg::cpu::ThreadPool;

namespace {

// Runs a job of n items on `pool`; true when each index ran exactly once.
bool each_once(ThreadPool& pool, uint64_t n) {
  std::vector<std::atomic<int>> hits(n);
  pool.parallel_for(n, [&](uint64_t i) { hits[i].fetch_add(1, std::memory_order_relaxed); });
  for (const auto& h : hits)
    if (h.load() != 1) return false;
  return true;
}

} // namespace

BOOST_AUTO_TEST_SUITE(thread_pool)

BOOST_AUTO_TEST_CASE(jobs_back_to_back_and_after_idle_gaps) {
  ThreadPool pool(3);
  BOOST_TEST(pool.size() == 3u);
  for (uint64_t n : {0, 1, 2, 3, 7, 1000}) BOOST_TEST(each_once(pool, n), "n = " << n);
  int bad = 0;
  for (int job = 0; job < 2000; ++job) bad += !each_once(pool, uint64_t(1 + job % 5));
  BOOST_TEST(bad == 0);
  for (int gap = 0; gap < 3; ++gap) { // the workers have gone to sleep
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    BOOST_TEST(each_once(pool, 64));
  }
}

BOOST_AUTO_TEST_CASE(calls_from_two_threads_are_serialized) {
  ThreadPool pool(2);
  std::atomic<int> bad{0};
  auto caller = [&] {
    for (int job = 0; job < 500; ++job) bad += !each_once(pool, 16);
  };
  std::thread other(caller);
  caller();
  other.join();
  BOOST_TEST(bad.load() == 0);
}

BOOST_AUTO_TEST_CASE(one_thread_runs_inline_and_pools_stop_while_polling) {
  ThreadPool single(1);
  BOOST_TEST(single.size() == 1u);
  const auto caller = std::this_thread::get_id();
  bool inline_only = true;
  single.parallel_for(10, [&](uint64_t) { inline_only &= std::this_thread::get_id() == caller; });
  BOOST_TEST(inline_only);
  for (int i = 0; i < 20; ++i) { // destroyed right after a job: its workers are still polling
    ThreadPool pool(2);
    BOOST_TEST(each_once(pool, 8));
  }
}

BOOST_AUTO_TEST_SUITE_END()
