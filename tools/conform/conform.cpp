#include "tools/conform/conform.hpp"

#include "tools/conform/cases.hpp"
#include "tools/conform/child_process.hpp"
#include "tools/conform/report.hpp"

#include "kernel/runtime/plugin_file.hpp"
#include "kernel/runtime/plugin_registry.hpp"

#include <tg/sdk/matrix_unit.hpp>

#include <fnmatch.h>

#include <cstring>
#include <fstream>

namespace tg::conform {
namespace {

namespace fs = std::filesystem;

// A name through the host's search path (without loading the other plugins), or a path.
fs::path resolve(const std::string& plugin) {
  if (plugin.find('/') != std::string::npos || plugin.ends_with(".so")) return plugin;
  const std::string file = "libtg_device_" + plugin + ".so";
  std::string searched;
  for (const tg::SearchDir& dir : tg::plugin_search_path()) {
    const fs::path& entry = dir.path;
    std::error_code ec;
    searched += (searched.empty() ? "" : ", ") + entry.string();
    if (fs::is_directory(entry, ec)) {
      if (fs::exists(entry / file, ec)) return entry / file;
    } else if (tg::plugin_name_from_path(entry) == plugin && fs::exists(entry, ec)) {
      return entry;
    }
  }
  throw std::runtime_error("no plugin named '" + plugin + "' (looked for " + file + " in: " + searched +
                           "); give a path to the .so or set TG_PLUGIN_PATH");
}

bool selected(const std::string& name, const std::string& filter) {
  if (filter.empty()) return true;
  if (filter.find_first_of("*?[") != std::string::npos) return fnmatch(filter.c_str(), name.c_str(), 0) == 0;
  return name.find(filter) != std::string::npos;
}

// In a child: the table for this process, or a failure when the plugin refuses a good host.
void use_table(const RawPlugin& plugin) {
  if (plugin.query == nullptr) throw CaseFailed("the plugin exports no " TG_PLUGIN_QUERY_SYMBOL);
  tg_host_info host = host_info();
  const tg_plugin_api* table = plugin.query(&host);
  if (table == nullptr) throw CaseFailed("the plugin refused a well-formed host (query returned NULL)");
  set_api(table);
}

// What the probe child learns: the table's name, the device count, the device's properties and
// the names of its matrix units (one case each).
struct Probe {
  char status = 'O'; // 'O' ok, 'U' unavailable, 'E' error
  std::string message;
  std::string plugin_name;
  int32_t count = 0;
  tg_device_properties properties{};
  std::vector<std::string> unit_names;
};

std::string encode(const Probe& p) {
  std::string s(1, p.status);
  s.append(reinterpret_cast<const char*>(&p.count), sizeof p.count);
  s.append(reinterpret_cast<const char*>(&p.properties), sizeof p.properties);
  std::string units; // each name after its one-byte length (names fit in 31 bytes)
  for (const std::string& name : p.unit_names) units += char(name.size()) + name;
  for (uint32_t n : {uint32_t(p.plugin_name.size()), uint32_t(units.size())})
    s.append(reinterpret_cast<const char*>(&n), sizeof n);
  return s + p.plugin_name + units + p.message;
}

Probe decode(const std::string& s) {
  Probe p;
  const size_t head = 1 + sizeof p.count + sizeof p.properties + 2 * sizeof(uint32_t);
  if (s.size() < head)
    throw std::runtime_error("the device probe answered " + std::to_string(s.size()) + " bytes");
  p.status = s[0];
  std::memcpy(&p.count, s.data() + 1, sizeof p.count);
  std::memcpy(&p.properties, s.data() + 1 + sizeof p.count, sizeof p.properties);
  uint32_t n = 0, units = 0;
  std::memcpy(&n, s.data() + head - 2 * sizeof n, sizeof n);
  std::memcpy(&units, s.data() + head - sizeof n, sizeof units);
  p.plugin_name = s.substr(head, n);
  const std::string names = s.substr(head + n, units);
  for (size_t at = 0; at < names.size(); at += 1 + size_t(uint8_t(names[at])))
    p.unit_names.push_back(names.substr(at + 1, size_t(uint8_t(names[at]))));
  p.message = s.substr(head + n + units);
  return p;
}

Probe probe(const RawPlugin& plugin, int32_t device, std::chrono::milliseconds timeout) {
  ChildResult r = run_in_child(
      [&] {
        Probe p;
        use_table(plugin);
        p.plugin_name = std::string(api().plugin_name ? api().plugin_name : "", 0,
                                    api().plugin_name ? strnlen(api().plugin_name, TG_NAME_MAX - 1) : 0);
        // The host's own rules (plugin_file.hpp): what it refuses to use cannot pass here.
        if (std::string problem = tg::plugin_name_problem(p.plugin_name, "plugin_name"); !problem.empty()) {
          p.status = 'E';
          p.message = "the host refuses this plugin: " + problem;
          return encode(p);
        }
        Status s = take(api().device_count(&p.count));
        if (s.code == TG_ERROR_UNAVAILABLE) {
          p.status = 'U';
          p.message = s.message;
        } else if (!s.ok()) {
          p.status = 'E';
          p.message = "device_count failed: " + s.describe();
        } else if (std::string problem = tg::device_count_problem(p.count); !problem.empty()) {
          p.status = 'E';
          p.message = "the host refuses this plugin: " + problem;
        } else if (p.count == 0) {
          p.status = 'U';
          p.message = "device_count is " + std::to_string(p.count);
        } else if (device >= p.count || device < 0) {
          p.status = 'E';
          p.message = "--device " + std::to_string(device) + ": the plugin has " + std::to_string(p.count) +
                      " device(s)";
        } else {
          Device d(device);
          p.properties = d.properties();
          try { // a unit that cannot be read still gets matrix_units/well_formed, which reports it
            for (const tg_matrix_unit& u : read_matrix_units(d))
              p.unit_names.push_back(tg::sdk::matrix_unit_name(u));
          } catch (const CaseFailed&) {
            p.unit_names.clear();
          }
        }
        return encode(p);
      },
      timeout);
  if (r.kind == ChildResult::Kind::crashed)
    throw std::runtime_error("probing the device crashed (signal " + std::to_string(r.signal) + ")");
  if (r.kind == ChildResult::Kind::timed_out) throw std::runtime_error("probing the device timed out");
  if (r.kind == ChildResult::Kind::silent)
    throw std::runtime_error("the device probe exited with code " + std::to_string(r.exit_code) +
                             " without an answer");
  if (r.payload[0] == '0') throw std::runtime_error("probing the device failed: " + r.payload.substr(1));
  return decode(r.payload.substr(1));
}

// dlopen in a child first: a plugin whose initializers crash, hang or exit must not take the
// run with it. Returns what every case reports when loading broke the child; throws when dlopen
// refused the file (the plugin cannot be loaded at all).
std::optional<Result> load_in_child(const fs::path& path, std::chrono::milliseconds timeout) {
  ChildResult r = run_in_child(
      [&] {
        open_plugin(path);
        return std::string();
      },
      timeout);
  switch (r.kind) {
  case ChildResult::Kind::crashed:
    return Result{Outcome::crash, "(signal " + std::to_string(r.signal) +
                                      " while loading the plugin: its initializers crashed)"};
  case ChildResult::Kind::timed_out:
    return Result{Outcome::fail, "loading the plugin did not finish within " +
                                     std::to_string(timeout.count() / 1000) + " s"};
  case ChildResult::Kind::silent:
    return Result{Outcome::fail,
                  "loading the plugin ended its process with code " + std::to_string(r.exit_code)};
  case ChildResult::Kind::answered:
    break;
  }
  if (r.payload[0] == '0') throw std::runtime_error(r.payload.substr(1));
  return std::nullopt;
}

Result run_case(const Case& c, const Context& ctx, std::chrono::milliseconds timeout) {
  ChildResult r = run_in_child(
      [&]() -> std::string {
        try {
          if (ctx.plugin.query != nullptr) {
            tg_host_info host = host_info();
            if (const tg_plugin_api* table = ctx.plugin.query(&host)) set_api(table);
          }
          if (c.needs_device) use_table(ctx.plugin);
          c.run(ctx);
          return "P";
        } catch (const CaseSkipped& e) {
          return std::string("S") + e.what();
        } catch (const CaseFailed& e) {
          return std::string("F") + e.what();
        } catch (const std::exception& e) {
          return std::string("F") + "unexpected exception: " + e.what();
        }
      },
      timeout);
  switch (r.kind) {
  case ChildResult::Kind::crashed:
    return {Outcome::crash, "(signal " + std::to_string(r.signal) + ")"};
  case ChildResult::Kind::timed_out:
    return {Outcome::fail, "timeout after " + std::to_string(timeout.count() / 1000) + " s (killed)"};
  case ChildResult::Kind::silent:
    return {Outcome::fail, "the case's process exited with code " + std::to_string(r.exit_code) +
                               " without a result (the plugin called exit?)"};
  case ChildResult::Kind::answered:
    break;
  }
  if (r.payload[0] == '0') return {Outcome::fail, r.payload.substr(1)};
  const char kind = r.payload.size() > 1 ? r.payload[1] : 'F';
  std::string message = r.payload.size() > 2 ? r.payload.substr(2) : "";
  if (kind == 'P') return {Outcome::pass, ""};
  if (kind == 'S') return {Outcome::skip, message};
  return {Outcome::fail, message};
}

void write_to(const std::string& where, std::ostream& out, const std::function<void(std::ostream&)>& write) {
  if (where == "-") return write(out);
  std::ofstream file(where);
  if (!file) throw std::runtime_error("cannot write " + where);
  write(file);
  if (!file) throw std::runtime_error("writing " + where + " failed");
}

} // namespace

int run_conform(const Options& options, std::ostream& out, std::ostream& err) {
  const bool json_to_stdout = options.json && *options.json == "-";
  std::ostream& lines = json_to_stdout ? err : out;
  const auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(options.timeout);
  Context ctx;
  RunReport report;
  report.plugin = options.plugin;
  report.device = options.device;
  std::optional<Result> load_broke; // loading crashed, hung or exited in the child
  try {
    const fs::path path = resolve(options.plugin);
    tg::check_plugin_file(path); // the host's file checks: a truncated file would crash dlopen
    ctx.plugin.path = path;
    if (!options.list) load_broke = load_in_child(path, timeout);
    if (!options.list && !load_broke) ctx.plugin = open_plugin(path); // for the case children to inherit
  } catch (const std::exception& e) {
    err << "tg conform: " << e.what() << "\n";
    return 2;
  }
  report.plugin_path = ctx.plugin.path.string();
  ctx.device_index = options.device;

  Probe p;
  if (ctx.plugin.query != nullptr && !options.list) {
    try {
      p = probe(ctx.plugin, options.device, timeout);
    } catch (const std::exception& e) {
      p.status = 'E';
      p.message = e.what();
    }
  }
  if (p.status == 'E' && p.message.starts_with("--device")) {
    err << "tg conform: " << p.message << "\n";
    return 2;
  }
  report.plugin_name = p.plugin_name;
  ctx.device_count = p.count;
  ctx.properties = p.properties;
  report.device_name = std::string(p.properties.name, strnlen(p.properties.name, TG_NAME_MAX));
  if (p.status == 'U') report.unavailable_reason = p.message;

  std::vector<Case> cases = all_cases(ctx.properties, p.unit_names);
  if (options.list) {
    for (const auto& c : cases)
      if (selected(c.name, options.filter)) out << c.name << "\n";
    return 0;
  }
  if (load_broke)
    lines << "tg conform: " << report.plugin_path
          << ": loading the plugin in a child process failed; every case reports it\n";
  if (ctx.plugin.query != nullptr)
    lines << "tg conform: " << report.plugin_path << " (plugin " << report.plugin_name << "), device "
          << options.device << (report.device_name.empty() ? "" : ": " + report.device_name) << "\n";
  for (const auto& c : cases) {
    if (!selected(c.name, options.filter)) continue;
    CaseReport cr{c.name, {}, 0};
    const auto start = std::chrono::steady_clock::now();
    if (load_broke)
      cr.result = *load_broke;
    else if (ctx.plugin.query == nullptr && c.name != "loader/entry_symbol" &&
             c.name != "loader/exports_only_the_entry_symbol")
      cr.result = {Outcome::fail, "the plugin has no " TG_PLUGIN_QUERY_SYMBOL " entry symbol"};
    else if (c.needs_device && p.status == 'U')
      cr.result = {Outcome::unavailable, p.message};
    else if (c.needs_device && p.status == 'E')
      cr.result = {Outcome::fail, "the device could not be probed: " + p.message};
    else
      cr.result = run_case(c, ctx, timeout);
    cr.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    lines << case_line(cr) << std::endl;
    report.cases.push_back(std::move(cr));
  }
  lines << summary_line(report) << std::endl;
  try {
    if (options.json) write_to(*options.json, out, [&](std::ostream& o) { write_json(report, o); });
    if (options.junit) write_to(*options.junit, out, [&](std::ostream& o) { write_junit(report, o); });
  } catch (const std::exception& e) {
    err << "tg conform: " << e.what() << "\n";
    return 2;
  }
  return report.failed() ? 1 : 0;
}

} // namespace tg::conform
