// `tg bench ops --beam N`: matmul 1024 and 2048 and a conv2d (f32) with the heuristic's
// optimizations and with BEAM=N, against numpy's BLAS (matmul) and PyTorch (matmul; conv2d through
// oneDNN), all in the same invocation (tools/bench/peer_numpy.py and peer_torch.py, the scripts of
// `tg bench core`, each in --peer-runs fresh processes; each row is compared with its best peer).
// Prints the CPU model, what BEAM chose per kernel and how long the search took. A benchmark, not
// a test.
#include "tools/tg/bench_beam.hpp"

#include "kernel/engine/config.hpp"
#include "kernel/engine/realize.hpp"
#include "kernel/runtime/devices.hpp"
#include "tools/tg/bench_util.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>
#include <utility>

namespace tg::cli {
namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("model name"))
      if (auto colon = line.find(':'); colon != std::string::npos) return line.substr(colon + 2);
  return "?";
}

struct Row {
  std::string name;
  std::string peer_key; // in the peers' JSON
  double flops = 0;
  std::function<Tensor()> build;
  double heuristic_ms = std::nan(""), beam_ms = std::nan(""), search_s = std::nan("");
  std::vector<PeerFigure> peers; // those that measured the row
  std::optional<PeerFigure> best;
  std::string opts; // BEAM's list per kernel
};

Row make_row(std::string name, std::string peer_key, double flops, std::function<Tensor()> build) {
  Row r;
  r.name = std::move(name);
  r.peer_key = std::move(peer_key);
  r.flops = flops;
  r.build = std::move(build);
  return r;
}

void realize_and_wait(const Row& r, Device& device) {
  Tensor t = r.build();
  t.realize();
  device.synchronize();
}

// The optimization list each kernel of the row is lowered with now (from the kernel cache).
std::string chosen_opts(const Row& r) {
  std::string s;
  Tensor t = r.build();
  for (const ScheduleItem& item : t.schedule()) {
    if (item.ast->src(0)->op() == Ops::COPY) continue;
    s += (s.empty() ? "" : "; ") + prepare_kernel(item)->lowered.name + " " +
         to_string(prepare_kernel(item)->lowered.applied);
  }
  return s;
}

std::string ms_str(std::optional<double> ms) { return ms && !std::isnan(*ms) ? fixed(*ms, 2) + " ms" : "-"; }
std::string gflops_str(double flops, std::optional<double> ms) {
  return ms && !std::isnan(*ms) && *ms > 0 ? fixed(flops / (*ms * 1e6), 1) : "-";
}

PeerRuns run_peer(const std::string& python, const std::string& script_name, const std::string& args,
                  int runs) {
  const PeerScript script = find_peer_script(script_name);
  if (!script.error.empty()) return PeerRuns{Peer{{}, script.error}, {}};
  return run_peer_runs(shell_quote(python) + " " + shell_quote(script.path) + " " + args, runs);
}

std::string ms_fmt(double ms) { return fixed(ms, 2); }

} // namespace

int bench_beam(const BeamBenchOptions& o) {
  OpenDevice dev;
  try {
    dev = open_device(o.device);
  } catch (const std::exception& e) {
    std::cerr << "tg bench ops: device " << o.device << " cannot be used: " << e.what() << "\n";
    return 1;
  }
  const double timeout = o.timeout_s ? *o.timeout_s : config().beam_timeout_s;
  std::cout << "tg bench ops --beam " << o.width << ": device " << o.device << " ("
            << dev.device->properties().name << "), CPU " << cpu_model() << ", repeat " << o.repeat
            << ", BEAM_TIMEOUT " << timeout << " s, cache "
            << (config().disk_cache ? config().cache_dir : "off") << "\n"
            << std::flush;

  std::vector<Row> rows;
  for (int64_t n : {int64_t(1024), int64_t(2048)}) {
    Tensor a = random_tensor({n, n}, 1, o.device), b = random_tensor({n, n}, 2, o.device);
    rows.push_back(make_row("matmul " + std::to_string(n) + " f32", "matmul" + std::to_string(n) + "_ms",
                            2.0 * double(n * n * n), [=] { return a.matmul(b); }));
  }
  {
    Tensor x = random_tensor({32, 32, 28, 28}, 6, o.device), w = random_tensor({64, 32, 3, 3}, 7, o.device);
    rows.push_back(make_row("conv2d 32x32x28x28*64x32x3x3", "conv_ms", 2.0 * 32 * 64 * 26 * 26 * 32 * 9,
                            [=] { return x.conv2d(w); }));
  }

  for (Row& r : rows) {
    std::cerr << "  " << r.name << ": heuristic...\n";
    set_beam(0);
    r.heuristic_ms = median_ms(2, o.repeat, [&] { realize_and_wait(r, *dev.device); });
    std::cerr << "  " << r.name << ": BEAM=" << o.width << " (search or cache)...\n";
    set_beam(o.width, timeout);
    auto t0 = Clock::now();
    realize_and_wait(r, *dev.device); // searches each kernel once, or reads the BEAM cache
    r.search_s = ms_between(t0, Clock::now()) / 1e3;
    r.beam_ms = median_ms(1, o.repeat, [&] { realize_and_wait(r, *dev.device); });
    r.opts = chosen_opts(r);
    set_beam(0);
  }

  PeerRuns numpy_peer, torch_peer;
  if (o.no_peer) {
    numpy_peer.info.error = torch_peer.info.error = "--no-peer";
  } else {
    const std::string repeat = " --repeat " + std::to_string(o.repeat);
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    std::cerr << "  peers: numpy and PyTorch (" << o.python << "), " << o.peer_runs << " processes each...\n";
    numpy_peer = run_peer(o.python, "peer_numpy.py", "--rows matmul1024,matmul2048" + repeat, o.peer_runs);
    torch_peer = run_peer(o.python, "peer_torch.py",
                          "--rows matmul1024,matmul2048,conv --threads " + std::to_string(threads) + repeat,
                          o.peer_runs);
  }
  for (Row& r : rows) {
    for (const auto& [name, p] : {std::pair{"numpy", &numpy_peer}, std::pair{"PyTorch", &torch_peer}})
      if (auto s = p->spread(r.peer_key)) r.peers.push_back({name, *s});
    r.best = best_peer(r.peers);
  }

  auto peer_cell = [](const Row& r, const std::string& name) {
    for (const auto& f : r.peers)
      if (f.peer == name) return spread_str(f.spread, ms_fmt);
    return std::string("-");
  };
  const std::vector<std::string> head = {"workload",
                                         "heuristic",
                                         "GFLOPS",
                                         "BEAM=" + std::to_string(o.width),
                                         "GFLOPS",
                                         "search",
                                         "numpy ms (min/med/max)",
                                         "PyTorch ms (min/med/max)",
                                         "best peer",
                                         "GFLOPS",
                                         "BEAM vs best"};
  std::vector<std::vector<std::string>> cells;
  for (const Row& r : rows) {
    const std::optional<double> best_ms = r.best ? std::optional(r.best->spread.min) : std::nullopt;
    const bool have = best_ms && !std::isnan(r.beam_ms) && r.beam_ms > 0;
    cells.push_back({r.name, ms_str(r.heuristic_ms), gflops_str(r.flops, r.heuristic_ms), ms_str(r.beam_ms),
                     gflops_str(r.flops, r.beam_ms), fixed(r.search_s, 1) + " s", peer_cell(r, "numpy"),
                     peer_cell(r, "PyTorch"), r.best ? r.best->peer + " " + ms_str(best_ms) : "-",
                     gflops_str(r.flops, best_ms), have ? fixed(*best_ms / r.beam_ms, 2) + "x" : "-"});
  }
  std::cout << "\n";
  print_table(std::cout, head, cells, {false, true, true, true, true, true, true, true, false, true, true});
  std::cout
      << "\nBEAM vs best = the best peer's time / BEAM time (> 1: we are faster); wall times of realize +\n"
         "synchronize. Each peer ran in "
      << o.peer_runs << (o.peer_runs == 1 ? " fresh process" : " fresh processes")
      << " (median of --repeat calls in each); its best is the minimum over them.\n";
  for (const Row& r : rows)
    warn_wide_spreads(std::cout, r.name, r.peers, [](double ms) { return ms_str(ms); });
  for (const Row& r : rows) std::cout << "BEAM chose for " << r.name << ": " << r.opts << "\n";
  const Peer& np = numpy_peer.info;
  const Peer& pt = torch_peer.info;
  if (np.error.empty())
    std::cout << "numpy " << np.str("numpy_version") << ", BLAS loaded: " << np.str("blas") << " ("
              << np.str("blas_pools") << "), freed memory " << np.str("malloc") << "\n";
  else
    std::cout << "numpy peer: " << np.error << "\n";
  if (pt.error.empty())
    std::cout << "PyTorch " << pt.str("torch_version") << ", " << pt.str("threads")
              << " threads, oneDNN (mkldnn) " << pt.str("mkldnn") << ", freed memory " << pt.str("malloc")
              << "\n";
  else
    std::cout << "PyTorch peer: " << pt.error << "\n";
  std::cout << std::flush;
  if (!o.json_path) return 0;
  nlohmann::ordered_json out;
  out["device"] = o.device;
  out["device_name"] = dev.device->properties().name;
  out["cpu"] = cpu_model();
  out["beam"] = o.width;
  out["beam_timeout_s"] = timeout;
  out["repeat"] = o.repeat;
  out["peer_runs"] = o.peer_runs;
  out["numpy"] = np.error.empty() ? nlohmann::ordered_json(np.str("numpy_version") + ", " + np.str("blas"))
                                  : nlohmann::ordered_json(nullptr);
  out["numpy_error"] = np.error.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(np.error);
  out["torch"] =
      pt.error.empty() ? nlohmann::ordered_json(pt.str("torch_version")) : nlohmann::ordered_json(nullptr);
  out["torch_error"] = pt.error.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(pt.error);
  out["rows"] = nlohmann::ordered_json::array();
  auto num = [](double v) { return json_num(std::isnan(v) ? std::nullopt : std::optional(v)); };
  for (const Row& r : rows) {
    nlohmann::ordered_json row;
    row["name"] = r.name;
    row["gflop"] = r.flops / 1e9;
    row["heuristic_ms"] = num(r.heuristic_ms);
    row["beam_ms"] = num(r.beam_ms);
    row["search_s"] = num(r.search_s);
    row["peers"] = nlohmann::ordered_json::object();
    for (const auto& f : r.peers) row["peers"][f.peer] = spread_json(f.spread);
    row["best_peer"] = r.best ? nlohmann::ordered_json(r.best->peer) : nlohmann::ordered_json(nullptr);
    row["peer_ms"] = json_num(r.best ? std::optional(r.best->spread.min) : std::nullopt);
    row["ratio"] =
        json_num(r.best && r.beam_ms > 0 ? std::optional(r.best->spread.min / r.beam_ms) : std::nullopt);
    row["beam_opts"] = r.opts;
    out["rows"].push_back(std::move(row));
  }
  return write_bench_json("tg bench ops --beam", *o.json_path, out);
}

} // namespace tg::cli
