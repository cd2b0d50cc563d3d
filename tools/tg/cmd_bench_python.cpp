// `tg bench python`: what the Python front end costs. One small op, (a + b).realize() on 1024
// float32 with a cached kernel and two input sets alternating, timed three ways in the same
// invocation: in C++ here (as `tg bench core`'s dispatch row), from Python through tinygrad_cpp,
// and from Python through tinygrad itself (its own front end and runtime). Each Python figure
// comes from --runs fresh processes of tools/bench/python_dispatch.py (min/median/max); the C++
// figure is the min/median/max of --repeat samples of 1000 calls. A benchmark, not a test.
#include "kernel/runtime/devices.hpp"
#include "kernel/tensor/tensor.hpp"
#include "tools/tg/bench_util.hpp"
#include "tools/tg/commands.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace tg::cli {
namespace {

// The directory holding tinygrad_cpp: given, else the build tree's <bin>/../python.
std::string find_package_dir(const std::string& given) {
  if (!given.empty()) return given;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path p = exe.parent_path().parent_path() / "python";
    if (fs::exists(p / "tinygrad_cpp" / "__init__.py")) return p.string();
  }
  return {};
}

} // namespace

int bench_python(const std::vector<std::string>& args) {
  po::options_description opts("tg bench python options");
  opts.add_options()("help,h",
                     "this help")("repeat", po::value<int>()->default_value(7),
                                  "samples of 1000 calls (C++ here, and inside each Python process)")(
      "runs", po::value<int>()->default_value(5), "fresh processes per Python figure (1..20)")(
      "python", po::value<std::string>()->default_value("/usr/bin/python3"),
      "the interpreter tinygrad_cpp was built for")(
      "package", po::value<std::string>()->default_value(""),
      "directory holding the tinygrad_cpp package (default: the build tree's python/; an installed "
      "package needs no directory: pass --package \"\" and have it importable)")(
      "peer-python", po::value<std::string>()->default_value(""),
      "interpreter that can import tinygrad (default: python3, then /usr/bin/python3)")(
      "json", po::value<std::string>(), "also write the figures to this file");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << "usage: tg bench python [options]\n\n"
                 "(a + b).realize() on 1024 float32 (a cached kernel): in C++, from Python through\n"
                 "tinygrad_cpp, and from Python through tinygrad, on the CPU device. Targets: Python\n"
                 "within 2x of C++, and below tinygrad's Python figure.\n\n"
              << opts;
    return 0;
  }
  int repeat = vm["repeat"].as<int>(), runs = vm["runs"].as<int>();
  std::optional<std::string> json_path;
  if (vm.count("json")) json_path = vm["json"].as<std::string>();
  if (!bench_options_ok("tg bench python", repeat, json_path) || !peer_runs_ok("tg bench python", runs))
    return 2;
  const std::string python = vm["python"].as<std::string>();
  if (!command_exists(python)) {
    std::cerr << "tg bench python: --python " << python << " not found\n";
    return 2;
  }
  PeerScript script = find_peer_script("python_dispatch.py");
  if (!script.error.empty()) {
    std::cerr << "tg bench python: " << script.error << "\n";
    return 1;
  }

  // C++: the same loop as the Python script.
  std::vector<double> cpp;
  {
    constexpr int calls = 1000;
    Tensor a[2] = {random_tensor({1024}, 8, "CPU"), random_tensor({1024}, 9, "CPU")};
    Tensor b[2] = {random_tensor({1024}, 10, "CPU"), random_tensor({1024}, 11, "CPU")};
    for (int k = 0; k < calls / 10; ++k) (a[k & 1] + b[k & 1]).realize();
    for (int i = 0; i < repeat; ++i) {
      auto t0 = Clock::now();
      for (int k = 0; k < calls; ++k) (a[k & 1] + b[k & 1]).realize();
      cpp.push_back(ms_between(t0, Clock::now()) * 1e3 / calls);
    }
  }
  Spread ours_cpp = spread_of(cpp);

  auto command = [&](const std::string& interpreter, const std::string& impl, const std::string& pythonpath) {
    std::string env = pythonpath.empty() ? "" : "PYTHONPATH=" + shell_quote(pythonpath) + " ";
    return env + shell_quote(interpreter) + " " + shell_quote(script.path) + " --impl " + impl +
           " --repeat " + std::to_string(repeat);
  };
  std::string package = find_package_dir(vm["package"].as<std::string>());
  std::cerr << "  timing tinygrad_cpp from Python (" << python << (package.empty() ? "" : ", " + package)
            << "), " << runs << " processes\n";
  PeerRuns ours_py = run_peer_runs(command(python, "tinygrad_cpp", package), runs);
  PeerRuns peer;
  if (TinygradPython tp = find_tinygrad_python(vm["peer-python"].as<std::string>()); !tp.error.empty()) {
    peer.info.error = tp.error;
  } else {
    std::cerr << "  timing tinygrad from Python (" << tp.python << "), " << runs << " processes\n";
    peer = run_peer_runs("DEV=CPU " + command(tp.python, "tinygrad", ""), runs);
  }

  auto us = [](double v) { return fixed(v, 2); };
  auto ratio = [](double r) { // three significant digits: the tinygrad ratio is far below 0.01
    std::ostringstream o;
    o << std::setprecision(3) << r << "x";
    return o.str();
  };
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"C++ (this process)", spread_str(ours_cpp, us), "1.00x", ""});
  std::optional<Spread> py = ours_py.info.error.empty() ? ours_py.spread("dispatch_us") : std::nullopt;
  std::optional<Spread> tgp = peer.info.error.empty() ? peer.spread("dispatch_us") : std::nullopt;
  if (py)
    rows.push_back({"Python: tinygrad_cpp " + ours_py.info.str("version"), spread_str(*py, us),
                    fixed(py->min / ours_cpp.min, 2) + "x", tgp ? ratio(py->min / tgp->min) : "-"});
  else
    rows.push_back({"Python: tinygrad_cpp", "unavailable: " + ours_py.info.error, "-", "-"});
  if (tgp)
    rows.push_back({"Python: tinygrad " + peer.info.str("version") + " (peer)", spread_str(*tgp, us),
                    fixed(tgp->min / ours_cpp.min, 2) + "x", "1.00x"});
  else
    rows.push_back({"Python: tinygrad (peer)", "unavailable: " + peer.info.error, "-", "-"});
  std::cout << "(a + b).realize(), 1024 float32, CPU device: µs per call, min / median / max\n";
  print_table(std::cout, {"front end", "µs per call", "vs C++", "vs tinygrad"}, rows,
              {false, true, true, true});
  std::cout << "targets: tinygrad_cpp from Python <= 2x C++ and < tinygrad's Python (ratios of the minima)\n";
  std::vector<PeerFigure> figures;
  if (py) figures.push_back({"tinygrad_cpp (Python)", *py});
  if (tgp) figures.push_back({"tinygrad", *tgp});
  warn_wide_spreads(std::cout, "dispatch", figures, us);

  if (json_path) {
    nlohmann::ordered_json j;
    j["benchmark"] = "python";
    j["cpp_us"] = spread_json(ours_cpp);
    j["python_us"] = py ? spread_json(*py) : nlohmann::ordered_json(nullptr);
    j["tinygrad_us"] = tgp ? spread_json(*tgp) : nlohmann::ordered_json(nullptr);
    return write_bench_json("tg bench python", *json_path, j);
  }
  return py ? 0 : 1;
}

} // namespace tg::cli
