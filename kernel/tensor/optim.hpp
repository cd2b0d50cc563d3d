// tg::optim: SGD, Adam, AdamW (torch's update equations, Adam/AdamW with parameter groups) and
// the StepLR / CosineAnnealingLR / WarmupCosineLR schedules.
//
// An optimizer holds Tensor handles, so `param.assign(new_value)` updates the model's tensor.
// step() builds every update under Tensor::NoGrad and realizes all parameters and optimizer
// state in ONE Tensor::realize_all (one schedule: with lazy grads that is forward, backward and
// update together). Tensors passed without requires_grad are buffers (e.g. BatchNorm running
// statistics, as in tinygrad): not updated, but realized in the same schedule.
//
// The learning rate enters the graph as a realized scalar tensor uploaded from the host each
// step, not as a constant, so changing lr (schedules) reuses the compiled kernels. Adam's bias
// corrections come from b1^t, b2^t kept on the device and advanced by the step's own schedule,
// so a TinyJit replay (which runs no host code) advances them too; lr stays as captured there
// unless the step function sets `lr_tensor` from one of its inputs.
#pragma once

#include "kernel/tensor/tensor.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tg::optim {

class Optimizer {
public:
  Optimizer(std::vector<Tensor> params, double lr);
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // Clears the gradient of every parameter.
  void zero_grad();
  // One update of every parameter that has a gradient (others are skipped), realized with the
  // optimizer state in one schedule.
  virtual void step() { step_and_realize({}); }
  // The same, realizing `also` (e.g. the loss) in that schedule too.
  void step_and_realize(std::vector<Tensor> also);
  // Builds the update lazily (assigns to params and state) and returns what step() realizes.
  std::vector<Tensor> schedule_step();

  const std::vector<Tensor>& params() const { return params_; }
  const std::vector<Tensor>& buffers() const { return buffers_; }
  int64_t step_count() const { return steps_; }

  double lr;
  // When set, the steps read the learning rate from this 0-d tensor instead of `lr`: a schedule's
  // value passed into a step function as one of its inputs, which a TinyJit replay binds anew
  // (host code, reading `lr` included, does not run on replays; see kernel/tensor/jit.hpp).
  std::optional<Tensor> lr_tensor;
  // When set, a 0-d bool tensor: a step where it is false leaves every parameter and all optimizer
  // state as they were (mixed precision skips a step whose scaled gradients overflowed). It is part
  // of the step's graph, so the step stays one schedule and a TinyJit replay decides anew.
  std::optional<Tensor> apply_if;

protected:
  // t.assign(value), or t.assign(apply_if.where(value, t)) while apply_if is set.
  void set(Tensor& t, const Tensor& value) const;
  // Assigns the new value of params_[i] (whose gradient is g) and its state; appends any state
  // tensors that must be realized. `lr_t` is lr as a scalar tensor of the parameter's dtype.
  virtual void update(size_t i, const Tensor& g, const Tensor& lr_t, std::vector<Tensor>& state) = 0;
  // Called once per step before the updates (steps_ already counts this step).
  virtual void begin_step() {}
  // A realized 0-d tensor holding `value` (uploaded from the host), cast to `like`'s dtype on its
  // device; one upload per value, dtype and device, kept while the steps keep using it (an upload
  // on an asynchronous device may wait for the work queued before it, docs/cuda.md, "The device").
  Tensor host_scalar(double value, const Tensor& like);
  // lr for parameter `p`: lr_tensor on p's device in p's dtype when set, else host_scalar(lr, p).
  Tensor lr_for(const Tensor& p);

  std::vector<Tensor> params_, buffers_;
  int64_t steps_ = 0;

private:
  struct CachedScalar {
    double value;
    DType dtype;
    std::string device;
    Tensor tensor;
    bool used = true; // by this step
  };
  std::vector<CachedScalar> scalars_; // the uploads this step or the last one used
};

// torch.optim.SGD (dampening 0): g += wd * p; with momentum, buf = momentum * buf + g (buf starts
// at g) and g = nesterov ? g + momentum * buf : buf; p -= lr * g.
class SGD : public Optimizer {
public:
  SGD(std::vector<Tensor> params, double lr, double momentum = 0, double weight_decay = 0,
      bool nesterov = false);
  double momentum, weight_decay;
  bool nesterov;
  std::vector<Tensor> momentum_buffers; // one per parameter (empty without momentum)

protected:
  void update(size_t i, const Tensor& g, const Tensor& lr_t, std::vector<Tensor>& state) override;
};

// Parameters that share settings (torch's param groups): a group's weight_decay, when set,
// replaces the optimizer's for its parameters (no decay on biases and norms, as nanoGPT does).
struct ParamGroup {
  std::vector<Tensor> params;
  std::optional<double> weight_decay;
};

// torch.optim.Adam / AdamW: m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2,
// p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps). AdamW first decays p *= 1 - lr * wd;
// Adam with weight_decay adds wd * p to the gradient (L2, as torch's Adam).
class Adam : public Optimizer {
public:
  Adam(std::vector<Tensor> params, double lr = 1e-3, double b1 = 0.9, double b2 = 0.999, double eps = 1e-8,
       double weight_decay = 0);
  // Parameter groups, each with its own weight decay or the optimizer's; a parameter may be in
  // one group only (TensorError otherwise).
  Adam(std::vector<ParamGroup> groups, double lr = 1e-3, double b1 = 0.9, double b2 = 0.999,
       double eps = 1e-8, double weight_decay = 0);
  double b1, b2, eps, weight_decay;
  std::vector<Tensor> m, v; // first and second moments, one per parameter

protected:
  Adam(std::vector<ParamGroup> groups, double lr, double b1, double b2, double eps, double weight_decay,
       bool decoupled);
  void begin_step() override;
  void update(size_t i, const Tensor& g, const Tensor& lr_t, std::vector<Tensor>& state) override;

private:
  bool decoupled_;
  std::vector<std::optional<double>> group_decay_; // per parameter: its group's, or none (weight_decay)
  // b1^t and b2^t as float32 (float64 for float64 parameters) scalars on the first parameter's device,
  // updated by each step's schedule (not on the host), so a TinyJit replay of the step sees them advance.
  Tensor b1_power_ = Tensor::scalar(1), b2_power_ = Tensor::scalar(1);
  bool powers_listed_ = false; // already among this step's realized state
};

class AdamW : public Adam {
public:
  AdamW(std::vector<Tensor> params, double learning_rate = 1e-3, double beta1 = 0.9, double beta2 = 0.999,
        double epsilon = 1e-8, double decay = 0.01)
      : Adam(std::vector<ParamGroup>{{std::move(params), std::nullopt}}, learning_rate, beta1, beta2, epsilon,
             decay, true) {}
  AdamW(std::vector<ParamGroup> groups, double learning_rate = 1e-3, double beta1 = 0.9, double beta2 = 0.999,
        double epsilon = 1e-8, double decay = 0.01)
      : Adam(std::move(groups), learning_rate, beta1, beta2, epsilon, decay, true) {}
};

// Learning-rate schedules with torch's step() semantics: construction is epoch 0 (lr = the
// optimizer's lr); each step() advances one epoch and sets optimizer.lr.
class LRScheduler {
public:
  explicit LRScheduler(Optimizer& opt) : optimizer(opt), base_lr(opt.lr) {}
  virtual ~LRScheduler() = default;
  void step() {
    ++last_epoch;
    optimizer.lr = next_lr();
  }
  double get_last_lr() const { return optimizer.lr; }
  Optimizer& optimizer;
  double base_lr;
  int64_t last_epoch = 0;

protected:
  virtual double next_lr() = 0; // lr for last_epoch (already advanced), from the current lr
};

// lr = lr * gamma every step_size epochs.
class StepLR : public LRScheduler {
public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);
  int64_t step_size;
  double gamma;

protected:
  double next_lr() override;
};

// torch's recursive cosine form: eta_min + (base - eta_min) (1 + cos(pi t / t_max)) / 2 when the
// lr is not changed elsewhere; continues periodically past t_max as torch does.
class CosineAnnealingLR : public LRScheduler {
public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t t_max, double eta_min = 0);
  int64_t t_max;
  double eta_min;

protected:
  double next_lr() override;
};

// nanoGPT's get_lr, from the optimizer's lr at construction (base): linear warmup
// base * (t + 1) / (warmup + 1) for t < warmup, then a cosine from base down to min_lr at
// t = total, min_lr after. Construction sets the optimizer's lr to epoch 0's value.
class WarmupCosineLR : public LRScheduler {
public:
  WarmupCosineLR(Optimizer& optimizer, int64_t warmup_steps, int64_t total_steps, double min_lr = 0);
  double lr_at(int64_t epoch) const; // the schedule's value at any epoch >= 0
  int64_t warmup_steps, total_steps;
  double min_lr;

protected:
  double next_lr() override { return lr_at(last_epoch); }
};

} // namespace tg::optim
