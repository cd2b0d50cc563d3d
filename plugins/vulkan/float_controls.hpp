// Vulkan lets a driver ignore infinities, NaNs and signed zeros in float math unless the shader
// asks otherwise (lavapipe folds exp2(-2 * log2(0)) to 0, not inf). This adds the SPIR-V execution
// mode SignedZeroInfNanPreserve (SPV_KHR_float_controls, core in Vulkan 1.2) for the float widths
// given, at load time, so blobs stay portable to devices without it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace tg::vulkan {

// Returns `spirv` with the capability, the extension and one execution mode per width on its
// (single) entry point. Widths the module does not use are skipped.
std::vector<uint32_t> preserve_inf_nan(const std::vector<uint32_t>& spirv, std::span<const uint32_t> widths);

} // namespace tg::vulkan
