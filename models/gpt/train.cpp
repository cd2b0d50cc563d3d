#include "models/gpt/train.hpp"

#include <cmath>
#include <limits>

namespace tg::models {
namespace {

Tensor tokens_tensor(const std::vector<int32_t>& data, int64_t bs, int64_t block, const std::string& device) {
  return Tensor::from_vector<int32_t>(data, {bs, block}, dtypes::int32, device);
}

std::string num(double v) { return std::to_string(v); }

} // namespace

void TrainOptions::validate(const GPTConfig& config) const {
  if (steps < 0 || bs <= 0 || accum <= 0)
    throw TensorError("training: steps must be >= 0, bs and accum > 0 (got " + std::to_string(steps) + ", " +
                      std::to_string(bs) + ", " + std::to_string(accum) + ")");
  if (warmup < 0 || (steps > 0 && warmup >= steps))
    throw TensorError("training: warmup must be in [0, steps), got " + std::to_string(warmup) + " of " +
                      std::to_string(steps));
  if (!(lr > 0) || !std::isfinite(lr) || !(min_lr >= 0) || min_lr > lr)
    throw TensorError("training: lr must be finite and > 0 and min_lr in [0, lr] (got " + num(lr) + ", " +
                      num(min_lr) + ")");
  if (!(grad_clip >= 0) || !(weight_decay >= 0))
    throw TensorError("training: grad_clip and weight_decay must be >= 0");
  if (jit && config.dropout > 0)
    throw TensorError(
        "training: dropout does not combine with the JIT: a replayed step would reuse the captured "
        "step's dropout masks (random numbers are frozen in a capture)");
}

std::vector<optim::ParamGroup> decay_groups(GPT& model, double weight_decay) {
  optim::ParamGroup decay, no_decay;
  decay.weight_decay = weight_decay;
  no_decay.weight_decay = 0.0;
  for (auto& [name, p] : model.named_parameters()) (p.ndim() >= 2 ? decay : no_decay).params.push_back(p);
  return {decay, no_decay};
}

Trainer::Trainer(GPT& model, const TrainOptions& o)
    : model_(model), o_((o.validate(model.config), o)), params_(model.parameters()),
      opt_(decay_groups(model, o.weight_decay), o.lr, 0.9, 0.95, 1e-8, o.weight_decay), rng_{o.seed} {
  if (o_.steps > 0) schedule_.emplace(opt_, o_.warmup, o_.steps, o_.min_lr);
  scaled_ = model.config.dtype == dtypes::float16;
  if (scaled_) loss_scale_ = 65536.0;
  jit_ = std::make_unique<TinyJit>([this](const std::vector<Tensor>& in) { return run(in); });
  model_.train();
}

// inputs: x_0, y_0, ..., x_{accum-1}, y_{accum-1}, lr, loss scale -> {loss, gradient norm before clipping}
std::vector<Tensor> Trainer::run(const std::vector<Tensor>& in) {
  const Tensor& scale = in[in.size() - 1];
  opt_.lr_tensor = in[in.size() - 2];
  opt_.zero_grad();
  std::optional<Tensor> total;
  for (int64_t m = 0; m < o_.accum; ++m) {
    Tensor loss = model_.loss(in[size_t(2 * m)], in[size_t(2 * m + 1)]) / double(o_.accum);
    (scaled_ ? loss * scale : loss).backward(); // the gradients add up over the micro-batches
    total = total ? *total + loss : loss;
  }
  if (scaled_)
    for (auto& p : params_)
      if (auto g = p.grad()) p.set_grad(*g / scale.cast(g->dtype()));
  Tensor norm =
      nn::clip_grad_norm(params_, o_.grad_clip > 0 ? o_.grad_clip : std::numeric_limits<double>::infinity());
  // An overflowed float16 step (inf or NaN in the gradients, so in their norm) changes nothing.
  if (scaled_) opt_.apply_if = norm.isinf().logical_or(norm.isnan()).logical_not();
  opt_.step_and_realize({*total, norm});
  return {*total, norm};
}

Trainer::Result Trainer::step(const std::vector<int32_t>& tokens) {
  const int64_t block = model_.config.block_size;
  const std::string& device = model_.transformer.wte.weight.device();
  std::vector<Tensor> in;
  for (int64_t m = 0; m < o_.accum; ++m) {
    auto batch = random_batch(tokens, o_.bs, block, rng_);
    in.push_back(tokens_tensor(batch.x, o_.bs, block, device));
    in.push_back(tokens_tensor(batch.y, o_.bs, block, device));
  }
  in.push_back(
      Tensor::from_vector<float>(std::vector<float>{float(opt_.lr)}, Dims{}, dtypes::float32, device));
  in.push_back(
      Tensor::from_vector<float>(std::vector<float>{float(loss_scale_)}, Dims{}, dtypes::float32, device));
  auto out = o_.jit ? (*jit_)(in) : run(in);
  ++done_;
  Result r{double(out[0].item<float>()), double(out[1].item<float>())};
  if (!std::isfinite(r.loss))
    throw Error("training stopped: the loss is " + num(r.loss) + " at step " + std::to_string(done_) +
                " (try a smaller lr or gradient clipping)");
  if (scaled_) {
    if (!std::isfinite(r.grad_norm)) {
      ++skipped_, good_steps_ = 0;
      loss_scale_ = std::max(1.0, loss_scale_ / 2);
    } else if (++good_steps_ == 2000) {
      good_steps_ = 0;
      loss_scale_ = std::min(65536.0 * 65536.0, loss_scale_ * 2);
    }
  }
  if (schedule_) schedule_->step();
  return r;
}

double Trainer::validation_loss(const std::vector<int32_t>& tokens, int64_t batches) {
  if (batches <= 0) throw TensorError("validation: batches must be > 0, got " + std::to_string(batches));
  model_.eval();
  Tensor::NoGrad no_grad;
  SplitMix64 rng{o_.seed ^ 0x5A5A5A5Aull};
  const int64_t block = model_.config.block_size;
  const std::string& device = model_.transformer.wte.weight.device();
  double total = 0;
  for (int64_t b = 0; b < batches; ++b) {
    auto batch = random_batch(tokens, o_.bs, block, rng);
    total += double(
        model_
            .loss(tokens_tensor(batch.x, o_.bs, block, device), tokens_tensor(batch.y, o_.bs, block, device))
            .item<float>());
  }
  model_.train();
  if (!std::isfinite(total)) throw Error("validation: the loss is " + num(total / double(batches)));
  return total / double(batches);
}

} // namespace tg::models
