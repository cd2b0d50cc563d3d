// Lowering: a scheduled kernel (SINK(STORE(out, value)) over tensor-level nodes) becomes a
// kernel-level graph: DEFINE_GLOBALs, SPECIAL work-group ids, RANGE loops, INDEX/LOAD/STORE with
// index math from each input's ShapeTracker, and REDUCE nodes over RANGEs.
#pragma once

#include "kernel/codegen/lowered.hpp"
#include "kernel/schedule/schedule.hpp"

#include <tg/abi.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tg {

LowerOptions lower_options(const tg_device_properties& props, bool optimize);

LoweredKernel lower_kernel(const ScheduleItem& item, const LowerOptions& options);
// The axes an optimization list can name, and what the heuristic sees of them.
KernelInfo analyze_kernel(const ScheduleItem& item);

} // namespace tg
