// Creation: constants are one CONST node broadcast by movement ops (no memory until realized);
// arange is a cumulative sum of constants; random numbers come from threefry on the device.
#include "kernel/tensor/tensor.hpp"

#include <algorithm>

#include "kernel/engine/capture.hpp"
#include "kernel/engine/engine.hpp"
#include "kernel/runtime/devices.hpp"

#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <variant>

namespace tg {

namespace {
std::string resolve_device(const std::string& device) {
  if (device.empty()) return default_device();
  return is_canonical_device_name(device) ? device : parse_device_name(device).canonical();
}

ConstValue const_value_for(DType dt, double v) {
  if (dt.is_float()) return v;
  if (dt.is_bool()) return v != 0;
  if (!std::isfinite(v))
    throw TensorError("cannot make a " + dt.name() + " constant from " + std::to_string(v));
  return int64_t(v);
}
// The broadcast constants made last on this thread: `a + 1.0f` in a loop builds the same
// CONST -> RESHAPE -> EXPAND chain each time (three interned nodes and their argument vectors,
// most of the tiny op's build), and with the chain kept here it is found instead. A chain reads
// no buffer, so keeping it keeps no data alive; a realized value keyed on it belongs to the
// tensors that realized it (kernel/tensor/tensor.cpp, RealizedCache).
class RecentConstants {
public:
  const UOpRef* find(DType dt, const ConstValue& v, const Dims& shape) const {
    for (const Entry& e : entries_)
      if (e.node && same_value(e.value, v) && e.dtype == dt && e.shape == shape) return &e.node;
    return nullptr;
  }
  void keep(DType dt, const ConstValue& v, const Dims& shape, const UOpRef& node) {
    entries_[next_] = Entry{dt, v, shape, node};
    next_ = (next_ + 1) % entries_.size();
  }

private:
  // Bit for bit: -0.0 is not 0.0 (and a NaN is never found, which only costs a rebuild).
  static bool same_value(const ConstValue& a, const ConstValue& b) {
    if (a.index() != b.index()) return false;
    if (auto* d = std::get_if<double>(&a))
      return std::bit_cast<uint64_t>(*d) == std::bit_cast<uint64_t>(std::get<double>(b));
    return a == b;
  }
  struct Entry {
    DType dtype;
    ConstValue value;
    Dims shape;
    UOpRef node;
  };
  std::array<Entry, 8> entries_{};
  size_t next_ = 0;
};

UOpRef broadcast_constant(DType dt, ConstValue v, const Dims& shape) {
  thread_local RecentConstants recent;
  if (const UOpRef* hit = recent.find(dt, v, shape)) return *hit;
  UOpRef u = UOp::constant(dt, v);
  if (!shape.empty()) {
    Dims ones(shape.size(), 1);
    u = UOp::make(Ops::RESHAPE, dt, {std::move(u)}, Arg{std::vector<int64_t>(ones)});
    if (shape != ones) u = UOp::make(Ops::EXPAND, dt, {std::move(u)}, Arg{std::vector<int64_t>(shape)});
  }
  recent.keep(dt, v, shape, u);
  return u;
}

} // namespace

Tensor Tensor::scalar(double value, DType dt, const std::string& device) {
  check_element_dtype("scalar", dt);
  return Tensor(UOp::constant(dt, const_value_for(dt, value)), {}, resolve_device(device));
}

Tensor Tensor::full(Dims shape, double value, DType dt, const std::string& device) {
  check_element_dtype("full", dt);
  for (auto d : shape) // expand would read -1 as "keep this dim" and hide the mistake
    if (d < 0) throw TensorError("negative dimension in shape " + dims_str(shape));
  // The nodes of scalar(value).reshape(ones).expand(shape), made directly: the two tensors in
  // between cost a state allocation and a realized-results lookup each, and every op with a
  // plain number (a + 1.0f) builds one of these (on the tiny op's path).
  UOpRef u = broadcast_constant(dt, const_value_for(dt, value), shape);
  return Tensor(std::move(u), std::move(shape), resolve_device(device));
}

Tensor Tensor::zeros(Dims shape, DType dt, const std::string& device) {
  check_element_dtype("zeros", dt);
  return full(std::move(shape), 0, dt, device);
}
Tensor Tensor::ones(Dims shape, DType dt, const std::string& device) {
  check_element_dtype("ones", dt);
  return full(std::move(shape), 1, dt, device);
}

Tensor Tensor::arange(double start, double stop, double step, std::optional<DType> dtype,
                      const std::string& device) {
  if (step == 0) throw TensorError("arange step must not be 0");
  double span = (stop - start) / step;
  int64_t n = span > 0 ? int64_t(std::ceil(span)) : 0;
  bool integral = start == std::floor(start) && step == std::floor(step) && stop == std::floor(stop);
  DType dt = dtype.value_or(integral ? dtypes::default_int : dtypes::default_float);
  if (n == 0) return full({0}, 0, dt, device);
  // start + step * i, where i is the element's own index (a RANGE leaf, see schedule/shapes.hpp)
  // an int32 RANGE cannot count past 2^31 - 1 (its end would wrap)
  DType counter = n > INT32_MAX ? dtypes::int64 : dtypes::int32;
  Tensor i(UOp::range(n, kTensorIotaId, counter), {n}, resolve_device(device));
  if (start == 0 && step == 1) return i.cast(dt);
  return (i.cast(integral ? dt : dtypes::float64) * step + start).cast(dt);
}

Tensor Tensor::linspace(double start, double stop, int64_t steps, DType dt, const std::string& device) {
  if (steps < 0) throw TensorError("linspace steps must be >= 0");
  if (steps == 1) return full({1}, start, dt, device);
  return (arange(0, double(steps), 1, dtypes::float32, device) * ((stop - start) / double(steps - 1)) + start)
      .cast(dt);
}

Tensor Tensor::eye(int64_t n, std::optional<int64_t> m, DType dt, const std::string& device) {
  int64_t cols = m.value_or(n);
  if (n < 0 || cols < 0) throw TensorError("eye needs non-negative sizes");
  Tensor r = arange(0, double(n), 1, dtypes::int32, device).reshape({n, 1});
  Tensor c = arange(0, double(cols), 1, dtypes::int32, device).reshape({1, cols});
  return r.eq(c).cast(dt);
}

// ---- random ----

namespace {

// The generator's state: a seed and a counter of values handed out, so every call draws fresh
// numbers. One per engine (so per process, like tinygrad's Tensor._seed); atomic, so concurrent
// draws never overlap.
struct RandomState {
  std::atomic<uint64_t> seed{0};
  std::atomic<uint64_t> counter{0};
};
RandomState& random_state() { return engine().extension<RandomState>(); }

Tensor rotl(const Tensor& x, int r) { return x.lshift(r).bitwise_xor(x.rshift(32 - r)); }

// Threefry-2x32 with 20 rounds on uint32 tensors: (x0, x1) keyed by (k0, k1).
std::pair<Tensor, Tensor> threefry(Tensor x0, Tensor x1, uint32_t k0, uint32_t k1) {
  static const int rot[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  uint32_t k2 = k0 ^ k1 ^ 0x1BD11BDAu;
  const uint32_t ks[3] = {k0, k1, k2};
  x0 = x0 + x0.const_like(ks[0]);
  x1 = x1 + x1.const_like(ks[1]);
  for (int i = 0; i < 5; ++i) {
    for (int r : rot[i % 2]) {
      x0 = x0 + x1;
      x1 = rotl(x1, r).bitwise_xor(x0);
    }
    x0 = x0 + x0.const_like(ks[(i + 1) % 3]);
    x1 = x1 + x1.const_like(double(uint32_t(ks[(i + 2) % 3] + uint32_t(i) + 1)));
  }
  return {x0, x1};
}

// n uniformly distributed uint32 values.
Tensor random_bits(int64_t n, const std::string& device) {
  auto& st = random_state();
  if (CaptureScope* capture = CaptureScope::active())
    capture->note_host_dependence("a random draw (the generator's counter is host state)");
  uint64_t base = st.counter.fetch_add(uint64_t(n));
  uint64_t seed = st.seed.load();
  int64_t half = (n + 1) / 2;
  Tensor counts = Tensor::arange(0, double(half), 1, dtypes::uint32, device);
  // the counter comes from a buffer, not a constant: every draw of one size is one kernel
  Tensor offset =
      Tensor::from_vector<uint32_t>({uint32_t(base), uint32_t(base >> 32)}, {2}, std::nullopt, device);
  Tensor x0 = counts + offset.shrink({{0, 1}}).expand({half});
  Tensor x1 = offset.shrink({{1, 2}}).expand({half});
  auto [a, b] = threefry(x0, x1, uint32_t(seed), uint32_t(seed >> 32));
  return Tensor::cat({a, b}, 0).shrink({{0, n}});
}

} // namespace

void Tensor::manual_seed(uint64_t seed) {
  random_state().seed = seed;
  random_state().counter = 0;
}

Tensor Tensor::rand(Dims shape, DType dt, const std::string& device) {
  std::string dev = resolve_device(device);
  int64_t n = dims_prod(shape);
  if (n == 0) return zeros(shape, dt, dev);
  // 23 random mantissa bits under exponent 0 give a float in [1, 2); subtract 1
  Tensor bits =
      random_bits(n, dev).rshift(9).bitwise_xor(Tensor::full({n}, double(0x3f800000u), dtypes::uint32, dev));
  Tensor u = bits.bitcast(dtypes::float32) - 1.0f;
  return u.reshape(shape).cast(dt);
}

Tensor Tensor::uniform(Dims shape, double low, double high, DType dt, const std::string& device) {
  return (rand(std::move(shape), dtypes::float32, device) * (high - low) + low).cast(dt);
}

Tensor Tensor::randn(Dims shape, DType dt, const std::string& device) {
  // Box-Muller on two uniform draws
  Tensor u1 = rand(shape, dtypes::float32, device), u2 = rand(shape, dtypes::float32, device);
  Tensor r = ((1.0 - u1).log() * -2.0).sqrt();
  return (r * (u2 * (2 * M_PI)).cos()).cast(dt);
}

Tensor Tensor::randint(Dims shape, int64_t low, int64_t high, DType dt, const std::string& device) {
  if (high <= low)
    throw TensorError("randint needs low < high, got [" + std::to_string(low) + ", " + std::to_string(high) +
                      ")");
  if (dt.is_float() || dt.is_bool()) throw TensorError("randint needs an integer dtype, got " + dt.name());
  return (uniform(std::move(shape), double(low), double(high), dtypes::float32, device).floor()).cast(dt);
}

} // namespace tg
