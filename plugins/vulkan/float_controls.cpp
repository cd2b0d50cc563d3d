#include "float_controls.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace tg::vulkan {
namespace {

// SPIR-V numbers (the SPIR-V specification, "Binary Form").
constexpr uint32_t kOpExtension = 10, kOpEntryPoint = 15, kOpExecutionMode = 16, kOpCapability = 17;
constexpr uint32_t kOpTypeFloat = 22;
constexpr uint32_t kCapabilitySignedZeroInfNanPreserve = 4466, kCapabilityRoundingModeRTE = 4467;
constexpr uint32_t kExecutionModeSignedZeroInfNanPreserve = 4461, kExecutionModeRoundingModeRTE = 4462;
constexpr size_t kHeaderWords = 5;

uint32_t instruction(uint32_t words, uint32_t opcode) { return words << 16 | opcode; }

std::vector<uint32_t> extension(const std::string& name) {
  std::vector<uint32_t> literal((name.size() + 4) / 4, 0); // NUL-terminated, padded to a word
  std::memcpy(literal.data(), name.data(), name.size());
  std::vector<uint32_t> out{instruction(uint32_t(1 + literal.size()), kOpExtension)};
  out.insert(out.end(), literal.begin(), literal.end());
  return out;
}

} // namespace

std::vector<uint32_t> add_float_controls(const std::vector<uint32_t>& spirv, const FloatControls& widths) {
  // First pass: the entry point, the float widths in use, where the capabilities end.
  uint32_t entry = 0;
  size_t after_capabilities = kHeaderWords;
  std::vector<uint32_t> used;
  for (size_t at = kHeaderWords; at < spirv.size();) {
    const uint32_t count = spirv[at] >> 16, opcode = spirv[at] & 0xffff;
    if (count == 0 || at + count > spirv.size()) return spirv; // malformed: leave it to the validator
    if (opcode == kOpCapability) after_capabilities = at + count;
    if (opcode == kOpEntryPoint && entry == 0 && count > 2) entry = spirv[at + 2];
    if (opcode == kOpTypeFloat && count > 2) used.push_back(spirv[at + 2]);
    at += count;
  }
  std::vector<uint32_t> modes, capabilities;
  auto add = [&](std::span<const uint32_t> mode_widths, uint32_t mode, uint32_t capability) {
    bool any = false;
    for (uint32_t w : mode_widths)
      if (std::find(used.begin(), used.end(), w) != used.end()) {
        modes.insert(modes.end(), {instruction(4, kOpExecutionMode), entry, mode, w});
        any = true;
      }
    if (any) capabilities.insert(capabilities.end(), {instruction(2, kOpCapability), capability});
  };
  add(widths.preserve_inf_nan, kExecutionModeSignedZeroInfNanPreserve, kCapabilitySignedZeroInfNanPreserve);
  add(widths.round_to_nearest_even, kExecutionModeRoundingModeRTE, kCapabilityRoundingModeRTE);
  if (entry == 0 || modes.empty()) return spirv;

  std::vector<uint32_t> out(spirv.begin(), spirv.begin() + std::ptrdiff_t(after_capabilities));
  out.insert(out.end(), capabilities.begin(), capabilities.end());
  auto ext = extension("SPV_KHR_float_controls");
  out.insert(out.end(), ext.begin(), ext.end());
  for (size_t at = after_capabilities; at < spirv.size();) {
    const uint32_t count = spirv[at] >> 16, opcode = spirv[at] & 0xffff;
    out.insert(out.end(), spirv.begin() + std::ptrdiff_t(at), spirv.begin() + std::ptrdiff_t(at + count));
    if (opcode == kOpEntryPoint) out.insert(out.end(), modes.begin(), modes.end());
    at += count;
  }
  return out;
}

} // namespace tg::vulkan
