// `tg demo`: builds c = a + b in the kernel IR, compiles it with a plugin, runs it on the device
// and checks every element against a plain loop. The main job until training lands.
#include "kernel/runtime/device.hpp"
#include "kernel/runtime/plugin_registry.hpp"
#include "tools/tg/commands.hpp"

#include <tg/sdk/kernel_ir.hpp>

#include <boost/program_options.hpp>

#include <chrono>
#include <cstring>
#include <iostream>

namespace po = boost::program_options;

namespace tg::cli {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// One work group handles `per_group` consecutive elements; the tail is guarded by an IF.
std::vector<std::byte> vector_add_ir(int32_t per_group) {
  sdk::KernelBuilder b("vector_add");
  auto a = b.global(0, TG_DTYPE_FLOAT32), bb = b.global(1, TG_DTYPE_FLOAT32),
       c = b.global(2, TG_DTYPE_FLOAT32);
  auto n = b.var(0, TG_DTYPE_INT32);
  auto base = b.mul(b.group_id(0), b.i32(per_group));
  auto i = b.range(b.i32(0), b.i32(per_group));
  auto idx = b.add(base, i);
  auto in_bounds = b.if_(b.cmplt(idx, n));
  b.store(b.index(c, idx), b.add(b.load(b.index(a, idx)), b.load(b.index(bb, idx))));
  b.end_if(in_bounds);
  b.end_range(i);
  return b.serialize();
}

} // namespace

int cmd_demo(const std::vector<std::string>& args) {
  po::options_description opts("tg demo: compile c = a + b through a plugin, run it and check it.\nOptions");
  opts.add_options()("help,h", "show this help")("device,d", po::value<std::string>()->default_value("cpu"),
                                                 "plugin name")(
      "n", po::value<int32_t>()->default_value(1 << 22),
      "number of float32 elements")("source", "print the plugin's rendered source");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).run(), vm);
  if (vm.count("help")) {
    std::cout << opts;
    return 0;
  }
  const std::string name = vm["device"].as<std::string>();
  const int32_t n = vm["n"].as<int32_t>();
  if (n < 0) {
    std::cerr << "tg demo: --n must be >= 0, got " << n << "\n";
    return 2;
  }
  constexpr int32_t per_group = 4096;

  auto plugin = PluginRegistry::instance().get(name);
  auto device = Device::open(plugin, 0);
  std::cout << "device: " << plugin->name() << ":0 " << device->properties().name << "\n";

  auto t0 = Clock::now();
  auto ir = vector_add_ir(per_group);
  auto kernel = plugin->compile(ir, vm.count("source") ? TG_COMPILE_WANT_SOURCE : 0);
  auto program = device->load(kernel.binary);
  std::cout << "compile + load: " << ms_since(t0) << " ms (" << kernel.binary.size() << " byte blob)\n";
  if (vm.count("source")) std::cout << kernel.source << "\n";

  const size_t count = size_t(n);
  std::vector<float> a(count), b(count), c(count, -1.0f);
  for (int32_t k = 0; k < n; ++k) {
    a[size_t(k)] = float(k % 1000) * 0.5f;
    b[size_t(k)] = float(k % 7) - 3.0f;
  }
  const uint64_t bytes = uint64_t(n) * sizeof(float);
  Buffer da = device->alloc(bytes), db = device->alloc(bytes), dc = device->alloc(bytes);
  da.copy_from_host(std::as_bytes(std::span(a)));
  db.copy_from_host(std::as_bytes(std::span(b)));

  tg_buffer_arg bufs[3] = {{da.raw(), 0}, {db.raw(), 0}, {dc.raw(), 0}};
  tg_scalar_arg scalars[1] = {};
  scalars[0].dtype = TG_DTYPE_INT32;
  scalars[0].value.i = n;
  LaunchDims dims;
  dims.global[0] = uint32_t((n + per_group - 1) / per_group);
  bool timing = (device->properties().features & TG_FEATURE_TIMING) != 0;
  auto elapsed = program.launch(dims, bufs, scalars, timing);
  device->synchronize();
  dc.copy_to_host(std::as_writable_bytes(std::span(c)));

  int64_t wrong = 0;
  for (size_t k = 0; k < c.size(); ++k)
    if (c[k] != a[k] + b[k]) ++wrong;
  std::cout << "vector add of " << n << " float32 on " << dims.global[0] << " work groups";
  if (elapsed)
    std::cout << ": " << double(*elapsed) / 1e6 << " ms, " << 3.0 * double(bytes) / double(*elapsed)
              << " GB/s";
  std::cout << "\n";
  if (wrong) {
    std::cout << "FAILED: " << wrong << " of " << n << " elements differ from the host loop\n";
    return 1;
  }
  std::cout << "result: all " << n << " elements match the host loop\n";
  return 0;
}

} // namespace tg::cli
