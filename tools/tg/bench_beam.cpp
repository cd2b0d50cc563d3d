// `tg bench ops --beam N`: matmul 1024 and 2048 and a conv2d (f32) with the heuristic's
// optimizations and with BEAM=N, against numpy's BLAS (matmul) and PyTorch (conv2d, oneDNN), all
// in the same invocation (tools/bench/peer_beam.py). Prints the CPU model, what BEAM chose per
// kernel and how long the search took. A benchmark, not a test.
#include "tools/tg/bench_beam.hpp"

#include "kernel/runtime/config.hpp"
#include "kernel/runtime/devices.hpp"
#include "kernel/runtime/realize.hpp"
#include "tools/tg/bench_util.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>

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
  std::string peer_key; // in the peer's JSON
  std::string peer_name;
  double flops = 0;
  std::function<Tensor()> build;
  double heuristic_ms = std::nan(""), beam_ms = std::nan(""), search_s = std::nan("");
  std::optional<double> peer_ms;
  std::string opts; // BEAM's list per kernel
};

Row make_row(std::string name, std::string peer_key, std::string peer_name, double flops,
             std::function<Tensor()> build) {
  Row r;
  r.name = std::move(name);
  r.peer_key = std::move(peer_key);
  r.peer_name = std::move(peer_name);
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

Peer run_part(const std::string& python, const std::string& part, int repeat) {
  const PeerScript script = find_peer_script("peer_beam.py");
  if (!script.error.empty()) return Peer{{}, script.error};
  return run_peer_command(shell_quote(python) + " " + shell_quote(script.path) + " --part " + part +
                          " --repeat " + std::to_string(repeat));
}

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
                            "numpy", 2.0 * double(n * n * n), [=] { return a.matmul(b); }));
  }
  {
    Tensor x = random_tensor({32, 32, 28, 28}, 6, o.device), w = random_tensor({64, 32, 3, 3}, 7, o.device);
    rows.push_back(make_row("conv2d 32x32x28x28*64x32x3x3", "conv_ms", "torch",
                            2.0 * 32 * 64 * 26 * 26 * 32 * 9, [=] { return x.conv2d(w); }));
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

  Peer numpy_peer, torch_peer;
  if (o.no_peer) {
    numpy_peer.error = torch_peer.error = "--no-peer";
  } else {
    std::cerr << "  peers: numpy and PyTorch (" << o.python << ")...\n";
    numpy_peer = run_part(o.python, "numpy", o.repeat);
    torch_peer = run_part(o.python, "torch", o.repeat);
  }
  for (Row& r : rows) {
    const Peer& p = r.peer_name == "numpy" ? numpy_peer : torch_peer;
    if (p.error.empty()) r.peer_ms = p.num(r.peer_key);
  }

  const std::vector<std::string> head = {
      "workload", "heuristic", "GFLOPS",      "BEAM=" + std::to_string(o.width), "GFLOPS", "search",
      "peer",     "GFLOPS",    "BEAM vs peer"};
  std::vector<std::vector<std::string>> cells;
  for (const Row& r : rows) {
    const bool have = r.peer_ms && !std::isnan(r.beam_ms) && r.beam_ms > 0;
    cells.push_back({r.name, ms_str(r.heuristic_ms), gflops_str(r.flops, r.heuristic_ms), ms_str(r.beam_ms),
                     gflops_str(r.flops, r.beam_ms), fixed(r.search_s, 1) + " s",
                     r.peer_name + " " + ms_str(r.peer_ms), gflops_str(r.flops, r.peer_ms),
                     have ? fixed(*r.peer_ms / r.beam_ms, 2) + "x" : "-"});
  }
  std::cout << "\n";
  print_table(std::cout, head, cells, {false, true, true, true, true, true, true, true, true});
  std::cout
      << "\nBEAM vs peer = peer time / BEAM time (> 1: we are faster); wall times of realize + synchronize\n";
  for (const Row& r : rows) std::cout << "BEAM chose for " << r.name << ": " << r.opts << "\n";
  if (numpy_peer.error.empty())
    std::cout << "numpy " << numpy_peer.str("numpy_version") << ", BLAS loaded: " << numpy_peer.str("blas")
              << " (" << numpy_peer.str("blas_pools") << ")\n";
  else
    std::cout << "numpy peer: " << numpy_peer.error << "\n";
  if (torch_peer.error.empty())
    std::cout << "PyTorch " << torch_peer.str("torch_version") << ", " << torch_peer.str("torch_threads")
              << " threads, oneDNN (mkldnn) " << torch_peer.str("mkldnn") << "\n";
  else
    std::cout << "PyTorch peer: " << torch_peer.error << "\n";
  std::cout << std::flush;
  if (!o.json_path) return 0;
  nlohmann::ordered_json out;
  out["device"] = o.device;
  out["device_name"] = dev.device->properties().name;
  out["cpu"] = cpu_model();
  out["beam"] = o.width;
  out["beam_timeout_s"] = timeout;
  out["repeat"] = o.repeat;
  out["numpy"] = numpy_peer.error.empty()
                     ? nlohmann::ordered_json(numpy_peer.str("numpy_version") + ", " + numpy_peer.str("blas"))
                     : nlohmann::ordered_json(nullptr);
  out["numpy_error"] =
      numpy_peer.error.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(numpy_peer.error);
  out["torch"] = torch_peer.error.empty() ? nlohmann::ordered_json(torch_peer.str("torch_version"))
                                          : nlohmann::ordered_json(nullptr);
  out["torch_error"] =
      torch_peer.error.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(torch_peer.error);
  out["rows"] = nlohmann::ordered_json::array();
  auto num = [](double v) { return json_num(std::isnan(v) ? std::nullopt : std::optional(v)); };
  for (const Row& r : rows) {
    nlohmann::ordered_json row;
    row["name"] = r.name;
    row["gflop"] = r.flops / 1e9;
    row["heuristic_ms"] = num(r.heuristic_ms);
    row["beam_ms"] = num(r.beam_ms);
    row["search_s"] = num(r.search_s);
    row["peer"] = r.peer_name;
    row["peer_ms"] = json_num(r.peer_ms);
    row["ratio"] =
        json_num(r.peer_ms && r.beam_ms > 0 ? std::optional(*r.peer_ms / r.beam_ms) : std::nullopt);
    row["beam_opts"] = r.opts;
    out["rows"].push_back(std::move(row));
  }
  return write_bench_json("tg bench ops --beam", *o.json_path, out);
}

} // namespace tg::cli
