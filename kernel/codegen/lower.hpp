// Lowering: a scheduled kernel (SINK(STORE(out, value)) over tensor-level nodes) becomes a
// kernel-level graph: DEFINE_GLOBALs, SPECIAL work-group ids, RANGE loops, INDEX/LOAD/STORE with
// index math from each input's ShapeTracker, and REDUCE nodes over RANGEs.
#pragma once

#include "kernel/codegen/heuristic.hpp"
#include "kernel/codegen/opt.hpp"
#include "kernel/schedule/schedule.hpp"

#include <tg/abi.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tg {

// What the target device offers, and which optimizations to apply.
struct LowerOptions : DeviceLimits {
  bool optimize = true; // false = NOOPT: no optimizations, one output per work item
  // Bytes every buffer argument's address is a multiple of when the core launches the kernel: the
  // device's buffer_alignment (the core launches at offset 0). Aligned vector copies (STAGE) need 16.
  uint32_t buffer_alignment = 0;
  std::optional<std::vector<Opt>> opts; // this list instead of the heuristic's (checked; OptError)
};

LowerOptions lower_options(const tg_device_properties& props, bool optimize);

struct LoweredKernel {
  UOpRef sink; // kernel-level graph, simplified
  std::string name;
  std::array<uint32_t, 3> global{1, 1, 1};
  std::array<uint32_t, 3> local{1, 1, 1};
  int64_t ops = 0;            // estimated arithmetic operations
  int64_t bytes = 0;          // estimated bytes moved (each buffer once)
  std::vector<Opt> applied;   // the optimizations applied
  std::string opts;           // those and the grid, for DEBUG output
  uint32_t compile_level = 2; // ABI opt_level: 3 for compute-bound kernels, 2 (fast JIT) otherwise
};

LoweredKernel lower_kernel(const ScheduleItem& item, const LowerOptions& options);
// The axes an optimization list can name, and what the heuristic sees of them.
KernelInfo analyze_kernel(const ScheduleItem& item);

} // namespace tg
