// What a code object (HSACO) declares about a kernel: its arguments' kernarg offsets, sizes and
// kinds and its segment sizes, read from the amdhsa metadata note (an ELF note "AMDGPU", type
// NT_AMDGPU_METADATA, holding MessagePack) that LLVM writes. The launcher packs arguments by this
// layout, so it never assumes how LLVM laid them out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tg::amd {

struct KernelArg {
  uint64_t offset = 0; // in the kernarg segment
  uint64_t size = 0;
  std::string value_kind; // "global_buffer", "by_value", "hidden_..."
};

struct KernelLayout {
  std::string name;
  std::vector<KernelArg> args; // in declaration order, hidden ones last
  uint64_t kernarg_segment_size = 0;
  uint64_t group_segment_fixed_size = 0; // static work-group (LDS) memory
  uint64_t max_flat_workgroup_size = 0;  // the most work items per group the code was built for
};

// The layout of `kernel` in the code object `elf`. Throws PluginError(INVALID_ARGUMENT) naming
// what is wrong: not an AMDGPU ELF64, no metadata note, malformed MessagePack, no such kernel.
KernelLayout read_kernel_layout(std::span<const std::byte> elf, const std::string& kernel);

} // namespace tg::amd
