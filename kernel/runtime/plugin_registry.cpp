#include "kernel/runtime/plugin_registry.hpp"

#include "kernel/runtime/plugin_file.hpp"

#include <boost/dll/runtime_symbol_info.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <sstream>

namespace tg {

namespace fs = std::filesystem;

namespace {
// A function defined in libtg itself: its address tells dladdr which file libtg was loaded from.
void core_library_anchor() {}

const char* const kPluginSubdir = "tinygrad.cpp/plugins"; // under libtg's dir and the XDG data dir

bool is_active(const PluginEntry& e) { return e.shadowed_by.empty(); }
} // namespace

const char* origin_name(PluginOrigin origin) {
  switch (origin) {
  case PluginOrigin::env:
    return "TG_PLUGIN_PATH";
  case PluginOrigin::user:
    return "user plugin dir";
  case PluginOrigin::installed:
    return "installed plugin dir";
  case PluginOrigin::loaded:
    return "load_plugin";
  }
  return "?";
}

std::string plugin_name_from_path(const fs::path& path) {
  const std::string prefix = "libtg_device_", suffix = ".so";
  std::string file = path.filename().string();
  if (file.size() <= prefix.size() + suffix.size()) return {};
  if (file.compare(0, prefix.size(), prefix) != 0) return {};
  if (file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0) return {};
  return file.substr(prefix.size(), file.size() - prefix.size() - suffix.size());
}

fs::path user_plugin_dir() {
  // XDG base directories: an empty or relative XDG_DATA_HOME is ignored.
  const char* xdg = std::getenv("XDG_DATA_HOME");
  if (xdg && *xdg == '/') return fs::path(xdg) / kPluginSubdir;
  const char* home = std::getenv("HOME");
  if (home && *home) return fs::path(home) / ".local/share" / kPluginSubdir;
  return {};
}

fs::path installed_plugin_dir() {
  std::error_code ec;
  fs::path self = boost::dll::symbol_location_ptr(reinterpret_cast<const void*>(&core_library_anchor), ec);
  if (ec || self.empty()) return {};
  return fs::weakly_canonical(self, ec).parent_path() / kPluginSubdir;
}

std::vector<SearchDir> plugin_search_path() {
  std::vector<SearchDir> out;
  if (const char* env = std::getenv("TG_PLUGIN_PATH")) {
    std::stringstream ss(env);
    std::string item;
    while (std::getline(ss, item, ':'))
      if (!item.empty()) out.push_back({item, PluginOrigin::env});
  }
  if (fs::path user = user_plugin_dir(); !user.empty()) out.push_back({user, PluginOrigin::user});
  if (fs::path installed = installed_plugin_dir(); !installed.empty())
    out.push_back({installed, PluginOrigin::installed});
  return out;
}

std::vector<PluginEntry> find_plugins(const std::vector<SearchDir>& search) {
  std::vector<std::pair<fs::path, PluginOrigin>> files;
  for (const auto& item : search) {
    std::error_code ec;
    if (fs::is_directory(item.path, ec)) {
      std::vector<fs::path> found;
      for (const auto& entry : fs::directory_iterator(item.path, ec))
        if (!plugin_name_from_path(entry.path()).empty()) found.push_back(entry.path());
      std::sort(found.begin(), found.end()); // deterministic order within a directory
      for (auto& f : found) files.emplace_back(std::move(f), item.origin);
    } else if (item.origin == PluginOrigin::env) {
      files.emplace_back(item.path, item.origin); // a named file: load it (or report it missing)
    } // a user or installed directory that does not exist is simply empty
  }

  std::vector<PluginEntry> entries;
  std::set<fs::path> seen_files;
  for (const auto& [file, origin] : files) {
    std::error_code ec;
    fs::path canonical = fs::weakly_canonical(file, ec);
    if (ec) canonical = file;
    if (!seen_files.insert(canonical).second) continue; // same file reached twice

    PluginEntry entry;
    entry.path = file;
    entry.origin = origin;
    entry.name = plugin_name_from_path(file);
    if (entry.name.empty()) entry.name = file.stem().string();
    auto earlier = std::find_if(entries.begin(), entries.end(),
                                [&](const PluginEntry& e) { return e.name == entry.name && is_active(e); });
    if (earlier != entries.end()) entry.shadowed_by = earlier->path;
    entries.push_back(std::move(entry));
  }
  return entries;
}

void load_entry(PluginEntry& entry) {
  if (entry.load_attempted || !is_active(entry)) return;
  entry.load_attempted = true;
  try {
    // The registry's name becomes device names ("NAME:1"): it follows the plugin name rules too.
    if (std::string problem = plugin_name_problem(entry.name, "the name from the file name");
        !problem.empty())
      throw InvalidPluginError(entry.path, problem);
    entry.plugin = Plugin::load(entry.path);
  } catch (const std::exception& e) {
    entry.error = std::current_exception();
    entry.error_message = e.what();
  }
}

std::vector<PluginEntry> discover_plugins(const std::vector<SearchDir>& search) {
  std::vector<PluginEntry> entries = find_plugins(search);
  for (auto& entry : entries) load_entry(entry);
  return entries;
}

PluginRegistry& PluginRegistry::instance() {
  static PluginRegistry& registry = *new PluginRegistry; // never destroyed: see open_devices()
  return registry;
}

void PluginRegistry::ensure_scanned_locked() {
  if (scanned_) return;
  entries_ = find_plugins(plugin_search_path()); // loaded on first use: get() or entries()
  scanned_ = true;
}

std::vector<PluginEntry> PluginRegistry::entries() {
  std::lock_guard lock(mutex_);
  ensure_scanned_locked();
  for (auto& entry : entries_) load_entry(entry);
  return entries_;
}

std::shared_ptr<Plugin> PluginRegistry::get(const std::string& name) {
  std::lock_guard lock(mutex_);
  ensure_scanned_locked();
  for (auto& entry : entries_) {
    if (entry.name != name || !is_active(entry)) continue;
    load_entry(entry); // only the plugin asked for is opened
    if (entry.error) std::rethrow_exception(entry.error);
    return entry.plugin;
  }
  std::string message = "no plugin named '" + name + "' (looked for libtg_device_" + name + ".so in:";
  for (const auto& dir : plugin_search_path()) message += " " + dir.path.string();
  message += "; found:";
  if (entries_.empty()) message += " none";
  for (const auto& entry : entries_) message += " " + entry.name;
  throw UnknownPluginError(message + "). Set TG_PLUGIN_PATH to the plugin's directory, or call "
                                     "tg::load_plugin(path).");
}

std::string PluginRegistry::add(const fs::path& path) {
  // Loaded outside the lock: a plugin's query function may be slow, and a failure changes nothing.
  std::shared_ptr<Plugin> plugin = Plugin::load(path);
  PluginEntry entry;
  entry.path = path;
  entry.origin = PluginOrigin::loaded;
  entry.name = plugin_name_from_path(path);
  if (entry.name.empty()) {
    entry.name = plugin->name();
    std::transform(entry.name.begin(), entry.name.end(), entry.name.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
  }
  if (std::string problem = plugin_name_problem(entry.name, "the name from the file name"); !problem.empty())
    throw InvalidPluginError(path, problem);
  entry.plugin = std::move(plugin);
  entry.load_attempted = true;

  std::lock_guard lock(mutex_);
  ensure_scanned_locked();
  auto clash = std::find_if(entries_.begin(), entries_.end(),
                            [&](const PluginEntry& e) { return e.name == entry.name && is_active(e); });
  if (clash != entries_.end())
    throw PluginNameClashError("cannot load plugin '" + entry.name + "' from " + path.string() +
                               ": a plugin of that name is already registered from " + clash->path.string() +
                               " (" + origin_name(clash->origin) +
                               "); unload it first (tg::unload_plugin) or rename the file");
  std::string name = entry.name;
  entries_.push_back(std::move(entry));
  return name;
}

bool PluginRegistry::remove(const std::string& name) {
  std::lock_guard lock(mutex_);
  ensure_scanned_locked();
  auto end =
      std::remove_if(entries_.begin(), entries_.end(), [&](const PluginEntry& e) { return e.name == name; });
  bool removed = end != entries_.end();
  entries_.erase(end, entries_.end());
  return removed;
}

void PluginRegistry::rescan() {
  std::lock_guard lock(mutex_);
  scanned_ = false;
  entries_.clear();
  ensure_scanned_locked();
}

} // namespace tg
