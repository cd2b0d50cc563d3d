// Linearize: a kernel-level graph (SINK of STOREs over RANGE/REDUCE/LOAD/ALU nodes) becomes the
// ABI's linear kernel IR. Each node is placed in the innermost loop it depends on, so loop
// invariants stay outside; each REDUCE becomes DEFINE_ACC before its loops, ASSIGN inside the
// innermost one, and is read after them. REDUCEs over the same RANGEs share one loop.
#pragma once

#include "kernel/ir/uop.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tg {

struct LinearKernel {
  std::vector<std::byte> ir; // serialized, validated kernel IR
  uint32_t buffer_count = 0;
  std::string text; // tg::sdk::to_string of the program (DEBUG=4)
  // Loop iterations one work item runs, over all its loops (an inner loop's trips count once per
  // outer trip); nullopt when a bound is not a constant. Some drivers cap it (DeviceLimits).
  std::optional<uint64_t> loop_iterations;
};

LinearKernel linearize(const UOpRef& sink, const std::string& name);

// Throws OptError when the kernel's loops run more than `limit` iterations per work item (0: no
// limit), naming the kernel, its opts and both counts: a driver that caps loops (lavapipe: 65535)
// would otherwise stop the loop early and return a wrong result without an error.
void check_loop_limit(const LinearKernel& kernel, const std::string& name, const std::string& opts,
                      uint64_t limit);

} // namespace tg
