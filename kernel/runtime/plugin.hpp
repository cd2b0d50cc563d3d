// A loaded device plugin: the shared library, its ABI function table, and checked calls into it.
#pragma once

#include "kernel/runtime/errors.hpp"

#include <tg/abi.h>

#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tg {

// The host's description of itself, handed to every plugin's query function.
const tg_host_info& host_info();

// The host never trusts a plugin's string to end: it reads at most this many bytes from each
// `const char*` the plugin hands over (longer text is cut), and forces the last byte of every
// char array in tg_device_properties to NUL. docs/abi.md section 3 lists the same numbers.
inline constexpr size_t kMaxPluginNameLength = TG_NAME_MAX - 1;      // plugin_name, plugin_version
inline constexpr size_t kMaxPluginTextLength = 4095;                 // build_info, error messages, attributes
inline constexpr size_t kMaxPluginLogLength = (size_t(1) << 20) - 1; // error/compile logs, rendered source
inline constexpr size_t kInitialCacheKeyBuffer = 256;                // compile_cache_key's first buffer size

// The plugin's string s, read up to max_length bytes; "" for NULL.
std::string plugin_string(const char* s, size_t max_length);

// Kernel binary produced by a plugin's compiler.
struct CompiledKernel {
  std::vector<std::byte> binary;
  std::string source; // rendered source when requested, else empty
  std::string log;
};

class Plugin {
public:
  // Checks the file (check_plugin_file), loads it with RTLD_NOW|RTLD_LOCAL, finds the entry
  // symbol and checks the table, the plugin's name included (is_valid_plugin_name).
  // Throws PluginNotFoundError, PluginOpenError (PluginFileError for a bad file), NotAPluginError,
  // AbiVersionMismatchError, PluginRefusedError or InvalidPluginError; each message names the path
  // and the cause.
  static std::shared_ptr<Plugin> load(const std::filesystem::path& path);

  ~Plugin();
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  const tg_plugin_api& api() const { return *api_; }
  const std::filesystem::path& path() const { return path_; }
  // The table's strings, copied once at load and bounded (see kMaxPluginNameLength).
  const std::string& name() const { return name_; }
  const std::string& version() const { return version_; }
  const std::string& build_info() const { return build_info_; }

  // True when the table holds `member` within its struct_size and it is not NULL.
  template <class F> bool has(F tg_plugin_api::*member) const {
    auto offset =
        size_t(reinterpret_cast<const char*>(&(api_->*member)) - reinterpret_cast<const char*>(api_));
    return offset + sizeof(F) <= api_->struct_size && api_->*member != nullptr;
  }
  // The function, or UnimplementedError naming it when absent.
  template <class F> F fn(F tg_plugin_api::*member, std::string_view function_name) const {
    if (!has(member)) throw_absent(function_name);
    return api_->*member;
  }

  // Consumes err: returns if NULL, else throws the matching DeviceError with "<plugin>.<call>: ...".
  void check(tg_error* err, std::string_view call) const;

  // Number of devices. UNAVAILABLE (no hardware) throws DeviceUnavailableError; a count outside
  // 0..kMaxDeviceCount (plugin_file.hpp) throws PluginContractError.
  int device_count() const;

  // Compiles serialized kernel IR; needs no device. Thread-safe.
  CompiledKernel compile(std::span<const std::byte> ir, uint32_t flags = 0, const char* target = nullptr,
                         uint32_t opt_level = 2) const;
  // compile_cache_key with the grow-and-retry protocol: kInitialCacheKeyBuffer bytes first, then
  // once more with the length the plugin reported.
  std::string cache_key(const char* target = nullptr) const;

private:
  struct Library; // the Boost.DLL handle, kept out of this header
  Plugin(std::filesystem::path path, std::unique_ptr<Library> library, const tg_plugin_api* api);
  [[noreturn]] void throw_absent(std::string_view function_name) const;

  std::filesystem::path path_;
  std::unique_ptr<Library> library_;
  const tg_plugin_api* api_;
  std::string name_, version_, build_info_;
};

} // namespace tg
