// `tg bench train`: median training-step time of beautiful_mnist (batch 512 by default) against
// PyTorch (CPU, or CUDA for a CUDA device) running the same model and recipe in the same invocation,
// and tinygrad (its step under TinyJit) where an interpreter imports it. A benchmark, not a test.
#include "kernel/distributed/world.hpp"
#include "kernel/runtime/devices.hpp"
#include "kernel/tensor/jit.hpp"
#include "kernel/tensor/optim.hpp"
#include "tools/tg/bench_util.hpp"
#include "tools/tg/commands.hpp"
#include "tools/tg/mnist_distributed.hpp"
#include "tools/tg/mnist_model.hpp"
#include "tools/tg/mnist_parallel.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <numeric>
#include <optional>
#include <sys/resource.h>
#include <thread>
#include <utility>

namespace po = boost::program_options;

namespace tg::cli {
namespace {

struct PeerStep {
  double step_ms = 0, peak_mb = 0;
  std::string error;
  std::string tf32; // what the peer reported of its TF32 settings, e.g. "cudnn tf32 off, matmul tf32 off"
};

// Runs tools/bench/peer_torch_train.py and reads its one JSON line.
// `torch_device` is "cpu" or "cuda" (our device is CUDA:N: PyTorch runs on the GPU too).
// `compiled`: the step through torch.compile. `tf32`: PyTorch's default TF32 settings (its cuDNN
// convolutions may then run on tensor cores in TF32); otherwise strict f32, as ours.
PeerStep torch_step(int bs, int steps, const std::string& torch_device, const std::string& python,
                    bool compiled = false, bool tf32 = false) {
  PeerStep out;
  const PeerScript script = find_peer_script("peer_torch_train.py");
  if (!script.error.empty()) return PeerStep{0, 0, script.error, ""};
  JsonPeer peer = run_json_peer(shell_quote(python) + " " + shell_quote(script.path) + " --bs " +
                                    std::to_string(bs) + " --steps " + std::to_string(steps) + " --threads " +
                                    std::to_string(std::thread::hardware_concurrency()) + " --device " +
                                    torch_device + (compiled ? " --compile" : "") + (tf32 ? " --tf32" : ""),
                                {"step_ms", "peak_rss_mb"});
  if (!peer.error.empty()) return PeerStep{0, 0, peer.error, ""};
  out.step_ms = peer.values["step_ms"].get<double>();
  out.peak_mb = peer.values["peak_rss_mb"].get<double>();
  auto flag = [&](const char* key) {
    const auto it = peer.values.find(key);
    return it == peer.values.end() || !it->is_boolean() ? std::string("?") : it->get<bool>() ? "on" : "off";
  };
  out.tf32 = "cudnn tf32 " + flag("cudnn_allow_tf32") + ", matmul tf32 " + flag("matmul_allow_tf32");
  return out;
}

// Runs tools/bench/peer_tinygrad_train.py with `python` (which imports tinygrad) on tinygrad's
// `tinygrad_device` (CUDA or CPU) and reads its JSON line; the batch it reports must be ours.
PeerStep tinygrad_step(int bs, int steps, const std::string& tinygrad_device, const std::string& python) {
  const PeerScript script = find_peer_script("peer_tinygrad_train.py");
  if (!script.error.empty()) return PeerStep{0, 0, script.error, ""};
  JsonPeer peer =
      run_json_peer(shell_quote(python) + " " + shell_quote(script.path) + " --bs " + std::to_string(bs) +
                        " --steps " + std::to_string(steps) + " --device " + tinygrad_device,
                    {"step_ms", "peak_rss_mb", "bs"});
  if (!peer.error.empty()) return PeerStep{0, 0, peer.error, ""};
  if (peer.values["bs"].get<double>() != double(bs))
    return PeerStep{0, 0, "the peer ran batch " + peer.values["bs"].dump() + ", not " + std::to_string(bs),
                    ""};
  return PeerStep{peer.values["step_ms"].get<double>(), peer.values["peak_rss_mb"].get<double>(), "", ""};
}

// Runs tools/bench/peer_torch_ddp.py under torchrun (one process per GPU, NCCL) and reads its
// JSON line: the same model and recipe, the global batch split across the GPUs.
PeerStep torch_ddp_step(int bs, int steps, int gpus, const std::string& python) {
  const PeerScript script = find_peer_script("peer_torch_ddp.py");
  if (!script.error.empty()) return PeerStep{0, 0, script.error, ""};
  JsonPeer peer = run_json_peer("NCCL_NVLS_ENABLE=0 " + shell_quote(python) +
                                    " -m torch.distributed.run --standalone --nproc_per_node " +
                                    std::to_string(gpus) + " " + shell_quote(script.path) + " --bs " +
                                    std::to_string(bs) + " --steps " + std::to_string(steps),
                                {"step_ms"});
  if (!peer.error.empty()) return PeerStep{0, 0, peer.error, ""};
  return PeerStep{peer.values["step_ms"].get<double>(), 0, "", ""};
}

// Median step time (ms) of data-parallel training over `devices` at global batch `bs`.
double data_parallel_step_ms(int bs, int steps, const std::vector<std::string>& devices) {
  const std::string saved = default_device();
  set_default_device(devices[0]);
  Tensor::manual_seed(0);
  MnistNet model;
  set_default_device(saved);
  DataParallelMnist dp(model, devices, 1e-3);
  std::vector<Tensor> xs, ys;
  const int64_t share = bs / int64_t(devices.size());
  for (const auto& d : devices) {
    xs.push_back(Tensor::rand({share, 1, 28, 28}, dtypes::float32, d).realize());
    ys.push_back(Tensor::randint({share}, 0, 10, dtypes::int32, d).realize());
  }
  MultiTensor x(xs, 0), y(ys, 0);
  std::vector<double> times;
  std::vector<std::vector<std::pair<std::string, double>>> phases;
  for (int step = 0; step < steps + 1; ++step) { // one warm-up step
    auto t0 = std::chrono::steady_clock::now();
    (void)dp.step(x, y).item<float>();
    if (step == 0) continue;
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    phases.push_back(dp.phase_ms);
  }
  std::vector<size_t> order(times.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return times[a] < times[b]; });
  std::cout << std::fixed << std::setprecision(1) << "  (" << devices.size()
            << " device(s), host time of the median step:";
  const char* separator = " ";
  for (const auto& [what, ms] : phases[order[order.size() / 2]]) {
    std::cout << separator << what << " " << ms << " ms";
    separator = ", ";
  }
  std::cout << ")\n";
  return times[order[order.size() / 2]];
}

// Median step time (ms) of the plain one-device step (mnist_step) on `device` at batch `bs`.
double one_device_step_ms(int bs, int steps, const std::string& device) {
  Tensor::manual_seed(0);
  const std::string saved = default_device();
  set_default_device(device);
  MnistNet model;
  set_default_device(saved);
  std::vector<Tensor> trainable = model.parameters();
  for (auto& b : model.buffers()) trainable.push_back(b);
  optim::Adam opt(trainable, 1e-3);
  Tensor x = Tensor::rand({bs, 1, 28, 28}, dtypes::float32, device).realize();
  Tensor y = Tensor::randint({bs}, 0, 10, dtypes::int32, device).realize();
  auto step_fn = mnist_step(model, opt);
  std::vector<double> times;
  for (int step = 0; step < steps + 1; ++step) {
    auto t0 = std::chrono::steady_clock::now();
    (void)step_fn({x, y})[0].item<float>();
    if (step > 0)
      times.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// `tg bench train --devices A,B`: one device (A) vs all of them, data-parallel, and PyTorch DDP.
int bench_train_parallel(int bs, int steps, const std::vector<std::string>& devices, bool peer,
                         const std::string& python) {
  if (bs % int(devices.size()) != 0) {
    std::cerr << "tg bench train: --bs " << bs << " does not split evenly over " << devices.size()
              << " devices\n";
    return 2;
  }
  double plain = one_device_step_ms(bs, steps, devices[0]);
  double one = data_parallel_step_ms(bs, steps, {devices[0]});
  double all = data_parallel_step_ms(bs, steps, devices);
  std::string names;
  for (const auto& d : devices) names += (names.empty() ? "" : ",") + d;
  std::cout << std::fixed << std::setprecision(1)
            << "tg bench train: beautiful_mnist data-parallel, global batch " << bs << ", median of " << steps
            << " steps (after 1 warm-up)\n"
            << "  tinygrad.cpp " << devices[0] << " (plain step): " << plain << " ms/step\n"
            << "  tinygrad.cpp " << devices[0] << " (data-parallel code, 1 device): " << one << " ms/step\n"
            << "  tinygrad.cpp " << names << ": " << all << " ms/step, speedup " << std::setprecision(2)
            << plain / all << "x over the plain step\n"
            << std::setprecision(1);
  const bool on_cuda = devices[0].rfind("CUDA", 0) == 0;
  if (!peer || !on_cuda) return 0;
  PeerStep single = torch_step(bs, steps, "cuda", python);
  PeerStep ddp = torch_ddp_step(bs, steps, int(devices.size()), python);
  if (!single.error.empty() || !ddp.error.empty()) {
    std::cout << "  PyTorch: " << (single.error.empty() ? ddp.error : single.error) << "\n";
    return 0;
  }
  std::cout << "  PyTorch 1 GPU: " << single.step_ms << " ms/step\n"
            << "  PyTorch DDP " << devices.size() << " GPUs (torchrun, NCCL): " << ddp.step_ms
            << " ms/step, speedup " << std::setprecision(2) << single.step_ms / ddp.step_ms << "x\n";
  return 0;
}

// `tg bench train --distributed` on every rank (mpirun -np N): rank 0 first times the plain step
// on its device alone while the others wait, then every rank runs the data-parallel step on its
// share of the global batch (its own device: CUDA:<local rank> for CUDA), then rank 0 runs
// PyTorch on one GPU and DDP under torchrun on as many (CUDA only).
int bench_train_distributed(int bs, int steps, std::string device, bool peer, const std::string& python) {
  const distributed::World& w = distributed::init();
  if (bs % w.size != 0) {
    std::cerr << "tg bench train: --bs " << bs << " does not split evenly over " << w.size << " ranks\n";
    return 2;
  }
  if (device.empty()) device = default_device();
  if (device.find(':') == std::string::npos && device != "CPU") device += ":" + std::to_string(w.local_rank);
  set_default_device(device);
  double plain = 0;
  if (w.rank == 0) plain = one_device_step_ms(bs, steps, device);
  distributed::barrier();
  Tensor::manual_seed(0);
  MnistNet model;
  std::vector<Tensor> trainable = model.parameters();
  for (auto& b : model.buffers()) trainable.push_back(b);
  optim::Adam opt(trainable, 1e-3);
  DistributedMnist ranks(model, opt, device);
  const int64_t share = bs / w.size;
  Tensor x = Tensor::rand({share, 1, 28, 28}, dtypes::float32, device).realize();
  Tensor y = Tensor::randint({share}, 0, 10, dtypes::int32, device).realize();
  std::vector<double> times;
  for (int step = 0; step < steps + 1; ++step) { // one warm-up step
    auto t0 = std::chrono::steady_clock::now();
    (void)ranks.step(x, y, bs); // returns the all-reduced loss: every rank has finished the step
    if (step > 0)
      times.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  ranks.check_replicas("after the timed steps");
  distributed::barrier();
  if (w.rank != 0) return 0;
  std::sort(times.begin(), times.end());
  const double all = times[times.size() / 2];
  std::cout << std::fixed << std::setprecision(1) << "tg bench train: beautiful_mnist across " << w.size
            << " processes (" << w.launcher << "), global batch " << bs << ", median of " << steps
            << " steps (after 1 warm-up)\n"
            << "  tinygrad.cpp " << device << " alone (plain step): " << plain << " ms/step\n"
            << "  tinygrad.cpp " << w.size << " ranks: " << all << " ms/step (rank 0), speedup "
            << std::setprecision(2) << plain / all << "x over the plain step\n"
            << std::setprecision(1);
  if (!peer || device.rfind("CUDA", 0) != 0) return 0;
  PeerStep single = torch_step(bs, steps, "cuda", python);
  PeerStep ddp = torch_ddp_step(bs, steps, w.size, python);
  if (!single.error.empty() || !ddp.error.empty()) {
    std::cout << "  PyTorch: " << (single.error.empty() ? ddp.error : single.error) << "\n";
    return 0;
  }
  std::cout << "  PyTorch 1 GPU: " << single.step_ms << " ms/step\n"
            << "  PyTorch DDP " << w.size << " GPUs (torchrun, NCCL): " << ddp.step_ms << " ms/step, speedup "
            << std::setprecision(2) << single.step_ms / ddp.step_ms << "x\n";
  return 0;
}

} // namespace

int bench_train(const std::vector<std::string>& args) {
  po::options_description opts(
      "tg bench train: median training-step time of beautiful_mnist vs PyTorch (CPU, or CUDA for a CUDA "
      "device)\n"
      "and tinygrad (its step under TinyJit, where tinygrad imports): same model, Adam 1e-3, random data,\n"
      "measured in the same run.\nOptions");
  opts.add_options()("help,h", "show this help")("bs", po::value<int>()->default_value(512), "batch size")(
      "steps", po::value<int>()->default_value(5),
      "timed steps (after one warm-up step)")("no-peer", "skip the peers (PyTorch and tinygrad)")(
      "peer-python", po::value<std::string>()->default_value("/usr/bin/python3"),
      "the interpreter that runs the PyTorch peer (by default /usr/bin/python3, or python3 on $PATH where "
      "only that imports torch)")(
      "peer-tinygrad-python", po::value<std::string>()->default_value(""),
      "the interpreter that runs the tinygrad peer (peer_tinygrad_train.py: its step under TinyJit, DEV=CUDA "
      "for "
      "a CUDA device, else CPU; default: the first of python3 and /usr/bin/python3 that imports tinygrad)")(
      "no-tinygrad", "skip the tinygrad peer")(
      "peer-compiled", "also time PyTorch's step through torch.compile (slow to start: it compiles first)")(
      "host-profile", "after the eager steps, where each step's time goes (median ms): building the forward "
                      "graph, backward() (with TG_REALIZE_EARLY on, the forward pass's launches too), "
                      "step_and_realize, and the wait in loss.item()")(
      "rounds", po::value<int>()->default_value(1),
      "after the report, time our step and PyTorch's again, in turn, until there are this many pairs; "
      "prints each round and the median and range of the ratios (one comparison varies with the "
      "host's state)")(
      "jit", "run the step through tg::TinyJit (warm-up and capture are the untimed steps) and report the "
             "host time per replayed kernel and the step's memory before/after the planner")(
      "device,d", po::value<std::string>(),
      "the device of the step (default: $TG_DEVICE or CPU); PyTorch runs on the GPU for CUDA devices")(
      "devices", po::value<std::string>(),
      "data-parallel over these devices (e.g. CUDA:0,CUDA:1; --bs is the global batch): the first device "
      "alone vs all of them, and PyTorch DDP (torchrun, NCCL) on as many GPUs for CUDA devices")(
      "distributed",
      "one rank of a run across processes (mpirun -np N tg bench train --distributed [--device CUDA]): rank "
      "0's device alone vs every rank (each on CUDA:<local rank> for CUDA), and PyTorch DDP (torchrun, NCCL) "
      "on as many GPUs");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).run(), vm);
  if (vm.count("help")) {
    std::cout << opts;
    return 0;
  }
  const int bs = vm["bs"].as<int>(), steps = vm["steps"].as<int>();
  if (bs <= 0 || steps <= 0) {
    std::cerr << "tg bench train: --bs and --steps must be positive\n";
    return 2;
  }
  const int rounds = vm["rounds"].as<int>();
  if (rounds < 1 || rounds > 100) {
    std::cerr << "tg bench train: --rounds must be in 1..100\n";
    return 2;
  }
  if (rounds > 1 && (vm.count("no-peer") || vm.count("devices"))) {
    std::cerr << "tg bench train: --rounds and " << (vm.count("no-peer") ? "--no-peer" : "--devices")
              << " contradict each other (the rounds alternate with the PyTorch peer of one device)\n";
    return 2;
  }
  const std::string tinygrad_python = vm["peer-tinygrad-python"].as<std::string>();
  if (!tinygrad_python.empty() && (vm.count("no-tinygrad") || vm.count("no-peer"))) {
    std::cerr << "tg bench train: --peer-tinygrad-python and "
              << (vm.count("no-peer") ? "--no-peer" : "--no-tinygrad") << " contradict each other\n";
    return 2;
  }
  if (!tinygrad_python.empty() && !command_exists(tinygrad_python)) { // before the steps
    std::cerr << "tg bench train: --peer-tinygrad-python " << tinygrad_python << ": no such interpreter\n";
    return 2;
  }
  const std::string torch_py =
      vm.count("no-peer") ? vm["peer-python"].as<std::string>() : torch_python(vm, "peer-python");
  if (vm.count("distributed")) {
    if (vm.count("devices") || rounds > 1 || vm.count("jit")) {
      std::cerr << "tg bench train: --distributed does not combine with --devices, --rounds or --jit\n";
      return 2;
    }
    return bench_train_distributed(bs, steps, vm.count("device") ? vm["device"].as<std::string>() : "",
                                   !vm.count("no-peer"), torch_py);
  }
  if (vm.count("devices"))
    return bench_train_parallel(bs, steps, parse_device_list(vm["devices"].as<std::string>()),
                                !vm.count("no-peer"), torch_py);
  if (vm.count("device")) set_default_device(vm["device"].as<std::string>());
  Tensor::manual_seed(0);
  MnistNet model;
  std::vector<Tensor> trainable = model.parameters();
  for (auto& b : model.buffers()) trainable.push_back(b);
  optim::Adam opt(trainable, 1e-3);
  Tensor x = Tensor::rand({bs, 1, 28, 28}).realize();
  Tensor y = Tensor::randint({bs}, 0, 10).realize();
  auto step_fn = mnist_step(model, opt);
  const bool use_jit = vm.count("jit") > 0;
  TinyJit jit_step(step_fn);
  jit_step.measure_kernels(true);
  std::vector<double> host_us_per_kernel;
  // The median ms of `steps` steps after `untimed` ones.
  auto time_ours = [&](int untimed) {
    std::vector<double> times;
    for (int step = 0; step < steps + untimed; ++step) {
      auto t0 = std::chrono::steady_clock::now();
      Tensor loss = use_jit ? jit_step({x, y})[0] : step_fn({x, y})[0];
      (void)loss.item<float>();
      if (step < untimed) continue;
      times.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      if (use_jit && jit_step.last_replay_kernel_ns() > 0)
        host_us_per_kernel.push_back(
            double(jit_step.last_replay_wall_ns() - jit_step.last_replay_kernel_ns()) / 1e3 /
            double(jit_step.kernel_count()));
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
  };
  const double ours = time_ours(use_jit ? 2 : 1); // warm-up (+ capture)
  std::optional<std::array<double, 4>> profile;
  if (vm.count("host-profile") && !use_jit) { // the step of mnist_step, phase by phase
    std::vector<std::array<double, 4>> phases;
    for (int step = 0; step < steps; ++step) {
      using clock = std::chrono::steady_clock;
      auto ms = [](clock::time_point a, clock::time_point b) {
        return std::chrono::duration<double, std::milli>(b - a).count();
      };
      auto t0 = clock::now();
      opt.zero_grad();
      Tensor loss = nn::sparse_categorical_crossentropy(model(x), y);
      auto t1 = clock::now();
      loss.backward();
      auto t2 = clock::now();
      opt.step_and_realize({loss});
      auto t3 = clock::now();
      (void)loss.item<float>();
      auto t4 = clock::now();
      phases.push_back({ms(t0, t1), ms(t1, t2), ms(t2, t3), ms(t3, t4)});
    }
    std::array<double, 4> med{};
    for (size_t k = 0; k < 4; ++k) {
      std::vector<double> v;
      for (const auto& p : phases) v.push_back(p[k]);
      std::sort(v.begin(), v.end());
      med[k] = v[v.size() / 2];
    }
    profile = med;
  }
  std::sort(host_us_per_kernel.begin(), host_us_per_kernel.end());
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  double ours_mb = double(usage.ru_maxrss) / 1024.0;
  std::cout << std::fixed << std::setprecision(1) << "tg bench train: beautiful_mnist, batch " << bs
            << ", median of " << steps << " steps (after " << (use_jit ? "warm-up and capture" : "1 warm-up")
            << ")\n"
            << "  tinygrad.cpp" << (use_jit ? " (jit)" : "") << ": " << ours << " ms/step, peak RSS "
            << ours_mb << " MB\n";
  if (profile)
    std::cout << std::setprecision(3) << "  host profile (median ms of " << steps
              << " more steps): forward graph " << (*profile)[0] << " | backward() " << (*profile)[1]
              << " | step_and_realize " << (*profile)[2] << " | loss.item() " << (*profile)[3] << "\n"
              << std::setprecision(1);
  if (use_jit && jit_step.captured()) {
    const JitMemory& m = jit_step.memory();
    std::cout << std::setprecision(2) << "  jit: " << jit_step.kernel_count() << " kernels per step ("
              << (jit_step.uses_launch_batch() ? "launch_batch" : "one launch per kernel") << ")";
    if (!host_us_per_kernel.empty())
      std::cout << ", host time per replayed kernel " << host_us_per_kernel[host_us_per_kernel.size() / 2]
                << " us (replay wall time minus kernel time, median)";
    std::cout << "\n  jit memory: intermediates " << double(m.intermediate_bytes) / 1e6 << " MB in "
              << m.intermediates << " buffers -> " << double(m.planned_bytes) / 1e6 << " MB in " << m.groups
              << " (live peak " << double(m.peak_live_bytes) / 1e6 << " MB); step "
              << double(m.unplanned_step_bytes()) / 1e6 << " MB -> " << double(m.planned_step_bytes()) / 1e6
              << " MB\n"
              << std::setprecision(1);
  }
  if (vm.count("no-peer")) return 0;
  const bool on_cuda = default_device().rfind("CUDA", 0) == 0;
  // tinygrad first: its line must not depend on PyTorch being there.
  if (vm.count("no-tinygrad"))
    std::cout << "  tinygrad: skipped (--no-tinygrad)\n";
  else if (const TinygradPython python = find_tinygrad_python(tinygrad_python); !python.error.empty())
    std::cout << "  tinygrad: " << python.error << "; --peer-tinygrad-python picks the interpreter\n";
  else {
    const std::string tinygrad_device = on_cuda ? "CUDA" : "CPU";
    PeerStep tiny = tinygrad_step(bs, steps, tinygrad_device, python.python);
    if (!tiny.error.empty())
      std::cout << "  tinygrad DEV=" << tinygrad_device << ": " << tiny.error << "\n";
    else
      std::cout << "  tinygrad DEV=" << tinygrad_device << " (TinyJit, run by " << python.python
                << "): " << tiny.step_ms << " ms/step, peak RSS " << tiny.peak_mb
                << " MB, ratio (our time / tinygrad time) " << std::setprecision(2) << ours / tiny.step_ms
                << "x\n"
                << std::setprecision(1);
  }
  PeerStep peer = torch_step(bs, steps, on_cuda ? "cuda" : "cpu", torch_py);
  if (!peer.error.empty()) {
    std::cout << "  PyTorch: " << peer.error << "\n";
    return 0;
  }
  std::cout << (on_cuda ? "  PyTorch CUDA (strict f32: " + peer.tf32 + "): "
                        : std::string("  PyTorch CPU:  "))
            << peer.step_ms << " ms/step, peak RSS " << peer.peak_mb << " MB\n"
            << "  ratio (our time / PyTorch time): " << std::setprecision(2) << ours / peer.step_ms << "x\n"
            << std::setprecision(1);
  if (rounds > 1) { // ours and PyTorch's strict step again, in turn: how much one comparison can vary
    std::vector<std::pair<double, double>> pairs = {{ours, peer.step_ms}};
    for (int r = 1; r < rounds; ++r) {
      const double again = time_ours(1);
      const PeerStep p = torch_step(bs, steps, on_cuda ? "cuda" : "cpu", torch_py);
      if (!p.error.empty()) {
        std::cout << "  round " << r + 1 << ": PyTorch: " << p.error << "\n";
        break;
      }
      pairs.emplace_back(again, p.step_ms);
    }
    std::vector<double> ratios;
    std::cout << "  rounds (ours / PyTorch" << (on_cuda ? " strict f32" : "") << ", ms/step, in turn):";
    for (const auto& [a, b] : pairs) {
      ratios.push_back(a / b);
      std::cout << " " << std::setprecision(1) << a << "/" << b << " (" << std::setprecision(2) << a / b
                << "x)";
    }
    std::sort(ratios.begin(), ratios.end());
    std::cout << "\n  ratio over " << ratios.size() << " rounds: median " << ratios[ratios.size() / 2]
              << "x, range " << ratios.front() << "-" << ratios.back() << "x\n"
              << std::setprecision(1);
  }
  if (on_cuda) { // PyTorch's defaults, for reference only: its convolutions may run in TF32, ours are f32
    PeerStep tf32 = torch_step(bs, steps, "cuda", torch_py, false, true);
    if (!tf32.error.empty())
      std::cout << "  PyTorch CUDA, default TF32: " << tf32.error << "\n";
    else
      std::cout << "  PyTorch CUDA, PyTorch's defaults (" << tf32.tf32 << "; not compared: TF32 rounds "
                << "inputs to 10-bit mantissas): " << tf32.step_ms << " ms/step, ratio "
                << std::setprecision(2) << ours / tf32.step_ms << "x\n"
                << std::setprecision(1);
  }
  if (vm.count("peer-compiled")) {
    PeerStep compiled = torch_step(bs, steps, on_cuda ? "cuda" : "cpu", torch_py, true);
    if (!compiled.error.empty())
      std::cout << "  PyTorch compiled: " << compiled.error << "\n";
    else
      std::cout << "  PyTorch " << (on_cuda ? "CUDA" : "CPU") << " torch.compile (" << compiled.tf32
                << "): " << compiled.step_ms << " ms/step, ratio " << std::setprecision(2)
                << ours / compiled.step_ms << "x\n";
  }
  return 0;
}

} // namespace tg::cli
