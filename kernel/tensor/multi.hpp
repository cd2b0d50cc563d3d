// MultiTensor: one logical tensor spread over several devices, either sharded (split
// evenly along one axis, shard i on device i) or replicated (every device holds the whole value).
// Each shard is an ordinary lazy Tensor on its device, so per-device work fuses and schedules as
// usual; data crosses devices only through the collectives in multi_collective.hpp, which run
// eagerly on realized buffers through kernel/runtime/collective.hpp.
//
// Ops follow the shard axis: elementwise ops and reductions over other axes stay on each device;
// a reduction over the shard axis reduces locally, then all-reduces; matmul all-reduces when the
// contracted axis is sharded and all-gathers the right operand when its layout does not fit.
// What cannot be done without moving data in a way the caller did not ask for (mismatched shard
// axes, a reshape that splits the shard axis) is refused with MultiTensorError.
//
// Gradients: each device's graph is differentiated by the usual autograd; the collectives record
// themselves, and MultiTensor::backward() runs their backward (an all-reduce for an all-reduce,
// ...) between the devices' passes. A replicated tensor's shards receive partial gradients whose
// sum is the gradient; MultiTensor::grad() all-reduces them (data-parallel training's gradient
// all-reduce) and leaves the same sum on every shard, so optimizers stepping on each shard keep
// replicated weights identical.
#pragma once

#include "kernel/runtime/collective.hpp"
#include "kernel/tensor/multi_error.hpp"
#include "kernel/tensor/tensor.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tg {

class MultiTensor {
public:
  // From per-device shards (shard i on devices()[i], all distinct). `axis`: the logical axis the
  // shards split (equal sizes), or nullopt when every shard holds the whole value.
  MultiTensor(std::vector<Tensor> shards, std::optional<int64_t> axis);
  // Splits `t` evenly along `axis` (its size must be a multiple of the device count).
  static MultiTensor shard(const Tensor& t, const std::vector<std::string>& devices, int64_t axis);
  // A copy of `t` on every device.
  static MultiTensor replicate(const Tensor& t, const std::vector<std::string>& devices);

  // ---- properties ----
  const std::vector<Tensor>& shards() const { return s_->shards; }
  std::vector<std::string> devices() const;
  std::optional<int64_t> axis() const { return s_->axis; }
  bool replicated() const { return !s_->axis; }
  const Dims& shape() const { return s_->shape; } // logical
  int64_t ndim() const { return int64_t(s_->shape.size()); }
  int64_t numel() const { return dims_prod(s_->shape); }
  DType dtype() const { return shards()[0].dtype(); }
  std::string str() const; // "<MultiTensor (8, 4) float axis 0 on CPU:0,CPU:1>"

  // ---- realization and reading (gathered on the first device) ----
  MultiTensor& realize();
  Tensor to(const std::string& device) const; // the whole value on one device
  template <class Elem> std::vector<Elem> to_vector() const { return to(devices()[0]).to_vector<Elem>(); }
  template <class Elem> Elem item() const { return to(devices()[0]).item<Elem>(); }

  // ---- per-shard work ----
  // fn(shard, device index) on every shard; fn must act on each shard alone (elementwise, or
  // along axes other than the shard axis). `axis`: the shard axis of the result.
  MultiTensor map(const std::function<Tensor(const Tensor&, size_t)>& fn, std::optional<int64_t> axis) const;
  MultiTensor cast(DType dt) const;
  MultiTensor neg() const;
  MultiTensor exp() const;
  MultiTensor log() const;
  MultiTensor relu() const;
  MultiTensor sqrt() const;
  MultiTensor square() const;
  MultiTensor mul(double v) const;
  MultiTensor add(double v) const;

  // ---- binary, numpy broadcasting; same devices; a replicated operand meets a sharded one as is
  // (its matching slice where it is not broadcast along the shard axis) ----
  MultiTensor add(const MultiTensor& o) const;
  MultiTensor sub(const MultiTensor& o) const;
  MultiTensor mul(const MultiTensor& o) const;
  MultiTensor div(const MultiTensor& o) const;
  MultiTensor maximum(const MultiTensor& o) const;
  MultiTensor binary(const MultiTensor& o,
                     const std::function<Tensor(const Tensor&, const Tensor&)>& fn) const;

  // ---- reductions (over the shard axis: local, then all-reduce; the result is replicated) ----
  MultiTensor sum(Axes axes = {}, bool keepdim = false) const;
  MultiTensor max(Axes axes = {}, bool keepdim = false) const;
  MultiTensor mean(Axes axes = {}, bool keepdim = false) const;

  // ---- movement (the shard axis must survive as one axis) ----
  MultiTensor reshape(Dims shape) const;
  MultiTensor permute(Axes order) const;
  MultiTensor transpose(int64_t a = 1, int64_t b = 0) const;
  MultiTensor expand(Dims shape) const;

  // ---- matmul: this (..., M, K) @ o (K, N) ----
  MultiTensor matmul(const MultiTensor& o) const;

  // ---- collectives ----
  // A sharded tensor as a replicated one (all-gather); a replicated one is returned as is.
  MultiTensor gather() const;

  // ---- autograd ----
  MultiTensor& requires_grad_(bool enable = true);
  // d(this)/d(leaves): this must be one element (a replicated or one-device scalar) unless `seed`
  // (same layout) is given. Runs every device's backward pass and the collectives' backward.
  void backward(std::optional<MultiTensor> seed = {}) const;
  // The gradient, or nullopt when no shard has one. Replicated: the all-reduced sum of the
  // shards' partial gradients, stored back on every shard (so a second call does not sum again).
  std::optional<MultiTensor> grad() const;

private:
  friend void sync_grads(const std::vector<MultiTensor>& params, const std::vector<Tensor>& also);
  struct State {
    std::vector<Tensor> shards;
    std::optional<int64_t> axis;
    Dims shape;
    std::vector<Tensor> summed_grads; // the grads grad() stored on the shards (replicated)
  };
  std::shared_ptr<State> s_;
};

inline MultiTensor operator+(const MultiTensor& a, const MultiTensor& b) { return a.add(b); }
inline MultiTensor operator-(const MultiTensor& a, const MultiTensor& b) { return a.sub(b); }
inline MultiTensor operator*(const MultiTensor& a, const MultiTensor& b) { return a.mul(b); }
inline MultiTensor operator/(const MultiTensor& a, const MultiTensor& b) { return a.div(b); }

// Checks a device list for multi-device use (not empty, no repeats, each one opens) and returns
// the canonical names; throws MultiTensorError (or the device's own error) naming the list.
std::vector<std::string> check_devices(const std::vector<std::string>& devices);

// A replicated tensor whose value is the elementwise sum (or max) of `per_device` (one tensor per
// device, same shape): all-reduce, differentiable.
MultiTensor all_reduce(const std::vector<Tensor>& per_device, CollectiveReduce op = CollectiveReduce::sum);

// The gradient all-reduce of data-parallel training: afterwards every shard of each replicated
// parameter holds the summed gradient (as grad() leaves it), so per-device optimizers can step.
// Each device's gradients (with `also`, e.g. its loss) are realized in one schedule, then
// all-reduced as one flat buffer per device (one collective for all parameters of one dtype).
void sync_grads(const std::vector<MultiTensor>& params, const std::vector<Tensor>& also = {});

} // namespace tg
