#include "compiler.hpp"

#include "hsaco.hpp"
#include "matrix_units.hpp"

#include <llvm/Config/llvm-config.h>

#include <cstdlib>

namespace tg::amd {
namespace {

// "" = TG_AMD_ARCH, else gfx90a. The host asks for the device's target (its gcnArchName's processor).
std::string resolve(const std::string& target) {
  if (!target.empty()) return target;
  const char* env = std::getenv("TG_AMD_ARCH");
  return env && *env ? env : "gfx90a";
}

} // namespace

sdk::CompileOutput Compiler::compile(const sdk::CompileRequest& request) {
  sdk::CompileOutput out;
  out.target = resolve(request.target);
  sdk::check_mma(request.ir, matrix_unit_descriptions(out.target));
  Hsaco h = compile_hsaco(request.ir, out.target, request.opt_level, request.want_source);
  out.payload = std::move(h.elf);
  out.source = std::move(h.llvm_ir);
  out.log = "amd: '" + request.ir.name + "' for " + out.target + ", " + std::to_string(out.payload.size()) +
            " byte code object";
  return out;
}

std::string Compiler::cache_key(const std::string& target) {
  const std::string gfx = resolve(target);
  // Code for processors LLVM 14 lacks comes from the newer llc: its name is part of the key.
  return "hsaco 1;llvm " LLVM_VERSION_STRING ";" + (needs_newer_llvm(gfx) ? newer_llc() + ";" : "") + gfx;
}

} // namespace tg::amd
