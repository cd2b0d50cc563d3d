// Converts llvm::Error / llvm::Expected into tg::sdk::PluginError, consuming every error, and
// survives LLVM's fatal errors (report_fatal_error, e.g. "Cannot select") inside a compile.
#pragma once

#include <tg/sdk/plugin.hpp>

#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/Support/Error.h>

#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace tg::cpu {

inline void check(llvm::Error error, const std::string& what, tg_error_code code = TG_ERROR_INTERNAL) {
  if (error) throw tg::sdk::PluginError(code, what + ": " + llvm::toString(std::move(error)));
}

template <class T>
T unwrap(llvm::Expected<T> value, const std::string& what, tg_error_code code = TG_ERROR_INTERNAL) {
  if (!value) throw tg::sdk::PluginError(code, what + ": " + llvm::toString(value.takeError()));
  if constexpr (std::is_reference_v<T>)
    return *value;
  else
    return std::move(*value);
}

// Runs fn(); returns LLVM's message if LLVM reported a fatal error on this thread meanwhile, else
// nullopt (C++ exceptions from fn propagate). LLVM's default would print the message and abort
// the whole process. The frames between fn and the error are abandoned without running their
// destructors, so the caller must treat every LLVM object fn touched as lost (never use or free
// it). Needs this plugin's handler to be the one installed in libLLVM (one copy of the plugin per
// process; nothing else in the process installs its own).
std::optional<std::string> run_catching_fatal_errors(llvm::function_ref<void()> fn);

} // namespace tg::cpu
