// The GPT (models/gpt): PyTorch's outputs and gradients on a Hugging Face-layout checkpoint
// (gpt_reference.py writes both at test time; TG_GPT_REFERENCE names its folder), decoding with the
// KV cache against the full forward pass, sampling, checkpoints and their errors, the tokenizers.
#include "kernel/tensor/state.hpp"
#include "models/gpt/checkpoint.hpp"
#include "models/gpt/corpus.hpp"
#include "models/gpt/generate.hpp"
#include "models/gpt/tokenizer.hpp"
#include "models/gpt/train.hpp"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>

using namespace tg;
using namespace tg::models;

namespace {

std::filesystem::path reference_dir() {
  const char* d = std::getenv("TG_GPT_REFERENCE");
  BOOST_TEST_REQUIRE(d != nullptr, "TG_GPT_REFERENCE must name gpt_reference.py's output folder");
  return d;
}

void check_close(const Tensor& got, const Tensor& want, double rtol, double atol, const std::string& what) {
  BOOST_TEST_REQUIRE(dims_str(got.shape()) == dims_str(want.shape()), what);
  auto g = got.to_vector<float>(), w = want.to_vector<float>();
  double worst = 0;
  size_t bad = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    double err = std::abs(double(g[i]) - double(w[i]));
    worst = std::max(worst, err);
    if (!(err <= atol + rtol * std::abs(double(w[i])))) ++bad;
  }
  BOOST_TEST(bad == 0u,
             what << ": " << bad << " of " << g.size() << " elements off, largest difference " << worst);
}

GPTConfig small_config() {
  GPTConfig c;
  c.name = "test";
  c.vocab_size = 37, c.block_size = 10, c.n_layer = 2, c.n_head = 2, c.n_embd = 16;
  return c;
}

std::filesystem::path scratch(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("tg_gpt_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir / name;
}

void write(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

template <class E> void require_message(const std::function<void()>& f, const std::string& part) {
  try {
    f();
    BOOST_ERROR("expected an error containing '" << part << "'");
  } catch (const E& e) {
    BOOST_TEST(std::string(e.what()).find(part) != std::string::npos, "message: " << e.what());
  }
}

} // namespace

BOOST_AUTO_TEST_SUITE(pytorch)

// Tolerance: both sides compute in float32, in different summation orders; the largest
// difference seen is ~1e-6 on logits of magnitude ~1.
BOOST_AUTO_TEST_CASE(hugging_face_checkpoint_gives_pytorchs_logits_loss_and_gradients) {
  auto dir = reference_dir();
  auto model = load_gpt(dir / "hf" / "model.safetensors");
  BOOST_TEST(model->config.n_layer == 2);
  BOOST_TEST(model->config.n_head == 2);
  BOOST_TEST(model->config.block_size == 16);
  auto ref = safe_load(dir / "reference.safetensors");
  Tensor logits = model->forward(ref.at("idx"));
  check_close(logits, ref.at("logits"), 1e-4, 1e-5, "logits");
  Tensor loss = model->loss(ref.at("idx"), ref.at("targets"));
  loss.backward();
  check_close(loss, ref.at("loss"), 1e-5, 1e-6, "loss");
  auto params = model->named_parameters();
  auto grad_of = [&](const std::string& name) {
    for (auto& [n, p] : params)
      if (n == "transformer." + name) return *p.grad();
    throw std::runtime_error("no parameter " + name);
  };
  for (std::string name : {"wte.weight", "h.0.attn.c_attn.weight", "h.1.mlp.c_fc.bias", "ln_f.weight"})
    check_close(grad_of(name), ref.at("grad." + name), 1e-3, 1e-6, "gradient of " + name);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(decoding)

BOOST_AUTO_TEST_CASE(cached_decoding_matches_the_full_forward_pass_at_every_position) {
  Tensor::manual_seed(3);
  GPT model(small_config());
  model.eval();
  std::vector<int32_t> tokens{5, 1, 36, 0, 7, 7, 20, 3, 11};
  Tensor full =
      model.forward(Tensor::from_vector<int32_t>(tokens, {1, int64_t(tokens.size())}, dtypes::int32));
  KVCache cache = model.make_cache(1);
  for (size_t p = 0; p < tokens.size(); ++p) {
    Tensor idx = Tensor::from_vector<int32_t>(std::vector<int32_t>{tokens[p]}, {1, 1}, dtypes::int32);
    Tensor pos = Tensor::from_vector<int32_t>(std::vector<int32_t>{int32_t(p)}, {}, dtypes::int32);
    Tensor step = model.forward_cached(idx, pos, cache);
    std::vector<Tensor*> out{&step};
    for (auto& t : cache.keys) out.push_back(&t);
    for (auto& t : cache.values) out.push_back(&t);
    Tensor::realize_all(out);
    Tensor want = full.shrink({{0, 1}, {int64_t(p), int64_t(p) + 1}, {0, 37}}).reshape({1, 37});
    check_close(step, want, 1e-4, 1e-5, "position " + std::to_string(p));
  }
}

BOOST_AUTO_TEST_CASE(generation_is_the_same_with_and_without_the_jit_and_past_the_context) {
  Tensor::manual_seed(4);
  GPT model(small_config());
  SamplingOptions o;
  o.temperature = 1.0, o.top_k = 5, o.seed = 9;
  o.jit = false;
  Generator eager(model, o);
  auto a = eager.generate({1, 2, 3}, 25); // 3 + 25 tokens: the 10-token context restarts twice
  o.jit = true;
  Generator jitted(model, o);
  auto b = jitted.generate({1, 2, 3}, 25);
  BOOST_TEST(a == b, boost::test_tools::per_element());
  BOOST_TEST(a.size() == 25u);
  BOOST_TEST_REQUIRE(jitted.jit() != nullptr);
  BOOST_TEST(jitted.jit()->replays() > 0);
  for (int32_t t : a) BOOST_TEST((t >= 0 && t < 37));
  Generator cut(model, o);
  cut.generate(std::vector<int32_t>(30, 4), 1);
  BOOST_TEST(cut.truncated());
}

BOOST_AUTO_TEST_CASE(sampling_follows_temperature_and_top_k) {
  std::vector<float> logits{0.0f, 3.0f, 2.9f, -1.0f};
  uint64_t state = 1;
  SamplingOptions greedy;
  greedy.temperature = 0;
  BOOST_TEST(sample_token(logits, greedy, state) == 1);
  SamplingOptions top1;
  top1.top_k = 1;
  for (int i = 0; i < 20; ++i) BOOST_TEST(sample_token(logits, top1, state) == 1);
  // top 2 at temperature 1: ids 1 and 2 with odds e^3 : e^2.9 (p(1) = 0.525)
  SamplingOptions top2;
  top2.temperature = 1, top2.top_k = 2;
  int ones = 0, n = 4000;
  for (int i = 0; i < n; ++i) {
    int32_t t = sample_token(logits, top2, state);
    BOOST_TEST_REQUIRE((t == 1 || t == 2));
    ones += t == 1;
  }
  double p1 = 1.0 / (1.0 + std::exp(-0.1));
  BOOST_TEST(std::abs(double(ones) / n - p1) < 0.03, "p(1) = " << double(ones) / n << ", expected " << p1);
  logits[0] = NAN;
  require_message<TensorError>([&] { sample_token(logits, top2, state); }, "NaN");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(mixed_precision)

// bfloat16 keeps 8 bits of mantissa: the projections' outputs carry a relative error of ~2^-8, so
// logits of magnitude ~1 agree with float32's to a few 1e-2.
BOOST_AUTO_TEST_CASE(bfloat16_compute_stays_close_to_float32_and_keeps_float32_weights) {
  GPTConfig c = small_config();
  Tensor::manual_seed(11);
  GPT full(c);
  c.dtype = dtypes::bfloat16;
  GPT half(c);
  half.load_state_dict(full.state_dict());
  for (auto& [name, p] : half.named_parameters()) BOOST_TEST(p.dtype() == dtypes::float32, name);
  Tensor idx =
      Tensor::from_vector<int32_t>(std::vector<int32_t>{3, 1, 4, 1, 5, 9, 2, 6}, {2, 4}, dtypes::int32);
  Tensor a = full.forward(idx), b = half.forward(idx);
  BOOST_TEST(b.dtype() == dtypes::float32);
  check_close(b, a, 0.05, 0.05, "bfloat16 logits");
  Tensor loss = half.loss(idx, idx);
  loss.backward();
  BOOST_TEST(std::isfinite(loss.item<float>()));
  BOOST_TEST(half.transformer.h[0].attn.c_attn.weight.grad()->dtype() == dtypes::float32);
}

BOOST_AUTO_TEST_CASE(a_step_with_apply_if_false_changes_nothing) {
  Tensor::manual_seed(12);
  Tensor w = Tensor::randn({4, 3}).realize();
  w.requires_grad_();
  optim::AdamW opt({w}, 0.1);
  auto step = [&](bool apply) {
    opt.zero_grad();
    (w * w).sum().backward();
    opt.apply_if = Tensor::full({}, apply ? 1 : 0, dtypes::bool_);
    opt.step();
  };
  auto before = w.to_vector<float>();
  step(false);
  BOOST_TEST(w.to_vector<float>() == before, boost::test_tools::per_element());
  BOOST_TEST(opt.m[0].abs().sum().item<float>() == 0.0f);
  step(true);
  BOOST_TEST(w.to_vector<float>() != before);
  BOOST_TEST(opt.m[0].abs().sum().item<float>() > 0.0f);
}

// float16 with the dynamic loss scale: the first steps overflow at 2^16 and are skipped (the scale
// halves each time), then training proceeds; the loss goes down as in float32.
BOOST_AUTO_TEST_CASE(float16_training_backs_off_the_loss_scale_and_learns) {
  GPTConfig c = small_config();
  c.dtype = dtypes::float16;
  Tensor::manual_seed(13);
  GPT model(c);
  std::vector<int32_t> text(2000);
  for (size_t i = 0; i < text.size(); ++i) text[i] = int32_t((i * 7 + i / 5) % 37); // learnable pattern
  TrainOptions o;
  o.steps = 40, o.bs = 8, o.lr = 3e-3, o.min_lr = 3e-4, o.warmup = 0, o.jit = true;
  Trainer trainer(model, o);
  double first = 0, last = 0;
  for (int i = 0; i < 40; ++i) {
    auto r = trainer.step(text);
    if (i == 0) first = r.loss;
    last = r.loss;
  }
  BOOST_TEST(trainer.loss_scale() == 65536.0 / std::pow(2.0, double(trainer.skipped_steps())));
  BOOST_TEST(trainer.skipped_steps() < 20);
  BOOST_TEST(last < first - 0.5, "loss " << first << " -> " << last);
}

BOOST_AUTO_TEST_CASE(a_loss_that_is_not_finite_stops_training_with_the_step_number) {
  GPT model(small_config());
  model.transformer.ln_f.weight->assign(Tensor::full({16}, NAN)).realize();
  TrainOptions o;
  o.steps = 5, o.bs = 2, o.warmup = 0;
  Trainer trainer(model, o);
  std::vector<int32_t> text(200, 3);
  require_message<Error>([&] { trainer.step(text); }, "at step 1 ");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(checkpoints)

BOOST_AUTO_TEST_CASE(saved_checkpoints_load_with_their_config) {
  Tensor::manual_seed(5);
  GPT model(small_config());
  auto file = scratch("model.safetensors");
  save_gpt(file, model, {{"note", "x"}});
  auto loaded = load_gpt(file);
  BOOST_TEST(loaded->config.n_embd == 16);
  BOOST_TEST(loaded->config.vocab_size == 37);
  Tensor idx = Tensor::from_vector<int32_t>(std::vector<int32_t>{1, 2, 3}, {1, 3}, dtypes::int32);
  model.eval(), loaded->eval();
  check_close(loaded->forward(idx), model.forward(idx), 0, 0, "reloaded logits");
}

BOOST_AUTO_TEST_CASE(mismatched_checkpoints_name_the_tensor_and_why) {
  Tensor::manual_seed(6);
  GPT model(small_config());
  auto state = model.state_dict();
  auto shapes = state;
  shapes.insert_or_assign("transformer.h.1.attn.c_attn.weight", Tensor::zeros({16, 47}));
  require_message<CheckpointError>([&] { load_gpt_weights(model, shapes, "f"); },
                                   "transformer.h.1.attn.c_attn.weight: expected (16, 48), got (16, 47)");
  auto missing = state;
  missing.erase("transformer.ln_f.bias");
  require_message<CheckpointError>([&] { load_gpt_weights(model, missing, "f"); },
                                   "missing keys: transformer.ln_f.bias");
  auto extra = state;
  extra.insert_or_assign("transformer.h.2.ln_1.weight", Tensor::ones({16}));
  require_message<CheckpointError>([&] { load_gpt_weights(model, extra, "f"); },
                                   "unexpected keys: transformer.h.2.ln_1.weight");
  auto untied = state;
  untied.insert_or_assign("lm_head.weight", Tensor::zeros({37, 16}));
  require_message<CheckpointError>([&] { load_gpt_weights(model, untied, "f"); }, "lm_head.weight differs");
  // Without metadata or a config.json, the heads are unknown.
  auto bare = scratch("bare") / "model.safetensors";
  std::filesystem::create_directories(bare.parent_path());
  safe_save(bare, state);
  require_message<CheckpointError>([&] { checkpoint_config(bare); }, "config.json");
  write(bare.parent_path() / "config.json",
        "{\"n_layer\": 2, \"n_head\": 3, \"n_embd\": 16, \"n_positions\": 10, "
        "\"vocab_size\": 37}");
  require_message<CheckpointError>([&] { checkpoint_config(bare); }, "does not split into 3 heads");
  GPT same(small_config());
  load_gpt_weights(same, state, "f"); // the good one still loads
}

BOOST_AUTO_TEST_CASE(bad_inputs_are_refused_with_the_reason) {
  GPT model(small_config());
  require_message<TensorError>(
      [&] {
        model.forward(Tensor::zeros({1, 11}, dtypes::int32));
      },
      "11 tokens is longer than the context of 10");
  require_message<TensorError>([&] { model.forward(Tensor::zeros({11}, dtypes::int32)); }, "(batch, time)");
  require_message<TensorError>([&] { GPTConfig::preset("huge"); }, "known: tiny, char, gpt2");
  GPTConfig odd = small_config();
  odd.n_head = 3;
  require_message<TensorError>([&] { GPT bad(odd); }, "does not split into 3 heads");
  Generator gen(model, {});
  require_message<TensorError>([&] { gen.generate({}, 3); }, "at least one token");
  require_message<TensorError>([&] { gen.generate({37}, 3); }, "outside the vocabulary");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(tokenizers)

BOOST_AUTO_TEST_CASE(bytes_round_trip) {
  ByteTokenizer t;
  std::string s = "In the beginning\n\xC3\xA9\x01";
  auto ids = t.encode(s);
  BOOST_TEST(ids.size() == s.size());
  BOOST_TEST(ids[16] == 10);
  BOOST_TEST(t.decode(ids) == s);
  require_message<TokenizerError>([&] { t.decode({300}); }, "not a byte");
}

// Expected splits worked out by hand from GPT-2's pattern
// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
BOOST_AUTO_TEST_CASE(gpt2_word_split) {
  using V = std::vector<std::string>;
  BOOST_TEST(Gpt2Tokenizer::split_words("Hello world") == (V{"Hello", " world"}),
             boost::test_tools::per_element());
  BOOST_TEST(Gpt2Tokenizer::split_words("I'll be 42!!") == (V{"I", "'ll", " be", " 42", "!!"}),
             boost::test_tools::per_element());
  BOOST_TEST(Gpt2Tokenizer::split_words("a   b") == (V{"a", "  ", " b"}), boost::test_tools::per_element());
  BOOST_TEST(Gpt2Tokenizer::split_words("x\n\ny ") == (V{"x", "\n", "\n", "y", " "}),
             boost::test_tools::per_element());
  BOOST_TEST(Gpt2Tokenizer::split_words("it's 'em") == (V{"it", "'s", " '", "em"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(gpt2_bpe_merges_by_rank_and_round_trips) {
  // A vocabulary of the 256 byte stand-ins plus three merges: "Ġ" is the stand-in of the space.
  std::string json = "{";
  std::vector<std::string> stand_in(256);
  int next = 256, id = 0;
  auto utf8 = [](int cp) {
    std::string s;
    if (cp < 0x80) {
      s += char(cp);
    } else {
      s += char(0xC0 | (cp >> 6));
      s += char(0x80 | (cp & 0x3F));
    }
    return s;
  };
  for (int b = 0; b < 256; ++b) {
    bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
    stand_in[size_t(b)] = utf8(printable ? b : next++);
  }
  auto escape = [](const std::string& s) {
    std::string o;
    for (char c : s) {
      if (c == '"' || c == '\\') o += '\\';
      o += c;
    }
    return o;
  };
  for (int b = 0; b < 256; ++b)
    json += "\"" + escape(stand_in[size_t(b)]) + "\": " + std::to_string(id++) + ", ";
  json += "\"he\": 256, \"\xC4\xA0t\": 257, \"\xC4\xA0the\": 258}";
  auto dir = scratch("bpe");
  std::filesystem::create_directories(dir);
  write(dir / "vocab.json", json);
  write(dir / "merges.txt", "#version: 0.2\nh e\n\xC4\xA0 t\n\xC4\xA0t he\n");
  auto tok = make_tokenizer(259, dir);
  auto ids = tok->encode("the the");
  BOOST_TEST(ids == (std::vector<int32_t>{'t', 256, 258}), boost::test_tools::per_element());
  std::string text = "Then, the\tend\xC3\xA9!";
  BOOST_TEST(tok->decode(tok->encode(text)) == text);
  require_message<TokenizerError>([&] { make_tokenizer(100, dir); }, "more than the model's 100");
  require_message<TokenizerError>([&] { make_tokenizer(259, scratch("none")); }, "vocab.json and merges.txt");
  write(dir / "merges.txt", "#version: 0.2\nh e x\n");
  require_message<TokenizerError>([&] { make_tokenizer(259, dir); }, "merges.txt:2: expected two tokens");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(corpus)

BOOST_AUTO_TEST_CASE(split_and_batches_are_windows_of_the_text) {
  std::vector<int32_t> tokens(1000);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = int32_t(i);
  Corpus c = split_corpus(tokens, 0.1, 8);
  BOOST_TEST(c.train.size() == 900u);
  BOOST_TEST(c.val.front() == 900);
  SplitMix64 rng{1};
  auto b = random_batch(c.train, 4, 8, rng);
  BOOST_TEST(b.x.size() == 32u);
  for (size_t r = 0; r < 4; ++r)
    for (size_t i = 0; i < 8; ++i) {
      BOOST_TEST(b.y[r * 8 + i] == b.x[r * 8 + i] + 1); // the next token
      if (i) BOOST_TEST(b.x[r * 8 + i] == b.x[r * 8] + int32_t(i));
    }
  require_message<CorpusError>([&] { split_corpus(std::vector<int32_t>(50), 0.1, 8); }, "too few");
}

BOOST_AUTO_TEST_SUITE_END()
