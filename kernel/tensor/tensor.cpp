#include "kernel/tensor/tensor.hpp"

#include "kernel/tensor/realized.hpp"

#include "kernel/runtime/devices.hpp"
#include "kernel/runtime/realize.hpp"
#include "kernel/runtime/schedule_cache.hpp"
#include "kernel/runtime/viz_recorder.hpp"
#include "kernel/schedule/buffer.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <mutex>
#include <unordered_map>

namespace tg {

namespace {

// What each computed node became (a view of its BUFFER). Keyed by the lazy node, held weakly so
// an entry dies with the last reference to the expression. Who owns the stored result depends on
// who asked for it: an intermediate (a node the schedule chose to store, which graphs of later
// realizes or gradients may read) is owned by the cache, so it lives as long as its expression; a
// target is owned by the tensors that realized it (they hold its view) and the cache only refers
// to it, so it is freed with them even while something else keeps its expression: the kernel
// cache's structure keys, autograd's record of a read value (which holds the expression while the
// view lives), or the view itself when the target was already a view (it contains its own key).
// A cache, guarded by a mutex.
class RealizedCache {
public:
  static RealizedCache& instance() {
    static RealizedCache& cache = *new RealizedCache; // never destroyed: see open_devices()
    return cache;
  }
  // The stored result of `lazy` on `device`. A constant-only expression has no device in its
  // nodes, so the same node may be realized on several devices: only a result there counts.
  std::optional<UOpRef> find(const UOpRef& lazy, const std::string& device) {
    if (!lazy->keyed()) return std::nullopt; // never inserted: no lock
    std::lock_guard lock(mutex_);
    auto it = map_.find(lazy.get());
    if (it == map_.end()) return std::nullopt;
    UOpRef view = it->second.get();
    if (!view) {
      owned_ -= int64_t(it->second.owned != nullptr);
      map_.erase(it);
      return std::nullopt;
    }
    if (!on_device(view, device)) return std::nullopt;
    return view;
  }
  // The indices of `nodes` that have a stored result on `device` (one lock for all).
  std::vector<int32_t> stored_among(const std::vector<UOpRef>& nodes, const std::string& device) {
    std::lock_guard lock(mutex_);
    std::vector<int32_t> out;
    if (map_.empty()) return out;
    for (size_t i = 0; i < nodes.size(); ++i)
      if (auto it = nodes[i]->keyed() ? map_.find(nodes[i].get()) : map_.end(); it != map_.end())
        if (UOpRef view = it->second.get(); view && on_device(view, device)) out.push_back(int32_t(i));
    return out;
  }
  // `owned`: the cache keeps the result alive (an intermediate); else only the tensors do.
  void insert(const UOpRef& lazy, const UOpRef& realized, bool owned) {
    std::lock_guard lock(mutex_);
    lazy->mark_keyed();
    Entry& e = map_[lazy.get()];
    owned_ += int64_t(owned) - int64_t(e.owned != nullptr);
    e = Entry{lazy, realized, owned ? realized : nullptr};
    ++generation_; // graphs substituted before may contain lazy
  }
  // Whether the cache owns a stored intermediate (an expression about to be realized may then
  // contain it). Read without the lock: a stale answer only skips or adds one substitute walk.
  bool holds_intermediates() const { return owned_.load(std::memory_order_relaxed) > 0; }
  // root with every cached node replaced by its realized view on `device` (one lock for the
  // whole walk). The walk does not descend below a node it replaces (what the stored value was
  // computed from is read only where another path reaches it), nor below a node that an earlier
  // walk returned while nothing was stored since (a gradient substituted by Tensor::gradient and
  // then realized). A walk of the whole graph would cover the forward pass below the stored loss,
  // and the gradients twice.
  UOpRef substitute(const UOpRef& root, const std::string& device) {
    std::lock_guard lock(mutex_);
    if (map_.empty()) return root;
    const bool settled_valid = settled_generation_ == generation_ && settled_device_ == device;
    detail::NodeMap out;
    // Sets out[u] and returns true when u needs no walk below it.
    auto resolve = [&](const UOpRef& u) {
      if (auto it = u->keyed() ? map_.find(u.get()) : map_.end(); it != map_.end())
        if (UOpRef view = it->second.get(); view && on_device(view, device)) {
          out.emplace(u.get(), std::move(view));
          return true;
        }
      if (settled_valid)
        if (auto it = settled_.find(u.get()); it != settled_.end() && it->second.lock() == u) {
          out.emplace(u.get(), u);
          return true;
        }
      return false;
    };
    std::vector<std::pair<const UOpRef*, size_t>> stack; // post-order; a DAG, so no node twice
    if (!resolve(root)) stack.push_back({&root, 0});
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      const UOpRef& u = *node;
      if (next < u->src().size()) {
        const UOpRef& s = u->src(next++);
        if (!out.find(s.get()) && !resolve(s)) stack.push_back({&s, 0});
        continue;
      }
      bool changed = false; // most nodes keep their sources: no vector for them
      for (const auto& s : u->src()) changed |= *out.find(s.get()) != s;
      if (changed) {
        std::vector<UOpRef> src;
        src.reserve(u->src().size());
        for (const auto& s : u->src()) src.push_back(*out.find(s.get()));
        out.emplace(u.get(), replace_src(u, std::move(src)));
      } else {
        out.emplace(u.get(), u);
      }
      stack.pop_back();
    }
    UOpRef result = *out.find(root.get());
    if (!settled_valid || settled_.size() > 4096) { // bounded: entries of dead nodes pile up
      settled_.clear();
      settled_generation_ = generation_;
      settled_device_ = device;
    }
    settled_.insert_or_assign(result.get(), result);
    if (result->op() == Ops::SINK)
      for (const auto& s : result->src()) settled_.insert_or_assign(s.get(), s);
    return result;
  }
  // Drops entries whose expression or result died, so owned buffers return to the allocator.
  // Called before each realize runs: the last step's intermediates are then reused by this one
  // instead of doubling peak memory.
  void purge() {
    std::lock_guard lock(mutex_);
    std::erase_if(map_, [this](const auto& kv) {
      if (kv.second.get()) return false;
      owned_ -= int64_t(kv.second.owned != nullptr);
      return true;
    });
  }

private:
  // Whether the BUFFER under a realized view (movement ops over one BUFFER) is on `device`; a
  // view without one (a constant) is on every device.
  static bool on_device(const UOpRef& view, const std::string& device) {
    const UOpRef* u = &view;
    while (!is_buffer(*u) && !(*u)->src().empty()) u = &(*u)->src(0);
    return !is_buffer(*u) || buffer_arg(*u).device() == device;
  }
  struct Entry {
    std::weak_ptr<const UOp> lazy;
    std::weak_ptr<const UOp> view;
    UOpRef owned; // the view, when the cache owns it

    // The view, while both the expression and the view live.
    UOpRef get() const { return lazy.expired() ? nullptr : view.lock(); }
  };
  std::mutex mutex_;
  std::unordered_map<const UOp*, Entry> map_;
  std::atomic<int64_t> owned_{0}; // entries that own their result (intermediates)
  // What substitute returned (the root, a SINK's sources) while no entry was inserted since
  // (generation_ counts the inserts): nothing below them is stored yet. Held weakly.
  uint64_t generation_ = 0, settled_generation_ = ~uint64_t(0);
  std::string settled_device_;
  std::unordered_map<const UOp*, std::weak_ptr<const UOp>> settled_;
};

// The whole, contiguous BUFFER behind a view, or nullptr if the view is anything else.
UOpRef contiguous_buffer(const UOpRef& u) {
  if (is_buffer(u)) return u;
  if (u->op() == Ops::RESHAPE && is_buffer(u->src(0))) return u->src(0);
  return nullptr;
}

} // namespace

UOpRef detail::stored_buffer(const UOpRef& view) { return contiguous_buffer(view); }

UOpRef detail::with_realized_values(const UOpRef& root, const std::string& device) {
  return RealizedCache::instance().substitute(root, device);
}

std::vector<int32_t> detail::stored_among(const std::vector<UOpRef>& nodes, const std::string& device) {
  return RealizedCache::instance().stored_among(nodes, device);
}

namespace {
thread_local bool release_after_launch = false; // detail::ReleaseAfterLaunch
} // namespace

detail::ReleaseAfterLaunch::ReleaseAfterLaunch() : outer_(release_after_launch) {
  release_after_launch = true;
}
detail::ReleaseAfterLaunch::~ReleaseAfterLaunch() { release_after_launch = outer_; }

void detail::release_dead_results() {
  detail::purge_realized_origins(); // first: it may release expressions the cache is keyed on
  RealizedCache::instance().purge();
}

Tensor::Tensor(UOpRef uop, Dims shape, std::string device) : s_(std::make_shared<TensorState>()) {
  s_->uop = std::move(uop);
  s_->shape = std::move(shape);
  s_->device = std::move(device);
  for (auto d : s_->shape)
    if (d < 0) throw TensorError("negative dimension in shape " + dims_str(s_->shape));
  // Element and byte counts are int64 everywhere (buffers, index math): refuse shapes whose
  // counts would wrap instead of computing on a wrong, small numel.
  int64_t numel = 1, bytes = 0;
  bool empty = std::find(s_->shape.begin(), s_->shape.end(), 0) != s_->shape.end();
  for (auto d : s_->shape)
    if (!empty && __builtin_mul_overflow(numel, d, &numel))
      throw TensorError("shape " + dims_str(s_->shape) +
                        " has more elements than int64 can count (2^63 - 1)");
  if (!empty && __builtin_mul_overflow(numel, int64_t(s_->uop->dtype().itemsize()), &bytes))
    throw TensorError("shape " + dims_str(s_->shape) + " of " + s_->uop->dtype().name() +
                      " needs more bytes than int64 can count (2^63 - 1)");
}

const UOpRef& Tensor::uop() const {
  if (auto r = RealizedCache::instance().find(s_->uop, s_->device); r && *r != s_->uop) {
    detail::note_realized(s_->uop, *r); // autograd still differentiates the expression
    s_->lazy = s_->uop;
    s_->uop = *r;
  }
  return s_->uop;
}

std::string Tensor::str() const {
  return "<Tensor " + dims_str(this->shape()) + " " + dtype().name() + " " + this->device() + ">";
}

void Tensor::realize_all(std::vector<Tensor*> tensors) {
  std::vector<UOpRef> targets;
  ScheduleOptions options;
  if (!tensors.empty()) options.device = tensors[0]->device();
  for (Tensor* t : tensors) {
    const UOpRef& u = t->uop();
    if (!contiguous_buffer(u) || !buffer_arg(contiguous_buffer(u)).storage_if_set()) targets.push_back(u);
  }
  if (targets.empty()) return;
  const bool release_after = release_after_launch;
  if (!release_after) detail::release_dead_results();
  // Values an earlier realize stored as intermediates are read, not recomputed: when backward()
  // realized the loss first (Tensor::backward), the step's last realize still contains forward
  // expressions (BatchNorm's running statistics) whose values that realize stored.
  std::vector<UOpRef> asked; // the targets as the tensors hold them, when substituted
  if (RealizedCache::instance().holds_intermediates()) {
    UOpRef root = targets.size() == 1 ? targets[0] : UOp::sink(targets);
    UOpRef stored = RealizedCache::instance().substitute(root, options.device);
    if (stored != root) {
      asked = targets;
      if (targets.size() == 1)
        targets[0] = stored;
      else
        targets = stored->src();
    }
  }
  if (viz::Recorder* viz = viz::recorder()) viz->begin_realize(targets);
  Schedule schedule = realize_schedule(targets, options); // replayed when the structure was seen
  for (const auto& lazy : schedule.keep_alive) // targets belong to their tensors, the rest to the cache
    RealizedCache::instance().insert(lazy, schedule.becomes.at(lazy.get()),
                                     std::find(targets.begin(), targets.end(), lazy) == targets.end());
  for (size_t i = 0; i < asked.size(); ++i) // the tensors look their result up by the node they hold
    if (asked[i] != targets[i])
      if (auto it = schedule.becomes.find(targets[i].get()); it != schedule.becomes.end())
        RealizedCache::instance().insert(asked[i], it->second, false);
  for (Tensor* t : tensors) (void)t->uop(); // pick up the realized views
  if (release_after) detail::release_dead_results();
}

Tensor& Tensor::realize() {
  realize_all({this});
  return *this;
}

std::vector<ScheduleItem> Tensor::schedule() const {
  const UOpRef& u = uop();
  if (is_buffer_view(u)) return {};
  ScheduleOptions options;
  options.device = this->device();
  return create_schedule({u}, options).items;
}

std::vector<std::byte> Tensor::to_bytes() const {
  Tensor t = *this;
  t.realize();
  UOpRef buffer = contiguous_buffer(t.uop());
  if (!buffer || buffer_arg(buffer).size() != numel()) { // a strided or partial view: copy it out first
    t = t.contiguous();
    t.realize();
    buffer = contiguous_buffer(t.uop());
  }
  std::vector<std::byte> out(size_t(numel()) * size_t(dtype().itemsize()));
  if (out.empty()) return out;
  storage_of(buffer).buffer().copy_to_host(out);
  return out;
}

Tensor Tensor::to(const std::string& device_name) const {
  std::string target = parse_device_name(device_name).canonical();
  if (target == this->device()) return *this;
  open_device(target); // fail now, with the plugin's reason, if the device cannot be used
  UOpRef copy = UOp::make(Ops::COPY, dtype(), {uop()}, target);
  return Tensor(copy, this->shape(), target);
}

Tensor Tensor::contiguous() const {
  return with(UOp::make(Ops::CONTIGUOUS, dtype(), {uop()}), this->shape());
}
Tensor Tensor::layout(const Axes& order) const {
  Tensor stored = permute(order).contiguous();
  Axes back(order.size());
  for (size_t i = 0; i < order.size(); ++i) back[size_t(axis(order[i]))] = int64_t(i);
  // Kept only over a stored value: over an expression the copy would also keep that expression's
  // whole graph alive. The expression, not what stored.uop() becomes once the copy is stored: the
  // realized-value cache keeps a result while its expression lives.
  if (contiguous_buffer(uop())) s_->layout_copy = stored.s_->uop;
  return stored.permute(back);
}
Tensor Tensor::detach() const { return with(UOp::make(Ops::DETACH, dtype(), {uop()}), this->shape()); }

void Tensor::check_element_dtype(std::string_view what, DType dt) {
  if (!is_element_dtype(dt))
    throw TensorError(std::string(what) + ": a tensor's dtype must be a scalar bool, int or float, not " +
                      dt.name());
}

// cast and bitcast build their message only on failure: every binary op casts both operands.
Tensor Tensor::cast(DType dt) const {
  if (!is_element_dtype(dt)) check_element_dtype("cast from " + dtype().name() + " to " + dt.name(), dt);
  if (dt == dtype()) return *this;
  return with(UOp::make(Ops::CAST, dt, {uop()}), this->shape());
}

Tensor Tensor::bitcast(DType dt) const {
  if (!is_element_dtype(dt)) check_element_dtype("bitcast from " + dtype().name() + " to " + dt.name(), dt);
  if (dt.itemsize() != dtype().itemsize())
    throw TensorError("bitcast from " + dtype().name() + " to " + dt.name() + ": item sizes differ");
  if (dt == dtype()) return *this;
  return with(UOp::make(Ops::BITCAST, dt, {uop()}), this->shape());
}

int64_t Tensor::axis(int64_t a, int64_t n) const {
  if (n < 0) n = ndim();
  int64_t r = a < 0 ? a + n : a;
  if (r < 0 || r >= n)
    throw TensorError("axis " + std::to_string(a) + " is out of range for a tensor of " + std::to_string(n) +
                      " dims, shape " + dims_str(this->shape()));
  return r;
}

Axes Tensor::axes_or_all(const Axes& axes) const {
  Axes out;
  if (axes.empty()) {
    for (int64_t i = 0; i < ndim(); ++i) out.push_back(i);
    return out;
  }
  for (auto a : axes) {
    int64_t r = axis(a);
    if (std::find(out.begin(), out.end(), r) != out.end())
      throw TensorError("axis " + std::to_string(a) + " repeated in the axis list");
    out.push_back(r);
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

template <class T> constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, bool>)
    return dtypes::bool_;
  else if constexpr (std::is_same_v<T, int8_t>)
    return dtypes::int8;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return dtypes::uint8;
  else if constexpr (std::is_same_v<T, int16_t>)
    return dtypes::int16;
  else if constexpr (std::is_same_v<T, uint16_t>)
    return dtypes::uint16;
  else if constexpr (std::is_same_v<T, int32_t>)
    return dtypes::int32;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return dtypes::uint32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return dtypes::int64;
  else if constexpr (std::is_same_v<T, uint64_t>)
    return dtypes::uint64;
  else if constexpr (std::is_same_v<T, float>)
    return dtypes::float32;
  else if constexpr (std::is_same_v<T, double>)
    return dtypes::float64;
  else
    static_assert(sizeof(T) == 0, "unsupported element type");
}

} // namespace

Tensor Tensor::from_bytes(std::span<const std::byte> bytes, Dims shape, DType dt, const std::string& device) {
  check_element_dtype("from_bytes", dt);
  std::string dev = device.empty() ? default_device() : parse_device_name(device).canonical();
  int64_t n = dims_prod(shape);
  for (auto d : shape)
    if (d < 0) throw TensorError("negative dimension in shape " + dims_str(shape));
  if (uint64_t(n) * uint64_t(dt.itemsize()) != bytes.size())
    throw TensorError("data of " + std::to_string(bytes.size()) + " bytes does not fill shape " +
                      dims_str(shape) + " of " + dt.name() + " (" + std::to_string(n * dt.itemsize()) +
                      " bytes)");
  UOpRef buffer = make_buffer(dev, dt, n);
  if (!bytes.empty())
    storage_of(buffer, true).buffer().copy_from_host(bytes);
  else
    storage_of(buffer, true);
  UOpRef view =
      shape.size() == 1 ? buffer : UOp::make(Ops::RESHAPE, dt, {buffer}, std::vector<int64_t>(shape));
  return Tensor(view, std::move(shape), dev);
}

template <class Elem>
Tensor Tensor::from_vector(std::span<const Elem> data, Dims shape, std::optional<DType> dtype,
                           const std::string& device) {
  if constexpr (std::is_same_v<Elem, bool>) {
    std::vector<uint8_t> bytes(data.begin(), data.end());
    Tensor t =
        from_bytes(std::as_bytes(std::span<const uint8_t>(bytes)), std::move(shape), dtypes::bool_, device);
    return dtype ? t.cast(*dtype) : t;
  } else {
    Tensor t = from_bytes(std::as_bytes(data), std::move(shape), dtype_of<Elem>(), device);
    return dtype ? t.cast(*dtype) : t;
  }
}

template <class Elem> std::vector<Elem> Tensor::to_vector() const {
  constexpr DType want = dtype_of<Elem>();
  Tensor t = dtype() == want ? *this : cast(want);
  std::vector<std::byte> bytes = t.to_bytes();
  std::vector<Elem> out(static_cast<size_t>(numel()));
  if constexpr (std::is_same_v<Elem, bool>) {
    for (size_t i = 0; i < out.size(); ++i) out[i] = bytes[i] != std::byte{0};
  } else {
    if (!bytes.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
  }
  return out;
}

template <class Elem> Elem Tensor::item() const {
  if (numel() != 1)
    throw TensorError("item() needs exactly one element, the tensor has shape " + dims_str(this->shape()));
  return to_vector<Elem>().at(0);
}

#define TG_TENSOR_INSTANTIATE(Elem)                                                                          \
  template Tensor Tensor::from_vector<Elem>(std::span<const Elem>, Dims, std::optional<DType>,               \
                                            const std::string&);                                             \
  template std::vector<Elem> Tensor::to_vector<Elem>() const;                                                \
  template Elem Tensor::item<Elem>() const;
TG_TENSOR_INSTANTIATE(bool)
TG_TENSOR_INSTANTIATE(int8_t)
TG_TENSOR_INSTANTIATE(uint8_t)
TG_TENSOR_INSTANTIATE(int16_t)
TG_TENSOR_INSTANTIATE(uint16_t)
TG_TENSOR_INSTANTIATE(int32_t)
TG_TENSOR_INSTANTIATE(uint32_t)
TG_TENSOR_INSTANTIATE(int64_t)
TG_TENSOR_INSTANTIATE(uint64_t)
TG_TENSOR_INSTANTIATE(float)
TG_TENSOR_INSTANTIATE(double)
#undef TG_TENSOR_INSTANTIATE

} // namespace tg
