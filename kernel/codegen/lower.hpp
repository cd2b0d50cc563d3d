// Lowering: a scheduled kernel (SINK(STORE(out, value)) over tensor-level nodes) becomes a
// kernel-level graph: DEFINE_GLOBALs, SPECIAL work-group ids, RANGE loops, INDEX/LOAD/STORE with
// index math from each input's ShapeTracker, and REDUCE nodes over RANGEs.
#pragma once

#include "kernel/schedule/schedule.hpp"

#include <array>
#include <cstdint>
#include <string>

namespace tg {

// What the target device offers and whether to optimize; filled from tg_device_properties.
struct LowerOptions {
  bool optimize = true; // false = NOOPT: one output element per loop step, no upcast/unroll
  uint32_t compute_units = 1;
  uint32_t max_groups = 0x7fffffffu;
  uint32_t vector_bytes = 0; // vector register width; 0 = emit scalar lanes only
};

struct LoweredKernel {
  UOpRef sink; // kernel-level graph, simplified
  std::string name;
  std::array<uint32_t, 3> global{1, 1, 1};
  std::array<uint32_t, 3> local{1, 1, 1};
  int64_t ops = 0;            // estimated arithmetic operations
  int64_t bytes = 0;          // estimated bytes moved (each buffer once)
  std::string opts;           // the optimizations applied, for DEBUG output
  uint32_t compile_level = 2; // ABI opt_level: 3 for compute-bound kernels, 2 (fast JIT) otherwise
};

LoweredKernel lower_kernel(const ScheduleItem& item, const LowerOptions& options);

} // namespace tg
