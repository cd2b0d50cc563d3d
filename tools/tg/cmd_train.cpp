// `tg train mnist`: tinygrad's beautiful_mnist — the project's main job. Trains the conv net with
// Adam on random batches, shows progress, reports test accuracy, saves/loads safetensors.
#include "kernel/distributed/world.hpp"
#include "kernel/engine/config.hpp"
#include "kernel/runtime/devices.hpp"
#include "kernel/tensor/datasets.hpp"
#include "kernel/tensor/jit.hpp"
#include "kernel/tensor/nn.hpp"
#include "kernel/tensor/optim.hpp"
#include "kernel/tensor/state.hpp"
#include "tools/tg/commands.hpp"
#include "tools/tg/mnist_distributed.hpp"
#include "tools/tg/mnist_model.hpp"
#include "tools/tg/mnist_parallel.hpp"

#include <boost/program_options.hpp>
#include <tg/sdk/bytes.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <new>
#include <optional>
#include <random>
#include <sstream>
#include <unistd.h>

namespace po = boost::program_options;

namespace tg::cli {
namespace {

using Clock = std::chrono::steady_clock;

// Host copy of a uint8 image set, so batches are gathered without touching the device.
struct HostImages {
  std::vector<std::byte> pixels;
  std::vector<std::byte> labels;
  int64_t count = 0;
};

constexpr int64_t kPixels = 28 * 28;

HostImages to_host(const Tensor& x, const Tensor& y) {
  HostImages h{x.cast(dtypes::uint8).to_bytes(), y.cast(dtypes::uint8).to_bytes(), x.shape()[0]};
  // load_mnist guarantees this; batch() indexes by it.
  if (h.pixels.size() != size_t(h.count * kPixels) || h.labels.size() != size_t(h.count))
    throw Error("image set of " + std::to_string(h.count) + " images is not (N, 1, 28, 28) uint8");
  return h;
}

// Bytes of physical memory, 0 if unknown.
uint64_t physical_memory() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : 0;
}

std::string gib(uint64_t bytes) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(1) << double(bytes) / double(1ull << 30) << " GiB";
  return os.str();
}

// Images scaled to [0, 1] as float32 (n, 1, 28, 28) and int32 labels, for the given rows.
std::pair<Tensor, Tensor> batch(const HostImages& data, const std::vector<int64_t>& rows,
                                const std::string& device) {
  std::vector<float> x(rows.size() * kPixels);
  std::vector<int32_t> y(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::byte* src = data.pixels.data() + rows[i] * kPixels;
    for (int64_t p = 0; p < kPixels; ++p)
      x[i * kPixels + size_t(p)] = float(std::to_integer<uint8_t>(src[p])) / 255.0f;
    y[i] = std::to_integer<int32_t>(data.labels[size_t(rows[i])]);
  }
  int64_t n = int64_t(rows.size());
  return {Tensor::from_vector(x, {n, 1, 28, 28}, std::nullopt, device),
          Tensor::from_vector(y, {n}, std::nullopt, device)};
}

double test_accuracy(MnistNet& model, const HostImages& test, const std::string& device) {
  model.eval(); // BatchNorm uses its running statistics
  Tensor::NoGrad no_grad;
  int64_t correct = 0;
  constexpr int64_t kChunk = 1000;
  for (int64_t start = 0; start < test.count; start += kChunk) {
    std::vector<int64_t> rows;
    for (int64_t r = start; r < std::min(test.count, start + kChunk); ++r) rows.push_back(r);
    auto [x, y] = batch(test, rows, device);
    correct += model(x).argmax(1).eq(y).cast(dtypes::int32).sum().item<int32_t>();
  }
  model.train();
  return test.count ? double(correct) / double(test.count) : 0.0;
}

std::string format_seconds(double s) {
  std::ostringstream os;
  if (s >= 60)
    os << int(s / 60) << "m" << std::setw(2) << std::setfill('0') << int(s) % 60 << "s";
  else
    os << std::fixed << std::setprecision(1) << s << "s";
  return os.str();
}

void progress(bool tty, int step, int steps, double loss, double samples_per_s, double eta_s) {
  std::ostringstream line;
  line << "step " << std::setw(4) << step << "/" << steps << "  loss " << std::fixed << std::setprecision(4)
       << loss << "  " << std::setprecision(0) << samples_per_s << " samples/s  ETA "
       << format_seconds(eta_s);
  if (!tty) {
    std::cout << line.str() << "\n" << std::flush;
    return;
  }
  constexpr int kWidth = 24;
  int filled = steps ? step * kWidth / steps : kWidth;
  std::cout << "\r[" << std::string(size_t(filled), '#') << std::string(size_t(kWidth - filled), '.') << "] "
            << line.str() << "   " << std::flush;
  if (step == steps) std::cout << "\n";
}

} // namespace

int cmd_train(const std::vector<std::string>& args) {
  if (!args.empty() && args[0] == "gpt") {
    try {
      return train_gpt(args);
    } catch (const po::error& e) {
      std::cerr << "tg train gpt: " << e.what() << " (see tg train gpt --help)\n";
      return 2;
    }
  }
  po::options_description opts(
      "tg train mnist: train tinygrad's beautiful_mnist conv net with Adam on random batches\n"
      "and report test accuracy.\nOptions");
  opts.add_options()("help,h", "show this help")("dataset", po::value<std::string>()->default_value("mnist"),
                                                 "what to train (mnist; `tg train gpt --help` for the GPT)")(
      "device", po::value<std::string>()->default_value(""), "device, e.g. CPU (default: $TG_DEVICE or CPU)")(
      "steps", po::value<int>()->default_value(140),
      "training steps (0 with --load: evaluate only); 140 batches of 512 are 1.2 epochs")(
      "bs", po::value<int>()->default_value(512), "batch size")(
      "lr", po::value<double>()->default_value(1e-3), "Adam learning rate (the schedule's start)")(
      "lr-schedule", po::value<std::string>()->default_value("cosine"),
      "cosine: the learning rate falls from --lr to 0 over --steps (torch's CosineAnnealingLR with "
      "T_max = steps), so the final weights do not hang on the last few noisy steps; constant: --lr "
      "throughout (beautiful_mnist's)")(
      "data", po::value<std::string>()->default_value(""),
      "directory with {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz] (default: Fashion-MNIST from the "
      "dataset-fashion-mnist package)")("save", po::value<std::string>(), "write a safetensors checkpoint")(
      "load", po::value<std::string>(), "start from a safetensors checkpoint")(
      "seed", po::value<uint64_t>()->default_value(1337), "random seed (weights, batches)")(
      "test-images", po::value<int64_t>()->default_value(-1),
      "evaluate on the first N test images (default: all; for quick checks on slow devices)")(
      "jit", "run the training step through tg::TinyJit: step 1 warms up, step 2 captures its kernels, "
             "later steps replay them (one launch_batch per step where the plugin has it); DEBUG=1 "
             "prints the captured step's memory before and after the memory planner")(
      "devices", po::value<std::string>(),
      "data-parallel over several devices, e.g. CPU:0,CPU:1 or CUDA:0,CUDA:1: one model replica per "
      "device, the batch (--bs, global) split evenly across them, gradients all-reduced, one Adam per "
      "device; BatchNorm statistics stay per device (as DDP's default); not with --jit or --device")(
      "distributed",
      "one rank of a data-parallel run across processes, started by mpirun (mpirun -np 2 tg train mnist "
      "--distributed) or with torchrun's RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT: each rank trains on its "
      "share of the global batch --bs on its device (--device CUDA means CUDA:<local rank>), gradients are "
      "summed across the ranks, rank 0 prints, evaluates and saves (docs/distributed.md)")(
      "check-replicas", po::value<int>()->default_value(10),
      "with --distributed: check every N steps (and after the last) that every rank holds rank 0's "
      "weights; 0 checks after the last step only");
  po::positional_options_description pos;
  pos.add("dataset", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).positional(pos).run(), vm);
  if (vm.count("help")) {
    std::cout << opts;
    return 0;
  }
  if (vm["dataset"].as<std::string>() != "mnist") {
    std::cerr << "tg train: unknown dataset '" << vm["dataset"].as<std::string>()
              << "' (available: mnist, gpt)\n";
    return 2;
  }
  const int steps = vm["steps"].as<int>(), bs = vm["bs"].as<int>();
  const int64_t test_images = vm["test-images"].as<int64_t>();
  if (test_images < -1 || test_images == 0) {
    std::cerr << "tg train: --test-images must be a count > 0 (or left out for all), got " << test_images
              << "\n";
    return 2;
  }
  const double lr = vm["lr"].as<double>();
  const std::string schedule = vm["lr-schedule"].as<std::string>();
  if (schedule != "cosine" && schedule != "constant") {
    std::cerr << "tg train: --lr-schedule is '" << schedule << "'; expected cosine or constant\n";
    return 2;
  }
  if (steps < 0 || bs <= 0 || !(lr > 0) || !std::isfinite(lr)) {
    std::cerr << "tg train: --steps must be >= 0, --bs > 0 and --lr a finite number > 0 (got --steps "
              << steps << ", --bs " << bs << ", --lr " << lr << ")\n";
    return 2;
  }
  // One batch's float input alone is bs*28*28*4 bytes (activations take far more): refuse what
  // cannot fit instead of ending in std::bad_alloc.
  const uint64_t batch_input_bytes = uint64_t(bs) * uint64_t(kPixels) * sizeof(float);
  if (uint64_t ram = physical_memory(); ram && batch_input_bytes > ram) {
    std::cerr << "tg train: --bs " << bs << " is too big: one batch's input alone needs "
              << gib(batch_input_bytes) << ", more than this machine's " << gib(ram) << " of memory\n";
    return 2;
  }
  // Check the destination now: a typo must not cost the whole training run.
  if (vm.count("save")) {
    try {
      sdk::check_writable(vm["save"].as<std::string>());
    } catch (const sdk::FileError& e) {
      std::cerr << "tg train: --save " << vm["save"].as<std::string>() << ": cannot write there: " << e.what()
                << "\n";
      return 2;
    }
  }
  // --distributed: join the ranks first; only rank 0 writes to stdout (errors still reach stderr)
  const distributed::World* world = nullptr;
  if (vm.count("distributed")) {
    if (vm.count("jit") || vm.count("devices")) {
      std::cerr
          << "tg train: --distributed does not combine with --jit (collectives run eagerly) or --devices\n";
      return 2;
    }
    world = &distributed::init();
    if (bs % world->size != 0) {
      std::cerr << "tg train: --bs " << bs << " does not split evenly over " << world->size << " ranks\n";
      return 2;
    }
    if (vm["check-replicas"].as<int>() < 0) {
      std::cerr << "tg train: --check-replicas must be >= 0\n";
      return 2;
    }
    std::string asked =
        vm["device"].as<std::string>().empty() ? default_device() : vm["device"].as<std::string>();
    if (asked.find(':') == std::string::npos && asked != "CPU")
      asked += ":" + std::to_string(world->local_rank);
    set_default_device(asked);
    if (world->rank != 0) std::cout.setstate(std::ios::failbit);
  }
  // Modules create their parameters, and batches go, to the default device; setting it opens the
  // device, so one that cannot be used fails here with the plugin's reason.
  std::vector<std::string> parallel; // --devices
  if (vm.count("devices")) {
    if (vm.count("jit") || !vm["device"].as<std::string>().empty()) {
      std::cerr << "tg train: --devices does not combine with --jit (a captured step runs on one device) "
                   "or --device\n";
      return 2;
    }
    parallel = parse_device_list(vm["devices"].as<std::string>());
    if (bs % int(parallel.size()) != 0) {
      std::cerr << "tg train: --bs " << bs << " does not split evenly over " << parallel.size()
                << " devices\n";
      return 2;
    }
    set_default_device(parallel[0]);
  }
  if (const std::string& asked = vm["device"].as<std::string>(); !asked.empty() && !world)
    set_default_device(asked);
  const std::string device = default_device();
  open_device(device);

  const uint64_t seed = vm["seed"].as<uint64_t>();
  Tensor::manual_seed(seed);
  std::filesystem::path dir = vm["data"].as<std::string>().empty()
                                  ? default_mnist_dir()
                                  : std::filesystem::path(vm["data"].as<std::string>());
  MnistNet model;
  if (vm.count("load")) { // before the data: a bad checkpoint fails fast
    model.load_state_dict(safe_load(vm["load"].as<std::string>()));
    std::cout << "loaded " << vm["load"].as<std::string>() << "\n";
  }
  MnistData data = load_mnist(dir);
  HostImages train = to_host(data.x_train, data.y_train), test = to_host(data.x_test, data.y_test);
  if (test_images > 0) test.count = std::min(test.count, test_images);
  std::cout << "data: " << dir.string() << " (" << train.count << " train, " << test.count
            << " test images)\n";
  if (world)
    std::cout << "ranks: " << world->size << " (" << world->launcher << "), each on its " << device << ", "
              << bs / world->size << " rows of each batch\n";
  std::cout << "device: " << (parallel.empty() ? device : vm["devices"].as<std::string>()) << ", batch " << bs
            << ", Adam lr " << lr << (schedule == "cosine" ? " (cosine to 0)" : "") << ", " << steps
            << " steps, seed " << seed << "\n";
  std::vector<Tensor> trainable = model.parameters();
  for (auto& b : model.buffers()) trainable.push_back(b);
  optim::Adam opt(trainable, lr);
  std::unique_ptr<DataParallelMnist> data_parallel;
  if (!parallel.empty()) data_parallel = std::make_unique<DataParallelMnist>(model, parallel, lr);
  std::unique_ptr<DistributedMnist> ranks;
  if (world) ranks = std::make_unique<DistributedMnist>(model, opt, device);
  const int check_every = vm["check-replicas"].as<int>();

  std::optional<optim::CosineAnnealingLR> cosine;
  if (schedule == "cosine" && steps > 0) cosine.emplace(opt, steps);
  auto step_fn = mnist_step(model, opt);
  const bool use_jit = vm.count("jit") > 0;
  TinyJit jit_step(step_fn);

  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> pick(0, train.count - 1);
  const bool tty = isatty(STDOUT_FILENO);
  auto t0 = Clock::now();
  for (int step = 1; step <= steps; ++step) {
    float loss_value = 0;
    try {
      std::vector<int64_t> rows(static_cast<size_t>(bs));
      for (auto& r : rows) r = pick(rng);
      if (ranks) { // this rank's share of the global batch (every rank draws the same rows)
        const size_t share = rows.size() / size_t(world->size), first = size_t(world->rank) * share;
        std::vector<int64_t> part(rows.begin() + long(first), rows.begin() + long(first + share));
        auto [x, y] = batch(train, part, device);
        loss_value = ranks->step(x, y, bs);
        if (check_every > 0 && (step % check_every == 0 || step == steps))
          ranks->check_replicas("after step " + std::to_string(step));
      } else if (data_parallel) { // each device's share of the rows goes straight to it
        std::vector<Tensor> xs, ys;
        const size_t share = rows.size() / parallel.size();
        for (size_t d = 0; d < parallel.size(); ++d) {
          std::vector<int64_t> part(rows.begin() + long(d * share), rows.begin() + long((d + 1) * share));
          auto [x, y] = batch(train, part, parallel[d]);
          xs.push_back(x);
          ys.push_back(y);
        }
        data_parallel->set_lr(opt.lr);
        loss_value = data_parallel->step(MultiTensor(xs, 0), MultiTensor(ys, 0)).item<float>();
      } else {
        auto [x, y] = batch(train, rows, device);
        std::vector<Tensor> in{x, y};
        if (cosine)
          in.push_back(Tensor::from_vector<float>(std::vector<float>{float(opt.lr)}, Dims{}, {}, device));
        Tensor loss = use_jit ? jit_step(in)[0] : step_fn(in)[0];
        loss_value = loss.item<float>();
      }
    } catch (const std::bad_alloc&) {
      throw Error("out of memory in training step " + std::to_string(step) + " with --bs " +
                  std::to_string(bs) + "; try a smaller batch");
    }
    if (cosine) cosine->step();
    if (!std::isfinite(loss_value))
      throw Error("training diverged: loss is " + std::to_string(loss_value) + " at step " +
                  std::to_string(step) + " (try a smaller --lr)");
    double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
    progress(tty, step, steps, double(loss_value), double(step) * bs / elapsed,
             elapsed / step * (steps - step));
  }
  if (steps > 0) {
    double total = std::chrono::duration<double>(Clock::now() - t0).count();
    std::cout << "trained " << steps << " steps in " << format_seconds(total) << " (" << std::fixed
              << std::setprecision(1) << total * 1000.0 / steps << " ms/step)\n";
  }
  if (use_jit && jit_step.captured()) {
    const JitMemory& m = jit_step.memory();
    std::cout << "jit: " << jit_step.kernel_count() << " kernels per step, " << jit_step.replays()
              << " replayed steps ("
              << (jit_step.uses_launch_batch() ? "launch_batch" : "one launch per kernel") << ")\n";
    if (config().debug >= 1)
      std::cout << "jit memory: intermediates " << m.intermediate_bytes << " B in " << m.intermediates
                << " buffers -> " << m.planned_bytes << " B in " << m.groups << " shared buffers (live peak "
                << m.peak_live_bytes << " B); step " << m.unplanned_step_bytes() << " B -> "
                << m.planned_step_bytes() << " B\n";
  }
  if (ranks && steps > 0 && check_every == 0) ranks->check_replicas("after step " + std::to_string(steps));
  if (ranks && world->rank != 0) return 0; // rank 0 evaluates and saves
  if (ranks) std::cout << "replicas: every rank holds rank 0's weights\n";
  double accuracy = test_accuracy(model, test, device);
  std::cout << "test accuracy: " << std::fixed << std::setprecision(2) << accuracy * 100.0 << "%\n";
  if (vm.count("save")) {
    std::map<std::string, std::string> meta{{"model", "beautiful_mnist"},
                                            {"steps", std::to_string(steps)},
                                            {"lr_schedule", schedule},
                                            {"test_accuracy", std::to_string(accuracy)}};
    safe_save(vm["save"].as<std::string>(), model.state_dict(), meta);
    std::cout << "saved " << vm["save"].as<std::string>() << "\n";
  }
  return 0;
}

} // namespace tg::cli
