#include "models/gpt/generate.hpp"

#include "models/gpt/corpus.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace tg::models {
int32_t sample_token(std::vector<float> logits, const SamplingOptions& o, uint64_t& rng_state) {
  if (logits.empty()) throw TensorError("sample_token: no logits");
  if (!(o.temperature >= 0) || !std::isfinite(o.temperature))
    throw TensorError("sampling: temperature must be a finite number >= 0, got " +
                      std::to_string(o.temperature));
  if (o.top_k < 0) throw TensorError("sampling: top_k must be >= 0, got " + std::to_string(o.top_k));
  for (float v : logits)
    if (std::isnan(v)) throw TensorError("sampling: the model's logits contain NaN");
  if (o.temperature == 0) return int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
  std::vector<int32_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  size_t k = o.top_k == 0 ? logits.size() : std::min(logits.size(), size_t(o.top_k));
  // The k most likely first (ties: the lower id), then softmax over them at the temperature.
  std::partial_sort(order.begin(), order.begin() + long(k), order.end(), [&](int32_t a, int32_t b) {
    return logits[size_t(a)] > logits[size_t(b)] || (logits[size_t(a)] == logits[size_t(b)] && a < b);
  });
  const double top = double(logits[size_t(order[0])]) / o.temperature;
  std::vector<double> weight(k);
  double total = 0;
  for (size_t i = 0; i < k; ++i)
    total += weight[i] = std::exp(double(logits[size_t(order[i])]) / o.temperature - top);
  SplitMix64 rng{rng_state};
  double u = rng.uniform() * total;
  rng_state = rng.state;
  for (size_t i = 0; i < k; ++i) {
    if (u < weight[i]) return order[i];
    u -= weight[i];
  }
  return order[k - 1];
}

Generator::Generator(GPT& model, SamplingOptions options)
    : model_(model), options_(options), cache_(model.make_cache(1)), rng_state_(options.seed) {
  model_.eval(); // no dropout while sampling
  if (options_.jit)
    jit_ = std::make_unique<TinyJit>([this](const std::vector<Tensor>& in) { return decode(in); });
}

// {token (1, 1), position ()} -> {logits (1, vocab)}, realized with the cache's new keys and values.
std::vector<Tensor> Generator::decode(const std::vector<Tensor>& in) {
  Tensor logits = model_.forward_cached(in[0], in[1], cache_);
  std::vector<Tensor*> out{&logits};
  for (auto& t : cache_.keys) out.push_back(&t);
  for (auto& t : cache_.values) out.push_back(&t);
  Tensor::realize_all(out);
  return {logits};
}

Generator::~Generator() = default;

std::vector<float> Generator::step(int32_t token, int64_t pos) {
  const std::string& device = model_.transformer.wte.weight.device();
  Tensor idx = Tensor::from_vector<int32_t>(std::vector<int32_t>{token}, {1, 1}, dtypes::int32, device);
  Tensor at = Tensor::from_vector<int32_t>(std::vector<int32_t>{int32_t(pos)}, {}, dtypes::int32, device);
  Tensor::NoGrad no_grad;
  return (jit_ ? (*jit_)({idx, at}) : decode({idx, at}))[0].to_vector<float>();
}

std::vector<int32_t> Generator::generate(const std::vector<int32_t>& prompt_in, int64_t count,
                                         const std::function<void(int32_t)>& on_token) {
  if (prompt_in.empty()) throw TensorError("generate: the prompt must hold at least one token");
  if (count < 0) throw TensorError("generate: the token count must be >= 0, got " + std::to_string(count));
  const int64_t context = model_.config.block_size, vocab = model_.config.vocab_size;
  for (int32_t t : prompt_in)
    if (t < 0 || t >= vocab)
      throw TensorError("generate: prompt token " + std::to_string(t) + " is outside the vocabulary of " +
                        std::to_string(vocab));
  std::vector<int32_t> tokens = prompt_in;
  truncated_ = int64_t(tokens.size()) > context - 1;
  if (truncated_) tokens.erase(tokens.begin(), tokens.end() - (context - 1));
  // Read every token but the last into the cache; each step then feeds the newest token.
  int64_t pos = 0;
  std::vector<float> logits;
  for (size_t i = 0; i < tokens.size(); ++i) logits = step(tokens[i], pos++);
  std::vector<int32_t> out;
  for (int64_t n = 0; n < count; ++n) {
    int32_t next = sample_token(std::move(logits), options_, rng_state_);
    out.push_back(next);
    tokens.push_back(next);
    if (on_token) on_token(next);
    if (n + 1 == count) break;
    if (pos == context) { // full: start over from the last half of the context
      int64_t keep = context / 2;
      pos = 0;
      for (size_t i = tokens.size() - size_t(keep); i + 1 < tokens.size(); ++i) step(tokens[i], pos++);
    }
    logits = step(next, pos++);
  }
  return out;
}

} // namespace tg::models
