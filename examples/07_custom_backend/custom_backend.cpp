// Step 7, the capstone: a custom backend. A device is a plugin, libtg_device_<name>.so, that the
// core loads at run time through the C ABI (docs/abi.md); the SDK's adaptor turns five small C++
// classes into that ABI. sdk/examples/custom_backend is a complete one, `MY`: it renders each
// kernel to C with the SDK's renderer, compiles it with the system's C compiler, and runs work
// groups one at a time; docs/plugin-guide.md walks through writing it. This program loads MY
// (from --my PATH, or the plugin search path) and runs the same 256x256 matmul on MY, CPU and,
// where present, CUDA, each checked against a matmul computed here on the host in double.
// A device that is not present is reported as skipped, never as passed.
#include "examples/common/args.hpp"
#include "examples/common/claims.hpp"
#include <tinygrad/tinygrad.hpp>

#include <algorithm>
#include <chrono>

using tg::Tensor;

int main(int argc, char** argv) {
  examples::Args args(argc, argv,
                      {{"my", ""}, {"n", "256"}, {"devices", "MY,CPU,CUDA"}, {"require", "MY,CPU"}});
  examples::Claims claims;
  if (!args.str("my").empty()) {
    std::string name = tg::load_plugin(args.str("my")); // the run-time way; TG_PLUGIN_PATH works too
    std::cout << "loaded plugin '" << name << "' from " << args.str("my") << "\n";
  }

  const int64_t n = args.integer("n");
  std::vector<float> a(size_t(n * n)), b(size_t(n * n));
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = float(int(i * 7 % 13) - 6) / 8.0f;
    b[i] = float(int(i * 5 % 11) - 5) / 8.0f;
  }
  std::vector<double> want(size_t(n * n));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < n; ++k)
      for (int64_t j = 0; j < n; ++j)
        want[size_t(i * n + j)] += double(a[size_t(i * n + k)]) * double(b[size_t(k * n + j)]);

  std::vector<std::string> devices, required;
  for (std::string list : {args.str("devices"), args.str("require")}) {
    std::vector<std::string>& out = devices.empty() ? devices : required;
    for (size_t start = 0, comma; start <= list.size(); start = comma + 1) {
      comma = std::min(list.find(',', start), list.size());
      if (comma > start) out.push_back(list.substr(start, comma - start));
    }
  }

  examples::section(std::to_string(n) + "x" + std::to_string(n) + " matmul on each device");
  int ran = 0;
  bool required_missing = false;
  for (const auto& device : devices) {
    std::string what;
    try {
      tg::OpenDevice dev = tg::open_device(device);
      what = dev.device->properties().name;
    } catch (const tg::Error& e) {
      bool needed = std::find(required.begin(), required.end(), device) != required.end();
      std::cout << "  " << device << ": skipped: unavailable (" << e.what() << ")\n";
      required_missing |= needed;
      continue;
    }
    Tensor x = Tensor::from_vector(a, {n, n}, std::nullopt, device),
           y = Tensor::from_vector(b, {n, n}, std::nullopt, device);
    auto t0 = std::chrono::steady_clock::now();
    x.matmul(y).realize(); // the first run compiles the kernel
    double first_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    Tensor x2 = Tensor::from_vector(a, {n, n}, std::nullopt, device),
           y2 = Tensor::from_vector(b, {n, n}, std::nullopt, device);
    x2.realize(), y2.realize();
    tg::LaunchCounter counter;
    t0 = std::chrono::steady_clock::now();
    Tensor c = x2.matmul(y2).realize();
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    auto got = examples::doubles(c.to_vector<float>());
    std::cout << "  " << device << " (" << what << "): first run " << first_ms << " ms (compiles), then "
              << ms << " ms, " << counter.kernels() << " kernel "
              << (counter.launches().empty() ? "" : counter.launches()[0].name) << "\n";
    claims.check(c.device().starts_with(device), device + ": the result lives on " + device, c.device());
    claims.close(got, want, 1e-5, 1e-4, device + ": equals the host's double-precision matmul");
    ++ran;
  }
  if (required_missing) {
    std::cout << "skipped: a required device (" << args.str("require") << ") is unavailable\n";
    return 77;
  }
  claims.check(ran >= 2, "ran on at least two devices", std::to_string(ran));
  return claims.finish("07_custom_backend");
}
