// What autograd offers the rest of the tensor ring (optimizers, the JIT, collectives), besides
// Tensor::backward and Tensor::gradient: scopes that change what it records, and questions about
// the graph it would differentiate. Realization reaches autograd only through the engine's
// RealizationListener (kernel/engine/realized_cache.hpp), which autograd.cpp implements.
#pragma once

#include "kernel/tensor/tensor.hpp"

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tg::detail {

// While one lives on a thread, autograd records no realized view there. Optimizer::step_and_realize
// opens one when the step updates every current leaf (updates_every_leaf): whatever its realizes
// record reaches only leaves that the update replaces, so the next purge would drop it unused; the
// records' leaf walks would be ~15% of the host thread's time in a training step.
class WithoutHistory {
public:
  WithoutHistory();
  ~WithoutHistory();
  WithoutHistory(const WithoutHistory&) = delete;
  WithoutHistory& operator=(const WithoutHistory&) = delete;
};

// Whether every live requires_grad tensor is one of `updated` (by state): after they are
// assigned, no tensor that was a leaf before is a leaf any more.
bool updates_every_leaf(const std::vector<Tensor>& updated);

// How many realized views autograd has recorded so far, in this process (tests).
std::size_t views_recorded();

// While one lives on a thread, autograd works as usual inside it (a backward differentiates
// through what was realized there). When it ends, what the code inside left behind for later
// differentiation is dropped, and with it the hold of that history on the intermediates'
// buffers: the records of values realized there, and the gradients it set on requires_grad
// tensors (they are cleared). The JIT's capture uses it: a replayed step leaves no autograd
// history behind, so its capturing call leaves none either.
class TransientAutograd {
public:
  TransientAutograd();
  ~TransientAutograd();
  TransientAutograd(const TransientAutograd&) = delete;
  TransientAutograd& operator=(const TransientAutograd&) = delete;

private:
  std::vector<std::weak_ptr<const UOp>> noted_;
  std::vector<std::weak_ptr<const UOp>>* outer_;
  std::vector<std::pair<std::weak_ptr<TensorState>, std::weak_ptr<Tensor>>> grads_before_; // identity only
};

// Whether a gradient could flow from `roots` to a requires_grad tensor (outside Tensor::NoGrad,
// not through DETACH); MultiTensor's collectives record themselves for backward only then.
bool reaches_grad_leaf(const std::vector<Tensor>& roots);

// Whether a training step realizes in parts on `device` (TG_REALIZE_EARLY, kernel/engine/config.hpp;
// default: on devices that queue launches): backward() realizes its root first and
// Optimizer::step_and_realize the gradients before it builds the update, so the device computes
// each part while the host builds the next; never while the JIT captures a step (autograd.cpp).
bool realize_early(const std::string& device);

} // namespace tg::detail
