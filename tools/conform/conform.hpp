// `tg conform`: one suite that runs against any plugin. The file gets the host's checks
// (check_plugin_file), a child dlopens it first (initializers that crash or hang make every case
// CRASH or FAIL instead of killing the run), then the parent dlopens it; a child probes the device
// (count, properties; the host's name and count rules apply) and every case runs in its own
// fork()ed child that opens the device itself, so no device state crosses a fork and a crash or
// hang in the plugin is reported as that case's result while the run goes on.
#pragma once

#include <chrono>
#include <optional>
#include <ostream>
#include <string>

namespace tg::conform {

struct Options {
  std::string plugin;                // a registry name ("cpu") or a path to a .so
  int32_t device = 0;                // which device the device cases open
  std::string filter;                // run only cases whose name matches (glob with '*', else substring)
  bool list = false;                 // print the case names and run nothing
  std::optional<std::string> json;   // write JSON here ("-" = stdout; the lines go to stderr then)
  std::optional<std::string> junit;  // write JUnit XML here
  std::chrono::seconds timeout{120}; // per case; a case past it is killed and fails
};

// Runs the suite; returns the exit status: 0 when no case failed or crashed, 1 otherwise,
// 2 when the plugin cannot be found or loaded at all or the options are wrong.
int run_conform(const Options& options, std::ostream& out, std::ostream& err);

} // namespace tg::conform
