// Elementwise reduction of host memory for every ABI dtype: what a collective computes when it
// runs on the host (the core's fallback in kernel/runtime/collective.cpp and the CPU plugin's
// collective entry). Sums wrap for integers (unsigned arithmetic, no UB) and are logical OR for
// bool; float16/bfloat16 are widened to float, combined, and rounded back (nearest even) per step.
#pragma once

#include <tg/abi.h>

#include <cstddef>
#include <cstdint>

namespace tg::sdk {

enum class ReduceOp { sum, max };

// acc[i] = op(acc[i], in[i]) for i < count elements of `dtype`. Throws PluginError
// (INVALID_ARGUMENT) for VOID or an unknown dtype. acc and in may be unaligned; they must not
// overlap unless equal. MAX with a NaN operand keeps the NaN.
void reduce_into(tg_dtype dtype, ReduceOp op, std::byte* acc, const std::byte* in, uint64_t count);

} // namespace tg::sdk
