// GPT-2's architecture (Radford et al., 2019) as a tg::nn module, with Hugging Face's parameter
// names and layouts, so a GPT-2 checkpoint loads by name: pre-norm blocks of causal self-attention
// and a GELU (tanh) MLP, learned position embeddings, a final LayerNorm and an output projection
// tied to the token embedding. The projections are "Conv1D" as in GPT-2's code: weight (in, out),
// y = x @ weight + bias.
//
// Built only from the public Tensor/nn API, so every device runs it and the scheduler fuses it.
#pragma once

#include "kernel/tensor/nn.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tg::models {

struct GPTConfig {
  std::string name = "custom";
  int64_t vocab_size = 256, block_size = 64, n_layer = 2, n_head = 2, n_embd = 64;
  double dropout = 0; // on embeddings, attention weights and residual branches, in training
  // The projections' and attention's compute dtype (bfloat16 or float16 for mixed precision):
  // their inputs and weights are cast to it, while the weights themselves (the master copy), the
  // embeddings, LayerNorms, residual stream and loss stay float32 (torch.autocast's split).
  DType dtype = dtypes::float32;

  // tiny (2 x 64, context 64), char (nanoGPT's shakespeare-char: 6 layers, 6 heads, 384 wide,
  // context 256) — both byte-level, vocab 256 — and gpt2 (124M: 12 x 768, context 1024, vocab 50257).
  static GPTConfig preset(const std::string& name);
  static std::vector<std::string> preset_names();
  // TensorError unless every size is positive and n_embd splits evenly into n_head heads.
  void validate() const;
  // As safetensors metadata ("gpt.n_layer" -> "6", ...) and back; from_metadata throws
  // TensorError naming a missing or malformed key.
  std::map<std::string, std::string> to_metadata() const;
  static GPTConfig from_metadata(const std::map<std::string, std::string>& metadata);
  int64_t parameter_count() const; // with the tied embedding counted once
};

// y = x @ weight + bias, weight (in, out): GPT-2's Conv1D. weight ~ N(0, std), bias 0, both
// float32; computed in `compute` (x, weight and bias cast to it).
class Conv1D : public nn::Module {
public:
  Conv1D(int64_t in, int64_t out, double std, DType compute = dtypes::float32);
  Tensor forward(const Tensor& x) override;
  void members(nn::MemberVisitor& v) override {
    v.parameter("weight", weight);
    v.parameter("bias", bias);
  }
  Tensor weight, bias;
  DType compute;
};

// The keys and values of every layer for incremental decoding: (batch, n_head, capacity, head
// size) per layer, zero at first. Position p is written when the token at p is decoded.
struct KVCache {
  std::vector<Tensor> keys, values;
  int64_t batch = 0, capacity = 0;
};

class CausalSelfAttention : public nn::Module {
public:
  explicit CausalSelfAttention(const GPTConfig& config);
  Tensor forward(const Tensor& x) override; // (B, T, C), causal
  // One token per sequence, x (B, 1, C), at position `pos` (0-d int32): writes its key and value
  // into layer `layer` of the cache and attends to positions 0..pos.
  Tensor forward_cached(const Tensor& x, const Tensor& pos, KVCache& cache, size_t layer);
  void members(nn::MemberVisitor& v) override {
    v.module("c_attn", c_attn);
    v.module("c_proj", c_proj);
  }
  int64_t n_head, n_embd;
  double dropout;
  Conv1D c_attn, c_proj;

private:
  Tensor heads(const Tensor& x) const; // (B, T, C) -> (B, n_head, T, head size)
};

class MLP : public nn::Module {
public:
  explicit MLP(const GPTConfig& config);
  Tensor forward(const Tensor& x) override;
  void members(nn::MemberVisitor& v) override {
    v.module("c_fc", c_fc);
    v.module("c_proj", c_proj);
  }
  Conv1D c_fc, c_proj;
};

class Block : public nn::Module {
public:
  explicit Block(const GPTConfig& config);
  Tensor forward(const Tensor& x) override;
  Tensor forward_cached(const Tensor& x, const Tensor& pos, KVCache& cache, size_t layer);
  void members(nn::MemberVisitor& v) override {
    v.module("ln_1", ln_1);
    v.module("attn", attn);
    v.module("ln_2", ln_2);
    v.module("mlp", mlp);
    v.module("drop", drop); // no parameters: listed so that train()/eval() reach it
  }
  nn::LayerNorm ln_1;
  CausalSelfAttention attn;
  nn::LayerNorm ln_2;
  MLP mlp;
  nn::Dropout drop;
};

// The body: "transformer.*" in Hugging Face's GPT2LMHeadModel.
class Transformer : public nn::Module {
public:
  explicit Transformer(const GPTConfig& config);
  void members(nn::MemberVisitor& v) override {
    v.module("wte", wte);
    v.module("wpe", wpe);
    v.modules("h", h);
    v.module("ln_f", ln_f);
  }
  nn::Embedding wte, wpe;
  std::vector<Block> h;
  nn::LayerNorm ln_f;
};

class GPT : public nn::Module {
public:
  // Weights as GPT-2 initializes them: N(0, 0.02), the residual projections N(0, 0.02 /
  // sqrt(2 n_layer)), biases 0, LayerNorms 1 and 0 (drawn from Tensor's seeded generator).
  explicit GPT(const GPTConfig& config);
  // idx (B, T) integer tokens, T <= block_size -> logits (B, T, vocab_size).
  Tensor forward(const Tensor& idx) override;
  // Mean cross-entropy of the next-token predictions: logits of idx against targets (B, T).
  Tensor loss(const Tensor& idx, const Tensor& targets);
  // An empty cache for `batch` sequences of up to block_size tokens, realized on the model's device.
  KVCache make_cache(int64_t batch) const;
  // Logits (B, vocab) of one token per sequence, idx (B, 1), at position `pos` (0-d int32),
  // attending to the cached positions before it; writes the token's keys and values into the
  // cache (lazily: realize the cache with the result, as generate.hpp does).
  Tensor forward_cached(const Tensor& idx, const Tensor& pos, KVCache& cache);
  // logits (..., vocab) float32 of final hidden states, in the compute dtype
  Tensor logits(const Tensor& x) const;
  void members(nn::MemberVisitor& v) override {
    v.module("transformer", transformer);
    v.module("drop", drop);
  }

  GPTConfig config;
  Transformer transformer;
  nn::Dropout drop;
};

} // namespace tg::models
