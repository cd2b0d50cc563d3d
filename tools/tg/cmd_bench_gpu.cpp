// `tg bench gpu`: the GPU rows (elementwise and sum over 64M floats, f32 matmul 4096,
// f16 matmul 8192, conv2d 256x32x28x28 -> 64 3x3, a tiny op including sync) on one device, with
// PyTorch on the GPU (tools/bench/peer_torch_gpu.py) and, where an interpreter imports it, tinygrad's
// CUDA backend (tools/bench/peer_tinygrad_gpu.py) measured in the same invocation, and on a CUDA
// device the tiny op's hardware limit (tg_cuda_floor: the raw driver path). A benchmark, not a
// test: it prints a table with each row's ratios and its target.
#include "kernel/engine/config.hpp"
#include "kernel/engine/realize.hpp"
#include "kernel/runtime/devices.hpp"
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
  std::string shape; // what a peer must report under <row>_shape for a ratio
  Unit unit = Unit::GBps;
  double work = 0;         // bytes or flops per run
  double ours_ms = 0;      // median wall of realize + synchronize
  std::string target;      // the row's target, as text
  double target_ratio = 0; // ours/peer speed needed (0: an absolute target, see `absolute`)
  double absolute = 0;     // GB/s or us the row must reach (0: none)
};

GpuRow make_row(std::string name, std::string peer_key, std::string shape, Unit unit, double work) {
  GpuRow r;
  r.name = std::move(name);
  r.peer_key = std::move(peer_key);
  r.shape = std::move(shape);
  r.unit = unit;
  r.work = work;
  return r;
}

double speed(const GpuRow& r, double ms) {
  if (r.unit == Unit::Micros) return ms * 1e3;
  return r.work / (ms * 1e-3) / (r.unit == Unit::GBps ? 1e9 : 1e12);
}

// Microseconds per call of fn: the median of `repeat` samples of `calls` calls each (one call is
// near the clock's grain).
double us_per_call(int repeat, int calls, const std::function<void()>& fn) {
  return median_ms(1, repeat,
                   [&] {
                     for (int i = 0; i < calls; ++i) fn();
                   }) *
         1e3 / calls;
}

// Where a tiny op's host time goes, phase by phase (median us over `calls` calls per sample):
// building the expression, scheduling it, the kernel-cache lookup, the launch alone, the launch
// plus synchronize, the whole realize + synchronize, and a read back of the result; then the
// realize + synchronize with the schedule cache switched the other way (TG_SCHEDULE_CACHE).
void print_tiny_profile(const Tensor& a, const std::shared_ptr<Device>& device, int repeat) {
  constexpr int calls = 200;
  auto us = [&](const std::function<void()>& fn) { return us_per_call(repeat, calls, fn); };
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

// Where the conv row's time goes (median us over `calls` calls per sample): building x.conv2d(w),
// scheduling it, each kernel of its schedule launched alone plus synchronize, all of them launched
// back to back plus synchronize, and the row's realize + synchronize. After the row the schedule
// holds the convolution alone: the weight's output-channel-minor copy is made once per weight
// value (Tensor::layout).
void print_conv_profile(const Tensor& x, const Tensor& w, const std::shared_ptr<Device>& device, int repeat) {
  constexpr int calls = 20;
  auto us = [&](const std::function<void()>& fn) { return us_per_call(repeat, calls, fn); };
  struct Launch {
    std::shared_ptr<PreparedKernel> kernel;
    LaunchDims dims;
    std::vector<tg_buffer_arg> args;
    void operator()() const { kernel->program->program.launch(dims, args); }
  };
  std::vector<Launch> launches;
  for (const ScheduleItem& item : x.conv2d(w).schedule()) {
    storage_of(item.buffers[0], true);
    Launch l;
    l.kernel = prepare_kernel(item);
    l.dims.global = l.kernel->lowered.global;
    l.dims.local = l.kernel->lowered.local;
    for (const auto& b : item.buffers) l.args.push_back({storage_of(b).buffer().raw(), 0});
    l(); // in order, so every kernel's inputs hold data
    launches.push_back(std::move(l));
  }
  device->synchronize();
  const double build = us([&] { (void)x.conv2d(w); });
  const double schedule = us([&] { (void)x.conv2d(w).schedule(); });
  std::vector<double> alone;
  for (const Launch& l : launches)
    alone.push_back(us([&] {
      l();
      device->synchronize();
    }));
  const double all = us([&] {
    for (const Launch& l : launches) l();
    device->synchronize();
  });
  const double full = us([&] {
    x.conv2d(w).realize();
    device->synchronize();
  });
  std::cout << "conv host profile (us per call, median of " << repeat << " x " << calls << " calls):\n"
            << "  build " << fixed(build, 2) << " | schedule (incl. build) " << fixed(schedule, 2) << "\n";
  for (size_t i = 0; i < launches.size(); ++i)
    std::cout << "  kernel " << launches[i].kernel->lowered.name << " launch+sync " << fixed(alone[i], 2)
              << "\n";
  std::cout << "  all " << launches.size() << " kernels launch+sync " << fixed(all, 2) << " | realize+sync "
            << fixed(full, 2) << "\n";
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
              << (ours_us >= *limit
                      ? fixed(ours_us - *limit, 2) + " us are ours"
                      : fixed(*limit - ours_us, 2) + " us under it: our synchronize waits for the "
                                                     "kernel's completion word, not for the driver")
              << ")";
  std::cout
      << "\n  cuLaunchKernel alone " << us("launch_us") << " | + event record/sync "
      << us("launch_event_sync_us") << " | + cuStreamQuery spin " << us("launch_query_spin_us")
      << " | sync idle " << us("sync_idle_us") << " | launch+sync again " << us("launch_sync_again_us")
      << "\n  context sched flag (default " << floor.str("default_sched") << "): spin "
      << us("launch_sync_sched_spin_us") << " | yield " << us("launch_sync_sched_yield_us")
      << " | blocking sync " << us("launch_sync_sched_blocking_us")
      << "\n  no driver wait (cuStreamWriteValue32 to mapped host memory, spin on it): launch+wait "
      << us("launch_host_word_spin_us") << " | idle " << us("host_word_idle_us")
      << " | legacy stream 0 launch+sync " << us("launch_sync_null_stream_us")
      << "\n  the kernel stores a word to mapped host memory as its last act (plugins/cuda/stream.hpp): "
         "launch alone "
      << us("launch_flag_only_us") << " | launch+spin on the word " << us("launch_kernel_flag_spin_us")
      << " (device-wide fence, as rendered: " << us("launch_kernel_flag_gl_spin_us") << ")"
      << " | the same + cuStreamQuery " << us("launch_kernel_flag_query_us") << " (the word came first "
      << (floor.num("flag_before_driver") ? std::to_string(int64_t(*floor.num("flag_before_driver"))) : "?")
      << " times) | that kernel + cuStreamSynchronize " << us("launch_flag_kernel_sync_us")
      << "\n  cuLaunchKernel with packed arguments (`extra`) + sync " << us("launch_extra_sync_us") << "\n";
}

// A peer's time for row r, if it measured the same shape: the peer reports <row>_shape next to
// <row>_ms (the row key without "_ms"), and a missing or different shape gets no ratio but a note.
std::optional<double> peer_ms_for(const Peer& peer, const std::string& who, const GpuRow& r,
                                  std::vector<std::string>& notes) {
  if (!peer.error.empty()) return std::nullopt;
  const std::optional<double> ms = peer.num(r.peer_key);
  if (!ms) return std::nullopt;
  const std::string key = r.peer_key.substr(0, r.peer_key.size() - 3) + "_shape";
  const std::string theirs = peer.str(key);
  if (theirs == r.shape) return ms;
  notes.push_back(r.name + ": " + who + " measured shape " + theirs + " (" + key + "), not " + r.shape +
                  ": no ratio");
  return std::nullopt;
}

} // namespace

int bench_gpu(const std::vector<std::string>& args) {
  po::options_description opts(
      "tg bench gpu: the GPU rows on one device against PyTorch on the GPU (peer_torch_gpu.py via\n"
      "/usr/bin/python3) and tinygrad's CUDA backend (peer_tinygrad_gpu.py, where tinygrad imports), "
      "measured\n"
      "in the same invocation. Times are medians of realize + synchronize.\n"
      "Options");
  opts.add_options()("help,h", "show this help")("device", po::value<std::string>()->default_value("CUDA"),
                                                 "device")("repeat", po::value<int>()->default_value(10),
                                                           "timed runs per row (after 2 warm-ups)")(
      "no-peer", "skip both peers (PyTorch and tinygrad)")(
      "peer-python", po::value<std::string>()->default_value("/usr/bin/python3"),
      "the interpreter that runs the PyTorch peer (by default /usr/bin/python3, or python3 on $PATH where "
      "only that imports torch)")(
      "peer-tinygrad-python", po::value<std::string>()->default_value(""),
      "the interpreter that runs the tinygrad peer (peer_tinygrad_gpu.py, DEV=CUDA; default: the first of "
      "python3 and /usr/bin/python3 that imports tinygrad; PYTHONPATH is passed on)")(
      "no-tinygrad", "skip the tinygrad peer")(
      "rows", po::value<std::string>()->default_value("all"),
      "comma-separated rows to run: elementwise,sum,matmul_f32,matmul_f16,matmul_bf16,conv,tiny (PyTorch "
      "runs all)")("tiny-profile", "after the table, where the tiny op's host time goes, phase by phase")(
      "conv-profile", "after the table, where the conv row's time goes, phase by phase")(
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
  const std::string tinygrad_python = vm["peer-tinygrad-python"].as<std::string>();
  if (!tinygrad_python.empty() && (vm.count("no-tinygrad") || vm.count("no-peer"))) {
    std::cerr << "tg bench gpu: --peer-tinygrad-python and "
              << (vm.count("no-peer") ? "--no-peer" : "--no-tinygrad") << " contradict each other\n";
    return 2;
  }
  if (!tinygrad_python.empty() && !command_exists(tinygrad_python)) { // before minutes of measuring
    std::cerr << "tg bench gpu: --peer-tinygrad-python " << tinygrad_python << ": no such interpreter\n";
    return 2;
  }
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
    for (const char* row : {"elementwise", "sum", "matmul_f32", "matmul_f16", "matmul_bf16", "conv", "tiny"})
      for (size_t at; (at = rest.find("," + std::string(row) + ",")) != std::string::npos;)
        rest.erase(at, std::string(row).size() + 1);
    if (rest != ",") {
      std::cerr << "tg bench gpu: --rows " << vm["rows"].as<std::string>()
                << ": unknown row (rows: elementwise,sum,matmul_f32,matmul_f16,matmul_bf16,conv,tiny)\n";
      return 2;
    }
  }
  std::vector<GpuRow> rows;
  std::optional<std::pair<Tensor, Tensor>> conv_inputs; // --conv-profile
  auto progress = [](const std::string& what) { std::cerr << "  running " << what << "...\n"; };
  if (want("elementwise") || want("sum")) {
    const int64_t n = int64_t(64) << 20;
    Tensor a = random_tensor({n}, 1, device), b = random_tensor({n}, 2, device),
           c = random_tensor({n}, 3, device);
    if (want("elementwise")) {
      progress("elementwise");
      GpuRow e = make_row("((a+b)*c).relu() 64M f32", "elementwise_ms", std::to_string(n), Unit::GBps,
                          4.0 * 4.0 * double(n));
      e.ours_ms = run([&] { return ((a + b) * c).relu(); });
      e.target = ">= 2600 GB/s";
      e.absolute = 2600;
      rows.push_back(e);
    }
    if (want("sum")) {
      progress("sum");
      GpuRow s = make_row("sum 64M f32", "sum_ms", std::to_string(n), Unit::GBps, 4.0 * double(n));
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
    GpuRow r = make_row("matmul 4096 f32", "matmul_f32_ms", "4096x4096", Unit::TFLOPS, 2.0 * n * n * n);
    r.ours_ms = run([&] { return a.matmul(b); });
    r.target = ">= 0.8x PyTorch";
    r.target_ratio = 0.8;
    rows.push_back(r);
  }
  for (auto [row, dt] :
       {std::pair<const char*, DType>{"matmul_f16", dtypes::float16}, {"matmul_bf16", dtypes::bfloat16}}) {
    if (!want(row)) continue;
    const int64_t n = 8192;
    const std::string short_name = dt == dtypes::float16 ? "f16" : "bf16";
    progress("matmul " + short_name);
    Tensor a = random_tensor({n, n}, 6, device).cast(dt).realize();
    Tensor b = random_tensor({n, n}, 7, device).cast(dt).realize();
    GpuRow r = make_row("matmul 8192 " + short_name, std::string(row) + "_ms", "8192x8192", Unit::TFLOPS,
                        2.0 * n * n * n);
    r.ours_ms = run([&] { return a.matmul(b); });
    r.target = ">= 0.7x PyTorch";
    r.target_ratio = 0.7;
    rows.push_back(r);
  }
  if (want("conv")) {
    progress("conv2d");
    Tensor x = random_tensor({256, 32, 28, 28}, 8, device), w = random_tensor({64, 32, 3, 3}, 9, device);
    GpuRow r = make_row("conv2d 256x32x28x28 -> 64 3x3", "conv_ms", "256x32x28x28x64x32x3x3", Unit::TFLOPS,
                        2.0 * 256 * 64 * 26 * 26 * 32 * 9);
    r.ours_ms = run([&] { return x.conv2d(w); });
    if (vm.count("conv-profile")) conv_inputs = {x, w};
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
    GpuRow r = make_row("tiny op (a+1, 16 f32) incl. sync", "tiny_ms", "16", Unit::Micros, 0);
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
      peer = run_peer_command(shell_quote(torch_python(vm, "peer-python")) + " " + shell_quote(script.path) +
                              " --repeat " + std::to_string(repeat));
  }
  // tinygrad's CUDA backend, the same rows (each through TinyJit): a column only when it ran.
  Peer tinygrad;
  std::string tinygrad_by;
  if (vm.count("no-peer") || vm.count("no-tinygrad"))
    tinygrad.error = vm.count("no-peer") ? "skipped (--no-peer)" : "skipped (--no-tinygrad)";
  else if (const TinygradPython python = find_tinygrad_python(tinygrad_python); !python.error.empty())
    tinygrad.error = python.error + "; --peer-tinygrad-python picks the interpreter";
  else if (const PeerScript script = find_peer_script("peer_tinygrad_gpu.py"); !script.error.empty())
    tinygrad.error = script.error;
  else {
    progress("the tinygrad peer (" + python.python + ", DEV=CUDA)");
    tinygrad = run_peer_command(shell_quote(python.python) + " " + shell_quote(script.path) +
                                " --device CUDA --repeat " + std::to_string(repeat));
    tinygrad_by = python.python;
  }
  const bool with_tinygrad = tinygrad.error.empty();
  std::vector<std::string> notes;
  std::vector<std::vector<std::string>> table;
  auto speed_str = [](const GpuRow& r, double ms) {
    return fixed(speed(r, ms), 1) + (r.unit == Unit::GBps     ? " GB/s"
                                     : r.unit == Unit::TFLOPS ? " TFLOPS"
                                                              : " us");
  };
  for (const GpuRow& r : rows) {
    const double ours = speed(r, r.ours_ms);
    const std::optional<double> peer_ms = peer_ms_for(peer, "PyTorch", r, notes);
    const double ratio = peer_ms ? *peer_ms / r.ours_ms : std::nan(""); // >1: we are faster
    bool met = false;
    if (r.target_ratio > 0)
      met = peer_ms && ratio >= r.target_ratio;
    else if (r.unit == Unit::Micros)
      met = ours <= r.absolute;
    else
      met = ours >= r.absolute;
    std::vector<std::string> line = {r.name, fixed(r.ours_ms, 3), speed_str(r, r.ours_ms),
                                     peer_ms ? speed_str(r, *peer_ms) : "-", peer_ms ? fixed(ratio, 2) : "-"};
    if (with_tinygrad) {
      const std::optional<double> tg_ms = peer_ms_for(tinygrad, "tinygrad", r, notes);
      line.push_back(tg_ms ? speed_str(r, *tg_ms) : "-");
      line.push_back(tg_ms ? fixed(*tg_ms / r.ours_ms, 2) : "-");
    }
    line.push_back(r.target);
    line.push_back(met ? "met" : "MISSED");
    table.push_back(line);
  }
  std::vector<std::string> head = {"row", "ours ms", "ours", "PyTorch", "ratio"};
  std::vector<bool> right = {false, true, true, true, true};
  if (with_tinygrad) {
    head.insert(head.end(), {"tinygrad", "ratio tg"});
    right.insert(right.end(), {true, true});
  }
  head.insert(head.end(), {"target", ""});
  right.insert(right.end(), {false, false});
  print_table(std::cout, head, table, right);
  for (const std::string& note : notes) std::cout << "note: " << note << "\n";
  if (!peer.error.empty())
    std::cout << "peer: " << peer.error << "\n";
  else
    std::cout << "peer: PyTorch " << peer.str("torch_version") << " on " << peer.str("device") << "\n";
  if (!with_tinygrad)
    std::cout << "tinygrad: " << tinygrad.error << "\n";
  else {
    std::cout << "tinygrad: " << tinygrad.str("tinygrad_version") << " DEV=" << tinygrad.str("device") << " ("
              << tinygrad.str("device_name") << ", ALLOW_TF32=" << tinygrad.str("allow_tf32") << ") run by "
              << tinygrad_by << "; its rows through TinyJit (replays of the captured kernels)\n"
              << "tinygrad eager (a fresh expression's realize(), no JIT), its speed:";
    const char* separator = " ";
    for (const GpuRow& r : rows) {
      const std::string key = r.peer_key.substr(0, r.peer_key.size() - 3); // without "_ms"
      if (const auto eager = tinygrad.num(key + "_eager_ms")) {
        std::cout << separator << key << " " << speed_str(r, *eager);
        separator = " | ";
      }
    }
    std::cout << "\n";
  }
  std::cout << "ratio = PyTorch time / our time"
            << (with_tinygrad ? ", ratio tg = tinygrad time / our time" : "")
            << " (above 1: we are faster)\n";
  if (tiny_us > 0 && device.starts_with("CUDA") && !vm.count("no-floor")) print_cuda_floor(floor, tiny_us);
  if (vm.count("tiny-profile") && tiny_input) print_tiny_profile(*tiny_input, dev.device, repeat);
  if (conv_inputs) print_conv_profile(conv_inputs->first, conv_inputs->second, dev.device, repeat);
  return 0;
}

} // namespace tg::cli
