#include "models/gpt/gpt.hpp"

#include "kernel/tensor/attention.hpp"

#include <cmath>
#include <stdexcept>

namespace tg::models {
namespace {

Tensor normal(const Dims& shape, double std) {
  Tensor t = Tensor::randn(shape) * std;
  t.realize();
  t.requires_grad_();
  return t;
}

Tensor zeros_param(const Dims& shape) {
  Tensor t = Tensor::zeros(shape);
  t.realize();
  t.requires_grad_();
  return t;
}

int64_t metadata_int(const std::map<std::string, std::string>& m, const std::string& key) {
  auto it = m.find(key);
  if (it == m.end()) throw TensorError("GPT checkpoint metadata: no '" + key + "' entry");
  try {
    size_t used = 0;
    int64_t v = std::stoll(it->second, &used);
    if (used != it->second.size()) throw std::invalid_argument("trailing characters");
    return v;
  } catch (const std::exception&) {
    throw TensorError("GPT checkpoint metadata: '" + key + "' is '" + it->second + "', not an integer");
  }
}

} // namespace

GPTConfig GPTConfig::preset(const std::string& name) {
  GPTConfig c;
  c.name = name;
  if (name == "tiny") {
    c.vocab_size = 256, c.block_size = 64, c.n_layer = 2, c.n_head = 2, c.n_embd = 64;
  } else if (name == "char") {
    c.vocab_size = 256, c.block_size = 256, c.n_layer = 6, c.n_head = 6, c.n_embd = 384;
  } else if (name == "gpt2") {
    c.vocab_size = 50257, c.block_size = 1024, c.n_layer = 12, c.n_head = 12, c.n_embd = 768;
  } else {
    std::string known;
    for (auto& n : preset_names()) known += (known.empty() ? "" : ", ") + n;
    throw TensorError("GPT config '" + name + "' is unknown (known: " + known + ")");
  }
  return c;
}

std::vector<std::string> GPTConfig::preset_names() { return {"tiny", "char", "gpt2"}; }

void GPTConfig::validate() const {
  if (dtype != dtypes::float32 && dtype != dtypes::bfloat16 && dtype != dtypes::float16)
    throw TensorError("GPT config " + name +
                      ": the compute dtype must be float32, bfloat16 or float16, got " + dtype.name());
  auto positive = [&](int64_t v, const char* what) {
    if (v <= 0)
      throw TensorError("GPT config " + name + ": " + what + " must be positive, got " + std::to_string(v));
  };
  positive(vocab_size, "vocab_size");
  positive(block_size, "block_size");
  positive(n_layer, "n_layer");
  positive(n_head, "n_head");
  positive(n_embd, "n_embd");
  if (n_embd % n_head != 0)
    throw TensorError("GPT config " + name + ": n_embd " + std::to_string(n_embd) + " does not split into " +
                      std::to_string(n_head) + " heads");
  if (!(dropout >= 0 && dropout < 1))
    throw TensorError("GPT config " + name + ": dropout must be in [0, 1), got " + std::to_string(dropout));
}

std::map<std::string, std::string> GPTConfig::to_metadata() const {
  return {{"model", "gpt"},
          {"gpt.config", name},
          {"gpt.vocab_size", std::to_string(vocab_size)},
          {"gpt.block_size", std::to_string(block_size)},
          {"gpt.n_layer", std::to_string(n_layer)},
          {"gpt.n_head", std::to_string(n_head)},
          {"gpt.n_embd", std::to_string(n_embd)}};
}

GPTConfig GPTConfig::from_metadata(const std::map<std::string, std::string>& m) {
  GPTConfig c;
  auto it = m.find("gpt.config");
  c.name = it == m.end() ? "custom" : it->second;
  c.vocab_size = metadata_int(m, "gpt.vocab_size");
  c.block_size = metadata_int(m, "gpt.block_size");
  c.n_layer = metadata_int(m, "gpt.n_layer");
  c.n_head = metadata_int(m, "gpt.n_head");
  c.n_embd = metadata_int(m, "gpt.n_embd");
  c.validate();
  return c;
}

int64_t GPTConfig::parameter_count() const {
  int64_t c = n_embd;
  int64_t block = 2 * 2 * c           // two LayerNorms
                  + c * 3 * c + 3 * c // c_attn
                  + c * c + c         // attn.c_proj
                  + c * 4 * c + 4 * c // c_fc
                  + 4 * c * c + c;    // mlp.c_proj
  return vocab_size * c + block_size * c + n_layer * block + 2 * c;
}

Conv1D::Conv1D(int64_t in, int64_t out, double std, DType compute_)
    : weight(normal({in, out}, std)), bias(zeros_param({out})), compute(compute_) {}

Tensor Conv1D::forward(const Tensor& x) {
  return x.cast(compute).matmul(weight.cast(compute)) + bias.cast(compute);
}

CausalSelfAttention::CausalSelfAttention(const GPTConfig& c)
    : n_head(c.n_head), n_embd(c.n_embd), dropout(c.dropout), c_attn(c.n_embd, 3 * c.n_embd, 0.02, c.dtype),
      c_proj(c.n_embd, c.n_embd, 0.02 / std::sqrt(2.0 * double(c.n_layer)), c.dtype) {}

Tensor CausalSelfAttention::heads(const Tensor& x) const {
  const Dims& s = x.shape();
  return x.reshape({s[0], s[1], n_head, n_embd / n_head}).transpose(1, 2);
}

Tensor CausalSelfAttention::forward(const Tensor& x) {
  const Dims& s = x.shape(); // (B, T, C)
  Tensor qkv = c_attn(x);
  Tensor q = heads(qkv.shrink({{0, s[0]}, {0, s[1]}, {0, n_embd}}));
  Tensor k = heads(qkv.shrink({{0, s[0]}, {0, s[1]}, {n_embd, 2 * n_embd}}));
  Tensor v = heads(qkv.shrink({{0, s[0]}, {0, s[1]}, {2 * n_embd, 3 * n_embd}}));
  AttentionOptions opts;
  opts.is_causal = true;
  opts.dropout_p = training() ? dropout : 0.0;
  Tensor y = scaled_dot_product_attention(q, k, v, opts); // (B, nh, T, hs)
  return c_proj(y.transpose(1, 2).reshape({s[0], s[1], n_embd}));
}

Tensor CausalSelfAttention::forward_cached(const Tensor& x, const Tensor& pos, KVCache& cache, size_t layer) {
  const Dims& s = x.shape(); // (B, 1, C)
  Tensor qkv = c_attn(x);
  Tensor q = heads(qkv.shrink({{0, s[0]}, {0, 1}, {0, n_embd}}));
  Tensor k = heads(qkv.shrink({{0, s[0]}, {0, 1}, {n_embd, 2 * n_embd}}));
  Tensor v = heads(qkv.shrink({{0, s[0]}, {0, 1}, {2 * n_embd, 3 * n_embd}}));
  // Position `pos` of the cache takes this token's key and value; the positions after it are
  // masked out, so what a longer earlier sequence left there does not matter.
  Tensor slots = Tensor::arange(0, double(cache.capacity), 1, dtypes::int32, x.device());
  Tensor here = slots.eq(pos).reshape({1, 1, cache.capacity, 1});
  Tensor keys = here.where(k, cache.keys[layer]);
  Tensor values = here.where(v, cache.values[layer]);
  cache.keys[layer].assign(keys);
  cache.values[layer].assign(values);
  AttentionOptions opts;
  opts.mask = slots.le(pos).reshape({1, 1, 1, cache.capacity});
  Tensor y =
      scaled_dot_product_attention(q, keys.cast(q.dtype()), values.cast(q.dtype()), opts); // (B, nh, 1, hs)
  return c_proj(y.transpose(1, 2).reshape({s[0], 1, n_embd}));
}

MLP::MLP(const GPTConfig& c)
    : c_fc(c.n_embd, 4 * c.n_embd, 0.02, c.dtype),
      c_proj(4 * c.n_embd, c.n_embd, 0.02 / std::sqrt(2.0 * double(c.n_layer)), c.dtype) {}

Tensor MLP::forward(const Tensor& x) { return c_proj(c_fc(x).gelu()); } // GPT-2's tanh GELU

Block::Block(const GPTConfig& c) : ln_1(c.n_embd), attn(c), ln_2(c.n_embd), mlp(c), drop(c.dropout) {}

Tensor Block::forward(const Tensor& x) {
  Tensor h = x + drop(attn(ln_1(x)));
  return h + drop(mlp(ln_2(h)));
}

Tensor Block::forward_cached(const Tensor& x, const Tensor& pos, KVCache& cache, size_t layer) {
  Tensor h = x + attn.forward_cached(ln_1(x), pos, cache, layer);
  return h + mlp(ln_2(h));
}

Transformer::Transformer(const GPTConfig& c)
    : wte(c.vocab_size, c.n_embd), wpe(c.block_size, c.n_embd), ln_f(c.n_embd) {
  wte.weight = normal({c.vocab_size, c.n_embd}, 0.02);
  wpe.weight = normal({c.block_size, c.n_embd}, 0.02);
  h.reserve(size_t(c.n_layer));
  for (int64_t i = 0; i < c.n_layer; ++i) h.emplace_back(c);
}

GPT::GPT(const GPTConfig& c) : config((c.validate(), c)), transformer(c), drop(c.dropout) {}

Tensor GPT::forward(const Tensor& idx) {
  if (idx.ndim() != 2) throw TensorError("GPT: tokens must be (batch, time), got " + dims_str(idx.shape()));
  const int64_t t = idx.shape()[1];
  if (t > config.block_size)
    throw TensorError("GPT: a sequence of " + std::to_string(t) + " tokens is longer than the context of " +
                      std::to_string(config.block_size) + " (config " + config.name + ")");
  Tensor positions = Tensor::arange(0, double(t), 1, dtypes::int32, idx.device());
  Tensor x = drop(transformer.wte(idx) + transformer.wpe(positions));
  for (auto& block : transformer.h) x = block(x);
  return logits(transformer.ln_f(x));
}

Tensor GPT::logits(const Tensor& x) const { // the output projection, tied to the token embedding
  return x.cast(config.dtype).matmul(transformer.wte.weight.cast(config.dtype).T()).cast(dtypes::float32);
}

Tensor GPT::loss(const Tensor& idx, const Tensor& targets) {
  Tensor out = forward(idx);
  const int64_t n = idx.shape()[0] * idx.shape()[1];
  return nn::sparse_categorical_crossentropy(out.reshape({n, config.vocab_size}), targets.reshape({n}));
}

KVCache GPT::make_cache(int64_t batch) const {
  if (batch <= 0) throw TensorError("GPT: a cache needs batch >= 1, got " + std::to_string(batch));
  KVCache cache;
  cache.batch = batch;
  cache.capacity = config.block_size;
  const std::string& device = transformer.wte.weight.device();
  DType dt = config.dtype; // the keys' and values' compute dtype
  Dims shape{batch, config.n_head, config.block_size, config.n_embd / config.n_head};
  for (int64_t i = 0; i < config.n_layer; ++i) {
    cache.keys.push_back(Tensor::zeros(shape, dt, device).contiguous().realize());
    cache.values.push_back(Tensor::zeros(shape, dt, device).contiguous().realize());
  }
  return cache;
}

Tensor GPT::forward_cached(const Tensor& idx, const Tensor& pos, KVCache& cache) {
  if (idx.ndim() != 2 || idx.shape()[1] != 1 || idx.shape()[0] != cache.batch)
    throw TensorError("GPT: decoding takes one token per sequence, (" + std::to_string(cache.batch) +
                      ", 1), got " + dims_str(idx.shape()));
  if (pos.ndim() != 0)
    throw TensorError("GPT: the position must be a 0-d tensor, got " + dims_str(pos.shape()));
  Tensor x = transformer.wte(idx) + transformer.wpe(pos.reshape({1}));
  for (size_t i = 0; i < transformer.h.size(); ++i) x = transformer.h[i].forward_cached(x, pos, cache, i);
  return logits(transformer.ln_f(x).reshape({cache.batch, config.n_embd}));
}

} // namespace tg::models
