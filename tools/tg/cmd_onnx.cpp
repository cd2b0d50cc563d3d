// `tg run MODEL.onnx`: runs an ONNX model and prints its outputs and timing.
// `tg onnx-test DIR...`: runs ONNX backend test folders (model.onnx + test_data_set_*/) and
// compares like ONNX's backend tests (rtol 1e-3, atol 1e-7, dtype and shape exactly).
#include "kernel/onnx/graph.hpp"
#include "kernel/onnx/onnx.hpp"
#include "kernel/runtime/devices.hpp"
#include "kernel/runtime/errors.hpp"
#include "tools/tg/commands.hpp"
#include "tools/tg/npy.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace tg::cli {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

onnx::HostTensor host_of(const Tensor& t) {
  onnx::HostTensor h;
  h.dtype = t.dtype();
  h.shape = t.shape();
  h.data = t.to_bytes();
  return h;
}

std::string decl_text(const onnx::ValueInfo& v) {
  std::string s = v.name + ": ";
  if (v.kind == onnx::ValueInfo::Kind::sequence) s += "sequence of ";
  if (v.kind == onnx::ValueInfo::Kind::optional) s += "optional ";
  s += v.dtype_name.empty() ? "?" : v.dtype_name;
  if (v.dims) {
    s += " (";
    for (size_t i = 0; i < v.dims->size(); ++i) {
      const auto& d = (*v.dims)[i];
      if (i) s += ", ";
      if (auto n = std::get_if<int64_t>(&d))
        s += std::to_string(*n);
      else if (auto p = std::get_if<std::string>(&d))
        s += *p;
      else
        s += "?";
    }
    s += ")";
  }
  return s;
}

// ---- tg onnx-test ----

struct Tolerance {
  double rtol = 1e-3, atol = 1e-7;
};

// "" when equal within tolerance, else what differs.
std::string compare_tensor(const Tensor& got, const Tensor& want, const Tolerance& tol) {
  if (got.dtype() != want.dtype()) return "dtype " + got.dtype().name() + ", expected " + want.dtype().name();
  if (got.shape() != want.shape())
    return "shape " + dims_str(got.shape()) + ", expected " + dims_str(want.shape());
  onnx::HostTensor g = host_of(got), w = host_of(want);
  if (got.dtype().is_int() || got.dtype() == dtypes::bool_) {
    auto a = g.as_ints(), b = w.as_ints();
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i] != b[i])
        return "element " + std::to_string(i) + " is " + std::to_string(a[i]) + ", expected " +
               std::to_string(b[i]);
    return "";
  }
  auto a = g.as_doubles(), b = w.as_doubles();
  size_t bad = 0, first = 0;
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    bool ok = (std::isnan(a[i]) && std::isnan(b[i])) || a[i] == b[i] ||
              (std::isfinite(b[i]) && std::abs(a[i] - b[i]) <= tol.atol + tol.rtol * std::abs(b[i]));
    if (!ok) {
      if (!bad++) first = i;
      worst = std::max(worst, std::abs(a[i] - b[i]));
    }
  }
  if (!bad) return "";
  std::ostringstream os;
  os << bad << " of " << a.size() << " elements differ (first: element " << first << " is " << a[first]
     << ", expected " << b[first] << "; largest difference " << worst << ")";
  return os.str();
}

std::string compare_value(const onnx::Value& got, const onnx::Value& want, const Tolerance& tol) {
  if (want.is_none()) return got.is_none() ? "" : "expected an empty optional";
  if (got.is_none()) return "got an empty optional";
  if (want.is_sequence()) {
    if (!got.is_sequence()) return "expected a sequence, got a tensor";
    const auto &g = got.sequence(), &w = want.sequence();
    if (g.size() != w.size())
      return "sequence of " + std::to_string(g.size()) + ", expected " + std::to_string(w.size());
    for (size_t i = 0; i < g.size(); ++i)
      if (auto e = compare_tensor(g[i], w[i], tol); !e.empty())
        return "sequence element " + std::to_string(i) + ": " + e;
    return "";
  }
  if (!got.is_tensor()) return "expected a tensor, got a sequence";
  return compare_tensor(got.tensor(), want.tensor(), tol);
}

enum class Status { pass, fail, skip };
const char* status_name(Status s) { return s == Status::pass ? "pass" : s == Status::fail ? "fail" : "skip"; }

struct CaseResult {
  std::string name;
  Status status = Status::pass;
  std::string reason;
  int64_t replays = 0; // runs that replayed captured kernels
};

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\t', ' ');
  if (s.size() > 300) s = s.substr(0, 297) + "...";
  return s;
}

// ONNX 1.12's test data stores bfloat16 tensors as UINT16 bits (numpy has no bfloat16): read
// them as the bfloat16 the model declares.
onnx::Value as_declared(onnx::Value v, const onnx::ValueInfo& info) {
  if (v.is_tensor() && info.dtype == dtypes::bfloat16 && v.tensor().dtype() == dtypes::uint16)
    return onnx::Value(v.tensor().bitcast(dtypes::bfloat16));
  return v;
}

// Model::run where every input and output is a tensor (it replays from the third run of the same
// shapes), else run_values.
std::map<std::string, onnx::Value> run_model(const onnx::Model& model,
                                             const std::map<std::string, onnx::Value>& inputs) {
  std::map<std::string, Tensor> tensors;
  for (const auto& [name, v] : inputs) {
    if (!v.is_tensor()) return model.run_values(inputs);
    tensors.emplace(name, v.tensor());
  }
  for (const auto& info : model.outputs())
    if (info.kind != onnx::ValueInfo::Kind::tensor) return model.run_values(inputs);
  for (const auto& info : model.inputs())
    if (!inputs.count(info.name)) return model.run_values(inputs); // an omitted optional input
  std::map<std::string, onnx::Value> out;
  for (auto& [name, t] : model.run(tensors)) out.emplace(name, onnx::Value(t));
  return out;
}

// repeat > 1: each data set runs `repeat` times through Model::run, every run compared (the third
// and later replay the captured kernels).
CaseResult run_case(const fs::path& dir, const std::string& name, const std::string& device,
                    const Tolerance& tol, int repeat) {
  CaseResult r{name, Status::pass, ""};
  try {
    onnx::Model model = onnx::Model::load(dir / "model.onnx", {device});
    std::vector<fs::path> sets;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
        sets.push_back(e.path());
    std::sort(sets.begin(), sets.end());
    if (sets.empty()) throw onnx::OnnxError("no test_data_set_* folder");
    for (const auto& set : sets) {
      std::map<std::string, onnx::Value> inputs;
      for (size_t i = 0; fs::exists(set / ("input_" + std::to_string(i) + ".pb")); ++i) {
        if (i >= model.inputs().size())
          throw onnx::OnnxError(set.string() + ": more input files than the model has inputs");
        const auto& info = model.inputs()[i];
        inputs[info.name] = as_declared(
            onnx::load_value_file(set / ("input_" + std::to_string(i) + ".pb"), info.kind, device), info);
      }
      for (int run = 0; run < repeat; ++run) {
        auto outputs = repeat > 1 ? run_model(model, inputs) : model.run_values(inputs);
        for (size_t i = 0; fs::exists(set / ("output_" + std::to_string(i) + ".pb")); ++i) {
          if (i >= model.outputs().size())
            throw onnx::OnnxError(set.string() + ": more output files than the model has outputs");
          const auto& info = model.outputs()[i];
          onnx::Value want = as_declared(
              onnx::load_value_file(set / ("output_" + std::to_string(i) + ".pb"), info.kind, device), info);
          std::string diff = compare_value(outputs.at(info.name), want, tol);
          r.replays = model.replays();
          if (!diff.empty()) {
            r.status = Status::fail;
            r.reason = "output '" + info.name + "'" +
                       (repeat > 1 ? " in run " + std::to_string(run + 1) : "") + ": " + diff;
            return r;
          }
        }
      }
    }
  } catch (const onnx::OnnxUnsupportedError& e) {
    r.status = Status::skip;
    r.reason = one_line(e.what());
  } catch (const std::exception& e) {
    r.status = Status::fail;
    r.reason = one_line(e.what());
  }
  return r;
}

// Case folders under each argument: the folder itself when it holds model.onnx, else its
// subfolders (two levels: the data root, then node/, simple/, ...).
void collect_cases(const fs::path& dir, int depth, std::vector<fs::path>& out) {
  if (fs::exists(dir / "model.onnx")) {
    out.push_back(dir);
    return;
  }
  if (depth == 0 || !fs::is_directory(dir)) return;
  std::vector<fs::path> subs;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory()) subs.push_back(e.path());
  std::sort(subs.begin(), subs.end());
  for (const auto& s : subs) collect_cases(s, depth - 1, out);
}

std::map<std::string, std::pair<Status, std::string>> read_expectations(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw Error(file.string() + ": cannot open the expectations file");
  std::map<std::string, std::pair<Status, std::string>> m;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string name, status, reason;
    ls >> name >> status;
    std::getline(ls, reason);
    reason.erase(0, reason.find_first_not_of(" \t"));
    if (status != "fail" && status != "skip")
      throw Error(file.string() + ":" + std::to_string(n) + ": status must be fail or skip, got '" + status +
                  "'");
    m[name] = {status == "fail" ? Status::fail : Status::skip, reason};
  }
  return m;
}

} // namespace

int cmd_onnx_test(const std::vector<std::string>& args) {
  po::options_description opts("tg onnx-test DIR...: run ONNX backend test folders (model.onnx + "
                               "test_data_set_*/input_N.pb, output_N.pb)\n"
                               "and compare the outputs like ONNX's backend tests. DIR is a case folder or a "
                               "folder of them (two levels).\n"
                               "Ends with 'N passed, N failed, N skipped' (skipped: an op, opset or dtype "
                               "this runtime lacks).\nOptions");
  opts.add_options()("help,h", "show this help")("device,d", po::value<std::string>()->default_value(""),
                                                 "device (default: the default device)")(
      "verbose,v", "print every case, not only those that do not pass")(
      "expect", po::value<std::vector<std::string>>(),
      "expectations file (name fail|skip reason per line; repeatable, the files add up): exit 1 when a case "
      "does "
      "worse than listed or passes while listed")("write-expect", po::value<std::string>(),
                                                  "write the expectations file of this run")(
      "rtol", po::value<double>()->default_value(1e-3),
      "relative tolerance")("atol", po::value<double>()->default_value(1e-7), "absolute tolerance")(
      "list-ops", "print the supported ops as the markdown list docs/onnx.md holds, and exit")(
      "repeat", po::value<int>()->default_value(1),
      "run each data set N times through Model::run and compare every run (from the third, runs replay)")(
      "dirs", po::value<std::vector<std::string>>(), "test folders");
  po::positional_options_description pos;
  pos.add("dirs", -1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).positional(pos).run(), vm);
  if (vm.count("help")) {
    std::cout << opts;
    return 0;
  }
  if (vm.count("list-ops")) {
    // one line per domain: `Op`, `Op`, ... (ai.onnx first)
    std::map<std::string, std::vector<std::string>> by_domain;
    for (const auto& op : onnx::supported_ops()) {
      auto colon = op.find(':');
      if (colon == std::string::npos)
        by_domain[""].push_back(op);
      else
        by_domain[op.substr(0, colon)].push_back(op.substr(colon + 1));
    }
    for (const auto& [domain, ops] : by_domain) {
      std::cout << "- " << (domain.empty() ? "ai.onnx" : domain) << " (" << ops.size() << "): ";
      for (size_t i = 0; i < ops.size(); ++i) std::cout << (i ? ", " : "") << ops[i];
      std::cout << "\n";
    }
    return 0;
  }
  if (!vm.count("dirs")) {
    std::cerr << "tg onnx-test: give at least one test folder\n";
    return 2;
  }
  std::string device = vm["device"].as<std::string>();
  device = device.empty() ? default_device() : parse_device_name(device).canonical();
  try { // a device whose hardware is absent skips the run (ctest's skip code), never passes it
    (void)open_device(device);
  } catch (const DeviceUnavailableError& e) {
    std::cout << "skipped: unavailable: " << e.what() << "\n";
    return 77;
  }
  Tolerance tol{vm["rtol"].as<double>(), vm["atol"].as<double>()};
  const int repeat = vm["repeat"].as<int>();
  if (repeat < 1) throw Error("--repeat must be at least 1, got " + std::to_string(repeat));
  std::vector<fs::path> cases;
  for (const auto& d : vm["dirs"].as<std::vector<std::string>>()) {
    if (!fs::exists(d)) {
      std::cerr << "tg onnx-test: " << d << " does not exist\n";
      return 2;
    }
    collect_cases(d, 2, cases);
  }
  std::map<std::string, std::pair<Status, std::string>> expect;
  if (vm.count("expect"))
    for (const auto& file : vm["expect"].as<std::vector<std::string>>())
      expect.merge(read_expectations(file));
  bool verbose = vm.count("verbose") != 0;
  std::cout << "device: " << device << ", " << cases.size() << " cases\n" << std::flush;
  std::vector<CaseResult> results;
  int counts[3] = {0, 0, 0}, mismatches = 0, replayed = 0;
  auto t0 = Clock::now();
  for (const auto& dir : cases) {
    std::string name = dir.parent_path().filename().string() + "/" + dir.filename().string();
    CaseResult r = run_case(dir, name, device, tol, repeat);
    counts[int(r.status)]++;
    replayed += r.replays > 0;
    if (verbose || r.status != Status::pass)
      std::cout << (r.status == Status::pass   ? "PASS "
                    : r.status == Status::fail ? "FAIL "
                                               : "SKIP ")
                << name << (r.reason.empty() ? "" : ": " + r.reason) << "\n"
                << std::flush;
    if (vm.count("expect")) {
      auto it = expect.find(name);
      Status want = it == expect.end() ? Status::pass : it->second.first;
      if (r.status != want) {
        ++mismatches;
        std::cout << "  ^ expected " << status_name(want) << ", got " << status_name(r.status)
                  << (r.status == Status::pass ? " (now passes: remove it from the expectations)" : "")
                  << "\n";
      }
    }
    results.push_back(std::move(r));
  }
  if (vm.count("write-expect")) {
    std::ofstream out(vm["write-expect"].as<std::string>());
    out << "# tg onnx-test expectations: the cases that do not pass, with why (name status reason).\n"
        << "# Written by: tg onnx-test --write-expect FILE DIR...; checked by --expect FILE.\n";
    for (const auto& r : results)
      if (r.status != Status::pass) out << r.name << " " << status_name(r.status) << " " << r.reason << "\n";
  }
  std::cout << counts[0] << " passed, " << counts[1] << " failed, " << counts[2] << " skipped (" << std::fixed
            << std::setprecision(1) << ms_since(t0) / 1000 << " s)\n";
  if (repeat > 1) std::cout << replayed << " cases replayed their captured kernels\n";
  if (vm.count("expect")) {
    if (mismatches) std::cout << mismatches << " cases differ from the expectations\n";
    return mismatches ? 1 : 0;
  }
  return counts[1] ? 1 : 0;
}

// ---- tg run ----

namespace {

Tensor random_input(const onnx::ValueInfo& info, const std::map<std::string, int64_t>& dims,
                    const std::string& device) {
  if (!info.dtype)
    throw Error("input '" + info.name + "' has data type " + info.dtype_name + ": give it a file");
  Dims shape;
  if (info.dims)
    for (const auto& d : *info.dims) {
      if (auto n = std::get_if<int64_t>(&d))
        shape.push_back(*n);
      else if (auto p = std::get_if<std::string>(&d))
        shape.push_back(dims.count(*p) ? dims.at(*p) : 1);
      else
        shape.push_back(1);
    }
  DType dt = *info.dtype;
  if (dt.is_float()) return Tensor::randn(shape, dtypes::float32, device).cast(dt);
  if (dt == dtypes::bool_)
    return Tensor::rand(shape, dtypes::float32, device).lt(Tensor::full(shape, 0.5, dtypes::float32, device));
  return Tensor::randint(shape, 0, 10, dtypes::int32, device).cast(dt);
}

void print_summary(const std::string& name, const Tensor& t) {
  std::cout << "  " << name << ": " << t.dtype().name() << " " << dims_str(t.shape()) << std::defaultfloat
            << std::setprecision(5);
  onnx::HostTensor h = host_of(t);
  auto v = h.as_doubles();
  if (!v.empty()) {
    double lo = v[0], hi = v[0], sum = 0;
    for (double x : v) {
      lo = std::min(lo, x);
      hi = std::max(hi, x);
      sum += x;
    }
    std::cout << "  min " << lo << " max " << hi << " mean " << sum / double(v.size()) << "  [";
    for (size_t i = 0; i < std::min<size_t>(v.size(), 6); ++i) std::cout << (i ? ", " : "") << v[i];
    std::cout << (v.size() > 6 ? ", ...]" : "]");
  }
  std::cout << std::fixed << std::setprecision(1) << "\n";
}

} // namespace

int cmd_run(const std::vector<std::string>& args) {
  po::options_description opts(
      "tg run MODEL.onnx: run an ONNX model, print its outputs and timing.\nOptions");
  opts.add_options()("help,h", "show this help")("device,d", po::value<std::string>()->default_value(""),
                                                 "device (default: the default device)")(
      "input,i", po::value<std::vector<std::string>>(),
      "NAME=FILE.npy or NAME=random (repeatable; inputs not named are random)")(
      "dim", po::value<std::vector<std::string>>(),
      "NAME=SIZE for a named (dynamic) dimension of random inputs (default 1)")(
      "bench", po::value<int>()->default_value(0), "time N more runs after the first")(
      "no-replay", "build the graph in every run (no replays of an earlier run's kernels)")(
      "save-outputs", po::value<std::string>(),
      "write each output to DIR/NAME.npy")("seed", po::value<uint64_t>()->default_value(0),
                                           "seed of random inputs")("model", po::value<std::string>(), "");
  po::positional_options_description pos;
  pos.add("model", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).positional(pos).run(), vm);
  if (vm.count("help")) {
    std::cout << opts;
    return 0;
  }
  if (!vm.count("model")) {
    std::cerr << "tg run: give a model file (tg run MODEL.onnx)\n";
    return 2;
  }
  std::string device = vm["device"].as<std::string>();
  Tensor::manual_seed(vm["seed"].as<uint64_t>());
  auto t0 = Clock::now();
  onnx::Model model =
      onnx::Model::load(vm["model"].as<std::string>(), {.device = device, .replay = !vm.count("no-replay")});
  std::cout << "model " << vm["model"].as<std::string>() << " (opset " << model.opset() << ") on "
            << model.device() << ", loaded in " << std::fixed << std::setprecision(1) << ms_since(t0)
            << " ms\n";
  std::map<std::string, int64_t> dims;
  if (vm.count("dim"))
    for (const auto& d : vm["dim"].as<std::vector<std::string>>()) {
      auto eq = d.find('=');
      if (eq == std::string::npos) throw Error("--dim " + d + ": expected NAME=SIZE");
      dims[d.substr(0, eq)] = std::stoll(d.substr(eq + 1));
    }
  std::map<std::string, std::string> given;
  if (vm.count("input"))
    for (const auto& s : vm["input"].as<std::vector<std::string>>()) {
      auto eq = s.find('=');
      if (eq == std::string::npos) throw Error("--input " + s + ": expected NAME=FILE.npy or NAME=random");
      given[s.substr(0, eq)] = s.substr(eq + 1);
    }
  std::map<std::string, Tensor> inputs;
  std::cout << "inputs:\n";
  for (const auto& info : model.inputs()) {
    auto it = given.find(info.name);
    bool random = it == given.end() || it->second == "random";
    Tensor t = random ? random_input(info, dims, model.device()) : load_npy(it->second, model.device());
    t.realize(); // once: a lazy random input would be drawn again inside every run's first kernel
    std::cout << "  " << decl_text(info) << " <- " << (random ? "random" : it->second) << " "
              << dims_str(t.shape()) << "\n";
    inputs.emplace(info.name, t);
    if (it != given.end()) given.erase(it);
  }
  if (!given.empty())
    throw Error("--input " + given.begin()->first + ": the model has no input of that name");
  auto run_once = [&] {
    auto out = model.run(inputs);
    std::vector<Tensor*> ptrs;
    for (auto& [n, t] : out) ptrs.push_back(&t);
    Tensor::realize_all(ptrs);
    for (auto& [n, t] : out) (void)t.to_bytes(); // waits for the device
    return out;
  };
  auto t1 = Clock::now();
  auto outputs = run_once();
  double first = ms_since(t1);
  std::cout << "outputs:\n";
  for (const auto& [name, t] : outputs) print_summary(name, t);
  std::cout << "first run (schedules and compiles): " << first << " ms\n";
  int n = vm["bench"].as<int>();
  if (n > 0) {
    std::vector<double> times;
    for (int i = 0; i < n; ++i) {
      auto t = Clock::now();
      run_once();
      times.push_back(ms_since(t));
    }
    std::sort(times.begin(), times.end());
    std::cout << "runs: " << n << " (" << model.replays() << " replayed), min " << times.front()
              << " ms, median " << times[times.size() / 2] << " ms, max " << times.back() << " ms\n";
  }
  if (vm.count("save-outputs")) {
    fs::path dir = vm["save-outputs"].as<std::string>();
    fs::create_directories(dir);
    for (const auto& [name, t] : outputs) save_npy(dir / (name + ".npy"), t);
  }
  return 0;
}

} // namespace tg::cli
