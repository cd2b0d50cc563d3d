// Finds and loads device plugins. Search order: each entry of TG_PLUGIN_PATH (colon-separated
// directories or plugin files), then the directory holding libtg itself. Files are named
// libtg_device_<name>.so; the first plugin of a name wins and later ones are reported as shadowed.
#pragma once

#include "kernel/runtime/plugin.hpp"

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tg {

struct PluginEntry {
  std::string name; // from the file name: libtg_device_<name>.so
  std::filesystem::path path;
  std::shared_ptr<Plugin> plugin;    // set when loading succeeded
  std::exception_ptr error;          // set when it failed (a PluginLoadError subclass)
  std::string error_message;         // error's what()
  std::filesystem::path shadowed_by; // non-empty: an earlier plugin of this name was used instead
};

// "cpu" for ".../libtg_device_cpu.so"; empty if the file name does not follow the pattern.
std::string plugin_name_from_path(const std::filesystem::path& path);

// The directories and files searched, in order.
std::vector<std::filesystem::path> plugin_search_path();

// Loads every plugin file found on `search` (files are taken as they are; directories are scanned).
std::vector<PluginEntry> discover_plugins(const std::vector<std::filesystem::path>& search);

// The process-wide registry: discovery runs once, on first use; thread-safe.
class PluginRegistry {
public:
  static PluginRegistry& instance();

  std::vector<PluginEntry> entries();
  // The loaded plugin named `name`; rethrows its load error, or UnknownPluginError listing what
  // was searched and found.
  std::shared_ptr<Plugin> get(const std::string& name);
  // Forgets everything and discovers again (e.g. after TG_PLUGIN_PATH changed).
  void rescan();

private:
  void ensure_scanned_locked();
  std::mutex mutex_;
  bool scanned_ = false;
  std::vector<PluginEntry> entries_;
};

} // namespace tg
