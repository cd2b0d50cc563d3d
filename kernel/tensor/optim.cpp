// tg::optim: lazy parameter updates realized in one schedule per step; LR schedules.
#include "kernel/tensor/optim.hpp"

#include "kernel/tensor/autograd.hpp"
#include "kernel/tensor/release_after_launch.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>

namespace tg::optim {

Optimizer::Optimizer(std::vector<Tensor> params, double lr_) : lr(lr_) {
  if (!(lr_ >= 0)) throw TensorError("optimizer: learning rate must be >= 0, got " + std::to_string(lr_));
  for (auto& t : params) {
    auto& list = t.requires_grad() ? params_ : buffers_;
    bool seen = std::any_of(list.begin(), list.end(), [&](const Tensor& o) { return o.is(t); });
    if (!seen) list.push_back(t);
  }
}

void Optimizer::zero_grad() {
  for (auto& p : params_) p.zero_grad();
}

Tensor Optimizer::host_scalar(double value, const Tensor& like) {
  for (auto& c : scalars_)
    if (c.value == value && c.dtype == like.dtype() && c.device == like.device()) {
      c.used = true;
      return c.tensor;
    }
  std::vector<double> v{value};
  Tensor t = Tensor::from_vector<double>(v, Dims{}, std::nullopt, like.device()).cast(like.dtype());
  scalars_.push_back({value, like.dtype(), like.device(), t, true});
  return t;
}

Tensor Optimizer::lr_for(const Tensor& p) {
  if (!lr_tensor) return host_scalar(lr, p);
  Tensor t = lr_tensor->device() == p.device() ? *lr_tensor : lr_tensor->to(p.device());
  return t.cast(p.dtype());
}

void Optimizer::set(Tensor& t, const Tensor& value) const {
  if (!apply_if) {
    t.assign(value);
    return;
  }
  const Tensor& cond = apply_if->device() == t.device() ? *apply_if : apply_if->to(t.device());
  t.assign(cond.where(value.cast(t.dtype()), t));
}

std::vector<Tensor> Optimizer::schedule_step() {
  if (lr_tensor && lr_tensor->ndim() != 0) // before any state moves: a refused step changes nothing
    throw TensorError("optimizer: lr_tensor must be a 0-d tensor, got " + std::to_string(lr_tensor->ndim()) +
                      " dimensions");
  if (apply_if && (apply_if->ndim() != 0 || !apply_if->dtype().is_bool()))
    throw TensorError("optimizer: apply_if must be a 0-d bool tensor, got " + apply_if->str());
  Tensor::NoGrad no_grad;
  ++steps_;
  for (auto& c : scalars_) c.used = false;
  begin_step();
  std::vector<Tensor> out;
  for (size_t i = 0; i < params_.size(); ++i) {
    auto g = params_[i].grad();
    if (!g) continue;
    update(i, *g, lr_for(params_[i]), out);
    out.push_back(params_[i]);
  }
  out.insert(out.end(), buffers_.begin(), buffers_.end());
  std::erase_if(scalars_, [](const CachedScalar& c) { return !c.used; }); // a changed lr's old value
  return out;
}

void Optimizer::step_and_realize(std::vector<Tensor> also) {
  // On a device that queues launches the gradients' kernels (the backward pass) start before the
  // update's graph is built, so the device runs them meanwhile (detail::realize_early). The
  // gradients are read by several update kernels, so they are stored either way.
  const bool in_parts = !params_.empty() && detail::realize_early(params_[0].device());
  // The update replaces every leaf (each parameter with a gradient, when they are all the leaves
  // there are): what this step's realizes would record for autograd could reach no leaf after it.
  std::vector<Tensor> updated;
  for (const auto& p : params_)
    if (p.grad()) updated.push_back(p);
  std::optional<detail::WithoutHistory> without_history;
  if (detail::updates_every_leaf(updated)) without_history.emplace();
  if (in_parts) {
    std::vector<Tensor> grads;
    for (const auto& p : params_)
      if (auto g = p.grad()) grads.push_back(*g);
    grads.insert(grads.end(), buffers_.begin(), buffers_.end()); // BatchNorm's statistics read the forward
    std::vector<Tensor*> ptrs;
    for (auto& g : grads) ptrs.push_back(&g);
    Tensor::realize_all(ptrs);
  }
  std::vector<Tensor> targets = schedule_step();
  targets.insert(targets.end(), also.begin(), also.end());
  std::vector<Tensor*> ptrs;
  for (auto& t : targets) ptrs.push_back(&t);
  std::optional<ReleaseAfterLaunch> release_after;
  if (in_parts) release_after.emplace(); // the step's graphs are freed while the device updates
  Tensor::realize_all(ptrs);
}

// ---- SGD ----

SGD::SGD(std::vector<Tensor> params, double lr_, double momentum_, double weight_decay_, bool nesterov_)
    : Optimizer(std::move(params), lr_), momentum(momentum_), weight_decay(weight_decay_),
      nesterov(nesterov_) {
  if (momentum < 0 || weight_decay < 0) throw TensorError("SGD: momentum and weight_decay must be >= 0");
  if (nesterov && momentum == 0) throw TensorError("SGD: nesterov needs momentum > 0");
  if (momentum != 0)
    for (const auto& p : params_) momentum_buffers.push_back(p.zeros_like());
}

void SGD::update(size_t i, const Tensor& grad, const Tensor& lr_t, std::vector<Tensor>& state) {
  Tensor& p = params_[i];
  Tensor g = grad;
  if (weight_decay != 0) g = g + p * weight_decay;
  if (momentum != 0) {
    Tensor& buf = momentum_buffers[i];
    set(buf, buf * momentum + g); // starts at 0, so the first step gives buf = g as torch
    g = nesterov ? g + buf * momentum : buf;
    state.push_back(buf);
  }
  set(p, p - g * lr_t);
}

// ---- Adam / AdamW ----

namespace {
std::vector<Tensor> all_params(const std::vector<ParamGroup>& groups) {
  std::vector<Tensor> out;
  for (const auto& g : groups) out.insert(out.end(), g.params.begin(), g.params.end());
  return out;
}
} // namespace

Adam::Adam(std::vector<Tensor> params, double lr_, double b1_, double b2_, double eps_, double weight_decay_)
    : Adam(std::vector<ParamGroup>{{std::move(params), std::nullopt}}, lr_, b1_, b2_, eps_, weight_decay_,
           false) {}

Adam::Adam(std::vector<ParamGroup> groups, double lr_, double b1_, double b2_, double eps_,
           double weight_decay_)
    : Adam(std::move(groups), lr_, b1_, b2_, eps_, weight_decay_, false) {}

Adam::Adam(std::vector<ParamGroup> groups, double lr_, double b1_, double b2_, double eps_,
           double weight_decay_, bool decoupled)
    : Optimizer(all_params(groups), lr_), b1(b1_), b2(b2_), eps(eps_), weight_decay(weight_decay_),
      decoupled_(decoupled), group_decay_(params_.size()) {
  if (!(b1 >= 0 && b1 < 1 && b2 >= 0 && b2 < 1))
    throw TensorError("Adam: betas must be in [0, 1), got " + std::to_string(b1) + ", " + std::to_string(b2));
  if (eps < 0 || weight_decay < 0) throw TensorError("Adam: eps and weight_decay must be >= 0");
  // params_ holds each trainable tensor once (the base dropped repeats and buffers): find each
  // group's tensors there
  std::vector<int> group_of(params_.size(), -1);
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const auto& decay = groups[gi].weight_decay;
    if (decay && !(*decay >= 0))
      throw TensorError("Adam: parameter group " + std::to_string(gi) + "'s weight_decay must be >= 0, got " +
                        std::to_string(*decay));
    for (const auto& t : groups[gi].params) {
      auto it = std::find_if(params_.begin(), params_.end(), [&](const Tensor& p) { return p.is(t); });
      if (it == params_.end()) continue; // a buffer (no requires_grad)
      size_t i = size_t(it - params_.begin());
      if (group_of[i] >= 0 && group_of[i] != int(gi))
        throw TensorError("Adam: parameter " + t.str() + " is in parameter groups " +
                          std::to_string(group_of[i]) + " and " + std::to_string(gi) +
                          "; each parameter belongs to one group");
      group_of[i] = int(gi);
      group_decay_[i] = decay;
    }
  }
  for (const auto& p : params_) {
    m.push_back(p.zeros_like());
    v.push_back(p.zeros_like());
  }
  if (!params_.empty()) {
    const std::string& device = params_[0].device();
    const DType dt = params_[0].dtype() == dtypes::float64 ? dtypes::float64 : dtypes::float32; // never half
    b1_power_ = Tensor::full({}, 1.0, dt, device);
    b2_power_ = Tensor::full({}, 1.0, dt, device);
  }
}

void Adam::begin_step() {
  // b^t on the device, advanced by the step itself: a replayed step (TinyJit) advances it too.
  set(b1_power_, b1_power_ * b1);
  set(b2_power_, b2_power_ * b2);
  powers_listed_ = false;
}

void Adam::update(size_t i, const Tensor& grad, const Tensor& lr_t, std::vector<Tensor>& state) {
  Tensor& p = params_[i];
  Tensor g = grad;
  Tensor decayed = p;
  const double wd = group_decay_[i].value_or(weight_decay);
  if (wd != 0) {
    if (decoupled_)
      decayed = lr_tensor ? p * (1.0 - lr_t * wd) : p * host_scalar(1 - lr * wd, p);
    else
      g = g + p * wd;
  }
  set(m[i], m[i] * b1 + g * (1 - b1));
  set(v[i], v[i] * b2 + g * g * (1 - b2));
  // torch: p -= (lr / (1 - b1^t)) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
  auto on_p = [&](const Tensor& t) {
    return (t.device() == p.device() ? t : t.to(p.device())).cast(p.dtype());
  };
  Tensor bias1 = on_p(1.0 - b1_power_), bias2 = on_p(1.0 - b2_power_); // 1 - b^t
  Tensor denom = v[i].sqrt() / bias2.sqrt() + eps;
  set(p, decayed - m[i] / denom * (lr_t / bias1));
  state.push_back(m[i]);
  state.push_back(v[i]);
  if (!powers_listed_) { // realized with the step once
    state.push_back(b1_power_);
    state.push_back(b2_power_);
    powers_listed_ = true;
  }
}

// ---- schedules ----

StepLR::StepLR(Optimizer& opt, int64_t step_size_, double gamma_)
    : LRScheduler(opt), step_size(step_size_), gamma(gamma_) {
  if (step_size <= 0)
    throw TensorError("StepLR: step_size must be positive, got " + std::to_string(step_size));
}

double StepLR::next_lr() {
  if (last_epoch == 0 || last_epoch % step_size != 0) return optimizer.lr;
  return optimizer.lr * gamma;
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& opt, int64_t t_max_, double eta_min_)
    : LRScheduler(opt), t_max(t_max_), eta_min(eta_min_) {
  if (t_max <= 0)
    throw TensorError("CosineAnnealingLR: t_max must be positive, got " + std::to_string(t_max));
}

double CosineAnnealingLR::next_lr() {
  const double pi = std::numbers::pi, lr_now = optimizer.lr;
  const double T = double(t_max), e = double(last_epoch);
  if (last_epoch == 0) return lr_now;
  if ((last_epoch - 1 - t_max) % (2 * t_max) == 0)
    return lr_now + (base_lr - eta_min) * (1 - std::cos(pi / T)) / 2;
  return (1 + std::cos(pi * e / T)) / (1 + std::cos(pi * (e - 1) / T)) * (lr_now - eta_min) + eta_min;
}

// ---- WarmupCosineLR ----

WarmupCosineLR::WarmupCosineLR(Optimizer& opt, int64_t warmup_steps_, int64_t total_steps_, double min_lr_)
    : LRScheduler(opt), warmup_steps(warmup_steps_), total_steps(total_steps_), min_lr(min_lr_) {
  if (warmup_steps < 0 || total_steps <= warmup_steps)
    throw TensorError("WarmupCosineLR: need 0 <= warmup_steps < total_steps, got warmup_steps " +
                      std::to_string(warmup_steps) + ", total_steps " + std::to_string(total_steps));
  if (!(min_lr >= 0 && std::isfinite(min_lr)))
    throw TensorError("WarmupCosineLR: min_lr must be finite and >= 0, got " + std::to_string(min_lr));
  optimizer.lr = lr_at(0); // construction is epoch 0
}

double WarmupCosineLR::lr_at(int64_t t) const {
  if (t < warmup_steps) return base_lr * double(t + 1) / double(warmup_steps + 1);
  if (t > total_steps) return min_lr;
  const double progress = double(t - warmup_steps) / double(total_steps - warmup_steps); // 0..1
  return min_lr + 0.5 * (1 + std::cos(std::numbers::pi * progress)) * (base_lr - min_lr);
}

} // namespace tg::optim
