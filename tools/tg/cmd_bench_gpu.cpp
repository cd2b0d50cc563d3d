// `tg bench gpu`: the GPU rows of issue 13 (elementwise and sum over 64M floats, f32 matmul 4096,
// f16 matmul 8192, conv2d 256x32x28x28 -> 64 3x3, a tiny op including sync) on one device, with
// PyTorch on the GPU (tools/bench/peer_torch_gpu.py) measured in the same invocation, and on a CUDA
// device the tiny op's hardware limit (tg_cuda_floor: the raw driver path). A benchmark, not a
// test: it prints a table with each row's ratio and the target.
#include "kernel/runtime/config.hpp"
#include "kernel/runtime/devices.hpp"
#include "kernel/runtime/realize.hpp"
#include "tools/tg/bench_util.hpp"
#include "tools/tg/commands.hpp"

#include <boost/program_options.hpp>

#include <cmath>
#include <filesystem>
#include <iostream>

namespace po = boost::program_options;

namespace tg::cli {
namespace {

enum class Unit { GBps, TFLOPS, Micros };

struct GpuRow {
  std::string name, peer_key;
  Unit unit = Unit::GBps;
  double work = 0;         // bytes or flops per run
  double ours_ms = 0;      // median wall of realize + synchronize
  std::string target;      // the target, as text
  double target_ratio = 0; // ours/peer speed needed (0: an absolute target, see `absolute`)
  double absolute = 0;     // GB/s or us the row must reach (0: none)
};

GpuRow make_row(std::string name, std::string peer_key, Unit unit, double work) {
  GpuRow r;
  r.name = std::move(name);
  r.peer_key = std::move(peer_key);
  r.unit = unit;
  r.work = work;
  return r;
}

double speed(const GpuRow& r, double ms) {
  if (r.unit == Unit::Micros) return ms * 1e3;
  return r.work / (ms * 1e-3) / (r.unit == Unit::GBps ? 1e9 : 1e12);
}

// Where a tiny op's host time goes, phase by phase (median us over `calls` calls per sample):
// building the expression, scheduling it, the kernel-cache lookup, the launch alone, the launch
// plus synchronize, the whole realize + synchronize, and a read back of the result; then the
// realize + synchronize with the schedule cache switched the other way (TG_SCHEDULE_CACHE).
void print_tiny_profile(const Tensor& a, const std::shared_ptr<Device>& device, int repeat) {
  constexpr int calls = 200;
  auto us = [&](const std::function<void()>& fn) {
    return median_ms(1, repeat,
                     [&] {
                       for (int i = 0; i < calls; ++i) fn();
                     }) *
           1e3 / calls;
  };
  std::vector<ScheduleItem> items = (a + 1.0f).schedule();
  if (items.size() != 1) {
    std::cout << "tiny op profile: a+1 scheduled " << items.size() << " kernels, not 1\n";
    return;
  }
  const ScheduleItem& item = items[0];
  storage_of(item.buffers[0], true);
  std::vector<tg_buffer_arg> args;
  for (const auto& b : item.buffers) args.push_back({storage_of(b).buffer().raw(), 0});
  auto kernel = prepare_kernel(item);
  LaunchDims dims;
  dims.global = kernel->lowered.global;
  dims.local = kernel->lowered.local;
  const double expr = us([&] { (void)(a + 1.0f); });
  const double schedule = us([&] { (void)(a + 1.0f).schedule(); });
  const double prepare = us([&] { (void)prepare_kernel(item); });
  const double launch = us([&] { kernel->program->program.launch(dims, args); });
  device->synchronize();
  const double launch_sync = us([&] {
    kernel->program->program.launch(dims, args);
    device->synchronize();
  });
  const double sync_idle = us([&] { device->synchronize(); });
  const double full = us([&] {
    (a + 1.0f).realize();
    device->synchronize();
  });
  const double read = us([&] { (void)(a + 1.0f).to_vector<float>(); });
  const bool cached = config().schedule_cache;
  set_schedule_cache(!cached); // the other setting, for comparison
  const double full_other = us([&] {
    (a + 1.0f).realize();
    device->synchronize();
  });
  set_schedule_cache(cached);
  std::cout << "tiny op host profile (us per call, median of " << repeat << " x " << calls << " calls):\n"
            << "  build a+1 " << fixed(expr, 2) << " | schedule (incl. build) " << fixed(schedule, 2)
            << " | prepare_kernel (cache hit) " << fixed(prepare, 2) << " | launch " << fixed(launch, 2)
            << " | launch+sync " << fixed(launch_sync, 2) << " | sync idle " << fixed(sync_idle, 2)
            << "\n  realize+sync " << fixed(full, 2) << " | realize+read 16 floats " << fixed(read, 2)
            << " | realize+sync with the schedule cache " << (cached ? "off " : "on ") << fixed(full_other, 2)
            << "\n";
}

// The tiny op's hardware limit on a CUDA device: tg_cuda_floor (plugins/cuda/floor.cpp, next to
// tg) times the raw driver path for a kernel of the same shape, with nothing of ours in it. It
// runs as a separate process (pinned as tg is: it inherits the CPU affinity), right after our row.
Peer run_cuda_floor(const std::string& device, int repeat) {
  const PeerScript tool = find_peer_script("tg_cuda_floor");
  if (!tool.error.empty()) return Peer{{}, tool.error};
  const size_t colon = device.find(':');
  const std::string index = colon == std::string::npos ? "0" : device.substr(colon + 1);
  return run_peer_command(shell_quote(tool.path) + " --index " + shell_quote(index) + " --repeat " +
                          std::to_string(repeat));
}

void print_cuda_floor(const Peer& floor, double ours_us) {
  if (!floor.error.empty()) {
    std::cout << "hardware limit: " << floor.error << "\n";
    return;
  }
  auto us = [&](const char* key) {
    const auto v = floor.num(key);
    return v ? fixed(*v, 2) : std::string("?");
  };
  const auto limit = floor.num("launch_sync_us");
  std::cout
      << "hardware limit (tg_cuda_floor: the raw driver, out[i] = in[i] + 1 over 16 floats, us per call): "
      << "cuLaunchKernel + cuStreamSynchronize " << us("launch_sync_us");
  if (limit && ours_us > 0)
    std::cout << "; the tiny op row is " << fixed(ours_us / *limit, 2) << "x that ("
              << fixed(ours_us - *limit, 2) << " us are ours)";
  std::cout << "\n  cuLaunchKernel alone " << us("launch_us") << " | + event record/sync "
            << us("launch_event_sync_us") << " | + cuStreamQuery spin " << us("launch_query_spin_us")
            << " | sync idle " << us("sync_idle_us") << " | launch+sync again " << us("launch_sync_again_us")
            << "\n  context sched flag (default " << floor.str("default_sched") << "): spin "
            << us("launch_sync_sched_spin_us") << " | yield " << us("launch_sync_sched_yield_us")
            << " | blocking sync " << us("launch_sync_sched_blocking_us")
            << "\n  no driver wait (cuStreamWriteValue32 to mapped host memory, spin on it): launch+wait "
            << us("launch_host_word_spin_us") << " | idle " << us("host_word_idle_us")
            << " | legacy stream 0 launch+sync " << us("launch_sync_null_stream_us") << "\n";
}

} // namespace

int bench_gpu(const std::vector<std::string>& args) {
  po::options_description opts(
      "tg bench gpu: issue 13's GPU rows on one device against PyTorch on the GPU (peer_torch_gpu.py via\n"
      "/usr/bin/python3), measured in the same invocation. Times are medians of realize + synchronize.\n"
      "Options");
  opts.add_options()("help,h", "show this help")("device", po::value<std::string>()->default_value("CUDA"),
                                                 "device")("repeat", po::value<int>()->default_value(10),
                                                           "timed runs per row (after 2 warm-ups)")(
      "no-peer", "skip PyTorch")("peer-python", po::value<std::string>()->default_value("/usr/bin/python3"),
                                 "the interpreter that runs the peer")(
      "rows", po::value<std::string>()->default_value("all"),
      "comma-separated rows to run: elementwise,sum,matmul_f32,matmul_f16,conv,tiny (PyTorch runs all)")(
      "tiny-profile", "after the table, where the tiny op's host time goes, phase by phase")(
      "no-floor", "on a CUDA device, skip the tiny op's hardware limit (tg_cuda_floor, next to tg)")(
      "peer-script", po::value<std::string>()->default_value(""),
      "the PyTorch peer script (default: peer_torch_gpu.py from $TG_BENCH_PEER_DIR, next to tg, "
      "../share/tinygrad.cpp/bench, or the source tree)");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).run(), vm);
  if (vm.count("help")) {
    std::cout << opts;
    return 0;
  }
  const std::string device = vm["device"].as<std::string>();
  const int repeat = std::max(1, vm["repeat"].as<int>());
  OpenDevice dev = open_device(device);
  std::cout << "tg bench gpu: device " << device << " (" << dev.device->properties().name << "), repeat "
            << repeat << "\n"
            << std::flush;
  auto run = [&](const std::function<Tensor()>& make) {
    return median_ms(2, repeat, [&] {
      make().realize();
      dev.device->synchronize();
    });
  };
  const std::string wanted = "," + vm["rows"].as<std::string>() + ",";
  auto want = [&](const std::string& row) {
    return wanted == ",all," || wanted.find("," + row + ",") != std::string::npos;
  };
  if (wanted != ",all,") { // a typo must not cost the whole run
    std::string rest = wanted;
    for (const char* row : {"elementwise", "sum", "matmul_f32", "matmul_f16", "conv", "tiny"})
      for (size_t at; (at = rest.find("," + std::string(row) + ",")) != std::string::npos;)
        rest.erase(at, std::string(row).size() + 1);
    if (rest != ",") {
      std::cerr << "tg bench gpu: --rows " << vm["rows"].as<std::string>()
                << ": unknown row (rows: elementwise,sum,matmul_f32,matmul_f16,conv,tiny)\n";
      return 2;
    }
  }
  std::vector<GpuRow> rows;
  auto progress = [](const std::string& what) { std::cerr << "  running " << what << "...\n"; };
  if (want("elementwise") || want("sum")) {
    const int64_t n = int64_t(64) << 20;
    Tensor a = random_tensor({n}, 1, device), b = random_tensor({n}, 2, device),
           c = random_tensor({n}, 3, device);
    if (want("elementwise")) {
      progress("elementwise");
      GpuRow e = make_row("((a+b)*c).relu() 64M f32", "elementwise_ms", Unit::GBps, 4.0 * 4.0 * double(n));
      e.ours_ms = run([&] { return ((a + b) * c).relu(); });
      e.target = ">= 2600 GB/s";
      e.absolute = 2600;
      rows.push_back(e);
    }
    if (want("sum")) {
      progress("sum");
      GpuRow s = make_row("sum 64M f32", "sum_ms", Unit::GBps, 4.0 * double(n));
      s.ours_ms = run([&] { return a.sum(); });
      s.target = ">= 2500 GB/s";
      s.absolute = 2500;
      rows.push_back(s);
    }
  }
  if (want("matmul_f32")) {
    const int64_t n = 4096;
    progress("matmul f32");
    Tensor a = random_tensor({n, n}, 4, device), b = random_tensor({n, n}, 5, device);
    GpuRow r = make_row("matmul 4096 f32", "matmul_f32_ms", Unit::TFLOPS, 2.0 * n * n * n);
    r.ours_ms = run([&] { return a.matmul(b); });
    r.target = ">= 0.8x PyTorch";
    r.target_ratio = 0.8;
    rows.push_back(r);
  }
  if (want("matmul_f16")) {
    const int64_t n = 8192;
    progress("matmul f16");
    Tensor a = random_tensor({n, n}, 6, device).cast(dtypes::float16).realize();
    Tensor b = random_tensor({n, n}, 7, device).cast(dtypes::float16).realize();
    GpuRow r = make_row("matmul 8192 f16", "matmul_f16_ms", Unit::TFLOPS, 2.0 * n * n * n);
    r.ours_ms = run([&] { return a.matmul(b); });
    r.target = ">= 0.7x PyTorch";
    r.target_ratio = 0.7;
    rows.push_back(r);
  }
  if (want("conv")) {
    progress("conv2d");
    Tensor x = random_tensor({256, 32, 28, 28}, 8, device), w = random_tensor({64, 32, 3, 3}, 9, device);
    GpuRow r =
        make_row("conv2d 256x32x28x28 -> 64 3x3", "conv_ms", Unit::TFLOPS, 2.0 * 256 * 64 * 26 * 26 * 32 * 9);
    r.ours_ms = run([&] { return x.conv2d(w); });
    r.target = ">= 0.8x PyTorch";
    r.target_ratio = 0.8;
    rows.push_back(r);
  }
  std::optional<Tensor> tiny_input;
  Peer floor{{}, "only measured for the tiny row on a CUDA device"};
  double tiny_us = 0;
  if (want("tiny")) {
    progress("tiny op");
    Tensor a = random_tensor({16}, 10, device);
    GpuRow r = make_row("tiny op (a+1, 16 f32) incl. sync", "tiny_ms", Unit::Micros, 0);
    r.ours_ms = median_ms(2, repeat,
                          [&] { // many calls per sample: one is near the clock's grain
                            for (int i = 0; i < 100; ++i) {
                              (a + 1.0f).realize();
                              dev.device->synchronize();
                            }
                          }) /
                100;
    tiny_input = a;
    tiny_us = r.ours_ms * 1e3;
    if (device.starts_with("CUDA") && !vm.count("no-floor")) floor = run_cuda_floor(device, repeat);
    r.target = "<= 10 us";
    r.absolute = 10;
    rows.push_back(r);
  }

  Peer peer;
  if (vm.count("no-peer"))
    peer.error = "skipped (--no-peer)";
  else {
    const PeerScript script = find_peer_script("peer_torch_gpu.py", vm["peer-script"].as<std::string>());
    if (!script.error.empty())
      peer.error = script.error;
    else
      peer = run_peer_command(shell_quote(vm["peer-python"].as<std::string>()) + " " +
                              shell_quote(script.path) + " --repeat " + std::to_string(repeat));
  }
  std::vector<std::vector<std::string>> table;
  for (const GpuRow& r : rows) {
    const char* unit = r.unit == Unit::GBps ? " GB/s" : r.unit == Unit::TFLOPS ? " TFLOPS" : " us";
    const double ours = speed(r, r.ours_ms);
    std::optional<double> peer_ms = peer.error.empty() ? peer.num(r.peer_key) : std::nullopt;
    const double theirs = peer_ms ? speed(r, *peer_ms) : std::nan("");
    const double ratio = peer_ms ? *peer_ms / r.ours_ms : std::nan(""); // >1: we are faster
    bool met = false;
    if (r.target_ratio > 0)
      met = peer_ms && ratio >= r.target_ratio;
    else if (r.unit == Unit::Micros)
      met = ours <= r.absolute;
    else
      met = ours >= r.absolute;
    table.push_back({r.name, fixed(r.ours_ms, 3), fixed(ours, 1) + unit,
                     peer_ms ? fixed(theirs, 1) + unit : "-", peer_ms ? fixed(ratio, 2) : "-", r.target,
                     met ? "met" : "MISSED"});
  }
  print_table(std::cout, {"row", "ours ms", "ours", "PyTorch", "ratio", "target", ""}, table,
              {false, true, true, true, true, false, false});
  if (!peer.error.empty())
    std::cout << "peer: " << peer.error << "\n";
  else
    std::cout << "peer: PyTorch " << peer.str("torch_version") << " on " << peer.str("device") << "\n";
  std::cout << "ratio = PyTorch time / our time (above 1: we are faster)\n";
  if (tiny_us > 0 && device.starts_with("CUDA") && !vm.count("no-floor")) print_cuda_floor(floor, tiny_us);
  if (vm.count("tiny-profile") && tiny_input) print_tiny_profile(*tiny_input, dev.device, repeat);
  return 0;
}

} // namespace tg::cli
