#include "kernel/runtime/plugin_registry.hpp"
#include "tools/tg/commands.hpp"
#include "tools/tg/describe.hpp"

#include <algorithm>
#include <boost/program_options.hpp>

#include <chrono>
#include <filesystem>
#include <iostream>

namespace po = boost::program_options;

namespace tg::cli {

namespace {
const char* const kExitStatusHelp =
    "\nExit status: 0 when every plugin loaded and every device opened (hardware that is absent,\n"
    "UNAVAILABLE, is not a failure); 1 when anything failed to load or open, or a plugin did not\n"
    "answer within --timeout (the listing is still printed in full); 2 for a usage error.\n";
} // namespace

namespace {
// "also found: PATH (origin; shadowed by WINNER)" for each later plugin of the winner's name.
void describe_shadowed(std::ostream& os, const std::vector<PluginEntry>& entries, const PluginEntry& winner) {
  for (const auto& e : entries)
    if (e.name == winner.name && e.shadowed_by == winner.path)
      os << "  also found: " << e.path.string() << " (" << origin_name(e.origin) << "; shadowed by "
         << winner.path.string() << ")\n";
}
} // namespace

#ifdef __APPLE__
constexpr bool kBuildsMetal = true;
#else
constexpr bool kBuildsMetal = false;
#endif

namespace {
// --timeout: how long one plugin may take to answer the device queries.
std::chrono::milliseconds answer_deadline(double seconds) {
  if (!(seconds > 0 && seconds <= 3600)) throw po::error("--timeout must be in (0, 3600] seconds");
  return std::chrono::milliseconds(std::max<long long>(1, static_cast<long long>(seconds * 1000)));
}
const char* const kTimeoutHelp = "seconds one plugin may take to report its devices; past it the plugin "
                                 "is reported HUNG and skipped";
} // namespace

int cmd_devices(const std::vector<std::string>& args) {
  po::options_description opts(
      "tg devices: list every plugin found, where it was found, and its devices, one line each\n"
      "(--verbose: every property), and the plugins that failed to load with the reason.\nOptions");
  double timeout = 10;
  opts.add_options()("help,h", "show this help")("verbose,v", "every property and attribute of every device")(
      "timeout", po::value<double>(&timeout)->default_value(10), kTimeoutHelp);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << opts
              << "\nSearch order (the first plugin of a name wins; later ones are listed as shadowed):\n"
                 "  1. TG_PLUGIN_PATH (colon-separated directories or plugin files)\n"
                 "  2. the user plugin dir: $XDG_DATA_HOME/tinygrad.cpp/plugins (default\n"
                 "     ~/.local/share/tinygrad.cpp/plugins)\n"
                 "  3. the installed plugin dir: <dir of libtg>/tinygrad.cpp/plugins\n"
              << kExitStatusHelp;
    return 0;
  }
  const bool verbose = vm.count("verbose") > 0;
  const auto deadline = answer_deadline(timeout);
  std::cout << "search path:\n";
  for (const auto& dir : plugin_search_path()) {
    std::error_code ec;
    std::cout << "  " << origin_name(dir.origin) << ": " << dir.path.string()
              << (std::filesystem::exists(dir.path, ec) ? "" : " (absent)") << "\n";
  }
  auto entries = PluginRegistry::instance().entries();
  if (entries.empty()) std::cout << "no plugins found (files named libtg_device_<name>.so)\n";
  int failed = 0, failed_devices = 0, hung = 0;
  std::vector<DeviceRow> rows;
  if (!verbose && !entries.empty()) std::cout << "\n";
  for (const auto& entry : entries) {
    if (!entry.shadowed_by.empty()) continue; // listed under the plugin that shadows it
    if (!entry.plugin) {
      ++failed;
      std::cout << (verbose ? "\n" : "") << "plugin " << entry.name << ": FAILED TO LOAD ("
                << origin_name(entry.origin) << ")\n  " << entry.error_message << "\n";
      describe_shadowed(std::cout, entries, entry);
      continue;
    }
    const auto& p = *entry.plugin;
    std::cout << (verbose ? "\n" : "") << "plugin " << entry.name;
    if (p.name() != entry.name) std::cout << " (reports itself as " << p.name() << ")";
    std::cout << " " << p.version() << " (ABI v" << p.api().abi_major << "." << p.api().abi_minor << ") at "
              << entry.path.string() << " (" << origin_name(entry.origin) << ")\n";
    describe_shadowed(std::cout, entries, entry);
    PluginReport report = query_plugin_devices(entry.plugin, deadline);
    if (report.state == PluginReport::State::hung)
      ++hung;
    else
      failed_devices += report.failures();
    if (verbose) describe_plugin_devices(std::cout, report, "  ");
    for (auto& row : device_rows(entry.name, report)) rows.push_back(std::move(row));
  }
  // Metal is built only on Apple platforms (docs/metal.md); say so instead of silently omitting it.
  bool has_metal =
      std::any_of(entries.begin(), entries.end(), [](const auto& e) { return e.name == "metal"; });
  if (!has_metal && !kBuildsMetal)
    std::cout
        << (verbose ? "\n" : "")
        << "plugin metal: UNAVAILABLE: not built on this platform (needs Apple's Metal framework, macOS "
           "only; docs/metal.md)\n";
  if (!verbose && !rows.empty()) {
    std::cout << "\n";
    print_device_table(std::cout, rows, "");
  }
  if (failed || failed_devices || hung) std::cout << "\n";
  if (failed) std::cout << failed << " plugin(s) failed to load\n";
  if (failed_devices) std::cout << failed_devices << " device(s) failed to open\n";
  if (hung) std::cout << hung << " plugin(s) hung (no answer within " << timeout << " s)\n";
  return failed || failed_devices || hung ? 1 : 0;
}

int cmd_info(const std::vector<std::string>& args) {
  po::options_description opts("tg info <path-or-name>: one plugin's ABI version, build info and device\n"
                               "properties, or its exact load error.\nOptions");
  double timeout = 10;
  opts.add_options()("help,h", "show this help")("plugin", po::value<std::string>(), "plugin file or name")(
      "timeout", po::value<double>(&timeout)->default_value(10), kTimeoutHelp);
  po::positional_options_description pos;
  pos.add("plugin", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).positional(pos).run(), vm);
  po::notify(vm);
  if (vm.count("help") || !vm.count("plugin")) {
    std::cout << opts << "\nA name (e.g. cpu) is looked up on the search path; a path is loaded as is.\n"
              << kExitStatusHelp;
    return vm.count("help") ? 0 : 2;
  }
  const auto deadline = answer_deadline(timeout);
  std::string what = vm["plugin"].as<std::string>();
  std::shared_ptr<Plugin> plugin;
  try {
    bool is_path = what.find('/') != std::string::npos || what.ends_with(".so");
    plugin = is_path ? Plugin::load(what) : PluginRegistry::instance().get(what);
  } catch (const std::exception& e) {
    std::cout << "cannot load plugin: " << e.what() << "\n";
    return 1;
  }
  const auto& api = plugin->api();
  std::cout << "plugin:      " << plugin->name() << "\n"
            << "path:        " << plugin->path().string() << "\n"
            << "version:     " << plugin->version() << "\n"
            << "ABI:         v" << api.abi_major << "." << api.abi_minor << " (host v" << TG_ABI_VERSION_MAJOR
            << "." << TG_ABI_VERSION_MINOR << ", table " << api.struct_size << " bytes)\n"
            << "build:       " << plugin->build_info() << "\n"
            << "launch_batch: "
            << (plugin->has(&tg_plugin_api::launch_batch) ? "yes" : "no (one launch per kernel)") << "\n";
  // The device queries first: a plugin that hangs there is not called again (cache_key).
  PluginReport report = query_plugin_devices(plugin, deadline);
  if (report.state != PluginReport::State::hung) {
    try {
      std::cout << "cache key:   " << plugin->cache_key() << "\n";
    } catch (const std::exception& e) {
      std::cout << "cache key:   (" << e.what() << ")\n";
    }
  }
  describe_plugin_devices(std::cout, report, "");
  return report.failures() ? 1 : 0;
}

} // namespace tg::cli
