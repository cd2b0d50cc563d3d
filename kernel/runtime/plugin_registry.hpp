// Finds and loads device plugins. Search order (the first plugin of a name wins; later ones are
// kept as shadowed, with their paths):
//   1. each entry of TG_PLUGIN_PATH (colon-separated directories or plugin files),
//   2. the per-user directory: $XDG_DATA_HOME/tinygrad.cpp/plugins (default ~/.local/share/...),
//      so a user's plugin overrides the installed one of the same name,
//   3. the installed plugin directory beside libtg: <dir of libtg.so>/tinygrad.cpp/plugins.
// Files are named libtg_device_<name>.so. tg::load_plugin (plugin_lifetime.hpp) adds plugins
// while the program runs.
#pragma once

#include "kernel/runtime/plugin.hpp"

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tg {

// Why a plugin (or a search directory) is where it is.
enum class PluginOrigin {
  env,       // TG_PLUGIN_PATH
  user,      // the per-user plugin directory
  installed, // beside libtg
  loaded,    // tg::load_plugin(path) while the program runs
};
// "TG_PLUGIN_PATH", "user plugin dir", "installed plugin dir", "load_plugin"
const char* origin_name(PluginOrigin origin);

struct SearchDir {
  std::filesystem::path path; // a directory, or a plugin file named in TG_PLUGIN_PATH
  PluginOrigin origin;
};

struct PluginEntry {
  std::string name; // from the file name: libtg_device_<name>.so
  std::filesystem::path path;
  PluginOrigin origin = PluginOrigin::env;
  bool load_attempted = false;       // load_entry ran (shadowed entries are never loaded)
  std::shared_ptr<Plugin> plugin;    // set when loading succeeded
  std::exception_ptr error;          // set when it failed (a PluginLoadError subclass)
  std::string error_message;         // error's what()
  std::filesystem::path shadowed_by; // non-empty: an earlier plugin of this name was used instead
};

// "cpu" for ".../libtg_device_cpu.so"; empty if the file name does not follow the pattern.
std::string plugin_name_from_path(const std::filesystem::path& path);

// $XDG_DATA_HOME/tinygrad.cpp/plugins, else $HOME/.local/share/tinygrad.cpp/plugins; empty when
// neither variable is set.
std::filesystem::path user_plugin_dir();
// <directory of the loaded libtg.so>/tinygrad.cpp/plugins (found with dladdr).
std::filesystem::path installed_plugin_dir();

// The directories and files searched, in order.
std::vector<SearchDir> plugin_search_path();

// The plugin files on `search` (files are taken as they are; directories are scanned), named and
// marked shadowed, none loaded yet.
std::vector<PluginEntry> find_plugins(const std::vector<SearchDir>& search);
// Loads entry's file once (unless it is shadowed), keeping the plugin or the load error on it. A
// name from the file name that is not a valid plugin name (is_valid_plugin_name) is a load error.
void load_entry(PluginEntry& entry);
// find_plugins, then load_entry on every entry.
std::vector<PluginEntry> discover_plugins(const std::vector<SearchDir>& search);

// The process-wide registry: discovery runs once, on first use, and opens no plugin; a plugin is
// loaded when it is asked for by name (get) or when all are listed (entries). Thread-safe.
class PluginRegistry {
public:
  static PluginRegistry& instance();

  // Every entry, each active one loaded (a listing: `tg devices`).
  std::vector<PluginEntry> entries();
  // The loaded plugin named `name`; rethrows its load error, or UnknownPluginError listing what
  // was searched and found.
  std::shared_ptr<Plugin> get(const std::string& name);
  // Loads the file at `path` and registers it (origin `loaded`) under the name from its file
  // name (else the name it reports). Throws its load error, or PluginNameClashError naming both
  // paths when a plugin of that name is already registered. Returns the name.
  std::string add(const std::filesystem::path& path);
  // Drops the registry's entries named `name` (the plugin itself lives on while handles use it).
  // Returns false when there was none.
  bool remove(const std::string& name);
  // Forgets everything (plugins added with add() too) and discovers again (e.g. after
  // TG_PLUGIN_PATH changed).
  void rescan();

private:
  void ensure_scanned_locked();
  std::mutex mutex_;
  bool scanned_ = false;
  std::vector<PluginEntry> entries_;
};

} // namespace tg
