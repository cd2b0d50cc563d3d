// The GPT's training recipe (nanoGPT's): AdamW (betas 0.9, 0.95) with weight decay on the
// matrices and embeddings only, a linear warmup then a cosine down to min_lr, the gradients'
// global norm clipped, gradient accumulation over micro-batches, and the validation loss on fixed
// batches. `tg train gpt` and `tg bench gpt` both train through it.
#pragma once

#include "kernel/tensor/jit.hpp"
#include "kernel/tensor/optim.hpp"
#include "models/gpt/corpus.hpp"
#include "models/gpt/gpt.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace tg::models {

struct TrainOptions {
  int64_t steps = 300, bs = 16, accum = 1;
  double lr = 1e-3, min_lr = 1e-4, weight_decay = 0.1, grad_clip = 1.0;
  int64_t warmup = 30;
  uint64_t seed = 1337; // the batches (SplitMix64 offsets)
  bool jit = false;     // the step through TinyJit
  // TensorError naming the option unless the values make a schedule (dropout with jit included:
  // a replay would reuse the captured step's dropout masks).
  void validate(const GPTConfig& config) const;
};

// Matrices and embeddings decay, biases and LayerNorm weights do not.
std::vector<optim::ParamGroup> decay_groups(GPT& model, double weight_decay);

class Trainer {
public:
  Trainer(GPT& model, const TrainOptions& options);
  // One optimizer step on the next `accum` batches of `tokens`; returns the loss (the micro-batches'
  // mean) and the gradients' norm before clipping. A loss that is not finite throws Error with the
  // step number; float16 gradients that overflow skip the step and lower the loss scale instead.
  struct Result {
    double loss, grad_norm;
  };
  Result step(const std::vector<int32_t>& tokens);
  // Mean loss over `batches` batches of `tokens` drawn from a generator seeded from the options'
  // seed: the same batches on every call and in the PyTorch peer.
  double validation_loss(const std::vector<int32_t>& tokens, int64_t batches);
  int64_t steps_done() const { return done_; }
  // float16 training scales the loss by this before backward() (the gradients are divided by it
  // again before clipping): GradScaler's dynamic scale, 2^16 at first, halved after a step whose
  // gradients overflowed (that step changes nothing), doubled after 2000 steps without one.
  // 1 for other dtypes.
  double loss_scale() const { return loss_scale_; }
  int64_t skipped_steps() const { return skipped_; }
  double lr() const { return opt_.lr; } // the next step's
  const TinyJit& jit() const { return *jit_; }

private:
  std::vector<Tensor> run(const std::vector<Tensor>& in);
  GPT& model_;
  TrainOptions o_;
  std::vector<Tensor> params_;
  optim::AdamW opt_;
  std::optional<optim::WarmupCosineLR> schedule_;
  std::unique_ptr<TinyJit> jit_;
  SplitMix64 rng_;
  int64_t done_ = 0, skipped_ = 0, good_steps_ = 0;
  double loss_scale_ = 1;
  bool scaled_ = false; // float16: the loss is scaled
};

} // namespace tg::models
