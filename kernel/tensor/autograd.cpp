// Autograd on the UOp graph: the gradient of every primitive op is a rule written with Tensor
// ops, applied in reverse topological order from the output (tinygrad's approach: gradients are
// just more lazy graph, fused and scheduled like everything else).
#include "kernel/tensor/tensor.hpp"

#include "kernel/tensor/autograd.hpp"

#include "kernel/engine/capture.hpp"
#include "kernel/engine/config.hpp"
#include "kernel/engine/engine.hpp"
#include "kernel/ir/node_table.hpp"
#include "kernel/runtime/device.hpp"
#include "kernel/runtime/devices.hpp"
#include "kernel/schedule/shapes.hpp"
#include "kernel/tensor/assign_hook.hpp"
#include "kernel/tensor/gradient_cache.hpp"

#include <algorithm>
#include <iostream>
#include <mutex>
#include <numbers>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace tg {

namespace {

// Tensors marked requires_grad, held weakly; backward() looks their values up in the graph.
// A registry like tinygrad's all_tensors (one per engine), guarded by a mutex.
class GradRegistry {
public:
  static GradRegistry& instance() { return engine().extension<GradRegistry>(); }
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
thread_local int without_history_depth = 0; // detail::WithoutHistory: on_read records nothing

// The nodes that stand for live requires_grad tensors: each one's current node and, after a read,
// the expression that node replaced. `hold` keeps the set's pointers valid while it is used. The
// set is a sorted vector: it is built for every realized target a realize picks up (dozens per
// training step) and has a few dozen entries, where a hash set allocated a node per entry.
struct LeafNodes {
  std::vector<UOpRef> hold;
  struct Sorted {
    std::vector<const UOp*> nodes;
    bool empty() const { return nodes.empty(); }
    std::size_t count(const UOp* u) const {
      return std::binary_search(nodes.begin(), nodes.end(), u) ? 1 : 0;
    }
  } set;
};

LeafNodes current_leaves() {
  LeafNodes out;
  for (const auto& s : GradRegistry::instance().live()) {
    out.hold.push_back(s->uop);
    if (auto lazy = s->lazy.lock()) out.hold.push_back(std::move(lazy));
  }
  out.set.nodes.reserve(out.hold.size());
  for (const auto& u : out.hold) out.set.nodes.push_back(u.get());
  std::sort(out.set.nodes.begin(), out.set.nodes.end());
  out.set.nodes.erase(std::unique(out.set.nodes.begin(), out.set.nodes.end()), out.set.nodes.end());
  return out;
}

// What realized views were computed from, for autograd: reading a tensor swaps its expression for
// a view of the stored result (Tensor::uop()), and graphs built afterwards contain that view.
// Differentiating replaces each recorded view with its expression again. A view is recorded only
// when its expression reaches a current leaf, and dropped once the view dies or none of those
// leaves is current any more (the parameters were updated): so an old step's graph is not kept
// alive by a value that was read from it. One per engine, which tells it of every read (it is the
// engine's RealizationListener from its creation: the first requires_grad_); guarded by a mutex.
class GradOrigins final : public RealizationListener {
public:
  static GradOrigins& instance() { return engine().extension<GradOrigins>(); }
  explicit GradOrigins(Engine& e) : engine_(e) { engine_.realized().set_listener(this); }
  ~GradOrigins() override { engine_.realized().set_listener(nullptr); }
  GradOrigins(const GradOrigins&) = delete;
  GradOrigins& operator=(const GradOrigins&) = delete;

  void on_read(const UOpRef& expr, const UOpRef& view) override {
    if (without_history_depth == 0) note(expr, view);
  }
  void before_release() override { purge(); }

  // Set on a thread while a detail::TransientAutograd lives there: the views noted, to forget.
  static inline thread_local std::vector<std::weak_ptr<const UOp>>* noted_here = nullptr;

  void note(const UOpRef& expr, const UOpRef& view) {
    if (noted_here) noted_here->push_back(view);
    LeafNodes current = current_leaves();
    std::lock_guard lock(mutex_);
    purge(current);
    if (current.set.empty()) return; // nothing is differentiable: the common case in inference
    std::vector<std::weak_ptr<const UOp>> leaves =
        current.hold.size() <= 64 ? leaves_below_memo(expr, current) : leaves_below(expr, current);
    if (leaves.empty()) return;
    if (clean_.count(view.get())) { // it reaches leaves now (a view seen unrecorded)
      clean_.clear();
      ++epoch_;
    }
    if (map_.count(view.get()) || memo_.count(view.get())) ++epoch_; // its leaves change
    map_[view.get()] = Entry{view, expr, std::move(leaves)};
    ++version_;
    ++recorded_;
  }

  // A leaf may now be a node that graphs seen before contain (requires_grad_, assign).
  void leaves_changed() {
    std::lock_guard lock(mutex_);
    clean_.clear();
    ++epoch_;
  }

  std::size_t recorded() {
    std::lock_guard lock(mutex_);
    return recorded_;
  }

  // Counts the changes of the recorded views: a snapshot() stays valid while it is the same.
  uint64_t version() {
    std::lock_guard lock(mutex_);
    return version_;
  }

  // The recorded views that are alive and the expressions they were computed from, sorted by the
  // view's address (Unrealize looks every node of a graph up: one lock per walk, not per node).
  std::vector<std::pair<UOpRef, UOpRef>> snapshot() {
    std::lock_guard lock(mutex_);
    std::vector<std::pair<UOpRef, UOpRef>> out;
    out.reserve(map_.size());
    for (const auto& [raw, e] : map_)
      if (UOpRef view = e.view.lock(); view && view.get() == raw) out.emplace_back(std::move(view), e.expr);
    std::sort(out.begin(), out.end(),
              [](const auto& a, const auto& b) { return a.first.get() < b.first.get(); });
    return out;
  }

  void purge() {
    {
      std::lock_guard lock(mutex_);
      if (map_.empty()) return; // nothing recorded (no requires_grad tensor was read): no leaf walk
    }
    LeafNodes current = current_leaves();
    std::lock_guard lock(mutex_);
    purge(current);
  }

  // Drops the entries of these views (those still recorded for them).
  void forget(const std::vector<std::weak_ptr<const UOp>>& views) {
    std::lock_guard lock(mutex_);
    for (const auto& w : views)
      if (auto view = w.lock())
        if (find(view)) {
          map_.erase(view.get());
          ++epoch_;
          ++version_;
        }
  }

private:
  struct Entry {
    std::weak_ptr<const UOp> view;
    UOpRef expr;
    std::vector<std::weak_ptr<const UOp>> leaves; // current leaves expr reached when recorded
  };

  // The current leaves below root (root itself excluded: a leaf's own expression is not
  // differentiated through), also through recorded views. Subgraphs known to reach none are
  // skipped: the tensors realized together (parameters, optimizer state) share most of one graph.
  std::vector<std::weak_ptr<const UOp>> leaves_below(const UOpRef& root, const LeafNodes& current) {
    if (clean_.size() > (size_t(1) << 18)) clean_.clear(); // bounded: entries of dead nodes pile up
    std::vector<std::weak_ptr<const UOp>> found;
    std::unordered_set<const UOp*> found_set;
    std::unordered_map<const UOp*, bool> reaches; // finished nodes: does the node reach a leaf?
    std::vector<std::pair<const UOpRef*, bool>> stack{{&root, false}};
    while (!stack.empty()) {
      auto [ref, expanded] = stack.back();
      stack.pop_back();
      const UOpRef& u = *ref;
      if (!expanded) {
        if (reaches.count(u.get())) continue;
        if (auto it = clean_.find(u.get()); it != clean_.end() && !it->second.expired()) {
          reaches.emplace(u.get(), false);
          continue;
        }
        stack.push_back({ref, true});
        for (const auto& s : u->src())
          if (!reaches.count(s.get())) stack.push_back({&s, false});
        continue;
      }
      auto add = [&](const UOpRef& leaf) {
        if (leaf != root && found_set.insert(leaf.get()).second) found.push_back(leaf);
      };
      bool r = current.set.count(u.get()) != 0;
      if (r) add(u);
      if (const Entry* e = find(u))
        for (const auto& w : e->leaves)
          if (auto leaf = w.lock(); leaf && current.set.count(leaf.get())) {
            add(leaf);
            r = true;
          }
      for (const auto& s : u->src()) r |= reaches.at(s.get());
      reaches[u.get()] = r;
      if (!r) clean_[u.get()] = u;
    }
    return found;
  }

  // leaves_below for up to 64 current leaves: each node's leaves as a bit mask, memoized across
  // calls while the current leaves and the recorded views stay the same. The targets of one
  // realize (a step's gradients, the optimizer's updates) share most of their graph, which the
  // plain walk would visit once per target. Nodes are held weakly: an
  // expired entry is computed again, so a new node at a dead one's address is never confused.
  std::vector<std::weak_ptr<const UOp>> leaves_below_memo(const UOpRef& root, const LeafNodes& current) {
    if (!memo_matches(current)) {
      memo_.clear();
      memo_leaves_.clear();
      memo_index_.clear();
      for (const auto& l : current.hold)
        if (memo_index_.emplace(l.get(), int(memo_leaves_.size())).second) memo_leaves_.push_back(l);
      memo_epoch_ = epoch_;
    }
    if (memo_.size() > (size_t(1) << 18)) memo_.clear(); // bounded, like clean_
    if (clean_.size() > (size_t(1) << 18)) clean_.clear();
    auto bit = [&](const UOp* u) -> uint64_t {
      auto it = memo_index_.find(u);
      return it == memo_index_.end() ? 0 : uint64_t(1) << it->second;
    };
    auto known = [&](const UOp* u) -> const uint64_t* {
      auto it = memo_.find(u);
      return it != memo_.end() && !it->second.first.expired() ? &it->second.second : nullptr;
    };
    std::vector<std::pair<const UOpRef*, bool>> stack{{&root, false}};
    while (!stack.empty()) {
      auto [ref, expanded] = stack.back();
      stack.pop_back();
      const UOpRef& u = *ref;
      if (known(u.get())) continue;
      if (!expanded) {
        if (auto it = clean_.find(u.get()); it != clean_.end() && !it->second.expired()) {
          memo_[u.get()] = {u, 0};
          continue;
        }
        stack.push_back({ref, true});
        for (const auto& s : u->src())
          if (!known(s.get())) stack.push_back({&s, false});
        continue;
      }
      uint64_t m = bit(u.get());
      if (const Entry* e = find(u))
        for (const auto& w : e->leaves)
          if (auto leaf = w.lock()) m |= bit(leaf.get());
      for (const auto& s : u->src()) m |= *known(s.get());
      memo_[u.get()] = {u, m};
      if (!m) clean_[u.get()] = u;
    }
    const uint64_t m = *known(root.get()) & ~bit(root.get()); // root itself excluded
    std::vector<std::weak_ptr<const UOp>> found;
    for (size_t i = 0; i < memo_leaves_.size(); ++i)
      if (m >> i & 1) found.push_back(memo_leaves_[i]);
    return found;
  }

  // Whether the memo was built for these current leaves (the same nodes, still alive) and no
  // recorded view changed since.
  bool memo_matches(const LeafNodes& current) const {
    if (memo_epoch_ != epoch_ || memo_index_.empty()) return false;
    size_t distinct = 0;
    for (const auto& l : current.hold) {
      auto it = memo_index_.find(l.get());
      if (it == memo_index_.end() || memo_leaves_[size_t(it->second)].expired()) return false;
      distinct += it->second == int(distinct); // first occurrences come in the memo's order
    }
    return distinct == memo_leaves_.size();
  }

  const Entry* find(const UOpRef& view) const {
    auto it = map_.find(view.get());
    return it != map_.end() && it->second.view.lock() == view ? &it->second : nullptr;
  }

  void purge(const LeafNodes& current) {
    const size_t before = map_.size();
    std::erase_if(map_, [&](const auto& kv) {
      if (kv.second.view.expired()) return true;
      for (const auto& w : kv.second.leaves)
        if (auto leaf = w.lock(); leaf && current.set.count(leaf.get())) return false;
      return true;
    });
    if (map_.size() != before) { // a recorded view's leaves no longer count
      ++epoch_;
      ++version_;
    }
  }

  Engine& engine_;
  std::mutex mutex_;
  std::unordered_map<const UOp*, Entry> map_;
  // Nodes known to reach no current leaf (held weakly); valid until the leaves change.
  std::unordered_map<const UOp*, std::weak_ptr<const UOp>> clean_;
  // leaves_below_memo's state: each node's leaf mask (held weakly) over memo_leaves_, valid while
  // epoch_ (bumped when a recorded view is dropped or changes, or the leaves change) is memo_epoch_.
  std::unordered_map<const UOp*, std::pair<std::weak_ptr<const UOp>, uint64_t>> memo_;
  std::vector<std::weak_ptr<const UOp>> memo_leaves_;
  std::unordered_map<const UOp*, int> memo_index_;
  uint64_t epoch_ = 0, memo_epoch_ = 0;
  uint64_t version_ = 0;     // bumped whenever map_ changes (snapshot())
  std::size_t recorded_ = 0; // views recorded, ever (tests: detail::views_recorded)
};

// The graph autograd differentiates: every recorded realized view replaced by the expression it
// was computed from (recursively: that expression may hold views read earlier). Memoized, so a
// node shared by several roots maps to one node. The recorded views are read once per call (a
// snapshot, taken again when they changed: a rule's read may record one), not under a lock per
// node, and the memo is a flat map.
class Unrealize {
public:
  UOpRef operator()(const UOpRef& root) {
    if (const uint64_t v = GradOrigins::instance().version(); !views_ || v != version_) {
      views_ = GradOrigins::instance().snapshot();
      version_ = v;
    }
    if (views_->empty()) return root;
    if (const UOpRef* known = memo_.find(root.get())) return *known;
    for (const auto& u : toposort(root)) {
      if (memo_.find(u.get())) continue;
      UOpRef out;
      if (const UOpRef* expr = expression(u.get())) {
        UOpRef e = *expr; // the recursion may take a new snapshot
        out = (*this)(e);
      } else {
        out = with_mapped_sources(u, memo_);
      }
      memo_.emplace(u.get(), std::move(out));
      keep_.push_back(u);
    }
    return *memo_.find(root.get());
  }

private:
  const UOpRef* expression(const UOp* u) const {
    auto it = std::lower_bound(views_->begin(), views_->end(), u,
                               [](const auto& entry, const UOp* p) { return entry.first.get() < p; });
    return it != views_->end() && it->first.get() == u ? &it->second : nullptr;
  }
  std::optional<std::vector<std::pair<UOpRef, UOpRef>>> views_; // GradOrigins::snapshot()
  uint64_t version_ = 0;
  NodeMap memo_;
  std::vector<UOpRef> keep_; // memo keys are raw pointers
};

// The arg of a NOOP that carries a custom gradient; identity-compared, so each is its own node.
// Its kind (Tensor::with_custom_gradient) lets the gradient cache key it by structure.
class CustomGradArg : public OpaqueArg {
public:
  CustomGradArg(Tensor::VjpFn fn, std::string kind) : fn_(std::move(fn)), kind_(std::move(kind)) {}
  std::size_t hash() const override { return std::hash<const void*>{}(this); }
  bool equals(const OpaqueArg& other) const override { return this == &other; }
  std::string str() const override { return "custom_gradient"; }
  std::string_view structural_kind() const override { return kind_; }
  const Tensor::VjpFn& fn() const { return fn_; }

private:
  Tensor::VjpFn fn_;
  std::string kind_;
};

const CustomGradArg* custom_grad(const UOpRef& u) {
  if (u->op() != Ops::NOOP) return nullptr;
  auto* opaque = u->arg_if<OpaqueArgRef>();
  return opaque ? dynamic_cast<const CustomGradArg*>(opaque->get()) : nullptr;
}

using Grads = std::vector<std::optional<Tensor>>;

Axes axes_of(const std::vector<int64_t>& v) { return Axes(v.begin(), v.end()); }

// The gradient of each source of u, given the gradient g of u.
// `stored` maps forward nodes to the same values with what earlier realizes stored substituted
// (gradient()): the rules read those, so the gradient graph is built on the stored values.
Grads rule(const UOpRef& u, const Tensor& g, ShapeMap& shapes, const std::string& device,
           const NodeMap& stored) {
  auto T = [&](const UOpRef& x) {
    const UOpRef* value = stored.find(x.get());
    return Tensor(value ? *value : x, shapes(x), device);
  };
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
    // The share of each tied maximum is divided once per output, not once per input element:
    // hit is 0 or 1, so the result is the same bit for bit. The count of maxima is stored by its
    // own kernel: fused into g's, it made a second reduce there, recomputed x per output lane
    // (gathers), and kept a convolution's input gradient from its register tile (beautiful_mnist's
    // conv3 dX over the pool: 8.4 ms, 2x its FLOPs' worth).
    Tensor hit = x.eq(out).cast(g.dtype());
    return {hit * (g / hit.sum(axes_of(r.axes), true).contiguous()).expand(in)};
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

// Whether every opaque arg in a forward graph (other than a buffer's) has a structural kind,
// so the graph can key the gradient cache: a custom gradient without one runs every time.
bool opaque_args_have_kinds(const std::vector<UOpRef>& order) {
  return std::all_of(order.begin(), order.end(), [](const UOpRef& u) {
    const OpaqueArgRef* o = u->op() == Ops::BUFFER ? nullptr : u->arg_if<OpaqueArgRef>();
    return !o || !(*o)->structural_kind().empty();
  });
}

// TG_GRADIENT_CACHE=2: a rebuilt gradient graph must be the very nodes the rules build.
void check_cached_gradients(const std::vector<Tensor>& cached, const std::vector<Tensor>& by_rules) {
  for (size_t i = 0; i < cached.size(); ++i)
    if (cached[i].uop() != by_rules[i].uop() || cached[i].shape() != by_rules[i].shape() ||
        cached[i].device() != by_rules[i].device())
      throw std::logic_error("gradient cache (TG_GRADIENT_CACHE=2): gradient " + std::to_string(i) + " of " +
                             std::to_string(cached.size()) + " rebuilt as " + dims_str(cached[i].shape()) +
                             " on " + cached[i].device() + " differs from the rules' " +
                             dims_str(by_rules[i].shape()) + " on " + by_rules[i].device());
}

} // namespace

Tensor Tensor::with_custom_gradient(const Tensor& value, VjpFn vjp, std::string kind) {
  auto arg = std::make_shared<CustomGradArg>(std::move(vjp), std::move(kind));
  return value.with(UOp::make(Ops::NOOP, value.dtype(), {value.uop()}, Arg{OpaqueArgRef(arg)}),
                    value.shape());
}

Tensor& Tensor::requires_grad_(bool enable) {
  if (enable && !dtype().is_float())
    throw TensorError("requires_grad needs a float tensor, got " + dtype().name());
  s_->requires_grad = enable;
  if (enable) GradRegistry::instance().add(s_);
  if (enable) GradOrigins::instance().leaves_changed();
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
  if (AssignObserver* o = assign_observer()) o->on_assign(*this); // a JIT capture records it as state
  s_->uop = value.dtype() == dtype() ? value.uop() : value.cast(dtype()).uop();
  s_->lazy.reset();        // a new value: graphs of the old one no longer lead to this tensor
  s_->layout_copy.reset(); // a copy of the old value: its memory goes back
  s_->layout_key.clear();
  if (s_->requires_grad) GradOrigins::instance().leaves_changed();
  return *this;
}

Tensor::NoGrad::NoGrad() { ++no_grad_depth; }
Tensor::NoGrad::~NoGrad() { --no_grad_depth; }

std::vector<Tensor> Tensor::gradient(const std::vector<Tensor>& targets, std::optional<Tensor> seed) const {
  if (no_grad_depth > 0) throw TensorError("gradient()/backward() called inside a Tensor::NoGrad scope");
  const bool default_seed = !seed;
  if (!seed) {
    if (numel() != 1)
      throw TensorError("gradient of a non-scalar tensor " + dims_str(shape()) +
                        " needs an explicit seed gradient");
    seed = ones_like();
  } else if (seed->shape() != shape()) {
    throw TensorError("seed gradient shape " + dims_str(seed->shape()) + " differs from " +
                      dims_str(shape()));
  }
  GradOrigins::instance().purge();
  Unrealize unrealize;
  // A tensor read after a graph was built from it appears there as its old expression; one read
  // before appears as its stored view (replaced by its expression when that reaches a leaf).
  auto nodes_of = [&](const Tensor& t) {
    std::vector<UOpRef> out{unrealize(t.uop())};
    if (auto lazy = t.s_->lazy.lock())
      if (UOpRef n = unrealize(lazy); n != out[0]) out.push_back(n);
    return out;
  };
  const UOpRef root = unrealize(uop());
  std::vector<UOpRef> order = toposort(root);
  std::vector<std::vector<UOpRef>> target_nodes;
  for (const auto& t : targets) target_nodes.push_back(nodes_of(t));
  // The forward values the rules read, with the intermediates an earlier realize stored (the loss
  // realized first: Tensor::backward) substituted, in one walk over the forward graph: the
  // gradients read them instead of recomputing the forward pass. (Substituting into the finished
  // gradient graph instead would rebuild nearly all of it: a third of gradient()'s time.)
  NodeMap stored;
  UOpRef forward, values;
  if (!order.empty()) {
    forward = UOp::sink(order);
    values = engine().realized().substitute(forward, device());
    if (values != forward)
      for (size_t i = 0; i < order.size(); ++i)
        if (values->src(i) != order[i]) stored.emplace(order[i].get(), values->src(i));
  }
  // What the gradients did not read through `stored` (custom gradients build on their own captured
  // tensors, and the forward walk does not see a value stored for an expression only the
  // gradients contain) is substituted in one walk over all of them, which share most of their
  // graph; where they already read stored values it finds nothing to rebuild.
  auto read_stored = [&](std::vector<Tensor> out) {
    std::vector<UOpRef> roots;
    for (const auto& g : out) roots.push_back(g.uop());
    UOpRef read = engine().realized().substitute(UOp::sink(roots), device());
    for (size_t i = 0; i < out.size(); ++i) out[i] = out[i].with(read->src(i), out[i].shape());
    return out;
  };
  // The gradients by the rules, applied in reverse topological order from the root.
  auto by_rules = [&]() {
    // only nodes that lead to a target need a gradient
    NodeSet targeted, needed;
    for (const auto& nodes : target_nodes)
      for (const auto& n : nodes) targeted.insert(n.get());
    for (const auto& u : order) {
      // A DETACH passes no gradient to its source, but is itself a leaf when targeted
      // (x.detach().requires_grad_()).
      bool need = targeted.count(u.get()) != 0;
      for (const auto& src : u->src()) need |= needed.count(src.get()) != 0 && u->op() != Ops::DETACH;
      if (need) needed.insert(u.get());
    }
    ShapeMap shapes;
    std::unordered_map<const UOp*, Tensor> grads;
    auto accumulate = [&](const UOp* node, const Tensor& g) {
      auto existing = grads.find(node);
      if (existing == grads.end())
        grads.emplace(node, g);
      else
        existing->second = existing->second + g;
    };
    grads.emplace(root.get(), seed->cast(dtype().is_float() ? dtype() : dtypes::default_float));
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const UOpRef& u = *it;
      auto g = grads.find(u.get());
      if (g == grads.end() || !needed.count(u.get())) continue;
      if (const CustomGradArg* custom = custom_grad(u)) {
        for (auto& [input, input_grad] : custom->fn()(g->second)) {
          // the input's node inside this custom op's graph (it may also appear elsewhere in another form)
          std::vector<UOpRef> nodes = nodes_of(input);
          std::erase_if(nodes, [&](const UOpRef& n) { return !needed.count(n.get()); });
          if (nodes.size() > 1) {
            std::vector<UOpRef> inside = toposort(u);
            std::erase_if(nodes, [&](const UOpRef& n) {
              return std::find(inside.begin(), inside.end(), n) == inside.end();
            });
          }
          if (!nodes.empty()) accumulate(nodes.front().get(), input_grad);
        }
        continue;
      }
      Grads src_grads = rule(u, g->second, shapes, device(), stored);
      for (size_t i = 0; i < u->src().size() && i < src_grads.size(); ++i) {
        const UOpRef& src = u->src(i);
        if (src_grads[i] && needed.count(src.get())) accumulate(src.get(), *src_grads[i]);
      }
    }
    std::vector<Tensor> out;
    for (size_t i = 0; i < targets.size(); ++i) {
      const Tensor& t = targets[i];
      std::optional<Tensor> sum;
      for (const auto& n : target_nodes[i])
        if (auto g = grads.find(n.get()); g != grads.end()) sum = sum ? *sum + g->second : g->second;
      out.push_back(sum ? sum->cast(t.dtype()) : t.zeros_like());
    }
    return read_stored(std::move(out));
  };
  // A step that builds the forward graph of an earlier one gets that step's gradient graph
  // rebuilt over its own nodes (kernel/tensor/gradient_cache.hpp). The key is the forward graph
  // with its stored values, and what else the rules read: the targets' nodes in it, their and
  // the root's shapes and dtypes, the device, the settings Tensor ops read, and which nodes of
  // it have a stored value.
  std::optional<Structure> context;
  std::optional<detail::GradientQuery> query;
  const int cache_mode = config().gradient_cache;
  if (cache_mode > 0 && default_seed && forward && opaque_args_have_kinds(order)) {
    context.emplace(values != forward ? std::vector<UOpRef>{forward, values} : std::vector<UOpRef>{forward},
                    OpaqueKeying::Kind);
    std::vector<int64_t> asked{*context->find(root.get()), int64_t(dtype().scalar), config().noopt,
                               config().pack};
    asked.insert(asked.end(), shape().begin(), shape().end());
    for (size_t i = 0; i < targets.size(); ++i) {
      asked.push_back(-2); // a separator: the lists below vary in length
      asked.push_back(int64_t(targets[i].dtype().scalar));
      asked.insert(asked.end(), targets[i].shape().begin(), targets[i].shape().end());
      asked.push_back(-3);
      for (const auto& n : target_nodes[i]) asked.push_back(context->find(n.get()).value_or(-1));
    }
    // The walk after the rules replaces nodes with a stored value that the forward walk did not
    // reach (below a node it rebuilt on a stored input): which ones have one is asked too.
    asked.push_back(-4);
    for (int32_t i : engine().realized().stored_among(context->order(), device())) asked.push_back(i);
    query.emplace(detail::GradientQuery{*context, std::move(asked), device()});
    if (auto cached = detail::cached_gradients(*query)) {
      // The key does not show which of the gradients' own expressions were stored since
      // (grad_after_read_test's "everything read"): the same walk as after the rules.
      std::vector<Tensor> out = read_stored(std::move(*cached));
      if (config().debug >= 1)
        std::cout << "gradient: " << out.size() << (out.size() == 1 ? " gradient" : " gradients")
                  << " rebuilt from the gradient cache\n";
      if (cache_mode == 2) check_cached_gradients(out, by_rules());
      return out;
    }
  }
  std::vector<Tensor> out = by_rules();
  if (query) detail::remember_gradients(*query, out);
  return out;
}

bool detail::realize_early(const std::string& device) {
  // A step the JIT captures is replayed as one batch, where realizing in parts gains nothing.
  if (CaptureScope::active()) return false;
  const int mode = config().realize_early;
  if (mode >= 0) return mode == 1;
  return (open_device(device).device->properties().features & TG_FEATURE_ASYNC) != 0;
}

void Tensor::backward(std::optional<Tensor> seed) const {
  // On a device that queues launches the forward pass's kernels start now and run while the host
  // builds the gradient graph (and the optimizer's), instead of the device idling until the step's
  // one realize (TG_REALIZE_EARLY, docs/cuda.md, "Environment variables"). The gradient then reads
  // the stored forward values, as for a value read before backward(), so what it computes is
  // unchanged.
  if (detail::realize_early(device())) {
    Tensor root = *this; // shares this tensor's state: it holds the stored value afterwards
    root.realize();
  }
  GradOrigins::instance().purge();
  Unrealize unrealize;
  NodeSet in_graph;
  for (const auto& n : toposort(unrealize(uop()))) in_graph.insert(n.get());
  std::vector<Tensor> leaves;
  for (const auto& state : GradRegistry::instance().live()) {
    Tensor t(state);
    bool found = in_graph.count(unrealize(t.uop()).get()) != 0;
    if (auto lazy = state->lazy.lock()) found |= in_graph.count(unrealize(lazy).get()) != 0;
    if (found) leaves.push_back(t);
  }
  if (leaves.empty()) return;
  std::vector<Tensor> grads = gradient(leaves, seed);
  for (size_t i = 0; i < leaves.size(); ++i) {
    auto old = leaves[i].grad();
    leaves[i].set_grad(old ? *old + grads[i] : grads[i]);
  }
}

bool detail::reaches_grad_leaf(const std::vector<Tensor>& roots) {
  if (no_grad_depth > 0) return false;
  Unrealize unrealize;
  std::unordered_set<const UOp*> seen;
  std::vector<UOpRef> stack;
  for (const auto& r : roots) stack.push_back(unrealize(r.uop()));
  while (!stack.empty()) { // the graph above DETACH: no gradient crosses it
    UOpRef u = std::move(stack.back());
    stack.pop_back();
    if (!seen.insert(u.get()).second || u->op() == Ops::DETACH) continue;
    for (const auto& s : u->src()) stack.push_back(s);
  }
  for (const auto& state : GradRegistry::instance().live()) {
    Tensor t(state);
    if (seen.count(unrealize(t.uop()).get())) return true;
    if (auto lazy = state->lazy.lock(); lazy && seen.count(unrealize(lazy).get())) return true;
  }
  return false;
}

detail::TransientAutograd::TransientAutograd() : outer_(GradOrigins::noted_here) {
  for (const auto& s : GradRegistry::instance().live()) grads_before_.push_back({s, s->grad});
  GradOrigins::noted_here = &noted_;
}

detail::TransientAutograd::~TransientAutograd() {
  GradOrigins::noted_here = outer_;
  for (const auto& s : GradRegistry::instance().live()) {
    auto before = std::find_if(grads_before_.begin(), grads_before_.end(),
                               [&](const auto& b) { return b.first.lock() == s; });
    const bool same = before != grads_before_.end() && !before->second.owner_before(s->grad) &&
                      !std::weak_ptr<Tensor>(s->grad).owner_before(before->second);
    if (s->grad && !same) s->grad.reset();
  }
  GradOrigins::instance().forget(noted_);
  if (outer_) outer_->insert(outer_->end(), noted_.begin(), noted_.end());
}

detail::WithoutHistory::WithoutHistory() { ++without_history_depth; }
detail::WithoutHistory::~WithoutHistory() { --without_history_depth; }

bool detail::updates_every_leaf(const std::vector<Tensor>& updated) {
  for (const auto& s : GradRegistry::instance().live()) {
    const Tensor leaf(s);
    if (std::none_of(updated.begin(), updated.end(), [&](const Tensor& u) { return u.is(leaf); }))
      return false;
  }
  return true;
}

std::size_t detail::views_recorded() { return GradOrigins::instance().recorded(); }

} // namespace tg
