// The LLVM error helpers moved to the SDK (tg/sdk/llvm_errors.hpp), shared with the AMD plugin;
// this header keeps their tg::cpu names.
#pragma once

#include <tg/sdk/llvm_errors.hpp>

namespace tg::cpu {

using sdk::check;
using sdk::run_catching_fatal_errors;
using sdk::unwrap;

} // namespace tg::cpu
