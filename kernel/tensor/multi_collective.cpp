#include "kernel/tensor/multi_collective.hpp"

#include "kernel/engine/engine.hpp"
#include "kernel/tensor/autograd.hpp"
#include "kernel/tensor/multi_error.hpp"

#include "kernel/engine/realize.hpp"
#include "kernel/runtime/allocator.hpp"
#include "kernel/schedule/buffer.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>

namespace tg::detail {

// The device memory of `t`'s value, made contiguous and realized on its device first.
Buffer& realized_buffer(Tensor& t) {
  t.realize();
  UOpRef buffer = stored_buffer(t.uop());
  if (!buffer || buffer_arg(buffer).size() != t.numel()) { // a strided or partial view
    t = t.contiguous();
    t.realize();
    buffer = stored_buffer(t.uop());
  }
  if (!buffer) throw MultiTensorError("collective: " + t.str() + " has no contiguous buffer after realize");
  return storage_of(buffer).buffer();
}

// A realized tensor over a new buffer on `device`, and that buffer's memory (none when empty).
std::pair<Tensor, Buffer*> fresh_tensor(const std::string& device, DType dt, const Dims& shape) {
  if (dims_prod(shape) == 0) return {Tensor::zeros(shape, dt, device), nullptr};
  UOpRef buffer = make_buffer(device, dt, dims_prod(shape));
  Buffer* memory = &storage_of(buffer, true).buffer();
  UOpRef view = shape.size() == 1
                    ? buffer
                    : UOp::make(Ops::RESHAPE, dt, {buffer}, std::vector<int64_t>(shape.begin(), shape.end()));
  return {Tensor(view, shape, device), memory};
}

namespace {

enum class Kind { copy, all_reduce, all_gather };

// One collective call, kept while any of its outputs lives (their custom-gradient nodes own it).
// Output gradients arrive from the devices' autograd passes (the nodes' vjp) and wait here
// until run_collectives_backward() turns them into input gradients.
struct Record {
  Kind kind = Kind::copy;
  CollectiveReduce op = CollectiveReduce::sum;
  uint64_t order = 0;
  std::vector<Tensor> inputs;  // as given (their graphs lead to the leaves)
  std::vector<Tensor> results; // the fresh outputs, before their gradient node (max's backward)
  std::mutex mutex;
  std::vector<std::optional<Tensor>> pending; // one per output
};

// The live records in creation order (a registry: weak, guarded).
class Tape {
public:
  static Tape& instance() { return engine().extension<Tape>(); }
  void add(const std::shared_ptr<Record>& r) {
    std::lock_guard lock(mutex_);
    std::erase_if(records_, [](const auto& w) { return w.expired(); });
    r->order = next_++;
    records_.push_back(r);
  }
  std::vector<std::shared_ptr<Record>> live() {
    std::lock_guard lock(mutex_);
    std::vector<std::shared_ptr<Record>> out;
    for (const auto& w : records_)
      if (auto r = w.lock()) out.push_back(std::move(r));
    return out;
  }

private:
  std::mutex mutex_;
  std::vector<std::weak_ptr<Record>> records_;
  uint64_t next_ = 0;
};

void check_group(const std::vector<Tensor>& inputs, const char* what) {
  if (inputs.empty()) throw MultiTensorError(std::string(what) + ": no tensors");
  std::vector<std::string> devices;
  for (const auto& t : inputs) {
    if (t.shape() != inputs[0].shape() || t.dtype() != inputs[0].dtype())
      throw MultiTensorError(std::string(what) + ": " + t.str() + " differs from " + inputs[0].str());
    if (std::find(devices.begin(), devices.end(), t.device()) != devices.end())
      throw MultiTensorError(std::string(what) + ": two tensors on " + t.device());
    devices.push_back(t.device());
  }
}

// The outputs as returned: float outputs carry a gradient node that hands their gradient to `r`.
std::vector<Tensor> finish(std::shared_ptr<Record> r, bool record) {
  // only where a gradient can flow back: a recorded output's buffer stays a requires_grad leaf
  // while the output lives, so a value assigned from it would keep its history for autograd
  if (!record || !r->results[0].dtype().is_float() || !reaches_grad_leaf(r->inputs)) return r->results;
  r->pending.resize(r->results.size());
  std::vector<Tensor> out;
  for (size_t i = 0; i < r->results.size(); ++i) {
    Tensor leaf = r->results[i];
    leaf.requires_grad_(); // so the devices' passes reach this node and call its vjp
    out.push_back(Tensor::with_custom_gradient(leaf, [r, i, leaf](const Tensor& g) {
      std::lock_guard lock(r->mutex);
      r->pending[i] = r->pending[i] ? *r->pending[i] + g : g;
      return std::vector<std::pair<Tensor, Tensor>>{};
    }));
  }
  Tape::instance().add(r);
  return out;
}

// The one place data crosses devices: every MultiTensor collective and copy runs here.
std::vector<Tensor> run(Kind kind, std::vector<Tensor> inputs, const std::vector<std::string>& devices,
                        CollectiveReduce op, bool record) {
  auto r = std::make_shared<Record>();
  r->kind = kind;
  r->op = op;
  r->inputs = inputs;
  const DType dt = inputs[0].dtype();
  const uint64_t bytes = uint64_t(inputs[0].numel()) * dt.itemsize();
  std::vector<GroupBuffer> group, outputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Dims shape = inputs[i].shape();
    if (kind == Kind::all_gather) shape[0] *= int64_t(inputs.size());
    auto [out, memory] = fresh_tensor(kind == Kind::copy ? devices[i] : inputs[i].device(), dt, shape);
    r->results.push_back(out);
    if (bytes == 0) continue;
    Buffer& in = realized_buffer(inputs[i]);
    switch (kind) {
    case Kind::copy:
      if (devices[i] == inputs[i].device())
        memory->copy_from(in, bytes);
      else
        copy_between_devices(GroupBuffer{memory, 0}, GroupBuffer{&in, 0}, bytes);
      break;
    case Kind::all_reduce: // in place on a copy: the input keeps its value (autograd reads it)
      memory->copy_from(in, bytes);
      group.push_back({memory, 0});
      break;
    case Kind::all_gather:
      group.push_back({&in, 0});
      outputs.push_back({memory, 0});
      break;
    }
  }
  if (bytes != 0 && kind == Kind::all_reduce) all_reduce(group, dt, uint64_t(inputs[0].numel()), op);
  if (bytes != 0 && kind == Kind::all_gather) all_gather(group, outputs, dt, uint64_t(inputs[0].numel()));
  return finish(std::move(r), record);
}

// Input gradients of one record from its outputs' gradients (all present).
std::vector<Tensor> input_gradients(const Record& r, const std::vector<Tensor>& g) {
  switch (r.kind) {
  case Kind::copy: {
    std::vector<std::string> back;
    for (const auto& t : r.inputs) back.push_back(t.device());
    // copies whose inputs share a device (replicate) sum there; copy each back first
    std::vector<Tensor> out;
    for (size_t i = 0; i < g.size(); ++i) out.push_back(copy_to_devices({g[i]}, {back[i]}, false)[0]);
    return out;
  }
  case Kind::all_reduce: {
    std::vector<Tensor> total = all_reduce_values(g, CollectiveReduce::sum, false);
    if (r.op == CollectiveReduce::sum) return total;
    // max: the gradient goes to the inputs that hold the maximum, split evenly between ties
    std::vector<Tensor> hits;
    for (size_t i = 0; i < g.size(); ++i) hits.push_back(r.inputs[i].eq(r.results[i]).cast(g[i].dtype()));
    std::vector<Tensor> count = all_reduce_values(hits, CollectiveReduce::sum, false);
    std::vector<Tensor> out;
    for (size_t i = 0; i < g.size(); ++i) out.push_back(hits[i] * total[i] / count[i]);
    return out;
  }
  case Kind::all_gather: {
    std::vector<Tensor> total = all_reduce_values(g, CollectiveReduce::sum, false);
    std::vector<Tensor> out;
    for (size_t i = 0; i < g.size(); ++i) {
      const int64_t rows = r.inputs[i].shape()[0];
      std::vector<std::pair<int64_t, int64_t>> ranges;
      for (auto d : total[i].shape()) ranges.emplace_back(0, d);
      ranges[0] = {int64_t(i) * rows, int64_t(i + 1) * rows};
      out.push_back(total[i].shrink(ranges));
    }
    return out;
  }
  }
  return {};
}

} // namespace

std::vector<Tensor> copy_to_devices(const std::vector<Tensor>& inputs,
                                    const std::vector<std::string>& devices, bool record) {
  if (inputs.empty() || inputs.size() != devices.size())
    throw MultiTensorError("copy_to_devices: " + std::to_string(inputs.size()) + " tensors for " +
                           std::to_string(devices.size()) + " devices");
  return run(Kind::copy, inputs, devices, CollectiveReduce::sum, record);
}

std::vector<Tensor> all_reduce_values(const std::vector<Tensor>& inputs, CollectiveReduce op, bool record) {
  check_group(inputs, "all_reduce");
  return run(Kind::all_reduce, inputs, {}, op, record);
}

std::vector<Tensor> all_gather_rows(const std::vector<Tensor>& inputs, bool record) {
  check_group(inputs, "all_gather");
  if (inputs[0].ndim() == 0) throw MultiTensorError("all_gather: needs at least one dim, got a scalar");
  return run(Kind::all_gather, inputs, {}, CollectiveReduce::sum, record);
}

void clear_collective_gradients() {
  for (const auto& r : Tape::instance().live()) {
    std::lock_guard lock(r->mutex);
    for (auto& p : r->pending) p.reset();
  }
}

void run_collectives_backward() {
  std::vector<std::shared_ptr<Record>> records = Tape::instance().live();
  // newest first: a record's outputs feed only later records and the roots
  for (auto it = records.rbegin(); it != records.rend(); ++it) {
    Record& r = **it;
    std::vector<Tensor> g;
    {
      std::lock_guard lock(r.mutex);
      if (std::none_of(r.pending.begin(), r.pending.end(), [](const auto& p) { return p.has_value(); }))
        continue;
      for (size_t i = 0; i < r.pending.size(); ++i) {
        const Tensor& out = r.results[i];
        g.push_back(r.pending[i] ? r.pending[i]->cast(out.dtype()) : out.zeros_like());
        r.pending[i].reset();
      }
    }
    std::vector<Tensor> grads = input_gradients(r, g);
    for (size_t i = 0; i < grads.size(); ++i) r.inputs[i].backward(grads[i]);
  }
}

} // namespace tg::detail
