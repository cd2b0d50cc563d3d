// `tg bench collective --devices A,B,...`: all-reduce (sum, f32), all-gather and broadcast of a
// large buffer across a group of devices through kernel/runtime/collective (the plugin's ABI 1.2
// entry: NCCL on CUDA, the thread pool on CPU; or the host path), against a peer measured in the
// same invocation: PyTorch's torch.distributed over NCCL (tools/bench/peer_torch_collective.py,
// one process per GPU) for CUDA devices, one host memcpy of the same bytes for CPU devices.
// Bandwidths as nccl-tests defines them: algorithm bandwidth = bytes / time, bus bandwidth =
// algorithm bandwidth x 2(n-1)/n (all-reduce), (n-1)/n (all-gather), 1 (broadcast).
#include "kernel/runtime/collective.hpp"
#include "kernel/runtime/devices.hpp"
#include "tools/tg/bench_util.hpp"
#include "tools/tg/commands.hpp"
#include "tools/tg/mnist_parallel.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <vector>

namespace po = boost::program_options;

namespace tg::cli {
namespace {

struct Row {
  std::string name, peer_key;
  double bytes = 0;      // the buffer nccl-tests sizes by (all-gather: the output)
  double bus_factor = 1; // bus bandwidth / algorithm bandwidth
  double ms = 0;
};

double gbps(double bytes, double ms) { return bytes / (ms * 1e-3) / 1e9; }

// One all-reduce of rank i's value i+1 everywhere: every element must be n(n+1)/2. Reads the
// first and last 4096 elements of every buffer (a wrong offset or an unfinished copy shows there).
bool all_reduce_is_right(std::vector<Buffer>& buffers, uint64_t count) {
  const size_t n = buffers.size();
  std::vector<float> ones(count);
  for (size_t i = 0; i < n; ++i) {
    std::fill(ones.begin(), ones.end(), float(i + 1));
    buffers[i].copy_from_host({reinterpret_cast<const std::byte*>(ones.data()), count * sizeof(float)});
  }
  std::vector<GroupBuffer> group;
  for (Buffer& b : buffers) group.push_back({&b, 0});
  all_reduce(group, dtypes::float32, count, CollectiveReduce::sum);
  const float want = float(n * (n + 1) / 2);
  const uint64_t probe = std::min<uint64_t>(4096, count);
  std::vector<float> got(probe);
  for (Buffer& b : buffers)
    for (uint64_t at : {uint64_t(0), count - probe}) {
      b.copy_to_host({reinterpret_cast<std::byte*>(got.data()), probe * sizeof(float)}, at * sizeof(float));
      for (float v : got)
        if (v != want) return false;
    }
  return true;
}

Peer torch_peer(const std::string& python, size_t n, uint64_t bytes, int repeat) {
  const auto script = std::filesystem::path(TG_SOURCE_DIR) / "tools/bench/peer_torch_collective.py";
  if (!std::filesystem::exists(script)) return Peer{{}, script.string() + " not found"};
  return run_peer_command("NCCL_NVLS_ENABLE=0 " + shell_quote(python) + " " + shell_quote(script.string()) +
                          " --world " + std::to_string(n) + " --bytes " + std::to_string(bytes) +
                          " --repeat " + std::to_string(repeat));
}

} // namespace

int bench_collective(const std::vector<std::string>& args) {
  po::options_description opts(
      "tg bench collective: all-reduce sum / all-gather / broadcast of --mb MiB of float32 over --devices\n"
      "(the plugin's collective entry, e.g. NCCL on CUDA), against PyTorch torch.distributed (NCCL, one\n"
      "process per GPU, tools/bench/peer_torch_collective.py) for CUDA devices or one host memcpy of the\n"
      "same bytes for CPU devices. Times are medians of the call + synchronize of every device.\n"
      "Options");
  opts.add_options()("help,h", "show this help")("devices", po::value<std::string>()->required(),
                                                 "the group, e.g. CUDA:0,CUDA:1 or CPU:0,CPU:1")(
      "mb", po::value<int>()->default_value(256), "buffer size in MiB (all-gather: the output)")(
      "repeat", po::value<int>()->default_value(10), "timed runs per row (after 2 warm-ups)")(
      "no-peer", "skip the peer")("peer-python", po::value<std::string>()->default_value("/usr/bin/python3"),
                                  "the interpreter that runs the PyTorch peer (by default /usr/bin/python3, "
                                  "or python3 on $PATH where only that imports torch)");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).run(), vm);
  if (vm.count("help")) {
    std::cout << opts;
    return 0;
  }
  po::notify(vm);
  const std::vector<std::string> names = parse_device_list(vm["devices"].as<std::string>());
  const size_t n = names.size();
  if (n < 2) {
    std::cerr << "tg bench collective: --devices needs at least two devices\n";
    return 2;
  }
  const int repeat = std::max(1, vm["repeat"].as<int>());
  const uint64_t bytes = uint64_t(std::max(1, vm["mb"].as<int>())) << 20;
  const uint64_t count = bytes / sizeof(float) / n * n; // all-gather splits it evenly
  std::vector<std::shared_ptr<Device>> devices;
  for (const auto& name : names) devices.push_back(open_device(name).device);
  const bool on_cuda = names[0].rfind("CUDA", 0) == 0;
  std::cout << "tg bench collective: " << vm["devices"].as<std::string>() << " ("
            << devices[0]->properties().name << "), " << (count * sizeof(float) >> 20)
            << " MiB float32, repeat " << repeat << "\n";
  for (const auto& [key, value] : devices[0]->attributes())
    if (key == "cuda.nccl") std::cout << "  " << key << ": " << value << "\n";
  std::cout << std::flush;

  std::vector<Buffer> full, part;
  for (const auto& d : devices) {
    full.push_back(d->alloc(count * sizeof(float)));
    part.push_back(d->alloc(count / n * sizeof(float)));
  }
  const bool right = all_reduce_is_right(full, count);
  std::cout << "  all-reduce check (rank i holds i+1): " << (right ? "ok" : "WRONG") << "\n";
  auto sync_all = [&] {
    for (const auto& d : devices) d->synchronize();
  };
  std::vector<GroupBuffer> full_group, part_group;
  for (size_t i = 0; i < n; ++i) {
    full_group.push_back({&full[i], 0});
    part_group.push_back({&part[i], 0});
  }
  const double nd = double(n);
  std::vector<Row> rows = {
      {"all-reduce sum f32", "all_reduce_ms", double(count) * 4, 2 * (nd - 1) / nd, 0},
      {"all-gather f32", "all_gather_ms", double(count) * 4, (nd - 1) / nd, 0},
      {"broadcast f32 (root 0)", "broadcast_ms", double(count) * 4, 1, 0},
  };
  rows[0].ms = median_ms(2, repeat, [&] {
    all_reduce(full_group, dtypes::float32, count, CollectiveReduce::sum);
    sync_all();
  });
  rows[1].ms = median_ms(2, repeat, [&] {
    all_gather(part_group, full_group, dtypes::float32, count / n);
    sync_all();
  });
  rows[2].ms = median_ms(2, repeat, [&] {
    broadcast(full_group, 0, dtypes::float32, count);
    sync_all();
  });

  Peer peer;
  std::string peer_name;
  if (vm.count("no-peer")) {
    peer.error = "skipped (--no-peer)";
  } else if (on_cuda) {
    peer_name = "PyTorch NCCL";
    peer = torch_peer(torch_python(vm, "peer-python"), n, count * sizeof(float), repeat);
  } else {
    peer_name = "host memcpy";
    std::vector<std::byte> a(count * sizeof(float), std::byte{1}), b(a.size());
    const double ms = median_ms(1, repeat, [&] { std::memcpy(b.data(), a.data(), a.size()); });
    for (const char* key : {"all_reduce_ms", "all_gather_ms", "broadcast_ms"}) peer.values[key] = ms;
  }
  std::vector<std::vector<std::string>> table;
  for (const Row& r : rows) {
    const double alg = gbps(r.bytes, r.ms);
    std::vector<std::string> line = {r.name, fixed(r.ms, 3), fixed(alg, 1), fixed(alg * r.bus_factor, 1)};
    if (auto p = peer.num(r.peer_key)) {
      const double palg = gbps(r.bytes, *p);
      line.push_back(fixed(*p, 3));
      line.push_back(fixed(on_cuda ? palg * r.bus_factor : palg, 1));
      line.push_back(fixed(*p / r.ms, 2));
    } else {
      line.insert(line.end(), {"-", "-", "-"});
    }
    table.push_back(line);
  }
  print_table(std::cout,
              {"collective", "ms", "alg GB/s", "bus GB/s", peer_name.empty() ? "peer ms" : peer_name + " ms",
               on_cuda ? "peer bus GB/s" : "peer GB/s", "ours/peer speed"},
              table, {false, true, true, true, true, true, true});
  if (!peer.error.empty()) std::cout << "  peer: " << peer.error << "\n";
  if (on_cuda && peer.error.empty())
    std::cout << "  peer: torch " << peer.str("torch") << ", NCCL " << peer.str("nccl") << "\n";
  if (!on_cuda && peer.error.empty())
    std::cout << "  peer: one std::memcpy of the buffer (GB/s = bytes / time), the floor of any host copy\n";
  return right ? 0 : 1;
}

} // namespace tg::cli
