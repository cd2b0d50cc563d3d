// The matrix units the CUDA plugin declares (ABI 1.4): mma.sync m16n8k16 with float16 and
// bfloat16 inputs from sm_80 on. Devices and the compiler read the same list per compute
// capability, so an MMA's unit index means the same everywhere.
#pragma once

#include <tg/abi.h>

#include <vector>

namespace tg::cuda {

// Index 0: float16, 1: bfloat16 (both accumulate in float32). Empty before sm_80, with
// TG_CUDA_TENSOR_CORES=0, or with TG_CUDA_MATRIX_UNITS=0 (then the plugin describes mma.sync only
// through the `tensor_cores` attribute, and the host emits IR 1.1 WMMA as for a 1.3 plugin: the
// A/B switch for the old path).
std::vector<tg_matrix_unit> matrix_units(int compute_capability);

} // namespace tg::cuda
