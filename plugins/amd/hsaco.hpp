// Kernel IR -> an AMDGPU code object (HSACO): the SDK's LLVM IR renderer with an amdgcn kernel
// shape, LLVM's AMDGPU backend (which writes the kernel descriptor `<name>.kd` and the amdhsa
// metadata note listing the arguments in order), then `ld.lld` to a shared ELF as HIP loads it.
// Processors LLVM 14 lacks (gfx942, gfx1100) go through a newer LLVM's llc and ld.lld as
// subprocesses (Debian's llc-19/ld.lld-19), fed this LLVM's bitcode.
#pragma once

#include <tg/sdk/kernel_ir.hpp>

#include <string>
#include <vector>

namespace tg::amd {

struct Hsaco {
  std::vector<std::byte> elf; // the linked code object
  std::string llvm_ir;        // the optimized module, when asked for
};

// `gfx` is an LLVM AMDGPU processor (gfx90a, gfx942, gfx1100, ...). LLVM 14's own processors are
// compiled in process and linked by TG_AMD_LLD or ld.lld-14; others by TG_AMD_LLC (default llc-19)
// and TG_AMD_LLD or ld.lld-19. Throws PluginError: UNAVAILABLE when a tool cannot be run,
// INTERNAL when LLVM fails (a fatal error included) or a tool fails (an unknown processor).
Hsaco compile_hsaco(const sdk::KernelIR& ir, const std::string& gfx, unsigned opt_level, bool want_ir);

// Whether `gfx` needs the newer llc (LLVM 14 does not know it), and that llc's name.
bool needs_newer_llvm(const std::string& gfx);
std::string newer_llc();

} // namespace tg::amd
