// `tg train gpt` (a GPT on a byte-level corpus, AdamW with decay groups, warmup + cosine, gradient
// clipping and accumulation, validation loss, safetensors checkpoints) and `tg generate`
// (sampling from a checkpoint with the KV cache under TinyJit).
#include "kernel/engine/config.hpp"
#include "kernel/runtime/devices.hpp"
#include "kernel/tensor/jit.hpp"
#include "kernel/tensor/nn.hpp"
#include "kernel/tensor/optim.hpp"
#include "models/gpt/checkpoint.hpp"
#include "models/gpt/corpus.hpp"
#include "models/gpt/generate.hpp"
#include "models/gpt/tokenizer.hpp"
#include "models/gpt/train.hpp"
#include "tools/tg/commands.hpp"

#include <boost/program_options.hpp>
#include <tg/sdk/bytes.hpp>

#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>
#include <unistd.h>

namespace po = boost::program_options;

namespace tg::cli {
namespace {

using Clock = std::chrono::steady_clock;
using models::GPT;
using models::GPTConfig;

// Bad options: main() prints them with a pointer to --help and exits 2.
using UsageError = po::error;

std::string fixed(double v, int digits) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << v;
  return os.str();
}

} // namespace

int train_gpt(const std::vector<std::string>& args) {
  po::options_description opts(
      "tg train gpt: train a GPT (GPT-2's architecture) on a byte-level text with AdamW, warmup and a "
      "cosine\n"
      "schedule, and report the validation loss (the last 10% of the text).\nOptions");
  opts.add_options()("help,h", "show this help")("dataset", po::value<std::string>(), "gpt")(
      "config", po::value<std::string>()->default_value("tiny"),
      "model size: tiny (2 layers x 64, context 64), char (nanoGPT's shakespeare-char: 6 x 384, 6 heads, "
      "context "
      "256) or gpt2 (124M; needs a GPT-2 tokenized corpus, not a byte one)")(
      "data", po::value<std::string>()->default_value(""),
      "a text file, one token per byte (default: the King James Bible from Debian's bible-kjv, 4.3 MB)")(
      "device", po::value<std::string>()->default_value(""), "device, e.g. CPU (default: $TG_DEVICE or CPU)")(
      "steps", po::value<int>()->default_value(300),
      "optimizer steps")("bs", po::value<int>()->default_value(16), "sequences per micro-batch")(
      "accum", po::value<int>()->default_value(1), "micro-batches per step (gradient accumulation)")(
      "lr", po::value<double>()->default_value(1e-3), "peak learning rate")(
      "min-lr", po::value<double>(), "final learning rate of the cosine (default: --lr / 10)")(
      "warmup", po::value<int>(), "linear warmup steps (default: --steps / 10)")(
      "weight-decay", po::value<double>()->default_value(0.1), "AdamW decay of the matrices and embeddings")(
      "grad-clip", po::value<double>()->default_value(1.0), "clip the gradients' global L2 norm (0: off)")(
      "dropout", po::value<double>()->default_value(0.0), "dropout probability (not with --jit)")(
      "dtype", po::value<std::string>()->default_value("float32"),
      "compute dtype of the projections and attention: float32, bfloat16 or float16 (mixed precision: "
      "float32 "
      "weights, LayerNorms and loss; float16 with a dynamic loss scale)")(
      "eval-batches", po::value<int>()->default_value(8), "validation batches for the loss")(
      "target-loss", po::value<double>(), "exit 1 unless the final validation loss is at most this")(
      "save", po::value<std::string>(),
      "write a safetensors checkpoint (GPT-2's names; config in its metadata)")(
      "load", po::value<std::string>(), "start from a checkpoint (its config wins over --config)")(
      "seed", po::value<uint64_t>()->default_value(1337), "random seed (weights, batches)")(
      "jit", "run the training step through tg::TinyJit (step 2 captures, later steps replay)");
  po::positional_options_description pos;
  pos.add("dataset", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).positional(pos).run(), vm);
  if (vm.count("help")) {
    std::cout << opts;
    return 0;
  }
  models::TrainOptions o;
  o.steps = vm["steps"].as<int>(), o.bs = vm["bs"].as<int>(), o.accum = vm["accum"].as<int>();
  o.lr = vm["lr"].as<double>(), o.grad_clip = vm["grad-clip"].as<double>();
  o.weight_decay = vm["weight-decay"].as<double>();
  o.min_lr = vm.count("min-lr") ? vm["min-lr"].as<double>() : o.lr / 10;
  o.warmup = vm.count("warmup") ? vm["warmup"].as<int>() : o.steps / 10;
  o.jit = vm.count("jit") > 0;
  o.seed = vm["seed"].as<uint64_t>();
  const int eval_batches = vm["eval-batches"].as<int>();
  const double dropout = vm["dropout"].as<double>();
  const std::string dtype_name = vm["dtype"].as<std::string>();
  DType compute =
      dtype_name == "float32"    ? dtypes::float32
      : dtype_name == "bfloat16" ? dtypes::bfloat16
      : dtype_name == "float16"
          ? dtypes::float16
          : throw UsageError("--dtype is '" + dtype_name + "'; expected float32, bfloat16 or float16");
  auto adjust = [&](GPTConfig& c) {
    c.dropout = dropout;
    c.dtype = compute;
  };
  if (eval_batches <= 0) throw UsageError("--eval-batches must be > 0");
  if (vm.count("save")) sdk::check_writable(vm["save"].as<std::string>());
  if (const std::string& asked = vm["device"].as<std::string>(); !asked.empty()) set_default_device(asked);
  const std::string device = default_device();
  open_device(device);
  Tensor::manual_seed(o.seed);

  std::unique_ptr<GPT> model;
  if (vm.count("load")) {
    model = models::load_gpt(vm["load"].as<std::string>(), adjust);
    if (!vm["config"].defaulted() && vm["config"].as<std::string>() != model->config.name)
      throw UsageError("--config " + vm["config"].as<std::string>() + " differs from the checkpoint's " +
                       model->config.name);
    std::cout << "loaded " << vm["load"].as<std::string>() << "\n";
  } else {
    GPTConfig config = GPTConfig::preset(vm["config"].as<std::string>());
    adjust(config);
    model = std::make_unique<GPT>(config);
  }
  const GPTConfig& cfg = model->config;
  try { // bad options fail before the data is read
    o.validate(cfg);
  } catch (const TensorError& e) {
    throw UsageError(e.what());
  }
  if (cfg.vocab_size != 256)
    throw UsageError("config " + cfg.name + " has a vocab of " + std::to_string(cfg.vocab_size) +
                     "; training reads text as bytes, which needs a vocab of 256 (tiny or char)");
  std::filesystem::path data = vm["data"].as<std::string>().empty()
                                   ? models::default_corpus()
                                   : std::filesystem::path(vm["data"].as<std::string>());
  models::ByteTokenizer bytes;
  models::Corpus corpus = models::split_corpus(bytes.encode(models::read_text(data)), 0.1, cfg.block_size);
  std::cout << "data: " << data.string() << " (" << corpus.train.size() << " train, " << corpus.val.size()
            << " validation bytes)\n";
  std::cout << "model: gpt " << cfg.name << " (" << cfg.n_layer << " layers, " << cfg.n_head << " heads, "
            << cfg.n_embd << " wide, context " << cfg.block_size << ", "
            << fixed(double(cfg.parameter_count()) / 1e6, 2) << "M parameters)\n";
  std::cout << "device: " << device << ", batch " << o.bs << " x " << o.accum << " x " << cfg.block_size
            << " tokens, AdamW lr " << o.lr << " (warmup " << o.warmup << ", cosine to " << o.min_lr << "), "
            << o.steps << " steps, seed " << o.seed << (o.jit ? ", jit" : "") << "\n";
  models::Trainer trainer(*model, o);
  const bool tty = isatty(STDOUT_FILENO);
  auto t0 = Clock::now();
  for (int64_t step = 1; step <= o.steps; ++step) {
    const double used_lr = trainer.lr();
    auto r = trainer.step(corpus.train);
    double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
    if (tty || step == o.steps || step % 25 == 0 || step == 1)
      std::cout << (tty ? "\r" : "") << "step " << std::setw(5) << step << "/" << o.steps << "  loss "
                << fixed(r.loss, 4) << "  grad norm " << fixed(r.grad_norm, 3) << "  lr " << std::scientific
                << std::setprecision(2) << used_lr << std::defaultfloat << "  "
                << fixed(double(step * o.bs * o.accum * cfg.block_size) / elapsed, 0) << " tok/s"
                << (tty ? "   " : "\n") << std::flush;
  }
  if (tty && o.steps > 0) std::cout << "\n";
  if (o.steps > 0) {
    double total = std::chrono::duration<double>(Clock::now() - t0).count();
    std::cout << "trained " << o.steps << " steps in " << fixed(total, 1) << " s ("
              << fixed(total * 1000.0 / double(o.steps), 1) << " ms/step)\n";
  }
  if (o.jit && trainer.jit().captured())
    std::cout << "jit: " << trainer.jit().kernel_count() << " kernels per step, " << trainer.jit().replays()
              << " replayed steps\n";
  if (trainer.skipped_steps() > 0)
    std::cout << "float16: " << trainer.skipped_steps()
              << " steps skipped for overflowed gradients, loss scale now " << trainer.loss_scale() << "\n";
  const double val = trainer.validation_loss(corpus.val, eval_batches);
  std::cout << "validation loss: " << fixed(val, 4) << " (" << eval_batches << " batches of " << o.bs << " x "
            << cfg.block_size << ")\n";
  if (vm.count("save")) {
    models::save_gpt(
        vm["save"].as<std::string>(), *model,
        {{"steps", std::to_string(o.steps)}, {"val_loss", fixed(val, 6)}, {"data", data.string()}});
    std::cout << "saved " << vm["save"].as<std::string>() << "\n";
  }
  if (vm.count("target-loss") && !(val <= vm["target-loss"].as<double>())) {
    std::cerr << "tg train gpt: validation loss " << fixed(val, 4) << " is above --target-loss "
              << vm["target-loss"].as<double>() << "\n";
    return 1;
  }
  return 0;
}

int cmd_generate(const std::vector<std::string>& args) {
  po::options_description opts(
      "tg generate: sample text from a GPT checkpoint (tg train gpt --save, or GPT-2 in Hugging Face's\n"
      "safetensors layout with its config.json, vocab.json and merges.txt beside it).\nOptions");
  opts.add_options()("help,h", "show this help")("checkpoint", po::value<std::string>(),
                                                 "the .safetensors file")(
      "prompt", po::value<std::string>()->default_value("\n"),
      "text to continue")("tokens", po::value<int64_t>()->default_value(200), "tokens to generate")(
      "temperature", po::value<double>()->default_value(0.8), "softmax temperature (0: most likely token)")(
      "top-k", po::value<int64_t>()->default_value(200), "sample among the k most likely tokens (0: all)")(
      "seed", po::value<uint64_t>()->default_value(1337),
      "random seed")("tokenizer", po::value<std::string>(),
                     "folder with vocab.json and merges.txt (default: the checkpoint's)")(
      "device", po::value<std::string>()->default_value(""), "device (default: $TG_DEVICE or CPU)")(
      "no-jit", "run every token eagerly instead of replaying the captured kernels");
  po::positional_options_description pos;
  pos.add("checkpoint", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).positional(pos).run(), vm);
  if (vm.count("help")) {
    std::cout << opts;
    return 0;
  }
  if (!vm.count("checkpoint")) throw UsageError("tg generate needs --checkpoint FILE");
  const int64_t count = vm["tokens"].as<int64_t>();
  if (count < 0) throw UsageError("--tokens must be >= 0");
  if (const std::string& asked = vm["device"].as<std::string>(); !asked.empty()) set_default_device(asked);
  open_device(default_device());
  std::filesystem::path file = vm["checkpoint"].as<std::string>();
  auto model = models::load_gpt(file);
  auto tokenizer = models::make_tokenizer(
      model->config.vocab_size,
      vm.count("tokenizer") ? std::filesystem::path(vm["tokenizer"].as<std::string>()) : file.parent_path());
  models::SamplingOptions o;
  o.temperature = vm["temperature"].as<double>();
  o.top_k = vm["top-k"].as<int64_t>();
  o.seed = vm["seed"].as<uint64_t>();
  o.jit = !vm.count("no-jit");
  models::Generator gen(*model, o);
  const std::string prompt = vm["prompt"].as<std::string>();
  std::vector<int32_t> ids = tokenizer->encode(prompt);
  if (ids.empty()) throw UsageError("--prompt is empty");
  std::cout << prompt << std::flush;
  auto t0 = Clock::now();
  int64_t produced = 0;
  gen.generate(ids, count, [&](int32_t id) {
    std::cout << tokenizer->decode({id}) << std::flush;
    ++produced;
  });
  double s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::cout << "\n";
  if (gen.truncated())
    std::cerr << "note: the prompt was cut to its last " << model->config.block_size - 1
              << " tokens (the context)\n";
  std::cerr << produced << " tokens in " << fixed(s, 2) << " s (" << fixed(double(produced) / s, 1)
            << " tokens/s, prompt of " << ids.size() << " tokens included in the time)";
  if (gen.jit() && gen.jit()->captured())
    std::cerr << "; jit: " << gen.jit()->kernel_count() << " kernels per token, " << gen.jit()->replays()
              << " replays";
  std::cerr << "\n";
  return 0;
}

} // namespace tg::cli
