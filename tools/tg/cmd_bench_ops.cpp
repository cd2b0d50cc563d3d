// `tg bench ops --device D`: elementwise ops, reductions (all elements, along each axis, long and
// short rows, max), softmax, matmul and a small conv2d on one device, against tinygrad running the
// same workloads in the same invocation (tools/bench/peer_tinygrad.py): its OpenCL backend for a GPU-
// style device (on this machine PoCL, the runtime under our OPENCL plugin), its CPU backend for CPU.
// The reduction rows that GROUP is meant to speed up run twice, with the default optimizations and
// with NOOPT, so one run shows what the heuristic buys. A benchmark, not a test.
#include "kernel/engine/config.hpp"
#include "kernel/engine/realize.hpp"
#include "kernel/runtime/devices.hpp"
#include "kernel/tensor/tensor.hpp"
#include "tools/tg/bench_beam.hpp"
#include "tools/tg/bench_util.hpp"
#include "tools/tg/commands.hpp"

#include <boost/program_options.hpp>
#include <tg/sdk/bytes.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>
#include <span>

namespace po = boost::program_options;

namespace tg::cli {
namespace {

// The hook the optimization machinery keys on: true = NOOPT=1 semantics (no optimization list), false
// = the heuristic's list. Kernels are cached per mode, so switching costs only the first compile.
void use_noopt(bool noopt) { set_noopt(noopt); }

// Row shapes; tools/bench/peer_tinygrad.py has the same table (SIZES) and reports each row's shape,
// so a mismatch shows up as "shape differs" instead of a wrong ratio.
struct Sizes {
  int64_t n;       // elementwise and full sum: n floats
  int64_t m;       // m x m for the per-axis rows and the activation chain
  Dims long_rows;  // few long rows: GROUP's case
  Dims short_rows; // many short rows: one thread per output is right
  Dims softmax;    // softmax along the last axis
  std::array<int64_t, 2> matmul;
  Dims conv_x, conv_w; // NCHW input, OIHW weight
};
const Sizes kLarge{int64_t(1) << 24, 4096,       {64, 262144},    {int64_t(1) << 20, 16},
                   {4096, 1024},     {256, 512}, {8, 16, 32, 32}, {32, 16, 3, 3}};
const Sizes kSmall{4096, 64, {4, 4096}, {1024, 16}, {16, 64}, {16, 32}, {1, 4, 8, 8}, {4, 4, 3, 3}};

enum class Kind { Bytes, Flops };

struct Workload {
  std::string id;   // key in the peer's JSON: <id>_ms, <id>_shape
  std::string name; // table label
  Dims shape;       // what the peer must have measured too
  Kind kind = Kind::Bytes;
  double work = 0; // bytes moved or flops per run
  bool noopt = false;
  std::function<Tensor()> build; // a fresh expression each call, so realize computes it again
};

struct Result {
  double wall_ms = std::nan("");
  std::optional<double> kernel_ms; // the device's own timing, when it has TG_FEATURE_TIMING
  std::optional<double> peer_ms;   // the best of the peer's processes
  std::optional<Spread> peer_runs; // min / median / max over them
  std::string check = "-"; // against the CPU: "ok" or "WRONG ..."; "REFUSED": the device cannot run it
  std::string note;
};

// A fast wrong answer is no result: compares one realize of w on the device with the same row built
// from the same seeds on the CPU (max |difference| relative to max |CPU value|; 1e-3 allows for the
// devices summing in different orders).
std::string check_against_cpu(const Workload& w, const Workload& on_cpu) {
  const bool noopt_before = config().noopt;
  use_noopt(w.noopt);
  std::vector<float> got = w.build().to_vector<float>();
  use_noopt(noopt_before);
  std::vector<float> want = on_cpu.build().to_vector<float>();
  if (got.size() != want.size()) return "WRONG (size " + std::to_string(got.size()) + ")";
  double err = 0, scale = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    err = std::max(err, std::fabs(double(got[i]) - double(want[i])));
    scale = std::max(scale, std::fabs(double(want[i])));
  }
  const double rel = err / std::max(scale, 1e-30);
  return std::isfinite(rel) && rel <= 1e-3 ? "ok" : "WRONG (rel err " + general(rel) + ")";
}

std::string shape_str(const Dims& d) {
  std::string s;
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "x" : "") + std::to_string(d[i]);
  return s;
}
Dims concat(Dims a, const Dims& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<Workload> workloads(const Sizes& z, const std::string& device) {
  const double f = 4.0; // bytes per float32
  const int64_t n = z.n, m = z.m;
  Tensor a = random_tensor({n}, 1, device), b = random_tensor({n}, 2, device);
  Tensor x = random_tensor({m, m}, 3, device), w = random_tensor({m}, 4, device),
         bias = random_tensor({m}, 5, device);
  Tensor lr = random_tensor(z.long_rows, 6, device), sr = random_tensor(z.short_rows, 7, device);
  Tensor sm = random_tensor(z.softmax, 8, device);
  Tensor cx = random_tensor(z.conv_x, 11, device), cw = random_tensor(z.conv_w, 12, device);
  const double nn = double(n), mm = double(m * m);
  const double lrn = double(dims_prod(z.long_rows)), srn = double(dims_prod(z.short_rows));
  const double smn = double(dims_prod(z.softmax));
  const std::string ns = shape_str({n}), ms = shape_str({m, m});
  std::vector<Workload> out = {
      {"add", "add a+b " + ns, {n}, Kind::Bytes, 3 * nn * f, false, [=] { return a + b; }},
      {"mul", "mul a*b " + ns, {n}, Kind::Bytes, 3 * nn * f, false, [=] { return a * b; }},
      {"act",
       "relu(x*w+b) " + ms,
       {m, m},
       Kind::Bytes,
       (2 * mm + 2 * m) * f,
       false,
       [=] { return (x * w + bias).relu(); }},
      {"sum", "sum all " + ns + " (heuristic)", {n}, Kind::Bytes, nn * f, false, [=] { return a.sum(); }},
      {"sum_noopt", "sum all " + ns + " (NOOPT)", {n}, Kind::Bytes, nn * f, true, [=] { return a.sum(); }},
      {"sum_ax0", "sum axis 0 " + ms, {m, m}, Kind::Bytes, mm * f, false, [=] { return x.sum({0}); }},
      {"sum_ax1", "sum axis 1 " + ms, {m, m}, Kind::Bytes, mm * f, false, [=] { return x.sum({1}); }},
      {"max_ax1", "max axis 1 " + ms, {m, m}, Kind::Bytes, mm * f, false, [=] { return x.max({1}); }},
      {"sum_long", "sum rows " + shape_str(z.long_rows) + " (heuristic)", z.long_rows, Kind::Bytes, lrn * f,
       false, [=] { return lr.sum({1}); }},
      {"sum_long_noopt", "sum rows " + shape_str(z.long_rows) + " (NOOPT)", z.long_rows, Kind::Bytes, lrn * f,
       true, [=] { return lr.sum({1}); }},
      {"sum_short", "sum rows " + shape_str(z.short_rows), z.short_rows, Kind::Bytes, srn * f, false,
       [=] { return sr.sum({1}); }},
      {"softmax", "softmax " + shape_str(z.softmax), z.softmax, Kind::Bytes, 2 * smn * f, false,
       [=] { return sm.softmax(-1); }},
  };
  const char* mm_ids[] = {"mm_a", "mm_b"};
  for (size_t i = 0; i < z.matmul.size(); ++i) {
    const int64_t k = z.matmul[i];
    Tensor p = random_tensor({k, k}, uint32_t(9 + 2 * i), device),
           q = random_tensor({k, k}, uint32_t(10 + 2 * i), device);
    out.push_back(
        {mm_ids[i], "matmul " + shape_str({k, k}), {k, k}, Kind::Flops, 2.0 * double(k * k * k), false, [=] {
           return p.matmul(q);
         }});
  }
  const Dims& xs = z.conv_x;
  const Dims& ws = z.conv_w;
  const double conv_flops =
      2.0 * double(xs[0] * ws[0] * (xs[2] - ws[2] + 1) * (xs[3] - ws[3] + 1) * ws[1] * ws[2] * ws[3]);
  out.push_back({"conv", "conv2d " + shape_str(xs) + " * " + shape_str(ws), concat(xs, ws), Kind::Flops,
                 conv_flops, false, [=] { return cx.conv2d(cw); }});
  return out;
}

// Counts timed realizes that found their result already computed (no kernel ran).
int g_stale = 0;

// Realize of a freshly built expression, then synchronize: what a user waits for.
void realize_and_wait(const Workload& w, Device& device) {
  Tensor t = w.build();
  if (is_buffer_view(t.uop())) ++g_stale;
  t.realize();
  device.synchronize();
}

// Sum of the device-timed kernel launches of one realize of w, without scheduling or cache lookups.
double kernel_ms_once(
    const std::vector<std::pair<std::shared_ptr<PreparedKernel>, std::vector<tg_buffer_arg>>>& ks) {
  double ms = 0;
  for (const auto& [kernel, args] : ks) {
    LaunchDims dims;
    dims.global = kernel->lowered.global;
    dims.local = kernel->lowered.local;
    auto ns = kernel->program->program.launch(dims, args, {}, /*measure=*/true);
    ms += ns ? double(*ns) / 1e6 : std::nan("");
  }
  return ms;
}

constexpr int kWarmup = 2; // the first compiles; the second lets the allocator's cache settle

Result measure(const Workload& w, Device& device, int repeat) {
  Result r;
  const bool noopt_before = config().noopt;
  use_noopt(w.noopt);
  r.wall_ms = median_ms(kWarmup, repeat, [&] { realize_and_wait(w, device); });
  if (device.properties().features & TG_FEATURE_TIMING) {
    // The same kernels launched directly, timed by the device: the pure kernel time.
    Tensor t = w.build();
    std::vector<std::pair<std::shared_ptr<PreparedKernel>, std::vector<tg_buffer_arg>>> ks;
    bool copies = false;
    for (const ScheduleItem& item : t.schedule()) {
      if (item.ast->src(0)->op() == Ops::COPY) {
        copies = true;
        continue;
      }
      storage_of(item.buffers[0], true);
      std::vector<tg_buffer_arg> args;
      for (const auto& buf : item.buffers) args.push_back({storage_of(buf).buffer().raw(), 0});
      ks.emplace_back(prepare_kernel(item), std::move(args));
    }
    if (!copies) {
      kernel_ms_once(ks); // warm-up
      std::vector<double> samples;
      for (int i = 0; i < repeat; ++i) samples.push_back(kernel_ms_once(ks));
      r.kernel_ms = median(std::move(samples));
    }
  }
  use_noopt(noopt_before);
  return r;
}

// ---- the peer ----

// Which tinygrad device runs the peer for our device: its CPU backend for CPU, else OpenCL.
std::string peer_device_for(const std::string& device) {
  return parse_device_name(device).plugin == "cpu" ? "CPU" : "CL";
}

PeerRuns run_peer(const std::string& python, const std::string& peer_device, int repeat, bool small,
                  int runs) {
  const PeerScript script = find_peer_script("peer_tinygrad.py");
  if (!script.error.empty()) return PeerRuns{Peer{{}, script.error}, {}};
  return run_peer_runs(shell_quote(python) + " " + shell_quote(script.path) + " --device " +
                           shell_quote(peer_device) + " --repeat " + std::to_string(repeat) +
                           (small ? " --small" : ""),
                       runs);
}

// ---- printing ----

std::string ms_str(std::optional<double> t) {
  if (!t || std::isnan(*t)) return "-";
  return (*t >= 100 ? fixed(*t, 1) : *t >= 10 ? fixed(*t, 2) : fixed(*t, 3)) + " ms";
}

double rate(const Workload& w, double ms) { return w.work / (ms * 1e6); } // G per second
std::string rate_str(const Workload& w, std::optional<double> ms) {
  if (!ms || std::isnan(*ms) || *ms <= 0) return "-";
  return fixed(rate(w, *ms), 2) + (w.kind == Kind::Flops ? " GFLOPS" : " GB/s");
}

std::optional<double> ratio(const Result& r) {
  if (!r.peer_ms || std::isnan(r.wall_ms) || r.wall_ms <= 0) return std::nullopt;
  return *r.peer_ms / r.wall_ms;
}

void print_results(const std::vector<Workload>& ws, const std::vector<Result>& rs) {
  const std::vector<std::string> head = {
      "workload",  "ours wall", "ours kernel", "ours rate", "peer wall min/med/max",
      "peer rate", "ratio",     "check"};
  std::vector<std::vector<std::string>> cells;
  for (size_t i = 0; i < ws.size(); ++i) {
    auto x = ratio(rs[i]);
    const std::string peer = rs[i].peer_ms && rs[i].peer_runs
                                 ? spread_str(*rs[i].peer_runs, [](double t) { return ms_str(t); })
                                 : "-";
    cells.push_back({ws[i].name, ms_str(rs[i].wall_ms), ms_str(rs[i].kernel_ms),
                     rate_str(ws[i], rs[i].wall_ms), peer, rate_str(ws[i], rs[i].peer_ms),
                     x ? fixed(*x, *x < 0.1 ? 4 : 2) + "x" : "-", rs[i].check});
  }
  std::cout << "\n";
  print_table(std::cout, head, cells, {false, true, true, true, true, true, true, false});
  std::cout << "\n";
  for (size_t i = 0; i < ws.size(); ++i)
    if (!rs[i].note.empty()) std::cout << "note: " << ws[i].name << ": " << rs[i].note << "\n";
  for (size_t i = 0; i < ws.size(); ++i)
    if (rs[i].peer_ms && rs[i].peer_runs)
      warn_wide_spreads(std::cout, ws[i].name, {{"tinygrad", *rs[i].peer_runs}},
                        [](double t) { return ms_str(t); });
  // The heuristic against NOOPT on the same reduction: > 1 means the optimizations help.
  for (size_t i = 0; i + 1 < ws.size(); ++i)
    if (!ws[i].noopt && ws[i + 1].noopt && ws[i + 1].id == ws[i].id + "_noopt" &&
        !std::isnan(rs[i].wall_ms) && !std::isnan(rs[i + 1].wall_ms))
      std::cout << ws[i].id << ": heuristic is " << fixed(rs[i + 1].wall_ms / rs[i].wall_ms, 2)
                << "x the speed of NOOPT (wall)"
                << (rs[i].kernel_ms && rs[i + 1].kernel_ms
                        ? ", " + fixed(*rs[i + 1].kernel_ms / *rs[i].kernel_ms, 2) + "x (kernel)"
                        : std::string())
                << "\n";
}

int write_json(const std::string& path, const std::string& device, const std::string& device_name, int repeat,
               bool small, const Peer& peer, const std::vector<Workload>& ws, const std::vector<Result>& rs) {
  nlohmann::ordered_json out;
  out["device"] = device;
  out["device_name"] = device_name;
  out["repeat"] = repeat;
  out["small"] = small;
  if (peer.error.empty())
    out["peer"] = {{"name", "tinygrad"},
                   {"version", peer.str("tinygrad_version")},
                   {"device", peer.str("device")},
                   {"device_name", peer.str("device_name")}};
  else
    out["peer"] = nullptr;
  out["peer_error"] =
      peer.error.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(peer.error);
  out["rows"] = nlohmann::ordered_json::array();
  for (size_t i = 0; i < ws.size(); ++i) {
    const Workload& w = ws[i];
    const Result& r = rs[i];
    nlohmann::ordered_json row;
    row["id"] = w.id;
    row["name"] = w.name;
    row["noopt"] = w.noopt;
    row["ours_wall_ms"] = json_num(r.wall_ms);
    row["ours_kernel_ms"] = json_num(r.kernel_ms);
    row["peer_ms"] = json_num(r.peer_ms);
    row["peer_runs"] = r.peer_ms && r.peer_runs ? spread_json(*r.peer_runs) : nlohmann::ordered_json(nullptr);
    row["rate_unit"] = w.kind == Kind::Flops ? "GFLOPS" : "GB/s";
    row["ours_rate"] = json_num(rate(w, r.wall_ms));
    row["peer_rate"] = json_num(r.peer_ms ? std::optional<double>(rate(w, *r.peer_ms)) : std::nullopt);
    row["ratio"] = json_num(ratio(r));
    row["check"] = r.check;
    out["rows"].push_back(std::move(row));
  }
  return write_bench_json("tg bench ops", path, out);
}

} // namespace

int bench_ops(const std::vector<std::string>& args) {
  po::options_description opts(
      "tg bench ops: elementwise, reductions, softmax, matmul and conv2d on one device against tinygrad\n"
      "(tools/bench/peer_tinygrad.py: its OpenCL backend, or its CPU backend for --device CPU), in the same\n"
      "invocation. Times are medians over --repeat runs after two warm-up runs: wall = realize of a fresh\n"
      "expression + synchronize; kernel = the device's own timing of the same kernels (where it has it).\n"
      "ratio = our speed / peer's speed (peer wall / our wall; > 1: we are faster).\nOptions");
  opts.add_options()("help,h",
                     "show this help")("device,d", po::value<std::string>()->default_value(""),
                                       "device, e.g. OPENCL, VULKAN, CPU (default: $TG_DEVICE or CPU)")(
      "repeat,n", po::value<int>()->default_value(10), "timed runs per workload (after warm-up)")(
      "small", "tiny sizes (a smoke run, not a measurement)")("no-peer", "skip the tinygrad peer")(
      "no-check", "do not compare each row's result with the CPU's (other devices than CPU)")(
      "peer-python", po::value<std::string>()->default_value(""),
      "python interpreter that can import tinygrad (default: python3, then /usr/bin/python3)")(
      "peer-device", po::value<std::string>()->default_value(""),
      "tinygrad device for the peer (default: CPU for --device CPU, else CL)")(
      "json", po::value<std::string>(), "also write the results to this file")(
      "peer-runs", po::value<int>()->default_value(3),
      "fresh processes per peer (1..20); each row shows their min / median / max and compares the min")(
      "beam", po::value<int>(),
      "instead: matmul 1024/2048 and conv2d with the heuristic and with BEAM=N against numpy (BLAS) and\n"
      "PyTorch (oneDNN) run by --peer-python (default /usr/bin/python3), the best peer of each row; prints\n"
      "BEAM's choices and search "
      "time")("beam-timeout", po::value<double>(),
              "with --beam: BEAM_TIMEOUT seconds per kernel (default: $BEAM_TIMEOUT or 20)");
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
  if (!bench_options_ok("tg bench ops", repeat, json_path) || !peer_runs_ok("tg bench ops", peer_runs))
    return 2;
  const bool small = vm.count("small") > 0;
  std::string device = vm["device"].as<std::string>();
  device = device.empty() ? default_device() : parse_device_name(device).canonical();
  if (vm.count("beam")) {
    BeamBenchOptions b;
    b.width = vm["beam"].as<int>();
    if (b.width < 1) {
      std::cerr << "tg bench ops: --beam must be >= 1, got " << b.width << "\n";
      return 2;
    }
    b.repeat = repeat;
    b.device = device;
    if (vm.count("beam-timeout")) b.timeout_s = vm["beam-timeout"].as<double>();
    if (!vm["peer-python"].as<std::string>().empty()) b.python = vm["peer-python"].as<std::string>();
    b.no_peer = vm.count("no-peer") > 0;
    b.peer_runs = peer_runs;
    b.json_path = json_path;
    return bench_beam(b);
  }
  OpenDevice dev;
  try {
    dev = open_device(device);
  } catch (const std::exception& e) {
    std::cerr << "tg bench ops: device " << device << " cannot be used: " << e.what() << "\n";
    return 1;
  }
  const std::string device_name = dev.device->properties().name;
  std::cout << "tg bench ops: device " << device << " (" << device_name << "), repeat " << repeat
            << (small ? ", --small sizes" : "") << "\n"
            << std::flush;

  std::vector<Workload> ws = workloads(small ? kSmall : kLarge, device);
  std::vector<Result> rs;
  const bool noopt_before = config().noopt;
  for (const auto& w : ws) {
    std::cerr << "  running " << w.name << "...\n";
    try {
      rs.push_back(measure(w, *dev.device, repeat));
    } catch (const OptError& e) { // a kernel the device cannot run (e.g. over its loop limit)
      use_noopt(noopt_before);
      Result r;
      r.check = "REFUSED";
      r.note = e.what();
      rs.push_back(r);
    }
  }
  if (parse_device_name(device).plugin != "cpu" && !vm.count("no-check")) {
    std::cerr << "  checking the results against the CPU...\n";
    std::vector<Workload> on_cpu = workloads(small ? kSmall : kLarge, "CPU");
    for (size_t i = 0; i < ws.size(); ++i)
      if (rs[i].check != "REFUSED") rs[i].check = check_against_cpu(ws[i], on_cpu[i]);
  }

  PeerRuns runs;
  Peer& peer = runs.info;
  const std::string peer_device = vm["peer-device"].as<std::string>().empty()
                                      ? peer_device_for(device)
                                      : vm["peer-device"].as<std::string>();
  if (vm.count("no-peer")) {
    peer.error = "--no-peer";
  } else if (const TinygradPython python = find_tinygrad_python(vm["peer-python"].as<std::string>());
             !python.error.empty()) {
    peer.error = python.error;
  } else {
    std::cerr << "  running the tinygrad peer (" << python.python << ", DEV=" << peer_device << "), "
              << peer_runs << " processes...\n";
    runs = run_peer(python.python, peer_device, repeat, small, peer_runs);
  }
  for (size_t i = 0; i < ws.size() && peer.error.empty(); ++i) {
    rs[i].peer_runs = runs.spread(ws[i].id + "_ms");
    if (rs[i].peer_runs) rs[i].peer_ms = rs[i].peer_runs->min;
    std::string theirs = peer.str(ws[i].id + "_shape");
    if (rs[i].peer_ms && theirs != shape_str(ws[i].shape)) {
      rs[i].note = "peer measured shape " + theirs + ", not " + shape_str(ws[i].shape) + ": no ratio";
      rs[i].peer_ms.reset();
    }
  }

  print_results(ws, rs);
  if (peer.error.empty())
    std::cout << "peer: tinygrad " << peer.str("tinygrad_version") << " DEV=" << peer.str("device") << " ("
              << peer.str("device_name") << "), tools/bench/peer_tinygrad.py, in this same run, " << peer_runs
              << " processes (ratio: their best)\n";
  else
    std::cout << "peer: " << peer.error << "\n";
  std::cout << "ours: " << device << " (" << device_name << "); kernel = device-timed launches"
            << ((dev.device->properties().features & TG_FEATURE_TIMING) ? ""
                                                                        : " (this device has no timing: -)")
            << "\n";
  if (g_stale)
    std::cout << "warning: " << g_stale
              << " timed realizes found their result already computed (timings too low)\n";
  std::cout << std::flush; // the table must reach a pipe even if a plugin misbehaves at exit
  if (vm.count("json"))
    return write_json(vm["json"].as<std::string>(), device, device_name, repeat, small, peer, ws, rs);
  return 0;
}

} // namespace tg::cli
