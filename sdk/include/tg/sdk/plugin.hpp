// What a plugin author needs at the ABI edge: typed errors that become tg_error*, a guard that
// keeps C++ exceptions from crossing the C boundary, and struct_size-aware copies.
#pragma once

#include <tg/abi.h>
#include <tg/sdk/kernel_ir.hpp>

#include <algorithm>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

namespace tg::sdk {

// Throw this inside a plugin; guard() turns it into a tg_error with the same code.
class PluginError : public std::runtime_error {
public:
  PluginError(tg_error_code code, const std::string& message, std::string log = {})
      : std::runtime_error(message), code_(code), log_(std::move(log)) {}
  tg_error_code code() const { return code_; }
  const std::string& log() const { return log_; }

private:
  tg_error_code code_;
  std::string log_;
};

// Allocates an error. Never throws: if even that fails, returns a static out-of-memory error.
tg_error* make_error(tg_error_code code, const std::string& message, const std::string& log = {}) noexcept;

// Fills the four error functions of a plugin's table with the SDK's implementation.
void set_error_functions(tg_plugin_api& api) noexcept;

// Runs body(); any exception becomes a tg_error* whose message starts with `call`.
template <class Body> tg_error* guard(const char* call, Body&& body) noexcept {
  try {
    body();
    return nullptr;
  } catch (const PluginError& e) {
    return make_error(e.code(), std::string(call) + ": " + e.what(), e.log());
  } catch (const IRError& e) { // malformed kernel IR is the caller's mistake
    return make_error(TG_ERROR_INVALID_ARGUMENT, std::string(call) + ": " + e.what());
  } catch (const std::bad_alloc&) {
    return make_error(TG_ERROR_RESOURCE_EXHAUSTED, std::string(call) + ": out of host memory");
  } catch (const std::exception& e) {
    return make_error(TG_ERROR_INTERNAL, std::string(call) + ": " + e.what());
  } catch (...) {
    return make_error(TG_ERROR_INTERNAL, std::string(call) + ": unknown exception");
  }
}

// Throws INVALID_ARGUMENT naming `what` when ptr is null.
template <class T> T* require(T* ptr, const char* what) {
  if (ptr == nullptr) throw PluginError(TG_ERROR_INVALID_ARGUMENT, std::string(what) + " is NULL");
  return ptr;
}

// Reads an argument struct written by a host of any minor version: copies what both sides know,
// zero-fills fields the caller's (older) struct lacks.
template <class T> T read_args(const T* in, const char* what) {
  require(in, what);
  if (in->struct_size < sizeof(size_t))
    throw PluginError(TG_ERROR_INVALID_ARGUMENT, std::string(what) + "->struct_size is " +
                                                     std::to_string(in->struct_size) + ", too small");
  T out{};
  std::memcpy(&out, in, std::min(in->struct_size, sizeof(T)));
  out.struct_size = sizeof(T);
  return out;
}

// Writes a result struct for a caller of any minor version: never beyond out->struct_size.
template <class T> void write_out(T* out, const T& full, const char* what) {
  require(out, what);
  if (out->struct_size < sizeof(size_t))
    throw PluginError(TG_ERROR_INVALID_ARGUMENT, std::string(what) + "->struct_size is " +
                                                     std::to_string(out->struct_size) + ", too small");
  size_t caller_size = out->struct_size;
  std::memcpy(out, &full, std::min(caller_size, sizeof(T)));
  out->struct_size = caller_size;
}

// Copies a string into a fixed char array, always NUL-terminated.
template <size_t N> void copy_name(char (&dst)[N], const std::string& src) {
  size_t n = std::min(src.size(), N - 1);
  std::memcpy(dst, src.data(), n);
  dst[n] = '\0';
}

} // namespace tg::sdk
