// Scope analysis of a kernel IR program, shared by every renderer that emits structured code.
// A RANGE or IF opens a scope that its ENDRANGE/ENDIF closes; a renderer that declares a value
// where it is computed must declare it earlier when a use lies outside that scope.
#pragma once

#include <tg/sdk/kernel_ir.hpp>

#include <vector>

namespace tg::sdk {

// For each instruction, 1 when its value is used outside the RANGE/IF scope it was defined in
// (the renderer must then declare it before that scope), else 0. CONST, DEFINE_GLOBAL,
// DEFINE_VAR, SPECIAL, DEFINE_ACC and ASSIGN are never marked: renderers make them available
// everywhere (arguments, literals, function-level registers). INDEX is marked like any value.
// The SDK validator rejects uses after a scope closes, so a validated program has no marks;
// renderers still honour them for programs built or transformed in memory.
std::vector<char> values_used_outside_scope(const KernelIR& ir);

} // namespace tg::sdk
