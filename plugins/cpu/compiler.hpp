// Compilation: kernel IR -> LLVM IR (IRBuilder, LLVM 14 typed pointers) -> O2 new-PassManager
// pipeline for the host CPU -> relocatable object, wrapped in the CPU blob (program.hpp).
// Thread-safe: every compile uses its own LLVMContext and TargetMachine.
#pragma once

#include "target.hpp"

#include <tg/abi.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

struct tg_compile_result {
  std::vector<std::byte> binary;
  std::string source; // LLVM IR text of the module after optimization, when requested
  std::string log;
};

namespace tg::cpu {

tg_error* compile(const tg_compile_args* args, tg_compile_result** out_result);
tg_error* compile_result_get(const tg_compile_result* result, tg_compile_output* out);
void compile_result_destroy(tg_compile_result* result);
tg_error* compile_cache_key(const char* target, char* buf, size_t buf_size, size_t* out_length);

} // namespace tg::cpu
