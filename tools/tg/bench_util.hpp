// Pieces the `tg bench` commands share: medians of timed runs, a peer script's flat JSON answer (from
// one process or several), the best of a row's peers, and a plain-text table with aligned columns.
#pragma once

#include "kernel/tensor/tensor.hpp"

#include <boost/program_options/variables_map.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace tg::cli {

using Clock = std::chrono::steady_clock;
double ms_between(Clock::time_point a, Clock::time_point b);

double median(std::vector<double> v); // NaN when empty

// Median ms of `repeat` calls of fn after `warmup` untimed ones.
double median_ms(int warmup, int repeat, const std::function<void()>& fn);

// A realized float32 tensor of uniform values in [-1, 1) from std::mt19937(seed), on `device`
// ("" = the default device).
Tensor random_tensor(Dims shape, uint32_t seed, const std::string& device = "");

// A peer script prints one flat JSON object: {"key": number | "string" | ...}.
using JsonValue = std::variant<double, std::string>;
std::optional<std::map<std::string, JsonValue>> parse_flat_json(const std::string& s);

struct Peer {
  std::map<std::string, JsonValue> values;
  std::string error; // non-empty: unavailable, and why
  std::optional<double> num(const std::string& key) const;
  std::string str(const std::string& key) const; // "?" when absent
};

// Runs `command` through the shell and reads the last stdout line that starts with '{'. Stderr
// goes to a temporary file and only its last line is kept, for the error when the script fails.
Peer run_peer_command(const std::string& command);

// A peer timed in several fresh processes. One process can land on a slow path another does not
// (its allocator's state, another program's burst of load), so every figure is kept per process
// and the compared figure is the best one: the minimum time.
struct Spread {
  double min = 0, median = 0, max = 0;
  size_t runs = 0;
  bool wide() const { return max > 2 * min; } // the processes differ by more than 2x
};
struct PeerRuns {
  Peer info;                                          // the first process's answer; error: a run failed
  std::map<std::string, std::vector<double>> samples; // each numeric key, one value per process
  // The key's min / median / max; nullopt when a process did not report it.
  std::optional<Spread> spread(const std::string& key) const;
};
// Runs `command` `runs` times, one after the other, through run_peer_command. Stops at the first
// failure: its error, with which run it was, goes to info.error.
PeerRuns run_peer_runs(const std::string& command, int runs);

// One peer's figure for a row; `best_peer` picks the row's best (lowest min time) of several.
struct PeerFigure {
  std::string peer; // "PyTorch", "numpy", "tinygrad"
  Spread spread;
};
// The min / median / max of figures measured in this process (v not empty).
Spread spread_of(std::vector<double> v);
std::optional<PeerFigure> best_peer(const std::vector<PeerFigure>& figures);
// "min / median / max" through `fmt`.
std::string spread_str(const Spread& s, const std::function<std::string(double)>& fmt);
// {"min": ..., "median": ..., "max": ..., "runs": n}
nlohmann::ordered_json spread_json(const Spread& s);
// A warning line for every figure whose processes differ by more than 2x, naming the row and peer.
void warn_wide_spreads(std::ostream& os, const std::string& row, const std::vector<PeerFigure>& figures,
                       const std::function<std::string(double)>& fmt);
// --peer-runs must be in 1..20 (each run is a whole peer process); prints why to stderr.
bool peer_runs_ok(const std::string& command, int runs);

// Runs `command` (stdout and stderr together) and reads the last line that starts with '{' as a
// JSON object; the object must hold a number under each of `required`. On failure `error` says
// why: the command's exit status and its last output line (or "no output").
struct JsonPeer {
  nlohmann::json values; // an object when error is empty
  std::string error;
};
JsonPeer run_json_peer(const std::string& command, const std::vector<std::string>& required);

// Where a peer script (tools/bench/<name>) is, so a copied bin/ works without its source tree.
// Looked for in this order: `given` (a --peer-script option; must exist), $TG_BENCH_PEER_DIR,
// next to the running binary, <binary>/../share/tinygrad.cpp/bench (the install and build-tree
// layout), and the source tree the binary was built from. `error` lists the places tried.
struct PeerScript {
  std::string path;
  std::string error;
};
PeerScript find_peer_script(const std::string& name, const std::string& given = "");

// The interpreter for a tinygrad peer (`tg bench ops`, `gpu`, `train`): `given` when not empty,
// else the first of python3 (PATH) and /usr/bin/python3 that can import tinygrad ($PYTHONPATH is
// passed on, so an unpacked wheel works). `error` says why there is none: the table prints it.
struct TinygradPython {
  std::string python;
  std::string error;
};
TinygradPython find_tinygrad_python(const std::string& given);

// Whether `python` exists and runs `import <module>` without an error.
bool imports_module(const std::string& python, const std::string& module);
// Whether `python` runs `import tinygrad` without an error.
bool imports_tinygrad(const std::string& python);

// The interpreter for a PyTorch peer, from the option `option` (default "/usr/bin/python3"): the
// value the user gave, else the first of /usr/bin/python3 (Debian's python3-torch) and python3 on
// $PATH (a GPU host's venv) that imports torch, or /usr/bin/python3 where neither does (the peer's
// error then says why).
std::string torch_python(const boost::program_options::variables_map& vm, const std::string& option);

// Whether the shell finds `command` (a path or a name on $PATH): a typo in an interpreter option
// is an argument error, not a missing peer.
bool command_exists(const std::string& command);

// Single-quotes s for the shell.
std::string shell_quote(const std::string& s);

std::string fixed(double v, int decimals);
std::string general(double v);
size_t width(const std::string& s); // display columns of UTF-8 text
std::string pad(const std::string& s, size_t w, bool right = false);

// Prints head, a rule and the rows; columns in `right` are right-aligned.
void print_table(std::ostream& os, const std::vector<std::string>& head,
                 const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right);

// A number for --json; null where there is none (JSON has no NaN or infinity).
nlohmann::json json_num(std::optional<double> v);

// The options every `tg bench` command checks before it measures anything (a typo must not cost
// the whole run): --repeat >= 1 and a writable --json destination. Prints why to stderr, naming
// `command` ("tg bench ops"); false: exit with status 2.
bool bench_options_ok(const std::string& command, int repeat, const std::optional<std::string>& json_path);

// Writes `json` to `path` durably (invalid UTF-8 replaced, so no result is lost to a device name)
// and says so; 0, or 1 with the reason on stderr.
int write_bench_json(const std::string& command, const std::string& path, const nlohmann::ordered_json& json);

} // namespace tg::cli
