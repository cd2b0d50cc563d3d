// Kernel IR -> an AMDGPU code object (HSACO): the SDK's LLVM IR renderer with an amdgcn kernel
// shape, LLVM's AMDGPU backend (which writes the kernel descriptor `<name>.kd` and the amdhsa
// metadata note listing the arguments in order), then `ld.lld` to a shared ELF as HIP loads it.
#pragma once

#include <tg/sdk/kernel_ir.hpp>

#include <string>
#include <vector>

namespace tg::amd {

struct Hsaco {
  std::vector<std::byte> elf; // the linked code object
  std::string llvm_ir;        // the optimized module, when asked for
};

// `gfx` is an LLVM AMDGPU processor (gfx90a, gfx1030, ...). The linker is TG_AMD_LLD or ld.lld-14.
Hsaco compile_hsaco(const sdk::KernelIR& ir, const std::string& gfx, unsigned opt_level, bool want_ir);

} // namespace tg::amd
