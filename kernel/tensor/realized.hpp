// Between realization (tensor.cpp) and autograd (autograd.cpp), inside the tensor ring only.
// Realizing swaps a tensor's expression for a view of its stored result; autograd must still
// differentiate the expression, and its gradient should read the stored results instead of
// computing them again.
#pragma once

#include "kernel/tensor/tensor.hpp"

#include <bit>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tg::detail {

// node -> node for one walk over a graph (RealizedCache::substitute, autograd's Unrealize): a flat
// open-addressing table (linear probing, at most half full). Those walks visit a training step's
// ~1000-node graphs several times per step, where an unordered_map would allocate a node per
// entry. Keys are raw pointers: the caller keeps them alive.
class NodeMap {
public:
  NodeMap() { resize(1024); }
  const UOpRef* find(const UOp* u) const {
    const Slot& s = slots_[slot(u)];
    return s.first ? &s.second : nullptr;
  }
  // Keeps the first value of a node.
  void emplace(const UOp* u, UOpRef v) {
    if ((count_ + 1) * 2 > slots_.size()) {
      std::vector<Slot> old = std::move(slots_);
      resize(old.size() * 2);
      for (auto& [node, value] : old)
        if (node) slots_[slot(node)] = {node, std::move(value)};
    }
    Slot& s = slots_[slot(u)];
    if (s.first) return;
    s = {u, std::move(v)};
    ++count_;
  }

private:
  using Slot = std::pair<const UOp*, UOpRef>;
  void resize(std::size_t size) {
    slots_ = std::vector<Slot>(size);
    bits_ = std::countr_zero(size);
  }
  // u's slot, or the empty one where it would go (node addresses share their low bits: the
  // multiplicative hash's high bits pick the start).
  std::size_t slot(const UOp* u) const {
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = (reinterpret_cast<std::uintptr_t>(u) * 0x9e3779b97f4a7c15ULL) >> (64 - bits_);
    while (slots_[i].first && slots_[i].first != u) i = (i + 1) & mask;
    return i;
  }
  std::vector<Slot> slots_;
  std::size_t count_ = 0;
  int bits_ = 0;
};

// A set of nodes for one walk (the graph autograd differentiates, the nodes that need a
// gradient): flat open addressing like NodeMap, one allocation per growth instead of one per
// node. Raw pointers: the caller keeps the nodes alive.
class NodeSet {
public:
  NodeSet() { resize(1024); }
  bool count(const UOp* u) const { return slots_[slot(u)] != nullptr; }
  void insert(const UOp* u) {
    if ((count_ + 1) * 2 > slots_.size()) {
      std::vector<const UOp*> old = std::move(slots_);
      resize(old.size() * 2);
      for (const UOp* node : old)
        if (node) slots_[slot(node)] = node;
    }
    const UOp*& s = slots_[slot(u)];
    if (s) return;
    s = u;
    ++count_;
  }

private:
  void resize(std::size_t size) {
    slots_.assign(size, nullptr);
    bits_ = std::countr_zero(size);
  }
  std::size_t slot(const UOp* u) const {
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = (reinterpret_cast<std::uintptr_t>(u) * 0x9e3779b97f4a7c15ULL) >> (64 - bits_);
    while (slots_[i] && slots_[i] != u) i = (i + 1) & mask;
    return i;
  }
  std::vector<const UOp*> slots_;
  std::size_t count_ = 0;
  int bits_ = 0;
};

// Called when a tensor's expression `expr` is about to be replaced by its realized `view`:
// autograd keeps what it needs to differentiate through `view` later (autograd.cpp).
void note_realized(const UOpRef& expr, const UOpRef& view);

// While one lives on a thread, note_realized there records nothing. Optimizer::step_and_realize
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

// Drops what note_realized kept for views that died or whose leaves changed; called before each
// realize so their intermediates' buffers return to the allocator first (autograd.cpp).
void purge_realized_origins();

// Returns the buffers of intermediates whose expressions died to the allocator (autograd's
// records first, then the realized-value cache); every realize does this before it runs.
void release_dead_results();

// While one lives on a thread, Tensor::realize_all releases the dead results after it has
// launched its kernels instead of before: Optimizer::step_and_realize's last part, whose dead
// results are the step's graphs (its parameters were just assigned), so the device starts the
// update while the host frees them. Peak memory is unchanged: the part before read them.
class ReleaseAfterLaunch {
public:
  ReleaseAfterLaunch();
  ~ReleaseAfterLaunch();
  ReleaseAfterLaunch(const ReleaseAfterLaunch&) = delete;
  ReleaseAfterLaunch& operator=(const ReleaseAfterLaunch&) = delete;

private:
  bool outer_;
};

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

// `root` with every node that has already been computed on `device` (and is still cached)
// replaced by the view of its stored result (tensor.cpp).
UOpRef with_realized_values(const UOpRef& root, const std::string& device);

// The indices of `nodes` that have a stored result on `device` (tensor.cpp).
std::vector<int32_t> stored_among(const std::vector<UOpRef>& nodes, const std::string& device);

// The whole, contiguous BUFFER behind a view, or nullptr if the view is anything else (tensor.cpp).
UOpRef stored_buffer(const UOpRef& view);

// Whether a gradient could flow from `roots` to a requires_grad tensor (outside Tensor::NoGrad,
// not through DETACH); MultiTensor's collectives record themselves for backward only then.
bool reaches_grad_leaf(const std::vector<Tensor>& roots);

// Whether a training step realizes in parts on `device` (TG_REALIZE_EARLY, kernel/runtime/config.hpp;
// default: on devices that queue launches): backward() realizes its root first and
// Optimizer::step_and_realize the gradients before it builds the update, so the device computes
// each part while the host builds the next; never while the JIT captures a step (autograd.cpp).
bool realize_early(const std::string& device);

// Called by Tensor::assign before the value changes: a JIT capturing on this thread records the
// tensor as step state (jit.cpp).
void note_assign(const Tensor& t);

} // namespace tg::detail
