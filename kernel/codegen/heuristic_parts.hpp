// The heuristic's pieces shared between its files (heuristic.cpp: the GPU-style lists and the
// dispatch; heuristic_cpu.cpp: the CPU-style lists). Internal to kernel/codegen.
#pragma once

#include "kernel/codegen/heuristic.hpp"

#include <optional>
#include <vector>

namespace tg::heuristic_detail {

// The largest divisor of n that is at most cap.
int64_t largest_divisor(int64_t n, int64_t cap);
// The upcast a selection sum's thread takes (heuristic.cpp), or nothing.
std::optional<Opt> selection_upcast(const KernelInfo& k, int64_t most, int64_t least_items);
// An elementwise kernel's stacked axes upcast whole (heuristic.cpp), or nothing.
std::vector<Opt> masked_upcasts(const KernelInfo& k);
// CPU-style devices' list (heuristic_cpu.cpp).
std::vector<Opt> cpu_opts(const KernelInfo& k, const DeviceLimits& d);

} // namespace tg::heuristic_detail
