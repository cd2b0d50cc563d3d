// Linearize: a kernel-level graph (SINK of STOREs over RANGE/REDUCE/LOAD/ALU nodes) becomes the
// ABI's linear kernel IR. Each node is placed in the innermost loop it depends on, so loop
// invariants stay outside; each REDUCE becomes DEFINE_ACC before its loops, ASSIGN inside the
// innermost one, and is read after them. REDUCEs over the same RANGEs share one loop.
#pragma once

#include "kernel/ir/uop.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace tg {

struct LinearKernel {
  std::vector<std::byte> ir; // serialized, validated kernel IR
  uint32_t buffer_count = 0;
  std::string text; // tg::sdk::to_string of the program (DEBUG=4)
};

LinearKernel linearize(const UOpRef& sink, const std::string& name);

} // namespace tg
