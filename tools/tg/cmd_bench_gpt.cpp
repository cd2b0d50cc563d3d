// `tg bench gpt`: the GPT's training step and KV-cache sampling against PyTorch eager running the
// same model and recipe (tools/bench/peer_gpt.py, in --peer-runs fresh processes), and, with
// --train-steps, the validation loss both reach from the same initial weights on the same batches.
// A benchmark, not a test.
#include "kernel/runtime/devices.hpp"
#include "models/gpt/checkpoint.hpp"
#include "models/gpt/generate.hpp"
#include "models/gpt/tokenizer.hpp"
#include "models/gpt/train.hpp"
#include "tools/tg/bench_util.hpp"
#include "tools/tg/commands.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <thread>
#include <unistd.h>

namespace po = boost::program_options;

namespace tg::cli {
namespace {

std::string ratio(double r) { return fixed(r, 2) + "x"; }

} // namespace

int bench_gpt(const std::vector<std::string>& args) {
  po::options_description opts("Options");
  opts.add_options()("help,h", "show this help")("device", po::value<std::string>()->default_value(""),
                                                 "device (default: $TG_DEVICE or CPU)")(
      "config", po::value<std::string>()->default_value("tiny"),
      "tiny, char or gpt2")("vocab", po::value<int>()->default_value(0),
                            "vocabulary size instead of the config's (e.g. 50304, GPT-2's 50257 padded to a "
                            "multiple of 64 as nanoGPT does)")("bs", po::value<int>()->default_value(16),
                                                               "sequences per training step")(
      "runs", po::value<int>()->default_value(10),
      "timed training steps (after 3 untimed: warm-up, capture)")(
      "tokens", po::value<int>()->default_value(100), "tokens sampled (batch 1) for the sampling row")(
      "train-steps", po::value<int>()->default_value(0),
      "also train this many steps from the same initial weights on the same batches as PyTorch and compare "
      "the validation losses (byte configs; the default corpus or --data)")(
      "data", po::value<std::string>()->default_value(""), "text for --train-steps (default: the Bible)")(
      "lr", po::value<double>()->default_value(1e-3), "peak learning rate for --train-steps")(
      "dtype", po::value<std::string>()->default_value("float32"),
      "float32 (both sides strict, TF32 off) or bfloat16 (ours: bf16 projections and attention over float32 "
      "weights; PyTorch: torch.autocast(bfloat16))")("peer-runs", po::value<int>()->default_value(3),
                                                     "PyTorch processes per row (min / median / max)")(
      "python", po::value<std::string>()->default_value("/usr/bin/python3"),
      "interpreter that imports torch (by default /usr/bin/python3, or python3 on $PATH where only that "
      "imports torch)")("compile", "also time PyTorch's training step under torch.compile")(
      "no-sample", "skip the sampling row");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout
        << "usage: tg bench gpt [options]\n\n"
           "The GPT (models/gpt) against PyTorch eager running the same model and recipe, float32 on both\n"
           "sides (TF32 off): the training step (AdamW, clip 1.0) in tokens/s, batch-1 sampling with a "
           "key/value\n"
           "cache in tokens/s, and with --train-steps the validation loss after training from the same "
           "weights.\n\n"
        << opts;
    return 0;
  }
  const int bs = vm["bs"].as<int>(), runs = vm["runs"].as<int>(), tokens = vm["tokens"].as<int>();
  const int train_steps = vm["train-steps"].as<int>(), peer_runs = vm["peer-runs"].as<int>();
  if (bs <= 0 || runs <= 0 || tokens <= 0 || train_steps < 0)
    throw po::error("--bs, --runs and --tokens must be > 0 and --train-steps >= 0");
  if (!peer_runs_ok("tg bench gpt", peer_runs)) return 2;
  const std::string python = torch_python(vm, "python");
  if (!command_exists(python)) throw po::error("--python " + python + " not found");
  if (const std::string& asked = vm["device"].as<std::string>(); !asked.empty()) set_default_device(asked);
  const std::string device = default_device();
  open_device(device);
  const std::string torch_device = device.rfind("CUDA", 0) == 0 ? "cuda" : "cpu";
  models::GPTConfig cfg = models::GPTConfig::preset(vm["config"].as<std::string>());
  if (const int vocab = vm["vocab"].as<int>(); vocab != 0) {
    if (vocab < 2) throw po::error("--vocab must be at least 2");
    cfg.vocab_size = vocab;
  }
  const std::string dtype = vm["dtype"].as<std::string>();
  if (dtype != "float32" && dtype != "bfloat16") throw po::error("--dtype must be float32 or bfloat16");
  if (dtype == "bfloat16") cfg.dtype = dtypes::bfloat16;
  PeerScript script = find_peer_script("peer_gpt.py");
  if (!script.error.empty()) {
    std::cerr << "tg bench gpt: " << script.error << "\n";
    return 1;
  }
  const std::string peer_base =
      shell_quote(python) + " " + shell_quote(script.path) + " --device " + torch_device + " --threads " +
      std::to_string(std::thread::hardware_concurrency()) + " --layers " + std::to_string(cfg.n_layer) +
      " --heads " + std::to_string(cfg.n_head) + " --embd " + std::to_string(cfg.n_embd) + " --context " +
      std::to_string(cfg.block_size) + " --vocab " + std::to_string(cfg.vocab_size) + " --bs " +
      std::to_string(bs) + (dtype == "bfloat16" ? " --bf16" : "");
  const double step_tokens = double(bs) * double(cfg.block_size);
  std::cout << "gpt " << cfg.name << " (" << cfg.n_layer << " x " << cfg.n_embd << ", " << cfg.n_head
            << " heads, context " << cfg.block_size << ", vocab " << cfg.vocab_size << "), " << device
            << (dtype == "bfloat16"
                    ? ", bfloat16 (ours: bf16 compute over float32 weights; PyTorch: autocast)\n"
                    : ", float32 both sides (TF32 off)\n");
  std::vector<std::vector<std::string>> rows;
  std::vector<std::pair<std::string, Spread>> peer_spreads; // for the warning when processes differ > 2x
  auto tok_s = [](double v) { return fixed(v, 0); };

  { // the training step, under the JIT
    Tensor::manual_seed(1);
    models::GPT model(cfg);
    models::TrainOptions o;
    o.bs = bs, o.steps = runs + 3, o.warmup = 0, o.jit = true;
    models::Trainer trainer(model, o);
    std::vector<int32_t> text(size_t(cfg.block_size) * 64);
    models::SplitMix64 fill{7};
    for (auto& t : text) t = int32_t(fill.next() % uint64_t(cfg.vocab_size));
    for (int i = 0; i < 3; ++i) trainer.step(text);
    std::vector<double> rates;
    for (int i = 0; i < runs; ++i) {
      auto t0 = Clock::now();
      trainer.step(text); // reads the loss back: the step has finished
      rates.push_back(step_tokens / (ms_between(t0, Clock::now()) / 1000.0));
    }
    Spread ours = spread_of(rates);
    std::cerr << "  ours: " << spread_str(ours, tok_s) << " tokens/s; timing PyTorch's training step, "
              << peer_runs << " processes\n";
    const std::string row = "training step, batch " + std::to_string(bs) + " (tokens/s)";
    for (const bool compiled : {false, true}) {
      if (compiled && !vm.count("compile")) continue;
      PeerRuns peer = run_peer_runs(peer_base + " --mode step --steps " + std::to_string(std::max(3, runs)) +
                                        (compiled ? " --compile" : ""),
                                    peer_runs);
      auto p = peer.info.error.empty() ? peer.spread("tokens_per_s") : std::nullopt;
      const std::string name = row + (compiled ? ", PyTorch torch.compile" : ", PyTorch eager");
      if (p) peer_spreads.emplace_back(compiled ? "training step (torch.compile)" : "training step", *p);
      rows.push_back({name, spread_str(ours, tok_s),
                      p ? spread_str(*p, tok_s) : "unavailable: " + peer.info.error,
                      p ? ratio(ours.median / p->max) : "-"});
    }
  }
  if (!vm.count("no-sample")) { // sampling, batch 1, with the cache under the JIT
    Tensor::manual_seed(2);
    models::GPT model(cfg);
    const int n = std::min<int>(tokens, int(cfg.block_size) - 1);
    std::vector<double> rates;
    for (int rep = 0; rep < 3; ++rep) {
      models::SamplingOptions so;
      so.seed = uint64_t(rep);
      models::Generator gen(model, so);
      gen.generate({0}, 3); // warm-up and capture
      auto t0 = Clock::now();
      gen.generate({0}, n);
      rates.push_back(double(n) / (ms_between(t0, Clock::now()) / 1000.0));
    }
    Spread ours = spread_of(rates);
    std::cerr << "  ours: " << spread_str(ours, tok_s) << " tokens/s; timing PyTorch's sampling, "
              << peer_runs << " processes\n";
    PeerRuns peer = run_peer_runs(peer_base + " --mode sample --tokens " + std::to_string(n), peer_runs);
    auto p = peer.info.error.empty() ? peer.spread("tokens_per_s") : std::nullopt;
    if (p) peer_spreads.emplace_back("sampling", *p);
    rows.push_back({"sampling " + std::to_string(n) + " tokens, batch 1 (tokens/s)", spread_str(ours, tok_s),
                    p ? spread_str(*p, tok_s) : "unavailable: " + peer.info.error,
                    p ? ratio(ours.median / p->max) : "-"});
  }
  std::cout << "rows: ours (min / median / max over runs) and PyTorch, eager unless the row says "
            << "torch.compile (min / median / max over " << peer_runs
            << " processes); ratio: our median over PyTorch's best\n";
  print_table(std::cout, {"row", "ours", "PyTorch", "ours / PyTorch"}, rows, {false, true, true, true});
  for (auto& [row, s] : peer_spreads) warn_wide_spreads(std::cout, row, {{"PyTorch", s}}, tok_s);

  if (train_steps > 0) {
    if (cfg.vocab_size != 256) throw po::error("--train-steps needs a byte config (tiny or char)");
    std::filesystem::path data = vm["data"].as<std::string>().empty()
                                     ? models::default_corpus()
                                     : std::filesystem::path(vm["data"].as<std::string>());
    models::ByteTokenizer bytes;
    models::Corpus corpus = models::split_corpus(bytes.encode(models::read_text(data)), 0.1, cfg.block_size);
    Tensor::manual_seed(1337);
    models::GPT model(cfg);
    // The peer starts from these exact weights.
    auto init = std::filesystem::temp_directory_path() /
                ("tg_bench_gpt_init_" + std::to_string(getpid()) + ".safetensors");
    models::save_gpt(init, model);
    models::TrainOptions o;
    o.bs = bs, o.steps = train_steps, o.lr = vm["lr"].as<double>(), o.min_lr = o.lr / 10,
    o.warmup = train_steps / 10;
    o.jit = true;
    models::Trainer trainer(model, o);
    auto t0 = Clock::now();
    double last = 0;
    for (int i = 0; i < train_steps; ++i) last = trainer.step(corpus.train).loss;
    double ours_s = ms_between(t0, Clock::now()) / 1000.0;
    double ours_val = trainer.validation_loss(corpus.val, 8);
    std::cerr << "  training PyTorch for " << train_steps << " steps from the same weights\n";
    auto t1 = Clock::now();
    JsonPeer peer =
        run_json_peer(peer_base + " --mode train --init " + shell_quote(init.string()) + " --data " +
                          shell_quote(data.string()) + " --train-steps " + std::to_string(train_steps) +
                          " --lr " + std::to_string(o.lr) + " --seed " + std::to_string(o.seed),
                      {"val_loss", "train_loss"});
    double peer_s = ms_between(t1, Clock::now()) / 1000.0;
    std::error_code ec;
    std::filesystem::remove(init, ec);
    std::cout << "\nafter " << train_steps << " steps of batch " << bs
              << " from the same weights and batches (" << data.filename().string() << ", AdamW lr " << o.lr
              << ", warmup + cosine):\n";
    print_table(
        std::cout, {"", "last train loss", "validation loss", "wall s"},
        {{"ours", fixed(last, 4), fixed(ours_val, 4), fixed(ours_s, 1)},
         peer.error.empty()
             ? std::vector<std::string>{"PyTorch eager", fixed(peer.values["train_loss"].get<double>(), 4),
                                        fixed(peer.values["val_loss"].get<double>(), 4), fixed(peer_s, 1)}
             : std::vector<std::string>{"PyTorch eager", "unavailable: " + peer.error, "-", "-"}},
        {false, true, true, true});
  }
  return 0;
}

} // namespace tg::cli
