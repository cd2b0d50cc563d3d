// Sampling from a GPT with a key/value cache: each token is one forward pass over that token only
// (GPT::forward_cached), captured by TinyJit on the first tokens and replayed after, so a token costs
// one graph replay plus reading its logits back. Temperature and top-k are applied on the host
// (a partial sort of one row of logits) with a seeded generator, so a seed gives the same text on
// every device.
#pragma once

#include "kernel/tensor/jit.hpp"
#include "models/gpt/gpt.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace tg::models {

struct SamplingOptions {
  double temperature = 0.8; // 0: always the most likely token
  int64_t top_k = 200;      // sample among the k most likely tokens; 0: all of them
  uint64_t seed = 1337;
  bool jit = true; // replay each token's kernels through TinyJit
};

// Picks a token from one row of logits (the host half of sampling; public for tests).
int32_t sample_token(std::vector<float> logits, const SamplingOptions& options, uint64_t& rng_state);

class Generator {
public:
  Generator(GPT& model, SamplingOptions options);
  ~Generator();
  // Feeds the prompt (at least one token), then samples `count` tokens, calling on_token with each
  // as it comes. When the context fills up, the cache restarts from the last half of the context
  // (re-reading those tokens), so any count can be generated. A prompt longer than the context is
  // cut to its last block_size - 1 tokens (`truncated()` says so).
  std::vector<int32_t> generate(const std::vector<int32_t>& prompt, int64_t count,
                                const std::function<void(int32_t)>& on_token = {});
  bool truncated() const { return truncated_; }
  const TinyJit* jit() const { return jit_.get(); }

private:
  std::vector<float> step(int32_t token, int64_t pos); // logits after `token` at `pos`
  std::vector<Tensor> decode(const std::vector<Tensor>& in);
  GPT& model_;
  SamplingOptions options_;
  KVCache cache_;
  std::unique_ptr<TinyJit> jit_;
  bool truncated_ = false;
  uint64_t rng_state_;
};

} // namespace tg::models
