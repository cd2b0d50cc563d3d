// What a VULKAN blob carries inside the SDK's envelope: how the scalars are laid out in the
// push-constant block, the descriptor binding of every buffer argument, and the SPIR-V words.
// Layout (little-endian): "TGVK", uint32 version, uint32 push-constant bytes, uint32 scalar count
// + (uint32 offset, uint32 size, uint8 passed_as dtype) each, uint32 buffer count + uint32 binding
// each, uint32 word count + the words.
#pragma once

#include <tg/abi.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tg::vulkan {

struct PushScalar {
  uint32_t offset = 0;
  uint32_t size = 0;      // 4 or 8
  tg_dtype passed_as = 0; // INT32, UINT32, INT64, UINT64, FLOAT32 or FLOAT64
};

struct Payload {
  uint32_t push_constant_bytes = 0;
  std::vector<PushScalar> scalars; // by DEFINE_VAR index
  std::vector<uint32_t> bindings;  // by DEFINE_GLOBAL index
  std::vector<uint32_t> spirv;
};

std::vector<std::byte> encode(const Payload& payload);
// Throws PluginError(INVALID_ARGUMENT) naming what is wrong (truncated, not SPIR-V, ...).
Payload decode(std::span<const std::byte> bytes);

} // namespace tg::vulkan
