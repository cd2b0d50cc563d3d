// `tg bench onnx`: real models through ONNX import (tg::onnx::Model) against onnxruntime and PyTorch
// eager, in the same invocation. The models (ResNet-18, MobileNetV2, a 2-layer transformer encoder,
// seeded random weights) are exported by tools/bench/peer_onnx.py (the same code as the
// tests/onnx real-model test) into a cache folder, once per batch size; each row is one model at one
// batch size: batch 1 as latency, larger batches as throughput. The peers run
// tools/bench/peer_onnx.py in --peer-runs fresh processes; each row is compared with its best peer.
// A benchmark, not a test.
#include "kernel/onnx/onnx.hpp"
#include "kernel/runtime/devices.hpp"
#include "kernel/tensor/jit.hpp"
#include "kernel/tensor/tensor.hpp"
#include "tools/tg/bench_util.hpp"
#include "tools/tg/commands.hpp"

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <sys/wait.h>
#include <thread>

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace tg::cli {
namespace {

struct ModelSpec {
  const char* id;    // peer_onnx.py's MODELS key and the export folder's name
  const char* label; // the table's
  const char* item;  // what one batch item is: the throughput's unit
};
constexpr ModelSpec kModels[] = {
    {"resnet18", "ResNet-18", "images"},
    {"mobilenet_v2", "MobileNetV2", "images"},
    {"transformer", "Transformer 2x128 s32", "sequences"},
};

// The first run schedules and compiles; the second lets the allocator's cache settle.
constexpr int kWarmup = 2;
// The sanity check of our outputs against PyTorch's (from the export): float32 on both sides,
// summed in other orders; tests/onnx's real-model test holds the CPU to atol 1e-5.
constexpr double kRtol = 1e-3, kAtol = 1e-4;

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string x; std::getline(in, x, ',');)
    if (!x.empty()) out.push_back(x);
  return out;
}

struct Row {
  const ModelSpec* model = nullptr;
  int64_t batch = 1;
  std::vector<double> ours_ms; // one per timed run
  double first_ms = std::nan("");
  std::string check = "-";
  std::string error;             // ours could not run it
  std::vector<PeerFigure> peers; // ms per batch, one figure per peer that measured it
  std::map<std::string, std::string> peer_errors;
  std::string key() const { return std::string(model->id) + "_b" + std::to_string(batch); }
  bool latency() const { return batch == 1; }
};

std::optional<Spread> ours_spread(const Row& r) {
  if (r.ours_ms.empty()) return std::nullopt;
  Spread s;
  s.runs = r.ours_ms.size();
  s.min = *std::min_element(r.ours_ms.begin(), r.ours_ms.end());
  s.max = *std::max_element(r.ours_ms.begin(), r.ours_ms.end());
  s.median = median(r.ours_ms);
  return s;
}

// The row's figure: ms per batch for latency rows, items per second for throughput rows.
double metric(const Row& r, double ms) { return r.latency() ? ms : double(r.batch) * 1e3 / ms; }
std::string metric_unit(const Row& r) { return r.latency() ? "ms" : std::string(r.model->item) + "/s"; }
std::string num_str(double v) { return v >= 100 ? fixed(v, 1) : v >= 10 ? fixed(v, 2) : fixed(v, 3); }

// min / median / max of the row's figure (a time spread read as rates swaps min and max).
std::string spread_cell(const Row& r, const Spread& ms) {
  double a = metric(r, ms.min), m = metric(r, ms.median), b = metric(r, ms.max);
  if (a > b) std::swap(a, b);
  return num_str(a) + " / " + num_str(m) + " / " + num_str(b);
}

// ---- the export ----

fs::path default_cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "tinygrad.cpp/onnx-bench";
  if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache/tinygrad.cpp/onnx-bench";
  return fs::temp_directory_path() / "tinygrad.cpp-onnx-bench";
}

// A folder per version of peer_onnx.py: another version may build other models.
std::string content_key(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  std::ostringstream os;
  os << std::hex << std::hash<std::string>{}(text);
  return os.str();
}

int exit_code(int status) { return status == -1 ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : 128; }

// Exports the models that `dir`/b<batch> lacks; false (with the reason on stderr) when it fails.
bool export_models(const std::string& python, const std::string& script, const fs::path& dir,
                   const std::vector<const ModelSpec*>& models, int64_t batch) {
  const fs::path out = dir / ("b" + std::to_string(batch));
  std::string missing;
  for (const ModelSpec* m : models)
    if (!fs::is_regular_file(out / m->id / "model.onnx"))
      missing += (missing.empty() ? "" : ",") + std::string(m->id);
  if (missing.empty()) return true;
  std::cerr << "  exporting " << missing << " at batch " << batch << " into " << out.string() << "...\n";
  const std::string cmd = shell_quote(python) + " " + shell_quote(script) + " export " +
                          shell_quote(out.string()) + " --batch " + std::to_string(batch) + " --models " +
                          missing + " 1>&2";
  const int rc = exit_code(std::system(cmd.c_str()));
  if (rc != 0) {
    std::cerr << "tg bench onnx: exporting the models failed (exit " << rc << " of " << cmd
              << "); it needs torch, torchvision and onnx (--peer-python, default /usr/bin/python3)\n";
    return false;
  }
  return true;
}

// ---- ours ----

std::string check_output(const Tensor& got, const Tensor& want) {
  if (got.shape() != want.shape()) return "WRONG (shape)";
  std::vector<float> g = got.to_vector<float>(), w = want.to_vector<float>();
  double worst = 0, excess = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const double d = std::fabs(double(g[i]) - double(w[i]));
    const double inf = std::numeric_limits<double>::infinity();
    worst = std::max(worst, std::isnan(d) ? inf : d);
    excess = std::max(excess, std::isnan(d) ? inf : d - (kAtol + kRtol * std::fabs(double(w[i]))));
  }
  return (excess <= 0 ? "ok, max |diff| " : "WRONG, max |diff| ") + general(worst);
}

// Timed runs stop early, after at least kMinRuns, once they have taken `budget_s` (a slow row).
constexpr int kMinRuns = 3;

void measure_ours(Row& row, const fs::path& case_dir, const std::string& device, int runs, double budget_s,
                  bool jit, bool replay) {
  try {
    onnx::Model model = onnx::Model::load(case_dir / "model.onnx", {.device = device, .replay = replay});
    const fs::path data = case_dir / "test_data_set_0";
    Tensor x = onnx::load_value_file(data / "input_0.pb", onnx::ValueInfo::Kind::tensor, device).tensor();
    x.realize();
    const std::string input_name = model.inputs().at(0).name;
    // Under --jit the model runs as a TinyJit function: after its capture a run is one replay of
    // the captured kernels (no graph building, scheduling or cache lookups).
    TinyJit captured([&](const std::vector<Tensor>& in) {
      std::map<std::string, Tensor> out = model.run({{input_name, in.at(0)}});
      std::vector<Tensor> list;
      for (const auto& o : model.outputs()) list.push_back(out.at(o.name));
      return list;
    });
    auto run_once = [&] { // what a user waits for: the outputs in host memory
      std::map<std::string, Tensor> out;
      if (jit) {
        std::vector<Tensor> got = captured({x});
        for (size_t i = 0; i < got.size(); ++i) out.emplace(model.outputs().at(i).name, got[i]);
      } else {
        out = model.run({{input_name, x}});
      }
      std::vector<Tensor*> ptrs;
      for (auto& [name, t] : out) ptrs.push_back(&t);
      Tensor::realize_all(ptrs);
      for (auto& [name, t] : out) (void)t.to_bytes();
      return out;
    };
    auto t0 = Clock::now();
    std::map<std::string, Tensor> first = run_once();
    row.first_ms = ms_between(t0, Clock::now());
    Tensor want = onnx::load_value_file(data / "output_0.pb", onnx::ValueInfo::Kind::tensor, device).tensor();
    row.check = check_output(first.at(model.outputs().at(0).name), want);
    for (int i = 1; i < kWarmup + (jit ? 1 : 0); ++i) run_once(); // under --jit one more: the capture
    double spent_ms = 0;
    std::map<std::string, Tensor> last;
    for (int i = 0; i < runs && (i < kMinRuns || spent_ms < budget_s * 1e3); ++i) {
      auto t = Clock::now();
      last = run_once();
      row.ours_ms.push_back(ms_between(t, Clock::now()));
      spent_ms += row.ours_ms.back();
    }
    // the timed runs' output too (under --jit a replay's): a wrong replay is not a fast one
    if (const std::string again = check_output(last.at(model.outputs().at(0).name), want);
        again.rfind("ok", 0) != 0)
      row.check = again + " (a timed run)";
  } catch (const std::exception& e) {
    row.error = e.what();
    if (auto nl = row.error.find('\n'); nl != std::string::npos) row.error.resize(nl);
  }
}

// ---- the peers ----

fs::path ort_venv() {
  const char* h = std::getenv("HOME");
  return fs::path(h && *h ? h : "/root") / ".cache/tinygrad.cpp/venv-onnxruntime";
}

// The interpreter for the onnxruntime peer: `given`, else the venv of --help, python3, /usr/bin/python3.
std::pair<std::string, std::string> find_ort_python(const std::string& given) {
  if (!given.empty())
    return imports_module(given, "onnxruntime")
               ? std::pair{given, std::string()}
               : std::pair{std::string(), given + " cannot import onnxruntime"};
  for (const std::string& p :
       {(ort_venv() / "bin/python").string(), std::string("python3"), std::string("/usr/bin/python3")})
    if (imports_module(p, "onnxruntime")) return {p, ""};
  return {"", "onnxruntime not installed (create " + ort_venv().string() + ": see tg bench onnx --help)"};
}

struct PeerSpec {
  std::string name; // "PyTorch", "onnxruntime"
  std::string arg;  // peer_onnx.py --peer
  std::string python;
  PeerRuns runs;
};

void run_peer(PeerSpec& p, const std::string& script, const fs::path& dir, const std::string& peer_device,
              const std::string& models, const std::string& batches, int runs, double budget_s,
              unsigned threads, int peer_runs) {
  std::cerr << "  running the " << p.name << " peer (" << p.python << "), " << peer_runs << " processes...\n";
  p.runs =
      run_peer_runs(shell_quote(p.python) + " " + shell_quote(script) + " time --peer " + p.arg + " --dir " +
                        shell_quote(dir.string()) + " --device " + peer_device + " --models " + models +
                        " --batch " + batches + " --runs " + std::to_string(runs) + " --max-seconds " +
                        general(budget_s) + " --threads " + std::to_string(threads),
                    peer_runs);
}

// ---- printing ----

std::optional<PeerFigure> best_of(const Row& r) { return best_peer(r.peers); }

std::optional<double> ratio(const Row& r) {
  auto ours = ours_spread(r);
  auto best = best_of(r);
  if (!ours || !best || ours->median <= 0) return std::nullopt;
  return best->spread.min / ours->median;
}

void print_rows(const std::vector<Row>& rows, const std::vector<PeerSpec>& peers, int runs) {
  std::vector<std::string> head = {"model", "batch", "unit", "ours first run", "ours min / median / max"};
  for (const auto& p : peers) head.push_back(p.name + " min / median / max");
  head.insert(head.end(), {"ratio", "check"});
  std::vector<std::vector<std::string>> cells;
  for (const Row& r : rows) {
    std::vector<std::string> c = {r.model->label, std::to_string(r.batch), metric_unit(r)};
    auto ours = ours_spread(r);
    c.push_back(std::isnan(r.first_ms) ? "-" : num_str(r.first_ms) + " ms");
    c.push_back(!ours ? "failed"
                      : spread_cell(r, *ours) + (ours->runs < size_t(runs)
                                                     ? " (" + std::to_string(ours->runs) + " runs)"
                                                     : std::string()));
    for (const auto& p : peers) {
      auto f =
          std::find_if(r.peers.begin(), r.peers.end(), [&](const PeerFigure& x) { return x.peer == p.name; });
      c.push_back(f != r.peers.end() ? spread_cell(r, f->spread) : "-");
    }
    auto x = ratio(r);
    c.push_back(x ? fixed(*x, *x < 0.1 ? 4 : 2) + "x vs " + best_of(r)->peer : "-");
    c.push_back(r.check);
    cells.push_back(std::move(c));
  }
  std::vector<bool> right(head.size(), true);
  right[0] = right[2] = right.back() = false;
  right[right.size() - 2] = false;
  std::cout << "\n";
  print_table(std::cout, head, cells, right);
  std::cout << "\n";
  for (const Row& r : rows) {
    const std::string name = std::string(r.model->label) + " batch " + std::to_string(r.batch);
    if (!r.error.empty()) std::cout << "ours failed: " << name << ": " << r.error << "\n";
    for (const auto& [peer, e] : r.peer_errors) std::cout << peer << " failed: " << name << ": " << e << "\n";
    warn_wide_spreads(std::cout, name, r.peers,
                      [&](double t) { return num_str(t) + (r.latency() ? " ms" : " ms per batch"); });
  }
}

int write_json(const std::string& path, const std::string& device, int runs, int peer_runs, unsigned threads,
               const std::vector<Row>& rows, const std::vector<PeerSpec>& peers) {
  nlohmann::ordered_json out;
  out["device"] = device;
  out["runs"] = runs;
  out["peer_runs"] = peer_runs;
  out["threads"] = threads;
  out["peers"] = nlohmann::ordered_json::object();
  for (const auto& p : peers)
    out["peers"][p.name] = p.runs.info.error.empty()
                               ? nlohmann::ordered_json{{"version", p.runs.info.str("version")},
                                                        {"threads", p.runs.info.num("threads").value_or(0)}}
                               : nlohmann::ordered_json{{"error", p.runs.info.error}};
  out["rows"] = nlohmann::ordered_json::array();
  for (const Row& r : rows) {
    nlohmann::ordered_json j;
    j["model"] = r.model->id;
    j["batch"] = r.batch;
    j["unit"] = metric_unit(r);
    j["ours_first_ms"] = json_num(std::isnan(r.first_ms) ? std::nullopt : std::optional<double>(r.first_ms));
    auto ours = ours_spread(r);
    j["ours_ms"] = ours ? spread_json(*ours) : nlohmann::ordered_json(nullptr);
    j["ours_error"] = r.error.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.error);
    j["peers_ms"] = nlohmann::ordered_json::object();
    for (const auto& f : r.peers) j["peers_ms"][f.peer] = spread_json(f.spread);
    auto best = best_of(r);
    j["best_peer"] = best ? nlohmann::ordered_json(best->peer) : nlohmann::ordered_json(nullptr);
    j["ratio"] = json_num(ratio(r));
    j["check"] = r.check;
    out["rows"].push_back(std::move(j));
  }
  return write_bench_json("tg bench onnx", path, out);
}

} // namespace

int bench_onnx(const std::vector<std::string>& args) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  po::options_description opts(
      "tg bench onnx: real models run through ONNX import (tg::onnx::Model: run, realize, read the outputs)\n"
      "against onnxruntime and PyTorch eager, in the same invocation. The models (ResNet-18, MobileNetV2, a\n"
      "2-layer transformer encoder with d_model 128, seq 32; seeded random weights) are exported by\n"
      "tools/bench/peer_onnx.py into --cache-dir once per batch size. Batch 1 is timed as latency (ms),\n"
      "larger batches as throughput (images/s, sequences/s). Ours: min / median / max of --runs runs after\n"
      "two warm-up runs (the first schedules and compiles: 'first run'); each peer: min / median / max over\n"
      "--peer-runs fresh processes of the median of --runs runs in each (a slow row stops after 3 runs once\n"
      "they took --max-seconds; the table says how many ours did). ratio = our speed / the best\n"
      "peer's (its min time / our median time; > 1: we are faster). check: our outputs against PyTorch's.\n"
      "Peers: PyTorch eager (--peer-python; on CUDA with TF32 off) and onnxruntime (CPU provider; the CUDA\n"
      "provider for --device CUDA), both with --threads intra-op threads. onnxruntime is not packaged by\n"
      "Debian; tg uses --ort-python, else the first of ~/.cache/tinygrad.cpp/venv-onnxruntime/bin/python,\n"
      "python3 and /usr/bin/python3 that imports it. To make that venv (Debian's numpy kept: its torch\n"
      "is built for it):\n"
      "  V=~/.cache/tinygrad.cpp/venv-onnxruntime; /usr/bin/python3 -m venv --system-site-packages $V\n"
      "  $V/bin/pip install onnxruntime \\\n"
      "    numpy==$(/usr/bin/python3 -c 'import numpy; print(numpy.__version__)')\n"
      "Options");
  opts.add_options()("help,h",
                     "show this help")("device,d", po::value<std::string>()->default_value("CPU"),
                                       "our device (the peers run on CUDA for CUDA, else on the CPU)")(
      "models", po::value<std::string>()->default_value("resnet18,mobilenet_v2,transformer"),
      "comma-separated, of resnet18, mobilenet_v2, transformer")(
      "batch", po::value<std::string>()->default_value("1,32"),
      "comma-separated batch sizes (1: latency)")("runs,n", po::value<int>()->default_value(10),
                                                  "timed runs per row (after warm-up), ours and each peer's")(
      "max-seconds", po::value<double>()->default_value(60),
      "a row's timed runs stop early, after at least 3, once they took this long (ours and each peer's)")(
      "peer-runs", po::value<int>()->default_value(3), "fresh processes per peer (1..20)")(
      "threads", po::value<unsigned>()->default_value(cores),
      "the peers' intra-op threads (default: the cores, as our CPU plugin's thread pool)")(
      "peer-python", po::value<std::string>()->default_value("/usr/bin/python3"),
      "the interpreter that exports the models and runs the PyTorch peer (torch, torchvision, onnx; by "
      "default /usr/bin/python3, or python3 on $PATH where only that imports torch)")(
      "ort-python", po::value<std::string>()->default_value(""), "the interpreter for the onnxruntime peer")(
      "cache-dir", po::value<std::string>()->default_value(""),
      "where the exported models go (default: ~/.cache/tinygrad.cpp/onnx-bench)")("no-peer",
                                                                                  "skip the peers")(
      "jit",
      "run our model under tg::TinyJit (one more warm-up run: the capture; then a run replays its kernels)")(
      "no-replay", "Model::run builds the graph in every run (ModelOptions::replay off)")(
      "json", po::value<std::string>(), "also write the results to this file");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << opts;
    return 0;
  }
  const int runs = vm["runs"].as<int>();
  const int peer_runs = vm["peer-runs"].as<int>();
  const double budget_s = vm["max-seconds"].as<double>();
  const std::optional<std::string> json_path =
      vm.count("json") ? std::optional(vm["json"].as<std::string>()) : std::nullopt;
  if (!bench_options_ok("tg bench onnx", runs, json_path) || !peer_runs_ok("tg bench onnx", peer_runs))
    return 2;
  std::vector<const ModelSpec*> models;
  for (const std::string& id : split(vm["models"].as<std::string>())) {
    auto it =
        std::find_if(std::begin(kModels), std::end(kModels), [&](const ModelSpec& m) { return id == m.id; });
    if (it == std::end(kModels)) {
      std::cerr << "tg bench onnx: unknown model '" << id
                << "' (known: resnet18, mobilenet_v2, transformer)\n";
      return 2;
    }
    models.push_back(&*it);
  }
  std::vector<int64_t> batches;
  for (const std::string& b : split(vm["batch"].as<std::string>())) {
    char* end = nullptr;
    const long long v = std::strtoll(b.c_str(), &end, 10);
    if (*end || v < 1 || v > 4096) {
      std::cerr << "tg bench onnx: --batch: '" << b << "' is not a batch size in 1..4096\n";
      return 2;
    }
    batches.push_back(v);
  }
  const unsigned threads = vm["threads"].as<unsigned>();
  if (!(budget_s > 0)) {
    std::cerr << "tg bench onnx: --max-seconds must be > 0\n";
    return 2;
  }
  if (models.empty() || batches.empty() || threads < 1) {
    std::cerr << "tg bench onnx: --models and --batch must name at least one, --threads must be >= 1\n";
    return 2;
  }
  const std::string device = parse_device_name(vm["device"].as<std::string>()).canonical();
  const std::string plugin = parse_device_name(device).plugin;
  const std::string peer_device = plugin == "cuda" ? "CUDA" : "CPU";
  std::string device_name;
  try {
    device_name = open_device(device).device->properties().name;
  } catch (const std::exception& e) {
    std::cerr << "tg bench onnx: device " << device << " cannot be used: " << e.what() << "\n";
    return 1;
  }
  const PeerScript script = find_peer_script("peer_onnx.py");
  if (!script.error.empty()) {
    std::cerr << "tg bench onnx: " << script.error << "\n";
    return 1;
  }
  const std::string python = torch_python(vm, "peer-python");
  if (!command_exists(python)) {
    std::cerr << "tg bench onnx: --peer-python " << python << ": no such interpreter\n";
    return 2;
  }
  const fs::path cache = vm["cache-dir"].as<std::string>().empty()
                             ? default_cache_dir()
                             : fs::path(vm["cache-dir"].as<std::string>());
  const fs::path dir = cache / content_key(script.path);
  std::cout << "tg bench onnx: device " << device << " (" << device_name << "), runs " << runs
            << ", models in " << dir.string() << "\n"
            << std::flush;
  for (int64_t b : batches)
    if (!export_models(python, script.path, dir, models, b)) return 1;

  std::vector<Row> rows;
  for (const ModelSpec* m : models)
    for (int64_t b : batches) {
      Row r;
      r.model = m;
      r.batch = b;
      std::cerr << "  running " << m->label << " batch " << b << "...\n";
      measure_ours(r, dir / ("b" + std::to_string(b)) / m->id, device, runs, budget_s, vm.count("jit") != 0,
                   vm.count("no-replay") == 0);
      rows.push_back(std::move(r));
    }

  std::vector<PeerSpec> peers = {{"PyTorch", "torch", python, {}}, {"onnxruntime", "onnxruntime", "", {}}};
  std::string model_list, batch_list;
  for (const ModelSpec* m : models) model_list += (model_list.empty() ? "" : ",") + std::string(m->id);
  for (int64_t b : batches) batch_list += (batch_list.empty() ? "" : ",") + std::to_string(b);
  for (PeerSpec& p : peers) {
    if (vm.count("no-peer")) {
      p.runs.info.error = "--no-peer";
      continue;
    }
    if (p.arg == "onnxruntime") {
      auto [ort, why] = find_ort_python(vm["ort-python"].as<std::string>());
      p.python = ort;
      p.runs.info.error = why;
    }
    if (p.runs.info.error.empty())
      run_peer(p, script.path, dir, peer_device, model_list, batch_list, runs, budget_s, threads, peer_runs);
  }
  for (Row& r : rows)
    for (const PeerSpec& p : peers) {
      if (!p.runs.info.error.empty()) continue;
      if (auto s = p.runs.spread(r.key() + "_ms"))
        r.peers.push_back({p.name, *s});
      else
        r.peer_errors[p.name] = p.runs.info.str(r.key() + "_error");
    }

  print_rows(rows, peers, runs);
  std::cout << "ours: " << device << " (" << device_name << ")"
            << (plugin == "cpu" ? ", a thread pool of " + std::to_string(cores) + " threads (the cores)" : "")
            << (vm.count("jit") ? "; a run = a TinyJit replay of Model::run + read every output\n"
                : vm.count("no-replay")
                    ? "; a run = Model::run building the graph + realize + read every output\n"
                    : "; a run = Model::run (a replay of the kernels captured in the second "
                      "warm-up run) + realize + read every output\n");
  for (const PeerSpec& p : peers) {
    const Peer& info = p.runs.info;
    if (info.error.empty())
      std::cout << "peer: " << p.name << " " << info.str("version") << " on " << peer_device
                << (p.arg == "onnxruntime" ? " (" + info.str("provider") + ")" : std::string()) << ", "
                << info.str("threads") << " threads (" << p.python << " peer_onnx.py), " << peer_runs
                << " processes\n";
    else
      std::cout << "peer unavailable: " << p.name << ": " << info.error << "\n";
  }
  std::cout << "unit: ms per batch for batch 1 (lower is better), items/s for larger batches (higher is "
               "better); ratio > 1: we are faster\n"
            << std::flush;
  if (json_path) return write_json(*json_path, device, runs, peer_runs, threads, rows, peers);
  return 0;
}

} // namespace tg::cli
