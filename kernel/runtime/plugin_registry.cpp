#include "kernel/runtime/plugin_registry.hpp"

#include <boost/dll/runtime_symbol_info.hpp>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>

namespace tg {

namespace fs = std::filesystem;

namespace {
// A function defined in libtg itself: its address tells dladdr which file libtg was loaded from.
void core_library_anchor() {}
} // namespace

std::string plugin_name_from_path(const fs::path& path) {
  const std::string prefix = "libtg_device_", suffix = ".so";
  std::string file = path.filename().string();
  if (file.size() <= prefix.size() + suffix.size()) return {};
  if (file.compare(0, prefix.size(), prefix) != 0) return {};
  if (file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0) return {};
  return file.substr(prefix.size(), file.size() - prefix.size() - suffix.size());
}

std::vector<fs::path> plugin_search_path() {
  std::vector<fs::path> out;
  if (const char* env = std::getenv("TG_PLUGIN_PATH")) {
    std::stringstream ss(env);
    std::string item;
    while (std::getline(ss, item, ':'))
      if (!item.empty()) out.emplace_back(item);
  }
  // The directory of libtg.so itself: where an install puts the bundled plugins.
  std::error_code ec;
  fs::path self = boost::dll::symbol_location_ptr(reinterpret_cast<const void*>(&core_library_anchor), ec);
  if (!ec && !self.empty()) out.push_back(fs::weakly_canonical(self, ec).parent_path());
  return out;
}

std::vector<PluginEntry> discover_plugins(const std::vector<fs::path>& search) {
  std::vector<fs::path> files;
  for (const auto& item : search) {
    std::error_code ec;
    if (fs::is_directory(item, ec)) {
      std::vector<fs::path> found;
      for (const auto& entry : fs::directory_iterator(item, ec))
        if (!plugin_name_from_path(entry.path()).empty()) found.push_back(entry.path());
      std::sort(found.begin(), found.end()); // deterministic order within a directory
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(item); // a named file: load it (or report it missing)
    }
  }

  std::vector<PluginEntry> entries;
  std::set<fs::path> seen_files;
  for (const auto& file : files) {
    std::error_code ec;
    fs::path canonical = fs::weakly_canonical(file, ec);
    if (ec) canonical = file;
    if (!seen_files.insert(canonical).second) continue; // same file reached twice

    PluginEntry entry;
    entry.path = file;
    entry.name = plugin_name_from_path(file);
    if (entry.name.empty()) entry.name = file.stem().string();
    auto earlier = std::find_if(entries.begin(), entries.end(), [&](const PluginEntry& e) {
      return e.name == entry.name && e.shadowed_by.empty();
    });
    if (earlier != entries.end()) {
      entry.shadowed_by = earlier->path;
      entries.push_back(std::move(entry));
      continue;
    }
    try {
      entry.plugin = Plugin::load(file);
    } catch (const std::exception& e) {
      entry.error = std::current_exception();
      entry.error_message = e.what();
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

PluginRegistry& PluginRegistry::instance() {
  static PluginRegistry registry;
  return registry;
}

void PluginRegistry::ensure_scanned_locked() {
  if (scanned_) return;
  entries_ = discover_plugins(plugin_search_path());
  scanned_ = true;
}

std::vector<PluginEntry> PluginRegistry::entries() {
  std::lock_guard lock(mutex_);
  ensure_scanned_locked();
  return entries_;
}

std::shared_ptr<Plugin> PluginRegistry::get(const std::string& name) {
  std::lock_guard lock(mutex_);
  ensure_scanned_locked();
  for (const auto& entry : entries_) {
    if (entry.name != name || !entry.shadowed_by.empty()) continue;
    if (entry.error) std::rethrow_exception(entry.error);
    return entry.plugin;
  }
  std::string message = "no plugin named '" + name + "' (looked for libtg_device_" + name + ".so in:";
  for (const auto& dir : plugin_search_path()) message += " " + dir.string();
  message += "; found:";
  if (entries_.empty()) message += " none";
  for (const auto& entry : entries_) message += " " + entry.name;
  throw UnknownPluginError(message + "). Set TG_PLUGIN_PATH to the plugin's directory.");
}

void PluginRegistry::rescan() {
  std::lock_guard lock(mutex_);
  scanned_ = false;
  entries_.clear();
  ensure_scanned_locked();
}

} // namespace tg
