// BEAM search: a kernel's optimization list found by timing candidates on the device instead of
// taken from the heuristic (BEAM=N, config.hpp). Each round extends each of the best N lists by one
// action (opt.hpp), compiles the new candidates on all cores, checks each one's output against the
// unoptimized kernel's on random inputs, times the correct ones on scratch buffers and keeps the
// best N; it stops when a round improves nothing or BEAM_TIMEOUT is spent. The empty list and the
// heuristic's are candidates too, so the result is never slower than the default (as timed).
// The winner is stored on disk per (plugin, plugin cache key / device arch, N, kernel), so the
// next process pays no search.
#pragma once

#include "kernel/codegen/lower.hpp"
#include "kernel/runtime/device.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tg {

// Test hooks (beam_test.cpp): a candidate that computes something else, a fixed timing.
struct BeamHooks {
  // Returns another kernel (same buffers) to compile for this candidate list, or nothing. Called
  // from the compile threads (never for the reference kernel).
  std::function<std::optional<ScheduleItem>(const std::vector<Opt>&)> replace_item;
  // Returns the time (ns) to record for a candidate instead of the measured `ns`.
  std::function<double(const std::vector<Opt>&, double ns)> time;
};

struct BeamSettings {
  int width = 2;         // N: lists kept per round
  double timeout_s = 20; // search time bound for the kernel (checked between candidates)
  bool use_cache = true; // read and write the disk cache (when config().disk_cache)
  const BeamHooks* hooks = nullptr;
};

struct BeamResult {
  std::vector<Opt> opts;   // the winner (the heuristic's list when nothing could be timed)
  bool from_cache = false; // read from the disk cache: no search ran
  double search_ms = 0;
  int rounds = 0;
  int timed = 0;      // candidates compiled, checked and timed
  int refused = 0;    // lists lower_kernel refused (OptError): not compiled
  int duplicate = 0;  // lists that gave a kernel already seen
  int failed = 0;     // compile or launch errors
  int wrong = 0;      // output differs from the unoptimized kernel's
  double best_ns = 0; // the winner's time
  double heuristic_ns = 0;
  bool timed_out = false;
  bool unverifiable = false; // the heuristic's kernel itself differs from the reference: kept, no search
  std::string wrong_example; // the first wrong candidate and where it differed (DEBUG>=2)
};

// The optimization list for `item` on `device` (never the user's buffers: it allocates its own).
// `base` is lower_options for the device. Throws only what analyze_kernel throws.
BeamResult beam_search(const ScheduleItem& item, const std::shared_ptr<Device>& device,
                       const LowerOptions& base, const BeamSettings& settings);

// The single actions a round tries on one list, from the kernel's axes and the device's limits
// (some are refused by lower_kernel in context: a split that does not divide, too many threads).
std::vector<Opt> beam_actions(const KernelInfo& kernel, const DeviceLimits& device);

// Searches run and lists read from the disk cache in this process (for tests).
uint64_t beam_search_count();
uint64_t beam_cache_hit_count();

} // namespace tg
