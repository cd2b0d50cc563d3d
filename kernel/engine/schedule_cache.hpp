// The schedule cache: realizing an expression whose structure was realized before (the same ops,
// dtypes, shapes, constants and devices over other buffers of the same sizes) replays the kernels
// prepared then on new output buffers: no scheduling, lowering or kernel-cache lookup, only the
// buffers are bound. The key is the expression's DAG in children-first order, each BUFFER a
// numbered placeholder (dtype, size, device); the entry keeps no node of the expression (only
// args and prepared kernels), so it keeps no tensor's data alive. A NOOP's opaque arg (a custom
// gradient's function, which may capture tensors) is keyed as "a function is here", never kept:
// codegen treats the NOOP as its source, so a training step hits; an expression with any other
// opaque arg is not cached. With TG_EAGER_BATCH=1, from an entry's second hit on, its kernels
// run as one launch_batch where the device has it (realize.hpp's run_prepared_as_batch). Off with
// TG_SCHEDULE_CACHE=0, bypassed at DEBUG>=3 and under VIZ (they show each kernel's source and graphs). A JIT
// capture records a hit's launches like any others. The cache only stores and binds: the
// engine's realize_schedule (realize.hpp) runs what it binds. Thread-safe.
#pragma once

#include "kernel/engine/prepared.hpp"
#include "kernel/engine/settings.hpp"
#include "kernel/schedule/schedule.hpp"
#include "kernel/schedule/structure.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>

namespace tg {

struct ScheduleCacheStats {
  uint64_t hits = 0;   // realizes replayed from the cache
  uint64_t misses = 0; // realizes scheduled (and cached when they could be)
  size_t entries = 0;
  uint64_t batched = 0; // hits whose kernels ran as one launch_batch
};

class ScheduleCache {
public:
  struct Entry; // how to replay one schedule (schedule_cache.cpp)

  // `settings`: its engine's, read at each lookup (an entry is for the settings it was made with).
  explicit ScheduleCache(const Config& settings) : settings_(settings) {}

  // The entry for an expression of structure `g` realized with `options`, or null (counted as a
  // hit or a miss).
  std::shared_ptr<const Entry> find(const Structure& g, const ScheduleOptions& options);
  // Keeps the schedule `s` of `g` just run, with the kernel each item ran (null where none ran),
  // unless it cannot be replayed (a copy between devices, a result that is not a kernel's output).
  void insert(const Structure& g, const Schedule& s, std::span<const std::shared_ptr<PreparedKernel>> kernels,
              const ScheduleOptions& options);

  // An entry bound to the buffers of `g` and to new outputs (allocated here): the launches to
  // run in order, the schedule's `becomes` and `keep_alive` for g's nodes, and whether to run the
  // launches as one batch (TG_EAGER_BATCH=1, from the entry's second replay on).
  struct Bound {
    std::vector<PreparedLaunch> launches;
    Schedule schedule;
    bool batch = false;
  };
  Bound bind(const Entry& e, const Structure& g) const;
  void note_batched() { ++batched_; }

  ScheduleCacheStats stats();
  // Drops every entry: their prepared kernels keep devices and plugins alive.
  void clear();

private:
  const Config& settings_;
  std::mutex mutex_;
  std::unordered_multimap<size_t, std::shared_ptr<const Entry>> entries_;
  std::atomic<uint64_t> hits_{0}, misses_{0}, batched_{0};
};

} // namespace tg
