// Which machine code the CPU plugin compiles for: the host (detected once) or a target string
// naming another CPU or architecture, resolved to an LLVM triple, CPU and features, and the
// target machine that emits code for it.
#pragma once

#include <llvm/Target/TargetMachine.h>

#include <cstdint>
#include <memory>
#include <string>

namespace tg::cpu {

struct HostTarget {
  std::string triple;
  std::string cpu;      // LLVM's name for the host CPU, e.g. "skylake-avx512"
  std::string features; // "+avx2,+fma,-avx512f,...", sorted
  uint32_t vector_bytes = 16;
};

// Initializes LLVM's native target (once) and describes the host.
const HostTarget& host_target();
std::string llvm_version_string();

struct TargetSpec {
  std::string triple;
  std::string cpu;
  std::string features;
};

// NULL, "", "native" or the host CPU name compile for this machine. Another CPU name of the host's
// architecture ("x86-64-v3", "sapphirerapids") cross-compiles for that CPU; another architecture is
// "<arch or triple>[:<cpu>]" ("aarch64", "aarch64:neoverse-n1"; the OS is the host's unless the
// triple names one). Blobs for another CPU load only on such a CPU. Throws PluginError.
TargetSpec resolve_target(const char* target);

// "<triple>:<cpu>": how blobs and the device name a target (also a form resolve_target accepts).
std::string target_string(const TargetSpec& spec);

std::unique_ptr<llvm::TargetMachine> make_target_machine(const TargetSpec& spec, unsigned opt_level);

} // namespace tg::cpu
