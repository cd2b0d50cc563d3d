#include "kernel/ir/alu.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace tg {
namespace {

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

double round_to_grid(double x, int mantissa_bits, int min_exp, double max_finite) {
  if (!std::isfinite(x) || x == 0.0) return x;
  int e = std::ilogb(x);
  if (e < min_exp) e = min_exp;
  double ulp = std::ldexp(1.0, e - mantissa_bits);
  double r = std::nearbyint(x / ulp) * ulp; // default rounding mode: to nearest, ties to even
  if (std::fabs(r) > max_finite) return std::copysign(std::numeric_limits<double>::infinity(), x);
  return r;
}

i128 to_i128(DType dt, ConstValue v) {
  if (auto* b = std::get_if<bool>(&v)) return *b ? 1 : 0;
  if (auto* i = std::get_if<std::int64_t>(&v)) {
    if (dt.scalar == Scalar::UInt64) return static_cast<i128>(static_cast<std::uint64_t>(*i));
    return *i;
  }
  return static_cast<i128>(std::get<double>(v));
}

double to_double(DType dt, ConstValue v) {
  if (auto* d = std::get_if<double>(&v)) return *d;
  return static_cast<double>(to_i128(dt, v));
}

bool truthy(ConstValue v) {
  if (auto* b = std::get_if<bool>(&v)) return *b;
  if (auto* i = std::get_if<std::int64_t>(&v)) return *i != 0;
  return std::get<double>(v) != 0.0;
}

// Wraps an exact integer result to dt's width, noting whether it fit.
AluResult wrap_int(DType dt, i128 r) {
  if (dt.is_bool()) return {ConstValue{r != 0}, false};
  bool fits = dt.scalar == Scalar::UInt64 ? (r >= 0 && r <= static_cast<i128>(~std::uint64_t{0}))
                                          : (r >= dt.int_min() && r <= dt.int_max());
  auto low = static_cast<std::uint64_t>(static_cast<u128>(r));
  return {normalize_const(dt, ConstValue{static_cast<std::int64_t>(low)}), !fits};
}

AluResult float_result(DType dt, double r) { return {normalize_const(dt, ConstValue{r}), false}; }

std::optional<AluResult> cast_value(DType out, DType in, ConstValue v) {
  if (out.is_bool()) return AluResult{ConstValue{truthy(v)}, false};
  if (out.is_float()) return float_result(out, to_double(in, v));
  if (in.is_float()) {
    double d = std::trunc(to_double(in, v));
    if (!std::isfinite(d) || d < -9.3e18 || d > 1.8e19) return std::nullopt;
    AluResult r = wrap_int(out, static_cast<i128>(d));
    if (r.overflowed) return std::nullopt; // C: float -> int out of range is undefined
    return r;
  }
  AluResult r = wrap_int(out, to_i128(in, v));
  r.overflowed = false; // integer conversions wrap by definition
  return r;
}

std::uint64_t raw_bits(DType dt, ConstValue v) {
  if (!dt.is_float()) return static_cast<std::uint64_t>(static_cast<u128>(to_i128(dt, v)));
  double d = to_double(dt, v);
  switch (dt.scalar) {
  case Scalar::Float16:
    return half_to_bits(d);
  case Scalar::BFloat16:
    return std::bit_cast<std::uint32_t>(static_cast<float>(d)) >> 16;
  case Scalar::Float32:
    return std::bit_cast<std::uint32_t>(static_cast<float>(d));
  default:
    return std::bit_cast<std::uint64_t>(d);
  }
}

ConstValue from_bits(DType dt, std::uint64_t bits) {
  switch (dt.scalar) {
  case Scalar::Float16:
    return half_from_bits(static_cast<std::uint16_t>(bits));
  case Scalar::BFloat16:
    return static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(bits << 16)));
  case Scalar::Float32:
    return static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(bits)));
  case Scalar::Float64:
    return std::bit_cast<double>(bits);
  default:
    return normalize_const(dt, ConstValue{static_cast<std::int64_t>(bits)});
  }
}

} // namespace

double round_to_half(double x) { return round_to_grid(x, 10, -14, 65504.0); }
double round_to_bfloat16(double x) {
  return round_to_grid(x, 7, -126, static_cast<double>(std::numeric_limits<float>::max()));
}

std::uint16_t half_to_bits(double x) {
  x = round_to_half(x);
  std::uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isnan(x)) return 0x7e00;
  if (std::isinf(x)) return sign | 0x7c00;
  double a = std::fabs(x);
  if (a == 0.0) return sign;
  int e = std::ilogb(a);
  if (e < -14) return sign | static_cast<std::uint16_t>(std::lround(a * 16777216.0)); // subnormal: a / 2^-24
  auto mant = static_cast<std::uint16_t>(std::lround((std::ldexp(a, -e) - 1.0) * 1024.0));
  return sign | static_cast<std::uint16_t>((e + 15) << 10) | mant;
}

double half_from_bits(std::uint16_t bits) {
  double sign = (bits & 0x8000) ? -1.0 : 1.0;
  int e = (bits >> 10) & 0x1f;
  int m = bits & 0x3ff;
  if (e == 0x1f)
    return m ? std::numeric_limits<double>::quiet_NaN() : sign * std::numeric_limits<double>::infinity();
  if (e == 0) return sign * std::ldexp(m, -24);
  return sign * std::ldexp(1024 + m, e - 25);
}

ConstValue normalize_const(DType dt, ConstValue v) {
  if (dt.is_bool()) return truthy(v);
  if (dt.is_float()) {
    double d = std::holds_alternative<double>(v) ? std::get<double>(v)
               : std::holds_alternative<bool>(v) ? (std::get<bool>(v) ? 1.0 : 0.0)
                                                 : static_cast<double>(std::get<std::int64_t>(v));
    switch (dt.scalar) {
    case Scalar::Float16:
      return round_to_half(d);
    case Scalar::BFloat16:
      return round_to_bfloat16(d);
    case Scalar::Float32:
      return static_cast<double>(static_cast<float>(d));
    default:
      return d;
    }
  }
  if (dt.is_void()) return std::int64_t{0};
  std::uint64_t bits;
  if (auto* b = std::get_if<bool>(&v))
    bits = *b ? 1 : 0;
  else if (auto* i = std::get_if<std::int64_t>(&v))
    bits = static_cast<std::uint64_t>(*i);
  else {
    double d = std::trunc(std::get<double>(v));
    bits = !std::isfinite(d) ? 0
           : d >= 9.2e18     ? static_cast<std::uint64_t>(d)
                             : static_cast<std::uint64_t>(static_cast<std::int64_t>(std::fmax(d, -9.2e18)));
  }
  int nbits = dt.bits();
  if (nbits < 64) {
    std::uint64_t mask = (std::uint64_t{1} << nbits) - 1;
    bits &= mask;
    if (!dt.is_unsigned() && (bits >> (nbits - 1)) & 1) bits |= ~mask; // sign-extend
  }
  return static_cast<std::int64_t>(bits);
}

double const_as_double(DType dt, ConstValue v) { return to_double(dt, v); }

std::int64_t const_as_int(ConstValue v) {
  if (auto* b = std::get_if<bool>(&v)) return *b ? 1 : 0;
  if (auto* i = std::get_if<std::int64_t>(&v)) return *i;
  return static_cast<std::int64_t>(std::get<double>(v));
}

std::optional<AluResult> exec_alu(Ops op, DType out, DType in, std::span<const ConstValue> x) {
  auto arity = static_cast<std::size_t>(op_info(op).arity);
  if (op_info(op).arity != kAnyArity && x.size() != arity) return std::nullopt;
  const bool fl = in.is_float();
  switch (op) {
  case Ops::CAST:
    return cast_value(out, in, x[0]);
  case Ops::BITCAST:
    if (out.itemsize() != in.itemsize()) return std::nullopt;
    return AluResult{from_bits(out, raw_bits(in, x[0])), false};
  case Ops::NEG:
    if (out.is_bool()) return AluResult{ConstValue{!truthy(x[0])}, false};
    return fl ? float_result(out, -to_double(in, x[0])) : wrap_int(out, -to_i128(in, x[0]));
  case Ops::RECIP:
    return float_result(out, 1.0 / to_double(in, x[0]));
  case Ops::SQRT:
    return float_result(out, std::sqrt(to_double(in, x[0])));
  case Ops::EXP2:
    return float_result(out, std::exp2(to_double(in, x[0])));
  case Ops::LOG2:
    return float_result(out, std::log2(to_double(in, x[0])));
  case Ops::SIN:
    return float_result(out, std::sin(to_double(in, x[0])));
  case Ops::TRUNC:
    return fl ? float_result(out, std::trunc(to_double(in, x[0]))) : AluResult{x[0], false};
  case Ops::WHERE:
    return AluResult{normalize_const(out, truthy(x[0]) ? x[1] : x[2]), false};
  case Ops::MULACC:
    if (fl) return float_result(out, to_double(in, x[0]) * to_double(in, x[1]) + to_double(in, x[2]));
    return wrap_int(out, to_i128(in, x[0]) * to_i128(in, x[1]) + to_i128(in, x[2]));
  default:
    break;
  }
  if (x.size() != 2) return std::nullopt;
  if (fl) {
    double a = to_double(in, x[0]), b = to_double(in, x[1]);
    switch (op) {
    case Ops::ADD:
      return float_result(out, a + b);
    case Ops::SUB:
      return float_result(out, a - b);
    case Ops::MUL:
      return float_result(out, a * b);
    case Ops::FDIV:
      return float_result(out, a / b);
    case Ops::MAX:
      return float_result(out, std::isnan(a) || std::isnan(b) ? std::nan("") : (a < b ? b : a));
    case Ops::CMPLT:
      return AluResult{ConstValue{a < b}, false};
    case Ops::CMPNE:
      return AluResult{ConstValue{a != b}, false};
    case Ops::CMPEQ:
      return AluResult{ConstValue{a == b}, false};
    default:
      return std::nullopt;
    }
  }
  i128 a = to_i128(in, x[0]), b = to_i128(in, x[1]);
  switch (op) {
  case Ops::ADD:
    return wrap_int(out, a + b);
  case Ops::SUB:
    return wrap_int(out, a - b);
  case Ops::MUL: {
    // int64 * int64 fits in 128 bits; uint64 * uint64 may not, so compute unsigned and wrap.
    if (in.scalar == Scalar::UInt64) {
      u128 p = static_cast<u128>(a) * static_cast<u128>(b);
      AluResult r = wrap_int(out, static_cast<i128>(static_cast<std::uint64_t>(p)));
      r.overflowed = (p >> 64) != 0;
      return r;
    }
    return wrap_int(out, a * b);
  }
  case Ops::IDIV:
    if (b == 0) return std::nullopt;
    return wrap_int(out, a / b); // C++ division truncates toward zero, as C does
  case Ops::MOD:
    if (b == 0) return std::nullopt;
    return wrap_int(out, a % b); // sign of the dividend
  case Ops::MAX:
    return wrap_int(out, a < b ? b : a);
  case Ops::CMPLT:
    return AluResult{ConstValue{a < b}, false};
  case Ops::CMPNE:
    return AluResult{ConstValue{a != b}, false};
  case Ops::CMPEQ:
    return AluResult{ConstValue{a == b}, false};
  case Ops::AND:
    return wrap_int(out, a & b);
  case Ops::OR:
    return wrap_int(out, a | b);
  case Ops::XOR:
    return wrap_int(out, a ^ b);
  case Ops::SHL:
    if (b < 0 || b >= in.bits()) return std::nullopt;
    return wrap_int(out, static_cast<i128>(static_cast<u128>(a) << static_cast<int>(b)));
  case Ops::SHR:
    if (b < 0 || b >= in.bits()) return std::nullopt;
    return wrap_int(out, a >> static_cast<int>(b)); // arithmetic for signed; a >= 0 for unsigned
  default:
    return std::nullopt;
  }
}

} // namespace tg
