#include "tools/tg/bench_util.hpp"

#include <tg/sdk/bytes.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <ostream>
#include <random>
#include <span>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace tg::cli {

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

double median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

double median_ms(int warmup, int repeat, const std::function<void()>& fn) {
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> t;
  for (int i = 0; i < repeat; ++i) {
    auto t0 = Clock::now();
    fn();
    t.push_back(ms_between(t0, Clock::now()));
  }
  return median(std::move(t));
}

Tensor random_tensor(Dims shape, uint32_t seed, const std::string& device) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(size_t(dims_prod(shape)));
  for (auto& x : v) x = dist(gen);
  Tensor t = Tensor::from_vector(v, std::move(shape), {}, device);
  t.realize();
  return t;
}

std::optional<std::map<std::string, JsonValue>> parse_flat_json(const std::string& s) {
  nlohmann::json j = nlohmann::json::parse(s, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt; // also a parse error (discarded value)
  std::map<std::string, JsonValue> out;
  for (const auto& [key, v] : j.items()) {
    if (v.is_number())
      out[key] = v.get<double>();
    else if (v.is_boolean())
      out[key] = v.get<bool>() ? 1.0 : 0.0;
    else if (v.is_string())
      out[key] = v.get<std::string>();
    else
      out[key] = v.dump(); // null, arrays, objects: shown as text, never a number
  }
  return out;
}

std::optional<double> Peer::num(const std::string& key) const {
  auto it = values.find(key);
  if (it == values.end() || !std::holds_alternative<double>(it->second)) return std::nullopt;
  return std::get<double>(it->second);
}

std::string Peer::str(const std::string& key) const {
  auto it = values.find(key);
  if (it == values.end()) return "?";
  if (auto* s = std::get_if<std::string>(&it->second)) return *s;
  std::ostringstream os;
  os << std::get<double>(it->second);
  return os.str();
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

namespace {

std::string last_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (auto nl = text.rfind('\n'); nl != std::string::npos) text = text.substr(nl + 1);
  return text;
}

} // namespace

Peer run_peer_command(const std::string& command) {
  Peer peer;
  const auto err_path =
      std::filesystem::temp_directory_path() / ("tg_bench_peer_" + std::to_string(getpid()) + ".err");
  FILE* pipe = popen((command + " 2>" + shell_quote(err_path.string())).c_str(), "r");
  if (!pipe) {
    peer.error = std::string("popen failed: ") + std::strerror(errno);
    return peer;
  }
  std::string output;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) output.append(buf, n);
  int status = pclose(pipe);
  std::string err;
  {
    std::ifstream in(err_path);
    err.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::error_code ignored;
  std::filesystem::remove(err_path, ignored);
  std::string json;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty() && line[0] == '{') json = line;
  if (status != 0 || json.empty()) {
    std::string why = last_line(err.empty() ? output : err);
    peer.error = "peer script failed (exit " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                 (why.empty() ? std::string(")") : "): " + why);
    return peer;
  }
  auto parsed = parse_flat_json(json);
  if (!parsed) {
    peer.error = "could not parse the peer's JSON: " + json;
    return peer;
  }
  peer.values = std::move(*parsed);
  return peer;
}

std::optional<Spread> PeerRuns::spread(const std::string& key) const {
  auto it = samples.find(key);
  if (!info.error.empty() || it == samples.end() || it->second.empty()) return std::nullopt;
  Spread s;
  s.runs = it->second.size();
  s.min = *std::min_element(it->second.begin(), it->second.end());
  s.max = *std::max_element(it->second.begin(), it->second.end());
  s.median = median(it->second);
  return s;
}

PeerRuns run_peer_runs(const std::string& command, int runs) {
  PeerRuns out;
  std::map<std::string, std::vector<double>> samples;
  for (int i = 0; i < runs; ++i) {
    Peer p = run_peer_command(command);
    if (!p.error.empty()) {
      out.info.error = runs > 1
                           ? "run " + std::to_string(i + 1) + " of " + std::to_string(runs) + ": " + p.error
                           : p.error;
      return out;
    }
    for (const auto& [key, v] : p.values)
      if (const double* x = std::get_if<double>(&v)) samples[key].push_back(*x);
    if (i == 0) out.info = std::move(p);
  }
  // A key some process did not report has no spread: its runs would not be comparable.
  for (auto& [key, v] : samples)
    if (v.size() == size_t(runs)) out.samples[key] = std::move(v);
  return out;
}

std::optional<PeerFigure> best_peer(const std::vector<PeerFigure>& figures) {
  std::optional<PeerFigure> best;
  for (const auto& f : figures)
    if (!best || f.spread.min < best->spread.min) best = f;
  return best;
}

std::string spread_str(const Spread& s, const std::function<std::string(double)>& fmt) {
  return fmt(s.min) + " / " + fmt(s.median) + " / " + fmt(s.max);
}

nlohmann::ordered_json spread_json(const Spread& s) {
  nlohmann::ordered_json j;
  j["min"] = json_num(s.min);
  j["median"] = json_num(s.median);
  j["max"] = json_num(s.max);
  j["runs"] = s.runs;
  return j;
}

Spread spread_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return Spread{v.front(), median(v), v.back(), v.size()};
}

void warn_wide_spreads(std::ostream& os, const std::string& row, const std::vector<PeerFigure>& figures,
                       const std::function<std::string(double)>& fmt) {
  for (const auto& f : figures)
    if (f.spread.wide())
      os << "warning: " << row << ": " << f.peer << "'s " << f.spread.runs
         << " processes differ by more than 2x (min " << fmt(f.spread.min) << ", max " << fmt(f.spread.max)
         << "): the machine's load or the peer's state changed between them\n";
}

bool peer_runs_ok(const std::string& command, int runs) {
  if (runs >= 1 && runs <= 20) return true;
  std::cerr << command << ": --peer-runs must be in 1..20, got " << runs << "\n";
  return false;
}

JsonPeer run_json_peer(const std::string& command, const std::vector<std::string>& required) {
  JsonPeer peer;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) {
    peer.error = std::string("popen failed: ") + std::strerror(errno);
    return peer;
  }
  std::string text;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) text.append(buf, n);
  const int status = pclose(pipe);
  std::string json; // the JSON is the last line that starts with '{'; the rest is the script's talk
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty() && line[0] == '{') json = line;
  nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  bool complete = status == 0 && j.is_object();
  for (const auto& key : required) complete = complete && j.contains(key) && j[key].is_number();
  if (complete) {
    peer.values = std::move(j);
    return peer;
  }
  const std::string last = last_line(text);
  peer.error = "peer unavailable (exit " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
               ": " + (last.empty() ? std::string("no output") : last) + ")";
  return peer;
}

PeerScript find_peer_script(const std::string& name, const std::string& given) {
  namespace fs = std::filesystem;
  PeerScript out;
  if (!given.empty()) { // named by the user: no fallback that would hide a typo
    if (fs::is_regular_file(given))
      out.path = given;
    else
      out.error = "peer script " + given + " (--peer-script) not found";
    return out;
  }
  std::vector<fs::path> candidates;
  if (const char* dir = std::getenv("TG_BENCH_PEER_DIR"); dir && *dir)
    candidates.push_back(fs::path(dir) / name);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    candidates.push_back(exe.parent_path() / name);
    candidates.push_back(exe.parent_path().parent_path() / "share/tinygrad.cpp/bench" / name);
  }
  candidates.push_back(fs::path(TG_SOURCE_DIR) / "tools/bench" / name);
  std::string tried;
  for (const auto& c : candidates) {
    if (fs::is_regular_file(c, ec)) {
      out.path = c.string();
      return out;
    }
    tried += (tried.empty() ? "" : ", ") + c.string();
  }
  out.error = "peer script " + name + " not found (looked at " + tried +
              "; set TG_BENCH_PEER_DIR or pass --peer-script)";
  return out;
}

bool imports_module(const std::string& python, const std::string& module) {
  const std::string cmd = shell_quote(python) + " -c 'import " + module + "' >/dev/null 2>&1";
  return command_exists(python) && std::system(cmd.c_str()) == 0;
}

bool imports_tinygrad(const std::string& python) { return imports_module(python, "tinygrad"); }

std::string torch_python(const boost::program_options::variables_map& vm, const std::string& option) {
  if (!vm[option].defaulted()) return vm[option].as<std::string>();
  for (const char* candidate : {"/usr/bin/python3", "python3"})
    if (imports_module(candidate, "torch")) return candidate;
  return "/usr/bin/python3";
}

bool command_exists(const std::string& command) {
  const std::string cmd = "command -v " + shell_quote(command) + " >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

TinygradPython find_tinygrad_python(const std::string& given) {
  if (!given.empty()) {
    if (imports_tinygrad(given)) return {given, ""};
    return {"", given + " cannot import tinygrad (pip install tinygrad, or put an unpacked wheel on "
                        "PYTHONPATH: docs/bench.md)"};
  }
  for (const char* candidate : {"python3", "/usr/bin/python3"})
    if (imports_tinygrad(candidate)) return {candidate, ""};
  return {"",
          "tinygrad not installed (pip install tinygrad; neither python3 nor /usr/bin/python3 imports it)"};
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string general(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

size_t width(const std::string& s) {
  size_t w = 0;
  for (unsigned char c : s) w += (c & 0xC0) != 0x80;
  return w;
}

std::string pad(const std::string& s, size_t w, bool right) {
  size_t sw = width(s);
  if (sw >= w) return s;
  return right ? std::string(w - sw, ' ') + s : s + std::string(w - sw, ' ');
}

void print_table(std::ostream& os, const std::vector<std::string>& head,
                 const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right) {
  std::vector<size_t> w(head.size());
  for (size_t c = 0; c < head.size(); ++c) {
    w[c] = width(head[c]);
    for (const auto& row : rows) w[c] = std::max(w[c], width(row[c]));
  }
  auto print_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c)
      line += pad(row[c], w[c], c < right.size() && right[c]) + (c + 1 < row.size() ? "  " : "");
    while (!line.empty() && line.back() == ' ') line.pop_back();
    os << line << "\n";
  };
  print_row(head);
  size_t total = 0;
  for (auto x : w) total += x + 2;
  os << std::string(total - 2, '-') << "\n";
  for (const auto& row : rows) print_row(row);
}

nlohmann::json json_num(std::optional<double> v) {
  if (!v || !std::isfinite(*v)) return nullptr;
  return *v;
}

bool bench_options_ok(const std::string& command, int repeat, const std::optional<std::string>& json_path) {
  if (repeat < 1) {
    std::cerr << command << ": --repeat must be >= 1, got " << repeat << "\n";
    return false;
  }
  if (json_path) {
    try {
      sdk::check_writable(*json_path);
    } catch (const sdk::FileError& e) {
      std::cerr << command << ": --json " << *json_path << ": cannot write there: " << e.what() << "\n";
      return false;
    }
  }
  return true;
}

int write_bench_json(const std::string& command, const std::string& path,
                     const nlohmann::ordered_json& json) {
  std::string text = json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  try {
    sdk::write_file_durably(path, std::array{std::as_bytes(std::span(text))});
  } catch (const sdk::FileError& e) {
    std::cerr << command << ": could not write " << path << ": " << e.what() << "\n";
    return 1;
  }
  std::cout << "wrote " << path << "\n";
  return 0;
}

} // namespace tg::cli
