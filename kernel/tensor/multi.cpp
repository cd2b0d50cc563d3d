#include "kernel/tensor/multi.hpp"

#include "kernel/tensor/multi_collective.hpp"

#include "kernel/runtime/devices.hpp"

#include <algorithm>
#include <map>
#include <numeric>

namespace tg {

namespace {

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

int64_t resolve_axis(const std::string& what, int64_t a, int64_t ndim) {
  int64_t r = a < 0 ? a + ndim : a;
  if (r < 0 || r >= ndim)
    throw MultiTensorError(what + ": axis " + std::to_string(a) + " is out of range for " +
                           std::to_string(ndim) + " dims");
  return r;
}

// Range i of n equal parts of [0, size) along `axis` of a tensor of `shape`.
std::vector<std::pair<int64_t, int64_t>> part(const Dims& shape, int64_t axis, size_t i, size_t n) {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (auto d : shape) ranges.emplace_back(0, d);
  const int64_t chunk = shape[size_t(axis)] / int64_t(n);
  ranges[size_t(axis)] = {int64_t(i) * chunk, int64_t(i + 1) * chunk};
  return ranges;
}

void check_same_devices(const std::string& what, const MultiTensor& a, const MultiTensor& b) {
  if (a.devices() != b.devices())
    throw MultiTensorError(what + ": operands on different devices (" + join(a.devices()) + " vs " +
                           join(b.devices()) + "); move one with to(devices) or shard(devices, axis)");
}

} // namespace

std::vector<std::string> check_devices(const std::vector<std::string>& devices) {
  if (devices.empty()) throw MultiTensorError("multi-device tensor: the device list is empty");
  std::vector<std::string> out;
  for (const auto& d : devices) {
    std::string name = parse_device_name(d).canonical();
    if (std::find(out.begin(), out.end(), name) != out.end())
      throw MultiTensorError("multi-device tensor: device " + name + " appears twice in " + join(devices));
    open_device(name); // fails now, with the plugin's reason, if the device cannot be used
    out.push_back(name);
  }
  return out;
}

// ---- construction ----

MultiTensor::MultiTensor(std::vector<Tensor> shards, std::optional<int64_t> axis)
    : s_(std::make_shared<State>()) {
  if (shards.empty()) throw MultiTensorError("MultiTensor: no shards");
  std::vector<std::string> devices;
  for (const auto& t : shards) devices.push_back(t.device());
  check_devices(devices);
  const Tensor& first = shards[0];
  for (const auto& t : shards)
    if (t.shape() != first.shape() || t.dtype() != first.dtype())
      throw MultiTensorError("MultiTensor: shard " + t.str() + " differs from shard " + first.str() +
                             " (shards must have one shape and dtype)");
  s_->shape = first.shape();
  if (axis) {
    *axis = resolve_axis("MultiTensor", *axis, first.ndim());
    s_->shape[size_t(*axis)] *= int64_t(shards.size());
  }
  s_->shards = std::move(shards);
  s_->axis = axis;
}

MultiTensor MultiTensor::shard(const Tensor& t, const std::vector<std::string>& devices, int64_t axis) {
  std::vector<std::string> names = check_devices(devices);
  const int64_t a = resolve_axis("shard", axis, t.ndim());
  const int64_t size = t.shape()[size_t(a)], n = int64_t(names.size());
  if (size % n != 0)
    throw MultiTensorError("shard: axis " + std::to_string(a) + " of " + t.str() + " has size " +
                           std::to_string(size) + ", not a multiple of the " + std::to_string(n) +
                           " devices " + join(names) + " (uneven shards are not supported)");
  std::vector<Tensor> parts;
  for (size_t i = 0; i < names.size(); ++i) parts.push_back(t.shrink(part(t.shape(), a, i, names.size())));
  return MultiTensor(detail::copy_to_devices(parts, names), a);
}

MultiTensor MultiTensor::replicate(const Tensor& t, const std::vector<std::string>& devices) {
  std::vector<std::string> names = check_devices(devices);
  return MultiTensor(detail::copy_to_devices(std::vector<Tensor>(names.size(), t), names), std::nullopt);
}

MultiTensor Tensor::shard(const std::vector<std::string>& devices, int64_t axis) const {
  return MultiTensor::shard(*this, devices, axis);
}
MultiTensor Tensor::to(const std::vector<std::string>& devices) const {
  return MultiTensor::replicate(*this, devices);
}

std::vector<std::string> MultiTensor::devices() const {
  std::vector<std::string> out;
  for (const auto& t : shards()) out.push_back(t.device());
  return out;
}

std::string MultiTensor::str() const {
  return "<MultiTensor " + dims_str(shape()) + " " + dtype().name() + " " +
         (axis() ? "axis " + std::to_string(*axis()) : std::string("replicated")) + " on " + join(devices()) +
         ">";
}

MultiTensor& MultiTensor::realize() {
  for (auto& t : s_->shards) t.realize();
  return *this;
}

Tensor MultiTensor::to(const std::string& device) const {
  const std::string name = parse_device_name(device).canonical();
  if (replicated()) {
    for (const auto& t : shards())
      if (t.device() == name) return t;
    return detail::copy_to_devices({shards()[0]}, {name})[0];
  }
  std::vector<Tensor> parts =
      detail::copy_to_devices(shards(), std::vector<std::string>(shards().size(), name));
  return Tensor::cat(parts, *axis());
}

// ---- per-shard work ----

MultiTensor MultiTensor::map(const std::function<Tensor(const Tensor&, size_t)>& fn,
                             std::optional<int64_t> axis) const {
  std::vector<Tensor> out;
  for (size_t i = 0; i < shards().size(); ++i) out.push_back(fn(shards()[i], i));
  return MultiTensor(std::move(out), axis);
}

#define TG_MULTI_UNARY(name, expr)                                                                           \
  MultiTensor MultiTensor::name() const {                                                                    \
    return map([](const Tensor& t, size_t) { return expr; }, axis());                                        \
  }
TG_MULTI_UNARY(neg, t.neg())
TG_MULTI_UNARY(exp, t.exp())
TG_MULTI_UNARY(log, t.log())
TG_MULTI_UNARY(relu, t.relu())
TG_MULTI_UNARY(sqrt, t.sqrt())
TG_MULTI_UNARY(square, t.square())
#undef TG_MULTI_UNARY

MultiTensor MultiTensor::cast(DType dt) const {
  return map([dt](const Tensor& t, size_t) { return t.cast(dt); }, axis());
}
MultiTensor MultiTensor::mul(double v) const {
  return map([v](const Tensor& t, size_t) { return t * v; }, axis());
}
MultiTensor MultiTensor::add(double v) const {
  return map([v](const Tensor& t, size_t) { return t + v; }, axis());
}

// ---- binary ----

MultiTensor MultiTensor::binary(const MultiTensor& o,
                                const std::function<Tensor(const Tensor&, const Tensor&)>& fn) const {
  check_same_devices("elementwise op", *this, o);
  const Dims out = broadcast_shape(shape(), o.shape());
  const int64_t nd = int64_t(out.size());
  auto out_axis = [&](const MultiTensor& m) -> std::optional<int64_t> {
    if (!m.axis()) return std::nullopt;
    return *m.axis() + nd - m.ndim();
  };
  std::optional<int64_t> ka = out_axis(*this), kb = out_axis(o);
  if (ka && kb && *ka != *kb)
    throw MultiTensorError("elementwise op: " + str() + " and " + o.str() +
                           " are sharded along different axes; make one replicated (gather()) first");
  const std::optional<int64_t> k = ka ? ka : kb;
  const size_t n = shards().size();
  // shard i of m as an operand: a replicated operand is sliced where it spans the shard axis
  auto operand = [&](const MultiTensor& m, size_t i) {
    const Tensor& t = m.shards()[i];
    if (!k || m.axis()) return t;
    const int64_t pos = *k - (nd - m.ndim());
    if (pos < 0 || m.shape()[size_t(pos)] == 1) return t;
    return t.shrink(part(t.shape(), pos, i, n));
  };
  std::vector<Tensor> result;
  for (size_t i = 0; i < n; ++i) result.push_back(fn(operand(*this, i), operand(o, i)));
  return MultiTensor(std::move(result), k);
}

MultiTensor MultiTensor::add(const MultiTensor& o) const {
  return binary(o, [](const Tensor& a, const Tensor& b) { return a + b; });
}
MultiTensor MultiTensor::sub(const MultiTensor& o) const {
  return binary(o, [](const Tensor& a, const Tensor& b) { return a - b; });
}
MultiTensor MultiTensor::mul(const MultiTensor& o) const {
  return binary(o, [](const Tensor& a, const Tensor& b) { return a * b; });
}
MultiTensor MultiTensor::div(const MultiTensor& o) const {
  return binary(o, [](const Tensor& a, const Tensor& b) { return a / b; });
}
MultiTensor MultiTensor::maximum(const MultiTensor& o) const {
  return binary(o, [](const Tensor& a, const Tensor& b) { return a.maximum(b); });
}

// ---- reductions ----

namespace {

Axes resolve_axes(const std::string& what, const Axes& axes, int64_t ndim) {
  Axes out;
  if (axes.empty())
    for (int64_t i = 0; i < ndim; ++i) out.push_back(i);
  for (auto a : axes) out.push_back(resolve_axis(what, a, ndim));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

MultiTensor reduce(const MultiTensor& x, const Axes& given, bool keepdim, bool is_max) {
  const Axes axes = resolve_axes(is_max ? "max" : "sum", given, x.ndim());
  auto local = [&](bool keep) {
    return [&axes, keep, is_max](const Tensor& t, size_t) {
      return is_max ? t.max(axes, keep) : t.sum(axes, keep);
    };
  };
  if (x.replicated()) return x.map(local(keepdim), std::nullopt);
  const int64_t k = *x.axis();
  if (std::find(axes.begin(), axes.end(), k) == axes.end()) {
    int64_t before = int64_t(std::count_if(axes.begin(), axes.end(), [k](int64_t a) { return a < k; }));
    return x.map(local(keepdim), keepdim ? k : k - before);
  }
  // over the shard axis: each device reduces its part, then the parts are combined everywhere
  std::vector<Tensor> parts = x.map(local(true), std::nullopt).shards();
  MultiTensor total = all_reduce(parts, is_max ? CollectiveReduce::max : CollectiveReduce::sum);
  if (keepdim) return total;
  Dims squeezed;
  for (int64_t d = 0; d < x.ndim(); ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) squeezed.push_back(x.shape()[size_t(d)]);
  return total.reshape(squeezed);
}

} // namespace

MultiTensor MultiTensor::sum(Axes axes, bool keepdim) const { return reduce(*this, axes, keepdim, false); }
MultiTensor MultiTensor::max(Axes axes, bool keepdim) const { return reduce(*this, axes, keepdim, true); }
MultiTensor MultiTensor::mean(Axes axes, bool keepdim) const {
  int64_t count = 1;
  for (auto a : resolve_axes("mean", axes, ndim())) count *= shape()[size_t(a)];
  MultiTensor s = (dtype().is_float() ? *this : cast(dtypes::default_float)).sum(axes, keepdim);
  return s.mul(1.0 / double(std::max<int64_t>(count, 1)));
}

// ---- movement ----

MultiTensor MultiTensor::reshape(Dims new_shape) const {
  // resolve a -1 against the logical size
  int64_t known = 1, unknown = -1;
  for (size_t d = 0; d < new_shape.size(); ++d)
    if (new_shape[d] == -1)
      unknown = int64_t(d);
    else
      known *= new_shape[d];
  if (unknown >= 0 && known != 0) new_shape[size_t(unknown)] = numel() / known;
  if (dims_prod(new_shape) != numel())
    throw MultiTensorError("reshape: " + str() + " cannot become " + dims_str(new_shape));
  if (replicated()) return map([&](const Tensor& t, size_t) { return t.reshape(new_shape); }, std::nullopt);
  // the shard axis must stay one axis with everything before it the same size
  const int64_t k = *axis();
  const int64_t before = dims_prod(Dims(shape().begin(), shape().begin() + k));
  for (size_t j = 0; j < new_shape.size(); ++j) {
    if (dims_prod(Dims(new_shape.begin(), new_shape.begin() + int64_t(j))) != before) continue;
    if (new_shape[j] != shape()[size_t(k)]) continue;
    Dims local = new_shape;
    local[j] /= int64_t(shards().size());
    return map([&](const Tensor& t, size_t) { return t.reshape(local); }, int64_t(j));
  }
  throw MultiTensorError("reshape: " + str() + " to " + dims_str(new_shape) +
                         " would split or merge the shard axis " + std::to_string(k) + "; gather() first");
}

MultiTensor MultiTensor::permute(Axes order) const {
  if (int64_t(order.size()) != ndim())
    throw MultiTensorError("permute: order of " + std::to_string(order.size()) + " axes for " + str());
  for (auto& a : order) a = resolve_axis("permute", a, ndim());
  std::optional<int64_t> k;
  if (axis()) k = int64_t(std::find(order.begin(), order.end(), *axis()) - order.begin());
  return map([&](const Tensor& t, size_t) { return t.permute(order); }, k);
}

MultiTensor MultiTensor::transpose(int64_t a, int64_t b) const {
  Axes order(static_cast<size_t>(ndim()));
  std::iota(order.begin(), order.end(), 0);
  std::swap(order[size_t(resolve_axis("transpose", a, ndim()))],
            order[size_t(resolve_axis("transpose", b, ndim()))]);
  return permute(order);
}

MultiTensor MultiTensor::expand(Dims new_shape) const {
  if (replicated()) return map([&](const Tensor& t, size_t) { return t.expand(new_shape); }, std::nullopt);
  const int64_t k = *axis() + int64_t(new_shape.size()) - ndim();
  if (k < 0 || (new_shape[size_t(k)] != -1 && new_shape[size_t(k)] != shape()[size_t(*axis())]))
    throw MultiTensorError("expand: " + str() + " to " + dims_str(new_shape) +
                           " would change the shard axis");
  Dims local = new_shape;
  local[size_t(k)] = -1;
  return map([&](const Tensor& t, size_t) { return t.expand(local); }, k);
}

// ---- matmul ----

MultiTensor MultiTensor::matmul(const MultiTensor& o) const {
  check_same_devices("matmul", *this, o);
  if (ndim() < 2 || o.ndim() != 2)
    throw MultiTensorError("matmul: multi-device matmul takes (..., M, K) @ (K, N), got " + str() + " @ " +
                           o.str());
  const int64_t ka = ndim() - 1;
  MultiTensor b = o;
  const bool a_sharded_outer = axis() && *axis() != ka;
  // the right operand's split does not fit the left's: replicate it
  if ((b.axis() == 1 && !replicated()) || (b.axis() == 0 && a_sharded_outer)) b = b.gather();
  const bool a_k = axis() == ka, b_k = b.axis() == 0;
  const size_t n = shards().size();
  if (a_k || b_k) { // the contracted axis is split: partial products, summed across devices
    std::vector<Tensor> partial;
    for (size_t i = 0; i < n; ++i) {
      Tensor x = shards()[i], w = b.shards()[i];
      if (!a_k) x = x.shrink(part(x.shape(), ka, i, n));
      if (!b_k) w = w.shrink(part(w.shape(), 0, i, n));
      partial.push_back(x.matmul(w));
    }
    return all_reduce(partial);
  }
  std::optional<int64_t> k = axis();
  if (b.axis() == 1) k = ndim() - 1;
  std::vector<Tensor> out;
  for (size_t i = 0; i < n; ++i) out.push_back(shards()[i].matmul(b.shards()[i]));
  return MultiTensor(std::move(out), k);
}

// ---- collectives ----

MultiTensor MultiTensor::gather() const {
  if (replicated()) return *this;
  const int64_t k = *axis();
  Axes to_front(static_cast<size_t>(ndim())), back(static_cast<size_t>(ndim()));
  std::iota(to_front.begin(), to_front.end(), 0);
  to_front.erase(to_front.begin() + k);
  to_front.insert(to_front.begin(), k);
  for (size_t d = 0; d < to_front.size(); ++d) back[size_t(to_front[d])] = int64_t(d);
  std::vector<Tensor> rows;
  for (const auto& t : shards()) rows.push_back(k == 0 ? t : t.permute(to_front));
  std::vector<Tensor> whole = detail::all_gather_rows(rows);
  if (k != 0)
    for (auto& t : whole) t = t.permute(back);
  return MultiTensor(std::move(whole), std::nullopt);
}

MultiTensor all_reduce(const std::vector<Tensor>& per_device, CollectiveReduce op) {
  return MultiTensor(detail::all_reduce_values(per_device, op), std::nullopt);
}

// ---- autograd ----

MultiTensor& MultiTensor::requires_grad_(bool enable) {
  for (auto& t : s_->shards) t.requires_grad_(enable);
  return *this;
}

void MultiTensor::backward(std::optional<MultiTensor> seed) const {
  if (seed && (seed->shape() != shape() || seed->axis() != axis() || seed->devices() != devices()))
    throw MultiTensorError("backward: seed " + seed->str() + " does not match " + str());
  if (!seed && numel() != 1)
    throw MultiTensorError("backward of " + str() + " needs a seed (it is not one element)");
  detail::clear_collective_gradients();
  const size_t n = shards().size();
  for (size_t i = 0; i < n; ++i) {
    const Tensor& t = shards()[i];
    // a replicated value's gradient is the sum of its shards' (partial) gradients: split the seed
    Tensor s = seed ? seed->shards()[i]
                    : Tensor::full(t.shape(), replicated() ? 1.0 / double(n) : 1.0,
                                   t.dtype().is_float() ? t.dtype() : dtypes::default_float, t.device());
    t.backward(s);
  }
  detail::run_collectives_backward();
}

std::optional<MultiTensor> MultiTensor::grad() const {
  const auto& parts = shards();
  if (std::none_of(parts.begin(), parts.end(), [](const Tensor& t) { return t.grad().has_value(); }))
    return std::nullopt;
  if (replicated()) sync_grads({*this}); // partial gradients -> their sum on every shard (once)
  std::vector<Tensor> g;
  for (const auto& t : parts) g.push_back(t.grad() ? *t.grad() : t.zeros_like());
  return MultiTensor(std::move(g), axis());
}

void sync_grads(const std::vector<MultiTensor>& params, const std::vector<Tensor>& also) {
  // the parameters whose shards hold partial gradients, bucketed by dtype
  std::map<std::string, std::vector<const MultiTensor*>> buckets;
  for (const auto& p : params) {
    if (!p.replicated()) continue;
    const auto& shards = p.shards();
    if (std::none_of(shards.begin(), shards.end(), [](const Tensor& t) { return t.grad().has_value(); }))
      continue;
    const auto& summed = p.s_->summed_grads;
    bool done = summed.size() == shards.size();
    for (size_t i = 0; done && i < shards.size(); ++i)
      done = shards[i].grad() && shards[i].grad()->is(summed[i]);
    if (!done) buckets[p.dtype().name()].push_back(&p);
  }
  // each device's gradients and `also` in one schedule: one backward pass per device (on
  // asynchronous devices the passes overlap); then one flat copy of them per device and dtype
  std::map<std::string, std::vector<Tensor>> by_device;
  for (const auto& t : also) by_device[t.device()].push_back(t);
  for (auto& [dtype, group] : buckets)
    for (const MultiTensor* p : group) {
      if (p->devices() != group[0]->devices())
        throw MultiTensorError("sync_grads: " + p->str() + " is not on the devices of " + group[0]->str());
      for (const auto& t : p->shards())
        if (auto g = t.grad()) by_device[t.device()].push_back(*g);
    }
  auto realize_per_device = [](std::map<std::string, std::vector<Tensor>>& tensors) {
    for (auto& [device, list] : tensors) {
      std::vector<Tensor*> targets;
      for (auto& t : list) targets.push_back(&t);
      Tensor::realize_all(targets);
    }
  };
  realize_per_device(by_device);
  std::map<std::string, std::vector<Tensor>> flat; // bucket -> one flat gradient per device
  for (auto& [dtype, group] : buckets) {
    for (size_t d = 0; d < group[0]->shards().size(); ++d) {
      std::vector<Tensor> parts;
      for (const MultiTensor* p : group) {
        const Tensor& t = p->shards()[d];
        parts.push_back((t.grad() ? *t.grad() : t.zeros_like()).reshape({t.numel()}));
      }
      flat[dtype].push_back(parts.size() == 1 ? parts[0] : Tensor::cat(parts, 0));
    }
  }
  for (auto& [dtype, group] : buckets) {
    std::vector<Tensor> total = detail::all_reduce_values(flat[dtype], CollectiveReduce::sum, false);
    int64_t offset = 0;
    for (const MultiTensor* p : group) {
      const int64_t n = p->numel();
      std::vector<Tensor> summed;
      for (size_t d = 0; d < total.size(); ++d) {
        Tensor shard = p->shards()[d];
        shard.set_grad(total[d].shrink({{offset, offset + n}}).reshape(shard.shape()));
        summed.push_back(*shard.grad()); // the handle the shard holds, so grad() recognizes it
      }
      p->s_->summed_grads = std::move(summed);
      offset += n;
    }
  }
}

} // namespace tg
