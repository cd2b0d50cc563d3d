// What a METAL blob carries inside the SDK's envelope: the Metal Shading Language source the SDK
// renderer made, its entry point, and how arguments reach it (each buffer's [[buffer(n)]] slot,
// each scalar's slot and the dtype it is passed as). The device compiles the source with
// newLibraryWithSource when the program loads. Plain C++: compiled and tested on every platform.
// Layout (little-endian): "TGMT", uint32 version, uint32 entry length + entry, uint32 source
// length + source, uint32 buffer count + uint32 slot each, uint32 scalar count + (uint32 slot,
// uint32 passed_as dtype) each, uint8 uses_barrier, uint8 uses_local_memory.
#pragma once

#include <tg/abi.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tg::metal {

struct ScalarSlot {
  uint32_t slot = 0;      // [[buffer(slot)]] of its `constant T&`
  tg_dtype passed_as = 0; // the T (sdk/render.hpp, ScalarParam::passed_as)
};

struct Payload {
  std::string entry;
  std::string source;
  std::vector<uint32_t> buffer_slots; // by DEFINE_GLOBAL index
  std::vector<ScalarSlot> scalars;    // by DEFINE_VAR index
  bool uses_barrier = false;
  bool uses_local_memory = false;
};

std::vector<std::byte> encode(const Payload& payload);
// Throws PluginError(INVALID_ARGUMENT) naming what is wrong (not a Metal payload, truncated).
Payload decode(std::span<const std::byte> bytes);

} // namespace tg::metal
