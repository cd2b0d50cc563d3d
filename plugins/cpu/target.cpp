#include "target.hpp"

#include <tg/sdk/plugin.hpp>

#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/Triple.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetOptions.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

using tg::sdk::PluginError;

namespace tg::cpu {
namespace {

// Every target LLVM was built with, registered once, on the first target of another architecture
// (the host's own is registered by host_target()).
void initialize_all_targets() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
  });
}

bool is_cpu_of(const llvm::Target& t, const std::string& triple, const std::string& cpu) {
  std::unique_ptr<llvm::MCSubtargetInfo> sti(t.createMCSubtargetInfo(triple, "", ""));
  return sti && sti->isCPUStringValid(cpu);
}

} // namespace

const HostTarget& host_target() {
  static const HostTarget host = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
    HostTarget h;
    h.triple = llvm::sys::getProcessTriple();
    h.cpu = llvm::sys::getHostCPUName().str();
    llvm::StringMap<bool> features;
    std::vector<std::string> list;
    if (llvm::sys::getHostCPUFeatures(features))
      for (const auto& f : features) list.push_back((f.getValue() ? "+" : "-") + f.getKey().str());
    std::sort(list.begin(), list.end(),
              [](const std::string& x, const std::string& y) { return x.substr(1) < y.substr(1); });
    for (const auto& f : list) h.features += (h.features.empty() ? "" : ",") + f;
    h.vector_bytes = features.lookup("avx512f") ? 64 : features.lookup("avx") ? 32 : 16;
    return h;
  }();
  return host;
}

std::string llvm_version_string() {
  return std::to_string(LLVM_VERSION_MAJOR) + "." + std::to_string(LLVM_VERSION_MINOR) + "." +
         std::to_string(LLVM_VERSION_PATCH);
}

TargetSpec resolve_target(const char* target) {
  const HostTarget& host = host_target();
  if (target == nullptr || *target == '\0' || host.cpu == target || std::strcmp(target, "native") == 0)
    return {host.triple, host.cpu, host.features};
  std::string error;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(host.triple, error);
  if (t == nullptr) throw PluginError(TG_ERROR_INTERNAL, "no LLVM target for " + host.triple + ": " + error);
  if (is_cpu_of(*t, host.triple, target)) return {host.triple, target, ""};

  const std::string text = target;
  const size_t colon = text.find(':');
  const std::string cpu = colon == std::string::npos ? "generic" : text.substr(colon + 1);
  llvm::Triple triple(llvm::Triple::normalize(text.substr(0, colon)));
  if (triple.getArch() == llvm::Triple::UnknownArch)
    throw PluginError(TG_ERROR_INVALID_ARGUMENT, "unknown target \"" + text + "\": expected a CPU name of " +
                                                     host.triple + " (this host is \"" + host.cpu +
                                                     "\") or <arch>[:<cpu>] such as \"aarch64\"");
  // Spelled out: "aarch64-unknown-linux-gnu", not normalize()'s "aarch64--linux-gnu".
  if (triple.getVendor() == llvm::Triple::UnknownVendor) triple.setVendor(llvm::Triple::UnknownVendor);
  if (triple.getOS() == llvm::Triple::UnknownOS) {
    llvm::Triple host_triple(host.triple);
    triple.setOS(host_triple.getOS());
    triple.setEnvironment(host_triple.getEnvironment());
  }
  initialize_all_targets();
  t = llvm::TargetRegistry::lookupTarget(triple.str(), error);
  if (t == nullptr)
    throw PluginError(TG_ERROR_UNIMPLEMENTED, "target \"" + text + "\": LLVM " + llvm_version_string() +
                                                  " here was built without the " +
                                                  triple.getArchName().str() + " target (" + error + ")");
  if (!is_cpu_of(*t, triple.str(), cpu))
    throw PluginError(TG_ERROR_INVALID_ARGUMENT,
                      "unknown target \"" + text + "\": \"" + cpu + "\" is not a CPU of " + triple.str());
  return {triple.str(), cpu, ""};
}

std::string target_string(const TargetSpec& spec) { return spec.triple + ":" + spec.cpu; }

std::unique_ptr<llvm::TargetMachine> make_target_machine(const TargetSpec& spec, unsigned opt_level) {
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(spec.triple, error);
  if (target == nullptr)
    throw PluginError(TG_ERROR_INTERNAL, "no LLVM target for " + spec.triple + ": " + error);
  llvm::TargetOptions options;
  // Compile latency matters (every new kernel shape is compiled while the user waits): at the
  // default level 2 the IR is optimized and vectorized by the O2 pipeline, then lowered with the
  // fast instruction selector and register allocator (codegen "None"), which is 3x faster than
  // codegen -O2 for small kernels (vector add: ~6 ms instead of ~11 ms compile+load) at a few
  // percent of run time. Level 3 spends the time: full codegen, unrolling and interleaving.
  auto level = opt_level >= 3 ? llvm::CodeGenOpt::Aggressive : llvm::CodeGenOpt::None;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      spec.triple, spec.cpu, spec.features, options, llvm::Reloc::PIC_, llvm::CodeModel::Small, level));
  if (!tm)
    throw PluginError(TG_ERROR_INTERNAL,
                      "cannot create a target machine for " + spec.triple + " " + spec.cpu);
  return tm;
}

} // namespace tg::cpu
