// Scope analysis for renderers of the kernel IR: which values are used outside the RANGE/IF scope
// that defines them. Structured targets (C, LLVM IR with dominance) must declare such a value
// before the scope opens (or spill it), not where it is computed.
#pragma once

#include <tg/sdk/kernel_ir.hpp>

#include <vector>

namespace tg::sdk {

// One entry per instruction: 1 when its value is used by an instruction outside the RANGE/IF
// scope it was defined in (the closing ENDRANGE/ENDIF does not count as a use). Values that are
// valid everywhere are never marked: CONST, DEFINE_GLOBAL/VAR/LOCAL, SPECIAL, and the
// accumulator's DEFINE_ACC/ASSIGN (read through its own storage).
std::vector<char> values_used_outside_scope(const KernelIR& ir);

} // namespace tg::sdk
