// Elementwise operations: broadcasting, dtype promotion, and the math built from the primitive
// ALU ops (EXP2, LOG2, SIN, SQRT, RECIP, ...) the way tinygrad composes them.
#include "kernel/tensor/tensor.hpp"

#include <algorithm>

#include <cmath>
#include <numbers>

namespace tg {

namespace {

Tensor alu(Ops op, const Tensor& a, DType result) {
  return a.with(UOp::make(op, result, {a.uop()}), a.shape());
}
Tensor alu(Ops op, const Tensor& a, const Tensor& b, DType result) {
  return a.with(UOp::make(op, result, {a.uop(), b.uop()}), a.shape());
}

void require_float_or_cast(Tensor& t) {
  if (!t.dtype().is_float()) t = t.cast(dtypes::default_float);
}

void require_int(const Tensor& t, const char* what) {
  if (t.dtype().is_float())
    throw TensorError(std::string(what) + " needs an integer or bool tensor, got " + t.dtype().name());
}

// The CONST a tensor is everywhere (seen through reshapes, expands and float casts), or null.
const UOp* uniform_const(const Tensor& t) {
  const UOp* u = t.uop().get();
  while (u->op() == Ops::RESHAPE || u->op() == Ops::EXPAND || (u->op() == Ops::CAST && u->dtype().is_float()))
    u = u->src(0).get();
  return u->op() == Ops::CONST ? u : nullptr;
}

} // namespace

Dims broadcast_shape(const Dims& a, const Dims& b) {
  size_t n = std::max(a.size(), b.size());
  Dims out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      throw TensorError("shapes " + dims_str(a) + " and " + dims_str(b) +
                        " cannot be broadcast together (dim " + std::to_string(i) + ": " +
                        std::to_string(da) + " vs " + std::to_string(db) + ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

namespace {
Tensor broadcast_to(const Tensor& t, const Dims& shape) {
  if (t.shape() == shape) return t;
  Dims padded(shape.size() - t.shape().size(), 1);
  padded.insert(padded.end(), t.shape().begin(), t.shape().end());
  return t.reshape(padded).expand(shape);
}
} // namespace

std::pair<Tensor, Tensor> broadcast_pair(const Tensor& a, const Tensor& b) {
  if (a.device() != b.device())
    throw TensorError("tensors on different devices: " + a.device() + " and " + b.device() + " (use .to())");
  Dims shape = broadcast_shape(a.shape(), b.shape());
  DType dt = least_upper_dtype(a.dtype(), b.dtype());
  return {broadcast_to(a, shape).cast(dt), broadcast_to(b, shape).cast(dt)};
}

Tensor weak_scalar(const Tensor& like, double value, WeakScalar kind) {
  DType dt = promote_with_weak(like.dtype(), kind);
  return Tensor::full(like.shape(), value, dt, like.device());
}

Tensor Tensor::const_like(double value, std::optional<DType> dt) const {
  return full(this->shape(), value, dt.value_or(dtype()), this->device());
}

Tensor Tensor::add(const Tensor& o) const {
  auto [a, b] = broadcast_pair(*this, o);
  return alu(Ops::ADD, a, b, a.dtype());
}
Tensor Tensor::sub(const Tensor& o) const {
  auto [a, b] = broadcast_pair(*this, o);
  if (a.dtype().is_bool()) throw TensorError("subtraction of bool tensors; use logical_xor or cast first");
  return alu(Ops::SUB, a, b, a.dtype());
}
Tensor Tensor::mul(const Tensor& o) const {
  auto [a, b] = broadcast_pair(*this, o);
  return alu(Ops::MUL, a, b, a.dtype());
}
Tensor Tensor::div(const Tensor& o) const {
  auto [a, b] = broadcast_pair(*this, o);
  require_float_or_cast(a);
  require_float_or_cast(b);
  return alu(Ops::FDIV, a, b, a.dtype());
}
Tensor Tensor::idiv(const Tensor& o) const {
  auto [a, b] = broadcast_pair(*this, o);
  require_int(a, "idiv");
  return alu(Ops::IDIV, a, b, a.dtype());
}
Tensor Tensor::mod(const Tensor& o) const {
  auto [a, b] = broadcast_pair(*this, o);
  require_int(a, "mod");
  return alu(Ops::MOD, a, b, a.dtype());
}
Tensor operator+(const Tensor& a, const Tensor& b) { return a.add(b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return a.sub(b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return a.mul(b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return a.div(b); }

Tensor Tensor::neg() const {
  if (dtype().is_bool()) return logical_not();
  return alu(Ops::NEG, *this, dtype());
}
Tensor Tensor::maximum(const Tensor& o) const {
  auto [a, b] = broadcast_pair(*this, o);
  return alu(Ops::MAX, a, b, a.dtype());
}
Tensor Tensor::minimum(const Tensor& o) const {
  auto [a, b] = broadcast_pair(*this, o);
  if (a.dtype().is_bool()) return a.logical_and(b);
  if (a.dtype().is_int()) return a.lt(b).where(a, b); // -x would wrap the most negative value
  return -((-a).maximum(-b));
}
Tensor Tensor::square() const { return *this * *this; }

Tensor Tensor::clip(double low, double high) const {
  if (low > high) throw TensorError("clip: low " + std::to_string(low) + " > high " + std::to_string(high));
  // whole-number bounds are weak ints (tinygrad's int_tensor.clip(0, 5) stays int); others weak floats
  bool whole =
      std::isfinite(low) && std::isfinite(high) && low == std::floor(low) && high == std::floor(high);
  WeakScalar kind = whole ? WeakScalar::Int : WeakScalar::Float;
  if (whole && !dtype().is_float()) { // bounds outside the dtype's range must not wrap (uint8 clip(-3, 4))
    low = std::clamp(low, dtype().min_value(), dtype().max_value());
    high = std::clamp(high, dtype().min_value(), dtype().max_value());
  }
  return maximum(weak_scalar(*this, low, kind)).minimum(weak_scalar(*this, high, kind));
}
Tensor Tensor::lt(const Tensor& o) const {
  auto [a, b] = broadcast_pair(*this, o);
  return alu(Ops::CMPLT, a, b, dtypes::bool_);
}
Tensor Tensor::ne(const Tensor& o) const {
  auto [a, b] = broadcast_pair(*this, o);
  return alu(Ops::CMPNE, a, b, dtypes::bool_);
}
Tensor Tensor::eq(const Tensor& o) const { return ne(o).logical_not(); }
Tensor Tensor::logical_not() const {
  Tensor b = dtype().is_bool() ? *this : ne(const_like(0));
  return alu(Ops::CMPNE, b, b.const_like(1, dtypes::bool_), dtypes::bool_);
}
Tensor Tensor::logical_and(const Tensor& o) const {
  auto [a, b] = broadcast_pair(cast(dtypes::bool_), o.cast(dtypes::bool_));
  return alu(Ops::AND, a, b, dtypes::bool_);
}
Tensor Tensor::logical_or(const Tensor& o) const {
  auto [a, b] = broadcast_pair(cast(dtypes::bool_), o.cast(dtypes::bool_));
  return alu(Ops::OR, a, b, dtypes::bool_);
}
Tensor Tensor::bitwise_xor(const Tensor& o) const {
  auto [a, b] = broadcast_pair(*this, o);
  require_int(a, "bitwise_xor");
  return alu(Ops::XOR, a, b, a.dtype());
}
Tensor Tensor::lshift(int64_t bits) const {
  require_int(*this, "lshift");
  return alu(Ops::SHL, *this, const_like(double(bits)), dtype());
}
Tensor Tensor::rshift(int64_t bits) const {
  require_int(*this, "rshift");
  return alu(Ops::SHR, *this, const_like(double(bits)), dtype());
}

Tensor Tensor::where(const Tensor& if_true, const Tensor& if_false) const {
  Dims shape = broadcast_shape(broadcast_shape(this->shape(), if_true.shape()), if_false.shape());
  auto [t, f] = broadcast_pair(if_true, if_false);
  Tensor c = broadcast_pair(cast(dtypes::bool_), t.const_like(0, dtypes::bool_)).first;
  auto expand_to = [&](const Tensor& x) {
    Dims padded(shape.size() - x.shape().size(), 1);
    padded.insert(padded.end(), x.shape().begin(), x.shape().end());
    return x.shape() == shape ? x : x.reshape(padded).expand(shape);
  };
  c = expand_to(c);
  t = expand_to(t);
  f = expand_to(f);
  return c.with(UOp::make(Ops::WHERE, t.dtype(), {c.uop(), t.uop(), f.uop()}), shape);
}
Tensor Tensor::where(double if_true, double if_false) const {
  Tensor t = Tensor::full(this->shape(), if_true, dtypes::default_float, this->device());
  return where(t, t.const_like(if_false));
}

// ---- transcendental and activation functions ----
Tensor Tensor::exp2() const {
  Tensor x = *this;
  require_float_or_cast(x);
  return alu(Ops::EXP2, x, x.dtype());
}
Tensor Tensor::log2() const {
  Tensor x = *this;
  require_float_or_cast(x);
  return alu(Ops::LOG2, x, x.dtype());
}
Tensor Tensor::exp() const { return (*this * (1.0 / std::numbers::ln2)).exp2(); }
Tensor Tensor::log() const { return log2() * std::numbers::ln2; }
Tensor Tensor::sqrt() const {
  Tensor x = *this;
  require_float_or_cast(x);
  return alu(Ops::SQRT, x, x.dtype());
}
Tensor Tensor::reciprocal() const {
  Tensor x = *this;
  require_float_or_cast(x);
  return alu(Ops::RECIP, x, x.dtype());
}
Tensor Tensor::rsqrt() const { return sqrt().reciprocal(); }
Tensor Tensor::sin() const {
  Tensor x = *this;
  require_float_or_cast(x);
  return alu(Ops::SIN, x, x.dtype());
}
Tensor Tensor::cos() const { return (std::numbers::pi / 2 - *this).sin(); }
Tensor Tensor::tan() const { return sin() / cos(); }
Tensor Tensor::sigmoid() const { return (1.0 + (-*this).exp()).reciprocal(); }
Tensor Tensor::tanh() const { return 2.0 * (2.0 * *this).sigmoid() - 1.0; }
Tensor Tensor::relu() const { return gt(const_like(0)).where(*this, const_like(0)); }
Tensor Tensor::leaky_relu(double slope) const { return lt(const_like(0)).where(*this * slope, *this); }
Tensor Tensor::gelu() const {
  return 0.5 * *this *
         (1.0 + (std::sqrt(2.0 / std::numbers::pi) * (*this + 0.044715 * *this * *this * *this)).tanh());
}
Tensor Tensor::silu() const { return *this * sigmoid(); }
Tensor Tensor::softplus(double beta) const { return (1.0 + (*this * beta).exp()).log() * (1.0 / beta); }
Tensor Tensor::abs() const {
  if (dtype().is_bool() || dtype().is_unsigned()) return *this;
  return lt(const_like(0)).where(-*this, *this);
}
Tensor Tensor::sign() const {
  Tensor zero = const_like(0);
  return ne(zero).where(lt(zero).where(const_like(-1), const_like(1)), zero);
}
Tensor Tensor::trunc() const {
  if (!dtype().is_float()) return *this;
  return alu(Ops::TRUNC, *this, dtype());
}
Tensor Tensor::floor() const {
  Tensor t = trunc();
  return lt(t).where(t - 1.0, t);
}
Tensor Tensor::ceil() const {
  Tensor t = trunc();
  return gt(t).where(t + 1.0, t);
}
Tensor Tensor::pow(const Tensor& exponent) const {
  auto [base, e] = broadcast_pair(*this, exponent);
  // an exponent that is one constant (an ONNX Pow's 2 in LayerNorm): the scalar overload's forms
  if (const UOp* c = uniform_const(e); c && base.dtype().is_float()) {
    const double v = std::visit([](auto x) { return double(x); }, c->const_value());
    if (v == 2 || v == 1 || v == 0.5) return base.pow(v);
  }
  require_float_or_cast(base);
  e = e.cast(base.dtype());
  // |x|^y, then the sign for a negative base: negative for odd integer y, NaN for non-integer y.
  Tensor mag = (e * base.abs().log2()).exp2();
  Tensor neg_base = base.lt(base.const_like(0));
  Tensor is_int = e.trunc().eq(e);
  Tensor odd = (e - 2.0 * (e * 0.5).trunc()).abs().eq(e.const_like(1));
  Tensor signed_mag = odd.where(-mag, mag);
  Tensor nan = base.const_like(std::nan(""));
  Tensor result = neg_base.where(is_int.where(signed_mag, nan), mag);
  // 0^0 = 1 and x^0 = 1 exactly
  return e.eq(e.const_like(0)).where(base.const_like(1), result);
}
Tensor Tensor::pow(double exponent) const {
  if (exponent == 2) return *this * *this;
  if (exponent == 1) return *this;
  if (exponent == 0.5) return sqrt();
  return pow(scalar_for(*this, exponent));
}

} // namespace tg
