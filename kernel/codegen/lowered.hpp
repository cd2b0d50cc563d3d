// What lowering is asked for (LowerOptions) and what it gives (LoweredKernel): the types shared
// by the lowering entry points (lower.hpp) and the Lowerer that does the work (lowerer.hpp).
#pragma once

#include "kernel/codegen/heuristic.hpp"
#include "kernel/codegen/opt.hpp"
#include "kernel/ir/uop.hpp"

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

} // namespace tg
