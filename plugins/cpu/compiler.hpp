// Compilation: kernel IR -> LLVM IR through the SDK's LLVM renderer (with the CPU's kernel shape:
// loops over work groups and local ids, see KernelFn) -> the O1-O3 pipeline for the target CPU ->
// a relocatable object, the payload of the blob. Thread-safe: every compile uses its own
// LLVMContext and TargetMachine.
#pragma once

#include <tg/sdk/adaptor.hpp>

#include <string>

namespace tg::cpu {

class Compiler final : public sdk::Compiler {
public:
  sdk::CompileOutput compile(const sdk::CompileRequest& request) override;
  std::string cache_key(const std::string& target) override;
};

} // namespace tg::cpu
