// Autograd on the UOp graph: the gradient of every primitive op is a rule written with Tensor
// ops, applied in reverse topological order from the output (tinygrad's approach: gradients are
// just more lazy graph, fused and scheduled like everything else).
#include "kernel/tensor/tensor.hpp"

#include "kernel/schedule/shapes.hpp"

#include <algorithm>
#include <mutex>
#include <numbers>
#include <unordered_map>
#include <unordered_set>

namespace tg {

namespace {

// Tensors marked requires_grad, held weakly; backward() looks their values up in the graph.
// A registry like tinygrad's all_tensors, guarded by a mutex.
class GradRegistry {
public:
  static GradRegistry& instance() {
    static GradRegistry r;
    return r;
  }
  void add(const std::shared_ptr<TensorState>& s) {
    std::lock_guard lock(mutex_);
    std::erase_if(states_, [](const auto& w) { return w.expired(); });
    states_.push_back(s);
  }
  std::vector<std::shared_ptr<TensorState>> live() {
    std::lock_guard lock(mutex_);
    std::vector<std::shared_ptr<TensorState>> out;
    for (const auto& w : states_)
      if (auto s = w.lock(); s && s->requires_grad) out.push_back(s);
    return out;
  }

private:
  std::mutex mutex_;
  std::vector<std::weak_ptr<TensorState>> states_;
};

thread_local int no_grad_depth = 0;

// The arg of a NOOP that carries a custom gradient; identity-compared, so each is its own node.
class CustomGradArg : public OpaqueArg {
public:
  explicit CustomGradArg(Tensor::VjpFn fn) : fn_(std::move(fn)) {}
  std::size_t hash() const override { return std::hash<const void*>{}(this); }
  bool equals(const OpaqueArg& other) const override { return this == &other; }
  std::string str() const override { return "custom_gradient"; }
  const Tensor::VjpFn& fn() const { return fn_; }

private:
  Tensor::VjpFn fn_;
};

const CustomGradArg* custom_grad(const UOpRef& u) {
  if (u->op() != Ops::NOOP) return nullptr;
  auto* opaque = u->arg_if<OpaqueArgRef>();
  return opaque ? dynamic_cast<const CustomGradArg*>(opaque->get()) : nullptr;
}

using Grads = std::vector<std::optional<Tensor>>;

Axes axes_of(const std::vector<int64_t>& v) { return Axes(v.begin(), v.end()); }

// The gradient of each source of u, given the gradient g of u.
Grads rule(const UOpRef& u, const Tensor& g, ShapeMap& shapes, const std::string& device) {
  auto T = [&](const UOpRef& x) { return Tensor(x, shapes(x), device); };
  const auto& src = u->src();
  auto s = [&](size_t i) { return T(src[i]); };
  const Tensor self = T(u);
  switch (u->op()) {
  case Ops::ADD:
    return {g, g};
  case Ops::SUB:
    return {g, -g};
  case Ops::MUL:
    return {g * s(1), g * s(0)};
  case Ops::FDIV:
    return {g / s(1), -g * s(0) / (s(1) * s(1))};
  case Ops::NEG:
    return {-g};
  case Ops::MULACC:
    return {g * s(1), g * s(0), g};
  case Ops::MAX: {
    // ties split the gradient evenly, as tinygrad does
    Tensor a = s(0), b = s(1);
    Tensor ga = a.gt(b).where(g, g.const_like(0)) + a.eq(b).where(g * 0.5, g.const_like(0));
    Tensor gb = b.gt(a).where(g, g.const_like(0)) + a.eq(b).where(g * 0.5, g.const_like(0));
    return {ga, gb};
  }
  case Ops::RECIP:
    return {-g * self * self};
  case Ops::SQRT:
    return {g / (self * 2.0)};
  case Ops::EXP2:
    return {g * self * std::numbers::ln2};
  case Ops::LOG2:
    return {g / (s(0) * std::numbers::ln2)};
  case Ops::SIN:
    return {g * s(0).cos()};
  case Ops::TRUNC:
    return {g.const_like(0)};
  case Ops::CAST: {
    DType from = src[0]->dtype();
    if (!from.is_float()) return {std::nullopt};
    return {g.cast(from)};
  }
  case Ops::WHERE: {
    Tensor c = s(0);
    return {std::nullopt, c.where(g, g.const_like(0)), c.where(g.const_like(0), g)};
  }
  case Ops::CONTIGUOUS:
  case Ops::NOOP:
    return {g};
  case Ops::COPY:
    return {g.to(T(src[0]).device())};
  case Ops::REDUCE_AXIS: {
    const ReduceArg& r = *u->arg_if<ReduceArg>();
    const Dims& in = shapes(src[0]);
    Tensor ge = g.expand(in);
    if (r.op == Ops::ADD) return {ge};
    Tensor x = s(0), out = self.expand(in);
    if (r.op == Ops::MUL) return {ge * out / x};
    Tensor hit = x.eq(out).cast(g.dtype());
    return {hit * ge / hit.sum(axes_of(r.axes), true).expand(in)};
  }
  case Ops::RESHAPE:
    return {g.reshape(shapes(src[0]))};
  case Ops::PERMUTE: {
    const auto& order = *u->arg_if<std::vector<int64_t>>();
    Axes inverse(order.size());
    for (size_t i = 0; i < order.size(); ++i) inverse[size_t(order[i])] = int64_t(i);
    return {g.permute(inverse)};
  }
  case Ops::EXPAND: {
    const Dims& in = shapes(src[0]);
    const Dims& out = shapes(u);
    Axes summed;
    for (size_t d = 0; d < in.size(); ++d)
      if (in[d] != out[d]) summed.push_back(int64_t(d));
    return {summed.empty() ? g : g.sum(summed, true)};
  }
  case Ops::PAD: {
    const Dims& in = shapes(src[0]);
    std::vector<std::pair<int64_t, int64_t>> ranges;
    auto pairs = MovementArg::pairs(u);
    for (size_t d = 0; d < in.size(); ++d) ranges.emplace_back(pairs[d].first, pairs[d].first + in[d]);
    return {g.shrink(ranges)};
  }
  case Ops::SHRINK: {
    const Dims& in = shapes(src[0]);
    std::vector<std::pair<int64_t, int64_t>> padding;
    auto pairs = MovementArg::pairs(u);
    for (size_t d = 0; d < in.size(); ++d) padding.emplace_back(pairs[d].first, in[d] - pairs[d].second);
    return {g.pad(padding)};
  }
  case Ops::FLIP: {
    Axes axes;
    const auto& flags = *u->arg_if<std::vector<int64_t>>();
    for (size_t d = 0; d < flags.size(); ++d)
      if (flags[d]) axes.push_back(int64_t(d));
    return {g.flip(axes)};
  }
  default:
    // comparisons, integer and bitwise ops, DETACH, BITCAST: no gradient flows
    return Grads(src.size());
  }
}

} // namespace

Tensor Tensor::with_custom_gradient(const Tensor& value, VjpFn vjp) {
  auto arg = std::make_shared<CustomGradArg>(std::move(vjp));
  return value.with(UOp::make(Ops::NOOP, value.dtype(), {value.uop()}, Arg{OpaqueArgRef(arg)}),
                    value.shape());
}

Tensor& Tensor::requires_grad_(bool enable) {
  if (enable && !dtype().is_float())
    throw TensorError("requires_grad needs a float tensor, got " + dtype().name());
  s_->requires_grad = enable;
  if (enable) GradRegistry::instance().add(s_);
  return *this;
}

bool Tensor::requires_grad() const { return s_->requires_grad; }

std::optional<Tensor> Tensor::grad() const {
  if (!s_->grad) return std::nullopt;
  return *s_->grad;
}

void Tensor::set_grad(std::optional<Tensor> g) {
  if (g && g->shape() != shape())
    throw TensorError("gradient shape " + dims_str(g->shape()) + " does not match tensor shape " +
                      dims_str(shape()));
  s_->grad = g ? std::make_shared<Tensor>(*g) : nullptr;
}

Tensor& Tensor::assign(const Tensor& value) {
  if (value.shape() != shape())
    throw TensorError("assign: value shape " + dims_str(value.shape()) + " differs from " +
                      dims_str(shape()));
  if (value.device() != device())
    throw TensorError("assign: value is on " + value.device() + ", the tensor on " + device());
  s_->uop = value.dtype() == dtype() ? value.uop() : value.cast(dtype()).uop();
  return *this;
}

Tensor::NoGrad::NoGrad() { ++no_grad_depth; }
Tensor::NoGrad::~NoGrad() { --no_grad_depth; }

std::vector<Tensor> Tensor::gradient(const std::vector<Tensor>& targets, std::optional<Tensor> seed) const {
  if (no_grad_depth > 0) throw TensorError("gradient()/backward() called inside a Tensor::NoGrad scope");
  if (!seed) {
    if (numel() != 1)
      throw TensorError("gradient of a non-scalar tensor " + dims_str(shape()) +
                        " needs an explicit seed gradient");
    seed = ones_like();
  } else if (seed->shape() != shape()) {
    throw TensorError("seed gradient shape " + dims_str(seed->shape()) + " differs from " +
                      dims_str(shape()));
  }
  const UOpRef root = uop();
  std::vector<UOpRef> order = toposort(root);
  // only nodes that lead to a target need a gradient
  std::unordered_set<const UOp*> target_nodes, needed;
  for (const auto& t : targets) target_nodes.insert(t.uop().get());
  for (const auto& u : order) {
    bool need = target_nodes.count(u.get()) != 0;
    if (u->op() == Ops::DETACH) need = false;
    for (const auto& src : u->src()) need |= needed.count(src.get()) != 0 && u->op() != Ops::DETACH;
    if (need) needed.insert(u.get());
  }
  ShapeMap shapes;
  std::unordered_map<const UOp*, Tensor> grads;
  grads.emplace(root.get(), seed->cast(dtype().is_float() ? dtype() : dtypes::default_float));
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const UOpRef& u = *it;
    auto g = grads.find(u.get());
    if (g == grads.end() || !needed.count(u.get())) continue;
    if (const CustomGradArg* custom = custom_grad(u)) {
      for (auto& [input, input_grad] : custom->fn()(g->second)) {
        const UOp* node = input.uop().get();
        if (!needed.count(node)) continue;
        auto existing = grads.find(node);
        if (existing == grads.end())
          grads.emplace(node, input_grad);
        else
          existing->second = existing->second + input_grad;
      }
      continue;
    }
    Grads src_grads = rule(u, g->second, shapes, device());
    for (size_t i = 0; i < u->src().size() && i < src_grads.size(); ++i) {
      const UOpRef& src = u->src(i);
      if (!src_grads[i] || !needed.count(src.get())) continue;
      auto existing = grads.find(src.get());
      if (existing == grads.end())
        grads.emplace(src.get(), *src_grads[i]);
      else
        existing->second = existing->second + *src_grads[i];
    }
  }
  std::vector<Tensor> out;
  for (const auto& t : targets) {
    auto g = grads.find(t.uop().get());
    out.push_back(g == grads.end() ? t.zeros_like() : g->second.cast(t.dtype()));
  }
  return out;
}

void Tensor::backward(std::optional<Tensor> seed) const {
  std::unordered_set<const UOp*> in_graph;
  for (const auto& n : toposort(uop())) in_graph.insert(n.get());
  std::vector<Tensor> leaves;
  for (const auto& state : GradRegistry::instance().live()) {
    Tensor t(state);
    if (in_graph.count(t.uop().get())) leaves.push_back(t);
  }
  if (leaves.empty()) return;
  std::vector<Tensor> grads = gradient(leaves, seed);
  for (size_t i = 0; i < leaves.size(); ++i) {
    auto old = leaves[i].grad();
    leaves[i].set_grad(old ? *old + grads[i] : grads[i]);
  }
}

} // namespace tg
