// The schedule cache: realizing an expression whose structure was realized before (the same ops,
// dtypes, shapes, constants and devices over other buffers of the same sizes) replays the kernels
// prepared then on new output buffers: no scheduling, lowering or kernel-cache lookup, only the
// buffers are bound. The key is the expression's DAG in children-first order, each BUFFER a
// numbered placeholder (dtype, size, device); the entry keeps no node of the expression (only
// args and prepared kernels), so it keeps no tensor's data alive. A NOOP's opaque arg (a custom
// gradient's function, which may capture tensors) is keyed as "a function is here", never kept:
// codegen treats the NOOP as its source, so a training step hits; an expression with any other
// opaque arg is not cached. With TG_EAGER_BATCH=1, from an entry's second hit on, its kernels
// run as one launch_batch where the device has it (run_prepared_as_batch). Off with
// TG_SCHEDULE_CACHE=0, bypassed at DEBUG>=3 and under VIZ (they show each kernel's source and graphs). A JIT
// capture records a hit's launches like any others (run_prepared). Thread-safe.
#pragma once

#include "kernel/schedule/schedule.hpp"

#include <cstddef>
#include <cstdint>

namespace tg {

// Schedules and runs `targets` as create_schedule + run_schedule do, or replays the cached
// schedule of an expression of the same structure. Returns the schedule's `becomes` and
// `keep_alive` for the expression's own nodes; its `items` only when it was scheduled.
Schedule realize_schedule(const std::vector<UOpRef>& targets, const ScheduleOptions& options);

struct ScheduleCacheStats {
  uint64_t hits = 0;   // realizes replayed from the cache
  uint64_t misses = 0; // realizes scheduled (and cached when they could be)
  size_t entries = 0;
  uint64_t batched = 0; // hits whose kernels ran as one launch_batch (run_prepared_as_batch)
};
// Counts since the process started (tests read them; DEBUG=1's realize line says "schedule cache").
ScheduleCacheStats schedule_cache_stats();

// Drops every cached schedule: their prepared kernels keep devices and plugins alive
// (forget_kernels calls it when a plugin is unloaded).
void forget_schedules();

} // namespace tg
