// Converts llvm::Error / llvm::Expected into tg::sdk::PluginError, consuming every error.
#pragma once

#include <tg/sdk/plugin.hpp>

#include <llvm/Support/Error.h>

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

} // namespace tg::cpu
