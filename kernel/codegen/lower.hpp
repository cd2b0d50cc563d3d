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
// The matrix units the TC opt may use on a device: its declared units (ABI 1.4; those with an
// operand source this host does not know are left out), else, for TG_FEATURE_TENSOR_CORES with
// `m16n8k16` in the `tensor_cores` attribute (a 1.2/1.3 plugin), IR 1.1 WMMA's description for
// float16 and bfloat16, and with the warpgroup shapes ("...@wg"), IR 1.2 WGMMA's (sdk::wgmma_units).
std::vector<MatrixUnitChoice> matrix_unit_choices(const std::vector<tg_matrix_unit>& declared,
                                                  const tg_device_properties& props, bool wmma_attribute,
                                                  bool wgmma_attribute = false);

LoweredKernel lower_kernel(const ScheduleItem& item, const LowerOptions& options);
// The axes an optimization list can name, and what the heuristic sees of them.
KernelInfo analyze_kernel(const ScheduleItem& item);

} // namespace tg
