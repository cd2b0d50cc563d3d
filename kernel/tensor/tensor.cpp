#include "kernel/tensor/tensor.hpp"

#include "kernel/tensor/release_after_launch.hpp"

#include "kernel/engine/capture.hpp"
#include "kernel/engine/config.hpp"
#include "kernel/engine/engine.hpp"
#include "kernel/engine/realize.hpp"
#include "kernel/runtime/devices.hpp"
#include "kernel/schedule/buffer.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <mutex>
#include <unordered_map>

namespace tg {

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
  // read() tells autograd, which still differentiates the expression.
  if (auto r = engine().realized().read(s_->uop, s_->device); r && *r != s_->uop) {
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
    if (!stored_buffer(u) || !buffer_arg(stored_buffer(u)).storage_if_set()) targets.push_back(u);
  }
  if (targets.empty()) return;
  Engine& eng = engine();
  RealizedCache& realized = eng.realized();
  const bool release_after = ReleaseAfterLaunch::active();
  if (!release_after) realized.release_dead();
  // Values an earlier realize stored as intermediates are read, not recomputed: when backward()
  // realized the loss first (Tensor::backward), the step's last realize still contains forward
  // expressions (BatchNorm's running statistics) whose values that realize stored.
  std::vector<UOpRef> asked; // the targets as the tensors hold them, when substituted
  if (realized.holds_intermediates()) {
    UOpRef root = targets.size() == 1 ? targets[0] : UOp::sink(targets);
    UOpRef stored = realized.substitute(root, options.device);
    if (stored != root) {
      asked = targets;
      if (targets.size() == 1)
        targets[0] = stored;
      else
        targets = stored->src();
    }
  }
  if (EngineObserver* observer = eng.observer()) observer->begin_realize(targets);
  Schedule schedule = realize_schedule(targets, options); // replayed when the structure was seen
  for (const auto& lazy : schedule.keep_alive) // targets belong to their tensors, the rest to the cache
    realized.insert(lazy, schedule.becomes.at(lazy.get()),
                    std::find(targets.begin(), targets.end(), lazy) == targets.end());
  for (size_t i = 0; i < asked.size(); ++i) // the tensors look their result up by the node they hold
    if (asked[i] != targets[i])
      if (auto it = schedule.becomes.find(targets[i].get()); it != schedule.becomes.end())
        realized.insert(asked[i], it->second, false);
  for (Tensor* t : tensors) (void)t->uop(); // pick up the realized views
  if (release_after) realized.release_dead();
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
  options.fuse_softmax = config().fuse_attention;
  return create_schedule({u}, options).items;
}

std::vector<std::byte> Tensor::to_bytes() const {
  Tensor t = *this;
  t.realize();
  UOpRef buffer = stored_buffer(t.uop());
  if (!buffer || buffer_arg(buffer).size() != numel()) { // a strided or partial view: copy it out first
    t = t.contiguous();
    t.realize();
    buffer = stored_buffer(t.uop());
  }
  std::vector<std::byte> out(size_t(numel()) * size_t(dtype().itemsize()));
  if (out.empty()) return out;
  if (CaptureScope* capture = CaptureScope::active())
    capture->note_host_dependence("a read back to the host of a " + dtype().name() + dims_str(shape()) +
                                  " value");
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
Tensor Tensor::layout(const Axes& order, const Dims& split) const {
  std::string key = "layout";
  for (int64_t a : order) key += ' ' + std::to_string(a);
  key += " /";
  for (int64_t d : split) key += ' ' + std::to_string(d);
  Tensor stored =
      keep_copy(key, [&] { return (split.empty() ? *this : reshape(split)).permute(order).contiguous(); });
  Axes back(order.size()); // (make checked the order against the split shape)
  for (size_t i = 0; i < order.size(); ++i) back[size_t(axis(order[i], int64_t(order.size())))] = int64_t(i);
  return stored.permute(back);
}
Tensor Tensor::keep_copy(const std::string& key, const std::function<Tensor()>& make) const {
  // Kept only over a stored value: over an expression the copy would also keep that expression's
  // whole graph alive. The expression, not what the copy's uop becomes once it is stored: the
  // realized-value cache keeps a result while its expression lives.
  const bool stored = stored_buffer(uop()) != nullptr;
  if (stored && s_->layout_copy && s_->layout_key == key)
    return Tensor(s_->layout_copy, s_->layout_shape, device());
  Tensor copy = make();
  if (stored) {
    s_->layout_copy = copy.s_->uop;
    s_->layout_key = key;
    s_->layout_shape = copy.shape();
  }
  return copy;
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
