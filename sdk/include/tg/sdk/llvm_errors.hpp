// Converts llvm::Error / llvm::Expected into PluginError, consuming every error, and
// survives LLVM's fatal errors (report_fatal_error, e.g. "Cannot select") inside a compile.
#pragma once

#include <tg/sdk/plugin.hpp>

#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/Support/Error.h>

#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace tg::sdk {

inline void check(llvm::Error error, const std::string& what, tg_error_code code = TG_ERROR_INTERNAL) {
  if (error) throw PluginError(code, what + ": " + llvm::toString(std::move(error)));
}

template <class T>
T unwrap(llvm::Expected<T> value, const std::string& what, tg_error_code code = TG_ERROR_INTERNAL) {
  if (!value) throw PluginError(code, what + ": " + llvm::toString(value.takeError()));
  if constexpr (std::is_reference_v<T>)
    return *value;
  else
    return std::move(*value);
}

// Runs fn(); returns LLVM's message if LLVM reported a fatal error on this thread meanwhile, else
// nullopt (C++ exceptions from fn propagate). LLVM's default would print the message and abort
// the whole process. The frames between fn and the error are abandoned without running their
// destructors, so the caller must treat every LLVM object fn touched as lost (never use or free
// it). The handler is installed in libLLVM while a call runs (LLVM has one slot per process): two
// plugins that compile at the same moment (cpu and amd, each with its own copy of this code)
// can take it from each other, and the loser's fatal error aborts as it would without it.
std::optional<std::string> run_catching_fatal_errors(llvm::function_ref<void()> fn);

// Keeps what LLVM was working on when a fatal error abandoned it (context, module, target
// machine, ...) reachable for the life of the process, so leak checkers stay quiet: freeing
// objects whose destructors were skipped mid-operation is not safe. A few hundred KB per failure.
void abandon_after_fatal_error(std::shared_ptr<void> state);

} // namespace tg::sdk
