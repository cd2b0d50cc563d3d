// Typed exceptions of the runtime ring. Every message names what failed and where.
#pragma once

#include "kernel/ir/errors.hpp"

#include <tg/abi.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace tg {

// A plugin file could not become a usable plugin. Each subclass is one cause; path() names the file.
class PluginLoadError : public Error {
public:
  PluginLoadError(std::filesystem::path path, const std::string& message)
      : Error(path.string() + ": " + message), path_(std::move(path)) {}
  const std::filesystem::path& path() const { return path_; }

private:
  std::filesystem::path path_;
};

// The file does not exist.
class PluginNotFoundError : public PluginLoadError {
  using PluginLoadError::PluginLoadError;
};
// dlopen failed; the message carries dlerror's text (bad ELF, missing dependency, undefined symbol).
class PluginOpenError : public PluginLoadError {
  using PluginLoadError::PluginLoadError;
};
// The file is not a whole ELF shared object for this machine (checked before dlopen: glibc maps a
// truncated file's segments and dies with SIGBUS reading them). A PluginOpenError, as dlopen's own
// refusal would be.
class PluginFileError : public PluginOpenError {
  using PluginOpenError::PluginOpenError;
};
// The library loaded but exports no tinygrad.cpp entry symbol.
class NotAPluginError : public PluginLoadError {
  using PluginLoadError::PluginLoadError;
};
// The plugin speaks another ABI major version.
class AbiVersionMismatchError : public PluginLoadError {
public:
  AbiVersionMismatchError(std::filesystem::path path, const std::string& message, uint32_t plugin_major)
      : PluginLoadError(std::move(path), message), plugin_major_(plugin_major) {}
  uint32_t plugin_major() const { return plugin_major_; }

private:
  uint32_t plugin_major_;
};
// The plugin's query function returned NULL: it cannot serve this host.
class PluginRefusedError : public PluginLoadError {
  using PluginLoadError::PluginLoadError;
};
// The plugin's function table is malformed (too small, required functions missing).
class InvalidPluginError : public PluginLoadError {
  using PluginLoadError::PluginLoadError;
};
// No plugin of the requested name was found on the search path.
class UnknownPluginError : public Error {
  using Error::Error;
};
// tg::load_plugin: a plugin of that name is already registered; the message names both paths.
class PluginNameClashError : public Error {
  using Error::Error;
};

// A call through the ABI returned an error. code() is the ABI code, log() the plugin's log.
class DeviceError : public Error {
public:
  DeviceError(tg_error_code code, const std::string& message, std::string log = {})
      : Error(message), code_(code), log_(std::move(log)) {}
  tg_error_code code() const { return code_; }
  const std::string& log() const { return log_; }

private:
  tg_error_code code_;
  std::string log_;
};

class InvalidArgumentError : public DeviceError {
  using DeviceError::DeviceError;
};
class OutOfMemoryError : public DeviceError { // RESOURCE_EXHAUSTED
  using DeviceError::DeviceError;
};
class UnimplementedError : public DeviceError {
  using DeviceError::DeviceError;
};
class DeviceUnavailableError : public DeviceError {
  using DeviceError::DeviceError;
};
// The plugin answered something the ABI forbids (e.g. a negative device count, an absurd cache-key
// length). A plugin bug, so its code is INTERNAL; the message names the plugin, its file and the call.
class PluginContractError : public DeviceError {
public:
  explicit PluginContractError(const std::string& message) : DeviceError(TG_ERROR_INTERNAL, message) {}
};

// "INVALID_ARGUMENT", ...; "UNKNOWN(<n>)" for codes this host does not know.
std::string error_code_name(tg_error_code code);

// Throws the DeviceError subclass that matches code.
[[noreturn]] void throw_device_error(tg_error_code code, const std::string& message,
                                     const std::string& log = {});

} // namespace tg
