// Checks the host applies to a plugin before running any of its code, shared by the host
// (Plugin::load, PluginRegistry) and `tg conform`, so both accept and refuse the same plugins.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace tg {

// Throws PluginFileError unless `path` is a regular file holding a whole ELF shared object for
// this process (class, byte order, machine): the ELF header, the program headers, every segment's
// file bytes and the section header table must lie inside the file. glibc's dlopen maps segments
// without comparing them with the file's size, and reading a mapped page past the end of the file
// is SIGBUS: a truncated plugin would kill the process during the scan.
void check_plugin_file(const std::filesystem::path& path);

// Plugin names (the one a plugin reports, and the one its file name gives) become cache folders
// and device names: letters, digits and '_', 1 to kMaxValidPluginName characters.
inline constexpr size_t kMaxValidPluginName = 127; // TG_NAME_MAX - 1
bool is_valid_plugin_name(std::string_view name);
// Why `name` is not a valid plugin name ("" when it is); `what` says whose name it is.
std::string plugin_name_problem(std::string_view name, std::string_view what);

// The most devices one plugin may report; a plugin reporting more is refused.
inline constexpr int32_t kMaxDeviceCount = 1024;
// Why `count` is not an acceptable device_count answer ("" when it is: 0..kMaxDeviceCount).
std::string device_count_problem(int32_t count);

} // namespace tg
