// The matrix units the CUDA plugin declares (ABI 1.4/1.5): mma.sync m16n8k16 with float16 and
// bfloat16 inputs from sm_80 on, and on sm_90 wgmma m64nNk16 reading its tiles from shared memory.
// Devices and the compiler read the same list per compute capability, so an MMA's unit index
// means the same everywhere.
#pragma once

#include <tg/abi.h>

#include <vector>

namespace tg::cuda {

// Whether the warpgroup op is offered: sm_90 (built for sm_90a), unless TG_CUDA_WGMMA=0. Both the
// `tensor_cores` attribute's "@wg" shapes and the wgmma units follow it.
bool warpgroup_mma(int compute_capability);

// Index 0: mma.m16n8k16.f16, 1: .bf16 (register units, accumulating in float32). Where
// warpgroup_mma, then the local-memory units of sdk::wgmma_units(), preferred first (the host's
// heuristic takes the first that fits): per layout and N the f16 unit, then the bf16 one. Empty
// before sm_80, with TG_CUDA_TENSOR_CORES=0, or with TG_CUDA_MATRIX_UNITS=0 (then the plugin
// describes its shapes only through the `tensor_cores` attribute, and the host emits IR 1.1 WMMA
// and IR 1.2 WGMMA as for a 1.3 plugin: the A/B switch for the old paths).
std::vector<tg_matrix_unit> matrix_units(int compute_capability);

} // namespace tg::cuda
