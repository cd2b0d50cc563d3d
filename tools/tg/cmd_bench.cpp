// `tg bench core`: times core workloads (matmul, a fused elementwise chain, a full reduce, conv2d,
// cold start and per-call dispatch) on the default device and, in the same invocation, the same
// workloads on PyTorch's CPU backend and numpy (tools/bench/peer_torch.py, peer_numpy.py), each in
// --peer-runs fresh processes; each row is compared with its best peer.
// A benchmark, not a test: it prints a table and marks each row against the project's targets.
//
// `tg bench cold-child` (hidden) is the child process that the cold-start row spawns.
#include "kernel/engine/realize.hpp"
#include "kernel/runtime/devices.hpp"
#include "kernel/tensor/tensor.hpp"
#include "tools/tg/bench_util.hpp"
#include "tools/tg/commands.hpp"

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>
#include <tg/sdk/bytes.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <span>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <utility>
#include <variant>

extern char** environ;

namespace po = boost::program_options;

namespace tg::cli {
namespace {

// Two warm-up runs: the first compiles, the second lets the allocator's cache settle (a freed output
// can stay referenced until the next realize), so timed runs do not pay first-touch page faults.
constexpr int kWarmup = 2;

// Median over `repeat` samples of the mean µs per call of `calls` calls of fn(k).
double dispatch_us(int repeat, int calls, const std::function<void(int)>& fn) {
  for (int k = 0; k < calls / 10; ++k) fn(k);
  std::vector<double> t;
  for (int i = 0; i < repeat; ++i) {
    auto t0 = Clock::now();
    for (int k = 0; k < calls; ++k) fn(k);
    t.push_back(ms_between(t0, Clock::now()) * 1e3 / calls);
  }
  return median(std::move(t));
}

// Realizes a freshly built expression; counts the times it was already realized (no kernel ran).
int g_stale = 0;
void realize_fresh(Tensor t) {
  if (is_buffer_view(t.uop())) ++g_stale;
  t.realize();
}

PeerRuns run_peer(const std::string& python, const std::string& script_name, const std::string& args,
                  int runs) {
  const PeerScript script = find_peer_script(script_name);
  if (!command_exists(python)) return PeerRuns{Peer{{}, python + " not found"}, {}};
  if (!script.error.empty()) return PeerRuns{Peer{{}, script.error}, {}};
  return run_peer_runs(shell_quote(python) + " " + shell_quote(script.path) + " " + args, runs);
}

// ---- cold start: spawn `tg bench cold-child` with the disk cache off ----
struct ColdResult {
  double child_ms = 0; // first result, measured by the child from main()
  double wall_ms = 0;  // spawn to exit, measured here
};

std::optional<ColdResult> run_cold_child(std::string& error) {
  std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
  int fds[2];
  if (pipe(fds) != 0) {
    error = std::string("pipe: ") + std::strerror(errno);
    return std::nullopt;
  }
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "DISABLE_COMPILER_CACHE=", 23) != 0 && std::strncmp(*e, "DEBUG=", 6) != 0)
      env_strings.emplace_back(*e);
  env_strings.emplace_back("DISABLE_COMPILER_CACHE=1");
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string a0 = exe, a1 = "bench", a2 = "cold-child";
  char* argv[] = {a0.data(), a1.data(), a2.data(), nullptr};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  pid_t pid = 0;
  auto t0 = Clock::now();
  int rc = posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    error = std::string("posix_spawn: ") + std::strerror(rc);
    return std::nullopt;
  }
  std::string out;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, size_t(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  ColdResult r;
  r.wall_ms = ms_between(t0, Clock::now());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    error = "cold-child failed: " + out;
    return std::nullopt;
  }
  char* end = nullptr;
  r.child_ms = std::strtod(out.c_str(), &end);
  if (end == out.c_str()) {
    error = "cold-child printed no time: " + out;
    return std::nullopt;
  }
  return r;
}

int cold_child() {
  std::vector<float> a(1024), b(1024);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = float(i);
    b[i] = 1.0f;
  }
  Tensor c = Tensor::from_vector(a, {1024}) + Tensor::from_vector(b, {1024});
  c.realize();
  auto v = c.to_vector<float>();
  double ms = ms_between(main_start_time(), Clock::now());
  if (v.size() != 1024 || v[5] != 6.0f || v[1023] != 1024.0f) {
    std::cout << "wrong result\n";
    return 1;
  }
  std::printf("%.3f\n", ms);
  return 0;
}

// ---- the table ----
enum class Kind { Flops, Bytes, Latency };

struct Row {
  std::string name;
  Kind kind;
  double ours = 0;  // ms for Flops/Bytes; ms or µs for Latency (see unit)
  std::string unit; // "ms" or "us"
  double work = 0;  // flops or bytes per run
  std::string peer_key;
  std::vector<PeerFigure> peers; // those that measured the row
  std::optional<PeerFigure> best;
  std::optional<double> peer;   // the best peer's min
  std::optional<double> target; // GFLOPS or GB/s minimum, or latency maximum in `unit`
  std::string note;
};

Row make_row(std::string name, Kind kind, std::string unit) {
  Row r;
  r.name = std::move(name);
  r.kind = kind;
  r.unit = std::move(unit);
  return r;
}

double rate(const Row& r, double t) { return r.work / (t * 1e6); } // per ms -> G/s

std::string num_str(double t) { return t >= 100 ? fixed(t, 1) : t >= 10 ? fixed(t, 2) : fixed(t, 3); }
std::string unit_str(const std::string& unit) { return unit == "us" ? "µs" : unit; }

std::string time_str(double t, const std::string& unit) {
  if (std::isnan(t)) return "-";
  return num_str(t) + " " + unit_str(unit);
}

std::string rate_str(const Row& r, double t) {
  if (r.kind == Kind::Latency || std::isnan(t)) return "-";
  return fixed(rate(r, t), 2) + (r.kind == Kind::Flops ? " GFLOPS" : " GB/s");
}

std::optional<bool> passes(const Row& r) {
  if (!r.target || std::isnan(r.ours)) return std::nullopt;
  return r.kind == Kind::Latency ? r.ours <= *r.target : rate(r, r.ours) >= *r.target;
}

std::string target_str(const Row& r) {
  if (!r.target) return "-";
  if (r.kind == Kind::Latency) return "<= " + general(*r.target) + " " + (r.unit == "us" ? "µs" : r.unit);
  return ">= " + general(*r.target) + (r.kind == Kind::Flops ? " GFLOPS" : " GB/s");
}

int bench_core(const std::vector<std::string>& args) {
  po::options_description opts(
      "tg bench core: time core workloads on the default device ($TG_DEVICE, else CPU) against PyTorch's "
      "CPU\n"
      "backend and numpy (tools/bench/peer_torch.py, peer_numpy.py), run in the same invocation, each in\n"
      "--peer-runs fresh processes. Times are medians over --repeat runs after warm-up; ratio = our speed /\n"
      "the best peer's speed (its minimum over the processes; > 1: faster).\n"
      "Options");
  opts.add_options()("help,h", "show this help")("repeat,n", po::value<int>()->default_value(10),
                                                 "timed runs per workload (after warm-up)")(
      "no-peer", "skip the peers")("json", po::value<std::string>(), "also write the results to this file")(
      "peer-python", po::value<std::string>()->default_value("/usr/bin/python3"),
      "the interpreter that runs the peers (PyTorch and numpy; by default /usr/bin/python3, or python3 on "
      "$PATH where only that imports torch)")(
      "peer-runs", po::value<int>()->default_value(3),
      "fresh processes per peer (1..20); each row shows their min / median / max and compares the best "
      "peer's min");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << opts;
    return 0;
  }
  const int repeat = vm["repeat"].as<int>();
  const std::optional<std::string> json_path =
      vm.count("json") ? std::optional(vm["json"].as<std::string>()) : std::nullopt;
  const int peer_runs = vm["peer-runs"].as<int>();
  if (!bench_options_ok("tg bench core", repeat, json_path) || !peer_runs_ok("tg bench core", peer_runs))
    return 2;
  const std::string python = torch_python(vm, "peer-python");
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  const std::string device = default_device();
  OpenDevice dev = open_device(device);
  std::cout << "tg bench core: device " << device << " (" << dev.device->properties().name << ", "
            << dev.device->properties().compute_units << " compute units), repeat " << repeat << "\n"
            << std::flush;

  std::vector<Row> rows;
  auto progress = [](const std::string& what) { std::cerr << "  running " << what << "...\n"; };

  // 1-2. matmul
  for (int64_t n : {int64_t(1024), int64_t(2048)}) {
    progress("matmul " + std::to_string(n));
    Tensor a = random_tensor({n, n}, 1), b = random_tensor({n, n}, 2);
    Row r = make_row("matmul " + std::to_string(n) + "x" + std::to_string(n) + " f32", Kind::Flops, "ms");
    r.work = 2.0 * double(n) * double(n) * double(n);
    r.peer_key = "matmul" + std::to_string(n) + "_ms";
    if (n == 1024) r.target = 8.4;
    r.ours = median_ms(kWarmup, repeat, [&] { realize_fresh(a.matmul(b)); });
    rows.push_back(r);
  }

  // 3-4. elementwise chain and full sum over 16M floats
  {
    const int64_t n = int64_t(16) << 20;
    progress("elementwise");
    Tensor a = random_tensor({n}, 3), b = random_tensor({n}, 4), c = random_tensor({n}, 5);
    Row e = make_row("((a+b)*c).relu() 16M f32", Kind::Bytes, "ms");
    e.work = 4.0 * double(n) * 4.0;
    e.peer_key = "elementwise_ms";
    e.target = 23.5;
    e.ours = median_ms(kWarmup, repeat, [&] { realize_fresh(((a + b) * c).relu()); });
    rows.push_back(e);

    progress("sum");
    Row s = make_row("sum 16M f32", Kind::Bytes, "ms");
    s.work = double(n) * 4.0;
    s.peer_key = "sum_ms";
    s.target = 6.2;
    s.ours = median_ms(kWarmup, repeat, [&] { realize_fresh(a.sum()); });
    rows.push_back(s);
  }

  // 5. conv2d
  {
    progress("conv2d");
    Tensor x = random_tensor({32, 32, 28, 28}, 6), w = random_tensor({64, 32, 3, 3}, 7);
    Row r = make_row("conv2d 32x32x28x28 -> 64, 3x3", Kind::Flops, "ms");
    r.work = 2.0 * 32 * 64 * 26 * 26 * 32 * 9;
    r.peer_key = "conv_ms";
    r.target = 9.4;
    r.ours = median_ms(kWarmup, repeat, [&] { realize_fresh(x.conv2d(w)); });
    rows.push_back(r);
  }

  // 6. cold start (child processes, disk cache off)
  {
    progress("cold start");
    const int cold_repeat = std::max(1, std::min(repeat, 5));
    std::vector<double> child, wall;
    std::string error;
    for (int i = 0; i <= cold_repeat && error.empty(); ++i) { // the first run warms the page cache
      auto r = run_cold_child(error);
      if (r && i > 0) {
        child.push_back(r->child_ms);
        wall.push_back(r->wall_ms);
      }
    }
    Row r = make_row("cold start: main() -> first result", Kind::Latency, "ms");
    r.peer_key = "cold_ms";
    r.target = 100;
    r.ours = error.empty() ? median(child) : std::nan("");
    r.note = error.empty() ? "" : error;
    rows.push_back(r);
    Row w = make_row("cold start: spawn -> exit (wall)", Kind::Latency, "ms");
    w.peer_key = "cold_wall_ms";
    w.ours = error.empty() ? median(wall) : std::nan("");
    rows.push_back(w);
  }

  // 7. dispatch: a cached kernel on 1024 floats, alternating two input sets
  {
    progress("dispatch");
    constexpr int calls = 1000;
    Tensor a[2] = {random_tensor({1024}, 8), random_tensor({1024}, 9)};
    Tensor b[2] = {random_tensor({1024}, 10), random_tensor({1024}, 11)};
    Row r = make_row("dispatch: realize(a+b) 1024 f32", Kind::Latency, "us");
    r.peer_key = "dispatch_us";
    r.target = 20;
    r.ours = dispatch_us(repeat, calls, [&](int k) { realize_fresh(a[k & 1] + b[k & 1]); });
    rows.push_back(r);

    // The runtime underneath: prepare_kernel (cache lookup) + Program::launch, and the launch alone.
    std::vector<ScheduleItem> items[2] = {(a[0] + b[0]).schedule(), (a[1] + b[1]).schedule()};
    std::vector<tg_buffer_arg> bufs[2];
    std::shared_ptr<PreparedKernel> prepared[2];
    LaunchDims dims;
    for (int i = 0; i < 2; ++i) {
      if (items[i].size() != 1)
        throw Error("a+b scheduled " + std::to_string(items[i].size()) + " kernels, not 1");
      const ScheduleItem& item = items[i][0];
      storage_of(item.buffers[0], true);
      for (const auto& buf : item.buffers) bufs[i].push_back({storage_of(buf).buffer().raw(), 0});
      prepared[i] = prepare_kernel(item);
      dims.global = prepared[i]->lowered.global;
      dims.local = prepared[i]->lowered.local;
    }
    Row p = make_row("dispatch: prepare_kernel+launch", Kind::Latency, "us");
    p.peer_key = "dispatch_out_us";
    p.ours = dispatch_us(repeat, calls, [&](int k) {
      auto kernel = prepare_kernel(items[k & 1][0]);
      kernel->program->program.launch(dims, bufs[k & 1]);
    });
    rows.push_back(p);
    Row l = make_row("dispatch: Program::launch only", Kind::Latency, "us");
    l.peer_key = "dispatch_out_us";
    l.ours = dispatch_us(repeat, calls,
                         [&](int k) { prepared[k & 1]->program->program.launch(dims, bufs[k & 1]); });
    rows.push_back(l);
  }

  PeerRuns torch_peer, numpy_peer;
  if (vm.count("no-peer")) {
    torch_peer.info.error = numpy_peer.info.error = "--no-peer";
  } else {
    const std::string repeat_arg = " --repeat " + std::to_string(repeat);
    progress("PyTorch peer (" + std::to_string(threads) + " threads), " + std::to_string(peer_runs) +
             " processes");
    torch_peer =
        run_peer(python, "peer_torch.py", "--threads " + std::to_string(threads) + repeat_arg, peer_runs);
    progress("numpy peer, " + std::to_string(peer_runs) + " processes");
    numpy_peer = run_peer(python, "peer_numpy.py", repeat_arg.substr(1), peer_runs);
  }
  for (auto& r : rows) {
    for (const auto& [name, p] : {std::pair{"PyTorch", &torch_peer}, std::pair{"numpy", &numpy_peer}})
      if (auto s = p->spread(r.peer_key)) r.peers.push_back({name, *s});
    r.best = best_peer(r.peers);
    if (r.best) r.peer = r.best->spread.min;
  }

  // Print.
  const std::vector<std::string> head = {
      "workload", "ours",   "ours rate", "PyTorch min/med/max", "numpy min/med/max", "best peer", "peer rate",
      "ratio",    "target", ""};
  std::vector<std::vector<std::string>> cells;
  int pass = 0, miss = 0;
  auto peer_cell = [](const Row& r, const std::string& name) {
    for (const auto& f : r.peers)
      if (f.peer == name) return spread_str(f.spread, num_str) + " " + unit_str(r.unit);
    return std::string("-");
  };
  for (const auto& r : rows) {
    std::string best = "peer unavailable", peer_rate = "-", ratio = "-";
    if (r.peer) {
      best = r.best->peer;
      peer_rate = rate_str(r, *r.peer);
      if (!std::isnan(r.ours) && r.ours > 0) {
        const double x = *r.peer / r.ours;
        ratio = fixed(x, x < 0.1 ? 4 : 2) + "x";
      }
    }
    auto ok = passes(r);
    if (ok) ++(*ok ? pass : miss);
    cells.push_back({r.name, time_str(r.ours, r.unit), rate_str(r, r.ours), peer_cell(r, "PyTorch"),
                     peer_cell(r, "numpy"), best, peer_rate, ratio, target_str(r),
                     ok ? (*ok ? "PASS" : "MISS") : ""});
  }
  std::vector<size_t> w(head.size());
  for (size_t c = 0; c < head.size(); ++c) {
    w[c] = width(head[c]);
    for (const auto& row : cells) w[c] = std::max(w[c], width(row[c]));
  }
  auto print_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c)
      line += pad(row[c], w[c], c > 0 && c < 8 && c != 5) + (c + 1 < row.size() ? "  " : "");
    while (!line.empty() && line.back() == ' ') line.pop_back();
    std::cout << line << "\n";
  };
  std::cout << "\n";
  print_row(head);
  size_t total = 0;
  for (auto x : w) total += x + 2;
  std::cout << std::string(total - 2, '-') << "\n";
  for (const auto& row : cells) print_row(row);
  std::cout << "\n";
  for (const auto& r : rows)
    if (!r.note.empty()) std::cout << "note: " << r.name << ": " << r.note << "\n";
  for (const auto& r : rows)
    warn_wide_spreads(std::cout, r.name, r.peers, [&](double t) { return time_str(t, r.unit); });
  const Peer& pt = torch_peer.info;
  const Peer& np = numpy_peer.info;
  if (pt.error.empty())
    std::cout << "peer: PyTorch " << pt.str("torch_version") << " CPU, " << pt.str("threads")
              << " threads, freed memory " << pt.str("malloc") << " (" << python
              << " tools/bench/peer_torch.py)\n";
  else
    std::cout << "peer unavailable: PyTorch: " << pt.error << "\n";
  if (np.error.empty())
    std::cout << "peer: numpy " << np.str("numpy_version") << ", BLAS " << np.str("blas") << ", freed memory "
              << np.str("malloc") << " (" << python << " tools/bench/peer_numpy.py)\n";
  else
    std::cout << "peer unavailable: numpy: " << np.error << "\n";
  std::cout << "Each peer ran in " << peer_runs << (peer_runs == 1 ? " fresh process" : " fresh processes")
            << " (median of --repeat calls in each); a row compares ours with the best\n"
               "  peer's minimum over its processes.\n";
  if (g_stale)
    std::cout << "warning: " << g_stale
              << " timed realizes found their result already computed (timings too low)\n";
  std::cout
      << "ratio = our speed / the best peer's speed (its min time / our time). Cold start: ours is `tg bench "
         "cold-child`\n"
         "  (a+b on 1024 floats, realized and read, DISABLE_COMPILER_CACHE=1) timed from main(); the peer's "
         "is\n"
         "  `import torch` + the same op, timed inside a fresh python3. Medians of min(repeat, 5) runs.\n"
         "  The wall row is spawn to exit, measured by the parent (ours includes dynamic loading).\n"
         "Dispatch: mean of 1000 calls per sample; peer = `a+b` and `torch.add(a, b, out=c)`.\n"
         "Targets (the project's goals on a 2-core machine): matmul 1024 >= 8.4 GFLOPS, elementwise >= 23.5 "
         "GB/s,\n"
         "  sum >= 6.2 GB/s, conv >= 9.4 GFLOPS, cold start <= 100 ms, dispatch <= 20 µs.  "
      << pass << " PASS, " << miss << " MISS\n";

  if (vm.count("json")) {
    const std::string path = vm["json"].as<std::string>();
    nlohmann::ordered_json out;
    out["device"] = device;
    out["repeat"] = repeat;
    out["peer_runs"] = peer_runs;
    out["peer"] = pt.error.empty() ? nlohmann::ordered_json("torch " + pt.str("torch_version")) : nullptr;
    out["numpy"] = np.error.empty() ? nlohmann::ordered_json(np.str("numpy_version")) : nullptr;
    out["rows"] = nlohmann::ordered_json::array();
    for (const auto& r : rows) {
      auto ok = passes(r);
      std::optional<double> ours_rate, peer_rate;
      if (r.kind != Kind::Latency) {
        ours_rate = rate(r, r.ours);
        if (r.peer) peer_rate = rate(r, *r.peer);
      }
      nlohmann::ordered_json row;
      row["name"] = r.name;
      row["unit"] = r.unit;
      row["ours"] = json_num(r.ours);
      row["peer"] = json_num(r.peer);
      row["best_peer"] = r.best ? nlohmann::ordered_json(r.best->peer) : nlohmann::ordered_json(nullptr);
      row["peers"] = nlohmann::ordered_json::object();
      for (const auto& f : r.peers) row["peers"][f.peer] = spread_json(f.spread);
      row["rate_unit"] = r.kind == Kind::Flops   ? nlohmann::ordered_json("GFLOPS")
                         : r.kind == Kind::Bytes ? nlohmann::ordered_json("GB/s")
                                                 : nullptr;
      row["ours_rate"] = json_num(ours_rate);
      row["peer_rate"] = json_num(peer_rate);
      row["ratio"] = json_num(r.peer ? std::optional<double>(*r.peer / r.ours) : std::nullopt);
      row["target"] = json_num(r.target);
      row["status"] = ok ? nlohmann::ordered_json(*ok ? "PASS" : "MISS") : nullptr;
      out["rows"].push_back(std::move(row));
    }
    return write_bench_json("tg bench core", path, out);
  }
  return 0;
}

// `tg bench matmul`: one n x n float32 matmul on several devices in the same run; the first device
// is the peer the others are compared with (docs/plugin-guide.md uses it for MY vs CPU).
int bench_matmul(const std::vector<std::string>& args) {
  po::options_description opts(
      "tg bench matmul: median time of an n x n float32 matmul (realize of a fresh expression: launch\n"
      "included) on each device, in GFLOPS, with the ratio to the first device.\nOptions");
  opts.add_options()("help,h", "show this help")("n", po::value<int64_t>()->default_value(256),
                                                 "matrix size")(
      "devices", po::value<std::string>()->default_value("CPU,MY,CUDA"),
      "comma-separated devices; the first is the peer; absent ones are reported and skipped")(
      "repeat", po::value<int>()->default_value(20), "timed runs per device (after warm-up)");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << opts;
    return 0;
  }
  const int64_t n = vm["n"].as<int64_t>();
  const int repeat = vm["repeat"].as<int>();
  if (n < 1 || n > 16384 || repeat < 1) {
    std::cerr << "tg bench matmul: --n must be in 1..16384 and --repeat >= 1\n";
    return 2;
  }
  std::vector<std::string> devices;
  std::stringstream list(vm["devices"].as<std::string>());
  for (std::string d; std::getline(list, d, ',');)
    if (!d.empty()) devices.push_back(d);
  if (devices.empty()) {
    std::cerr << "tg bench matmul: --devices names no device\n";
    return 2;
  }
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> va(size_t(n * n)), vb(size_t(n * n));
  for (auto& x : va) x = dist(gen);
  for (auto& x : vb) x = dist(gen);
  const double flop = 2.0 * double(n) * double(n) * double(n);
  std::cout << "tg bench matmul: " << n << "x" << n << " float32, median of " << repeat << " runs\n";
  std::optional<double> peer_ms;
  std::vector<float> peer_result;
  int measured = 0;
  for (const std::string& device : devices) {
    std::string name;
    try {
      name = parse_device_name(device).canonical();
      OpenDevice dev = open_device(name);
      name += " (" + std::string(dev.device->properties().name) + ")";
    } catch (const std::exception& e) {
      std::cout << "  " << device << ": not measured: " << e.what() << "\n";
      continue;
    }
    Tensor a = Tensor::from_vector(va, {n, n}, {}, device), b = Tensor::from_vector(vb, {n, n}, {}, device);
    a.realize();
    b.realize();
    double ms = median_ms(kWarmup, repeat, [&] { realize_fresh(a.matmul(b)); });
    std::vector<float> result = a.matmul(b).to_vector<float>();
    std::cout << "  " << pad(name, 60) << fixed(ms, 3) << " ms  " << fixed(flop / (ms * 1e6), 2) << " GFLOPS";
    if (peer_ms) {
      double diff = 0;
      for (size_t i = 0; i < result.size(); ++i)
        diff = std::max(diff, double(std::fabs(result[i] - peer_result[i])));
      std::cout << "  " << fixed(*peer_ms / ms, 3) << "x the first device's speed, max |diff| "
                << general(diff);
    } else {
      peer_ms = ms;
      peer_result = result;
      std::cout << "  (peer)";
    }
    std::cout << "\n";
    ++measured;
  }
  return measured ? 0 : 1;
}

void bench_usage(std::ostream& os) {
  os << "usage: tg bench <benchmark> [options]   (tg bench <benchmark> --help for details)\n\nbenchmarks:\n"
        "  ops    elementwise, reductions, softmax, matmul, conv2d on --device D, against tinygrad\n"
        "  core   matmul, elementwise, sum, conv2d, cold start and dispatch, against PyTorch\n"
        "  train  median beautiful_mnist training-step time, against PyTorch\n"
        "  matmul one n x n matmul on several devices (default CPU,MY,CUDA), against the first\n"
        "  gpu    GPU rows (64M elementwise/sum, matmul f32/f16, conv2d, tiny op), against "
        "PyTorch CUDA\n"
        "  collective  all-reduce / all-gather / broadcast of 256 MiB over --devices, against PyTorch NCCL\n"
        "  onnx   ResNet-18, MobileNetV2, a transformer through ONNX import, against onnxruntime and "
        "PyTorch\n"
        "  python one small op from Python (tinygrad_cpp), against C++ and tinygrad's Python\n"
        "  gpt    the GPT's training step and KV-cache sampling (and validation loss), against PyTorch\n"
        "  attention  scaled_dot_product_attention forward (scores stored, and fused) and backward, against\n"
        "         PyTorch's F.scaled_dot_product_attention\n";
}

} // namespace

int cmd_bench(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    bench_usage(std::cout);
    return args.empty() ? 2 : 0;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "ops") {
    try {
      return bench_ops(rest);
    } catch (const po::error& e) {
      std::cerr << "tg bench ops: " << e.what() << " (see tg bench ops --help)\n";
      return 2;
    }
  }
  if (args[0] == "core") {
    try {
      return bench_core(rest);
    } catch (const po::error& e) {
      std::cerr << "tg bench core: " << e.what() << " (see tg bench core --help)\n";
      return 2;
    }
  }
  if (args[0] == "train") {
    try {
      return bench_train(rest);
    } catch (const po::error& e) {
      std::cerr << "tg bench train: " << e.what() << " (see tg bench train --help)\n";
      return 2;
    }
  }
  if (args[0] == "matmul") {
    try {
      return bench_matmul(rest);
    } catch (const po::error& e) {
      std::cerr << "tg bench matmul: " << e.what() << " (see tg bench matmul --help)\n";
      return 2;
    }
  }
  if (args[0] == "gpu") {
    try {
      return bench_gpu(rest);
    } catch (const po::error& e) {
      std::cerr << "tg bench gpu: " << e.what() << " (see tg bench gpu --help)\n";
      return 2;
    }
  }
  if (args[0] == "python") {
    try {
      return bench_python(rest);
    } catch (const po::error& e) {
      std::cerr << "tg bench python: " << e.what() << " (see tg bench python --help)\n";
      return 2;
    }
  }
  if (args[0] == "collective") {
    try {
      return bench_collective(rest);
    } catch (const po::error& e) {
      std::cerr << "tg bench collective: " << e.what() << " (see tg bench collective --help)\n";
      return 2;
    }
  }
  if (args[0] == "gpt") {
    try {
      return bench_gpt(rest);
    } catch (const po::error& e) {
      std::cerr << "tg bench gpt: " << e.what() << " (see tg bench gpt --help)\n";
      return 2;
    }
  }
  if (args[0] == "attention") {
    try {
      return bench_attention(rest);
    } catch (const po::error& e) {
      std::cerr << "tg bench attention: " << e.what() << " (see tg bench attention --help)\n";
      return 2;
    }
  }
  if (args[0] == "onnx") {
    try {
      return bench_onnx(rest);
    } catch (const po::error& e) {
      std::cerr << "tg bench onnx: " << e.what() << " (see tg bench onnx --help)\n";
      return 2;
    }
  }
  if (args[0] == "cold-child") return cold_child(); // hidden: the process the cold-start row spawns
  std::cerr << "tg bench: unknown benchmark '" << args[0] << "'\n\n";
  bench_usage(std::cerr);
  return 2;
}

} // namespace tg::cli
