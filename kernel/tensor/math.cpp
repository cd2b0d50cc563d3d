// More elementwise math, composed only from the primitive Tensor ops (elementwise.cpp): the
// inverse trigonometric and hyperbolic functions, erf, rounding, the activation functions of
// torch.nn, and bitwise ops.
//
// Float math on an int or bool tensor computes in the default float dtype, as sin() does.
// Where a formula has branches (selected with where), each branch is evaluated on an input that
// the branch can take: where() passes a zero gradient to the branch it does not select, and the
// chain rule multiplies that zero by the branch's own derivative, which would be NaN if the branch
// overflowed there (0 * inf). So the unselected lanes of a branch see a harmless stand-in value.
#include "kernel/tensor/tensor.hpp"

#include <cmath>
#include <initializer_list>
#include <limits>
#include <numbers>
#include <string>

namespace tg {

namespace {

Tensor alu(Ops op, const Tensor& a, const Tensor& b, DType result) {
  return a.with(UOp::make(op, result, {a.uop(), b.uop()}), a.shape());
}

Tensor floating(const Tensor& t) { return t.dtype().is_float() ? t : t.cast(dtypes::default_float); }

void require_int(const Tensor& t, const char* what) {
  if (t.dtype().is_float())
    throw TensorError(std::string(what) + " needs an integer or bool tensor, got " + t.dtype().name());
}

// x where `keep`, else `stand_in` (a value every branch formula accepts).
Tensor safe(const Tensor& keep, const Tensor& x, double stand_in) {
  return keep.where(x, x.const_like(stand_in));
}

// c[0] + z * (c[1] + z * (c[2] + ...)) by Horner's rule.
Tensor horner(const Tensor& z, std::initializer_list<double> c) {
  const double* p = c.end();
  Tensor acc = z.const_like(*--p);
  while (p != c.begin()) acc = acc * z + *--p;
  return acc;
}

// atan on [0, inf) (cephes atan.c: range reduction to |r| <= 0.66, then a P(4)/Q(5) rational
// function of r^2; relative error ~2e-16 in double). a must be >= 0 (or NaN).
Tensor atan_nonneg(const Tensor& a) {
  constexpr double tan3pi8 = 2.41421356237309504880;
  Tensor big = a.gt(a.const_like(tan3pi8));
  Tensor mid = a.gt(a.const_like(0.66)).logical_and(big.logical_not());
  Tensor r_big = -safe(big, a, 1).reciprocal();
  Tensor r_mid = (a - 1.0) / (a + 1.0);
  Tensor r = big.where(r_big, mid.where(r_mid, a));
  Tensor base = big.where(a.const_like(std::numbers::pi / 2),
                          mid.where(a.const_like(std::numbers::pi / 4), a.const_like(0)));
  Tensor z = r * r;
  Tensor p = horner(z, {-6.485021904942025371773E1, -1.228866684490136173410E2, -7.500855792314704667340E1,
                        -1.615753718733365076637E1, -8.750608600031904122785E-1});
  Tensor q = horner(z, {1.945506571482613964425E2, 4.853903996359136964868E2, 4.328810604912902668951E2,
                        1.650270098316988542046E2, 2.485846490142306297962E1, 1.0});
  return base + (r + r * z * p / q);
}

// An odd function from its values f(|x|): -f(|x|) for negative x. Computed on x.abs(), whose
// gradient at 0 is 1 (abs selects its x branch there), so f'(0) reaches x = 0 (erf'(0), atan'(0)).
Tensor odd_extend(const Tensor& x, const Tensor& f_of_abs) {
  return x.lt(x.const_like(0)).where(-f_of_abs, f_of_abs);
}

Tensor ln2_like(const Tensor& x) { return x.const_like(std::numbers::ln2); }

} // namespace

Tensor Tensor::erf() const {
  Tensor x = floating(*this);
  Tensor a = x.abs();
  // near 0 the Maclaurin series (relative error < 1e-11 for |x| < 0.5); beyond it Abramowitz and
  // Stegun 7.1.26 (absolute error < 1.5e-7, relative < 3e-7 there)
  Tensor small = a.lt(a.const_like(0.5));
  Tensor s = safe(small, a, 0), s2 = s * s;
  Tensor series = s *
                  horner(s2, {1.0, -1.0 / 3, 1.0 / 10, -1.0 / 42, 1.0 / 216, -1.0 / 1320, 1.0 / 9360,
                              -1.0 / 75600, 1.0 / 685440}) *
                  (2 / std::sqrt(std::numbers::pi));
  Tensor l = safe(small.logical_not(), a, 1);
  Tensor t = (1.0 + 0.3275911 * l).reciprocal();
  Tensor tail = 1.0 - t * horner(t, {0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429}) *
                          (-(l * l)).exp();
  return odd_extend(x, small.where(series, tail));
}

Tensor Tensor::round() const {
  if (!dtype().is_float()) return *this;
  Tensor f = floor(), d = *this - f;
  Tensor even = (f - 2.0 * (f * 0.5).floor()).eq(f.const_like(0));
  Tensor half_up = even.where(f, f + 1.0);
  return d.gt(d.const_like(0.5)).where(f + 1.0, d.lt(d.const_like(0.5)).where(f, half_up));
}

Tensor Tensor::isnan() const {
  if (!dtype().is_float()) return const_like(0, dtypes::bool_);
  return ne(*this);
}

Tensor Tensor::isinf(bool positive, bool negative) const {
  Tensor out = const_like(0, dtypes::bool_);
  if (!dtype().is_float()) return out;
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (positive) out = out.logical_or(eq(const_like(inf)));
  if (negative) out = out.logical_or(eq(const_like(-inf)));
  return out;
}

Tensor Tensor::atan() const {
  Tensor x = floating(*this);
  return odd_extend(x, atan_nonneg(x.abs()));
}

Tensor Tensor::asin() const {
  // atan(x / sqrt(1 - x^2)); 1 - x^2 as (1 - x)(1 + x), exact near |x| = 1. |x| > 1 gives NaN.
  Tensor x = floating(*this);
  Tensor a = x.abs();
  return odd_extend(x, atan_nonneg(a / ((1.0 - a) * (1.0 + a)).sqrt()));
}

Tensor Tensor::acos() const {
  // 2 atan(sqrt((1 - x) / (1 + x))): no cancellation near x = 1 (pi/2 - asin(x) would have)
  Tensor x = floating(*this);
  return 2.0 * atan_nonneg(((1.0 - x) / (1.0 + x)).sqrt());
}

Tensor Tensor::sinh() const {
  // exp(x - ln 2) - exp(-x - ln 2): no overflow before sinh itself overflows; the series near 0
  // where the difference would cancel (relative error < 1e-16 for |x| < 0.5)
  Tensor x = floating(*this);
  Tensor small = x.abs().lt(x.const_like(0.5));
  Tensor s = safe(small, x, 0), z = s * s;
  Tensor series =
      s * horner(z, {1.0, 1.0 / 6, 1.0 / 120, 1.0 / 5040, 1.0 / 362880, 1.0 / 39916800, 1.0 / 6227020800.0});
  Tensor l = ln2_like(x);
  return small.where(series, (x - l).exp() - (-x - l).exp());
}

Tensor Tensor::cosh() const {
  Tensor x = floating(*this);
  Tensor l = ln2_like(x);
  return (x - l).exp() + (-x - l).exp();
}

Tensor Tensor::asinh() const {
  // log(|x| + sqrt(x^2 + 1)); log(2|x|) where x^2 would overflow, the series near 0 where the
  // log would cancel (relative error < 1e-11 for |x| < 0.125)
  Tensor x = floating(*this);
  Tensor a = x.abs();
  Tensor small = a.lt(a.const_like(0.125)), huge = a.gt(a.const_like(1e15));
  Tensor s = safe(small, a, 0), z = s * s;
  Tensor series = s * horner(z, {1.0, -1.0 / 6, 3.0 / 40, -15.0 / 336, 105.0 / 3456, -945.0 / 42240});
  Tensor m = safe(huge.logical_not(), a, 1);
  Tensor mid = (m + (m * m + 1.0).sqrt()).log();
  Tensor h = safe(huge, a, 1);
  Tensor far = h.log() + std::numbers::ln2;
  return odd_extend(x, small.where(series, huge.where(far, mid)));
}

Tensor Tensor::acosh() const {
  // log(x + sqrt((x - 1)(x + 1))); log(2x) where that would overflow. x < 1 gives NaN.
  Tensor x = floating(*this);
  Tensor huge = x.gt(x.const_like(1e15));
  Tensor m = safe(huge.logical_not(), x, 1);
  Tensor mid = (m + ((m - 1.0) * (m + 1.0)).sqrt()).log();
  Tensor far = safe(huge, x, 1).log() + std::numbers::ln2;
  return huge.where(far, mid);
}

Tensor Tensor::atanh() const {
  // log((1 + x) / (1 - x)) / 2; the series near 0 (relative error < 1e-12 for |x| < 0.125).
  // |x| = 1 gives +-inf, |x| > 1 NaN.
  Tensor x = floating(*this);
  Tensor a = x.abs();
  Tensor small = a.lt(a.const_like(0.125));
  Tensor s = safe(small, a, 0), z = s * s;
  Tensor series = s * horner(z, {1.0, 1.0 / 3, 1.0 / 5, 1.0 / 7, 1.0 / 9, 1.0 / 11, 1.0 / 13});
  Tensor m = safe(small.logical_not(), a, 0.5);
  Tensor mid = ((1.0 + m) / (1.0 - m)).log() * 0.5;
  return odd_extend(x, small.where(series, mid));
}

Tensor Tensor::elu(double alpha) const {
  Tensor x = floating(*this);
  Tensor pos = x.gt(x.const_like(0));
  Tensor neg = alpha * (safe(pos.logical_not(), x, 0).exp() - 1.0);
  return pos.where(x, neg);
}

Tensor Tensor::selu() const {
  constexpr double alpha = 1.6732632423543772848170429916717, scale = 1.0507009873554804934193349852946;
  return elu(alpha) * scale;
}

Tensor Tensor::celu(double alpha) const {
  if (alpha == 0) throw TensorError("celu: alpha must not be 0");
  Tensor x = floating(*this);
  Tensor pos = x.gt(x.const_like(0));
  Tensor neg = alpha * ((safe(pos.logical_not(), x, 0) * (1.0 / alpha)).exp() - 1.0);
  return pos.where(x, neg);
}

Tensor Tensor::hardsigmoid(double alpha, double beta) const {
  // where, not clip: the gradient is 0 at the corners, as torch's
  Tensor x = floating(*this);
  Tensor y = x * alpha + beta;
  return y.le(y.const_like(0)).where(y.const_like(0), y.ge(y.const_like(1)).where(y.const_like(1), y));
}

Tensor Tensor::hardswish() const {
  Tensor x = floating(*this);
  return x * x.hardsigmoid(1.0 / 6, 0.5);
}

Tensor Tensor::mish() const {
  // x * tanh(softplus(x)), with tanh(log(1 + e^x)) = ((1 + e^x)^2 - 1) / ((1 + e^x)^2 + 1) written
  // in u = e^x for x <= 0 and v = e^-x for x > 0: no overflow, no cancellation (mish(-20) keeps
  // its digits), finite gradients
  Tensor x = floating(*this);
  Tensor pos = x.gt(x.const_like(0));
  Tensor u = safe(pos.logical_not(), x, 0).exp(), n = u * (u + 2.0);
  Tensor v = (-safe(pos, x, 0)).exp(), w = 1.0 + 2.0 * v;
  return x * pos.where(w / (w + 2.0 * v * v), n / (n + 2.0));
}

Tensor Tensor::softsign() const {
  Tensor x = floating(*this);
  return x / (1.0 + x.abs());
}

Tensor Tensor::bitwise_and(const Tensor& o) const {
  auto [a, b] = broadcast_pair(*this, o);
  require_int(a, "bitwise_and");
  return alu(Ops::AND, a, b, a.dtype());
}

Tensor Tensor::bitwise_or(const Tensor& o) const {
  auto [a, b] = broadcast_pair(*this, o);
  require_int(a, "bitwise_or");
  return alu(Ops::OR, a, b, a.dtype());
}

Tensor Tensor::bitwise_not() const {
  require_int(*this, "bitwise_not");
  if (dtype().is_bool()) return logical_not();
  return bitwise_xor(const_like(-1)); // all ones, for unsigned dtypes too
}

Tensor Tensor::logical_xor(const Tensor& o) const { return cast(dtypes::bool_).ne(o.cast(dtypes::bool_)); }

} // namespace tg
