// Vulkan lets a driver ignore infinities, NaNs and signed zeros in float math unless the shader
// asks otherwise (lavapipe folds exp2(-2 * log2(0)) to 0, not inf), and leaves the rounding of
// float arithmetic and conversions to the implementation (a float16 result may come back unrounded
// or rounded towards zero). This adds the SPIR-V execution modes SignedZeroInfNanPreserve and
// RoundingModeRTE (SPV_KHR_float_controls, core in Vulkan 1.2) for the float widths the device
// supports them for, at load time, so blobs stay portable to devices without them.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace tg::vulkan {

struct FloatControls {
  std::vector<uint32_t> preserve_inf_nan;      // widths for SignedZeroInfNanPreserve
  std::vector<uint32_t> round_to_nearest_even; // widths for RoundingModeRTE
};

// Returns `spirv` with the capabilities, the extension and one execution mode per (mode, width) on
// its (single) entry point. Widths the module does not use are skipped.
std::vector<uint32_t> add_float_controls(const std::vector<uint32_t>& spirv, const FloatControls& widths);

} // namespace tg::vulkan
