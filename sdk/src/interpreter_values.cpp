// The reference interpreter's values: 16-bit float conversions, loads and stores of each dtype,
// and every ALU op on one lane as the ABI defines it (interpreter_values.hpp).
#include "interpreter_values.hpp"

#include <tg/sdk/interpreter.hpp>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

namespace tg::sdk {

// ------------------------------------------------------------------------------------------
// 16-bit floats
// ------------------------------------------------------------------------------------------

uint16_t float_to_half_bits(double value) {
  const uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  if (std::isnan(value)) return uint16_t(sign | 0x7e00);
  const double a = std::fabs(value);
  if (a >= 65520.0) return uint16_t(sign | 0x7c00); // rounds past the largest half, 65504
  if (a < std::ldexp(1.0, -14))                     // subnormal: a multiple of 2^-24
    return uint16_t(sign | uint16_t(std::nearbyint(a * std::ldexp(1.0, 24))));
  int e = 0;
  double m = std::frexp(a, &e);               // a = m * 2^e, m in [0.5, 1)
  double scaled = std::nearbyint(m * 2048.0); // 11 significant bits, ties to even
  if (scaled == 2048.0) {
    scaled = 1024.0;
    ++e;
  }
  return uint16_t(sign | uint16_t((e + 14) << 10) | (uint16_t(scaled) & 0x3ff));
}

double half_bits_to_double(uint16_t h) {
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  double v = exp == 0 ? std::ldexp(double(mant), -24)
             : exp == 31
                 ? (mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity())
                 : std::ldexp(double(mant | 0x400), exp - 25);
  return (h & 0x8000) ? -v : v;
}

uint16_t float_to_bfloat16_bits(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return uint16_t((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return uint16_t(bits >> 16);
}

double bfloat16_bits_to_double(uint16_t bits) { return double(std::bit_cast<float>(uint32_t(bits) << 16)); }

namespace interp {

namespace {
unsigned bits_of(tg_dtype dt) { return dt == TG_DTYPE_BOOL ? 1 : unsigned(dtype_size(dt) * 8); }
} // namespace

// Wraps an integer to its dtype's width.
uint64_t wrap(tg_dtype dt, uint64_t v) {
  if (dt == TG_DTYPE_BOOL) return v & 1u;
  unsigned bits = bits_of(dt);
  if (bits >= 64) return v;
  uint64_t mask = (uint64_t(1) << bits) - 1;
  v &= mask;
  if (is_signed(dt) && (v >> (bits - 1)) != 0) v |= ~mask;
  return v;
}

// Rounds a value to a float format (bfloat16 through float, as its math is float math).
double round_to(tg_dtype dt, double v) {
  switch (dt) {
  case TG_DTYPE_FLOAT16:
    return half_bits_to_double(float_to_half_bits(v));
  case TG_DTYPE_BFLOAT16:
    return bfloat16_bits_to_double(float_to_bfloat16_bits(float(v)));
  case TG_DTYPE_FLOAT32:
    return double(float(v));
  default:
    return v;
  }
}

Lane int_lane(uint64_t u) {
  Lane l;
  l.u = u;
  return l;
}
Lane float_lane(double f) {
  Lane l;
  l.f = f;
  return l;
}

Lane load_element(tg_dtype dt, const std::byte* p) {
  uint64_t raw = 0;
  std::memcpy(&raw, p, dtype_size(dt)); // little-endian: the low bytes
  switch (dt) {
  case TG_DTYPE_BOOL:
    return int_lane(raw != 0 ? 1 : 0);
  case TG_DTYPE_FLOAT16:
    return float_lane(half_bits_to_double(uint16_t(raw)));
  case TG_DTYPE_BFLOAT16:
    return float_lane(bfloat16_bits_to_double(uint16_t(raw)));
  case TG_DTYPE_FLOAT32:
    return float_lane(double(std::bit_cast<float>(uint32_t(raw))));
  case TG_DTYPE_FLOAT64:
    return float_lane(std::bit_cast<double>(raw));
  default:
    return int_lane(wrap(dt, raw));
  }
}

void store_element(tg_dtype dt, std::byte* p, Lane v) {
  uint64_t raw = v.u;
  switch (dt) {
  case TG_DTYPE_BOOL:
    raw = v.u != 0 ? 1 : 0;
    break;
  case TG_DTYPE_FLOAT16:
    raw = float_to_half_bits(v.f);
    break;
  case TG_DTYPE_BFLOAT16:
    raw = float_to_bfloat16_bits(float(v.f));
    break;
  case TG_DTYPE_FLOAT32:
    raw = std::bit_cast<uint32_t>(float(v.f));
    break;
  default:
    break;
  }
  std::memcpy(p, &raw, dtype_size(dt));
}

namespace {
// float -> int truncates toward zero; out-of-range results are unspecified by the ABI (here:
// saturated, NaN gives 0), but never undefined behaviour in this program.
uint64_t float_to_int(tg_dtype to, double v) {
  if (std::isnan(v)) return 0;
  double t = std::trunc(v);
  if (is_signed(to) || t < 0) {
    if (t <= -9223372036854775808.0) return wrap(to, uint64_t(std::numeric_limits<int64_t>::min()));
    if (t >= 9223372036854775808.0) return wrap(to, uint64_t(std::numeric_limits<int64_t>::max()));
    return wrap(to, uint64_t(int64_t(t)));
  }
  if (t >= 18446744073709551616.0) return wrap(to, std::numeric_limits<uint64_t>::max());
  return wrap(to, uint64_t(t));
}
} // namespace

Lane cast_lane(Lane v, tg_dtype from, tg_dtype to) {
  if (from == to) return v;
  if (to == TG_DTYPE_BOOL) return int_lane(is_float(from) ? (v.f != 0.0 ? 1 : 0) : (v.u != 0 ? 1 : 0));
  if (is_float(to)) {
    if (is_float(from)) return float_lane(round_to(to, v.f));
    // Integers convert exactly to long double (64-bit mantissa), then round once.
    long double x = is_signed(from) ? static_cast<long double>(v.i) : static_cast<long double>(v.u);
    switch (to) {
    case TG_DTYPE_FLOAT64:
      return float_lane(double(x));
    case TG_DTYPE_FLOAT32:
      return float_lane(double(float(x)));
    case TG_DTYPE_BFLOAT16:
      return float_lane(round_to(to, double(float(x))));
    default:
      return float_lane(round_to(to, double(x)));
    }
  }
  if (is_float(from)) return int_lane(float_to_int(to, v.f));
  return int_lane(wrap(to, v.u)); // the source is already sign- or zero-extended
}

Lane bitcast_lane(Lane v, tg_dtype from, tg_dtype to) {
  std::byte tmp[8] = {};
  store_element(from, tmp, v);
  return load_element(to, tmp);
}

// ------------------------------------------------------------------------------------------
// ALU
// ------------------------------------------------------------------------------------------

namespace {
template <class F> double float_math(tg_dtype dt, double a, F&& f) {
  if (dt == TG_DTYPE_FLOAT64) return f(a);
  return round_to(dt, double(f(float(a))));
}

template <class F> double float_math(tg_dtype dt, double a, double b, F&& f) {
  if (dt == TG_DTYPE_FLOAT64) return f(a, b);
  return round_to(dt, double(f(float(a), float(b))));
}
} // namespace

Lane unary(tg_op op, tg_dtype dt, Lane a) {
  if (is_float(dt)) {
    switch (op) {
    case TG_OP_NEG:
      return float_lane(-a.f);
    case TG_OP_RECIP:
      return float_lane(float_math(dt, a.f, [](auto x) { return decltype(x)(1) / x; }));
    case TG_OP_SQRT:
      return float_lane(float_math(dt, a.f, [](auto x) { return std::sqrt(x); }));
    case TG_OP_EXP2:
      return float_lane(float_math(dt, a.f, [](auto x) { return std::exp2(x); }));
    case TG_OP_LOG2:
      return float_lane(float_math(dt, a.f, [](auto x) { return std::log2(x); }));
    case TG_OP_SIN:
      return float_lane(float_math(dt, a.f, [](auto x) { return std::sin(x); }));
    case TG_OP_TRUNC:
      return float_lane(std::trunc(a.f));
    default:
      break;
    }
  } else {
    if (op == TG_OP_NEG) return int_lane(dt == TG_DTYPE_BOOL ? (a.u ^ 1u) : wrap(dt, 0 - a.u));
    if (op == TG_OP_TRUNC) return a;
  }
  throw std::logic_error(std::string("unary ") + op_name(op) + " on " + dtype_name(dt)); // validated away
}

namespace {
Lane int_divide(tg_op op, tg_dtype dt, Lane a, Lane b) {
  // x / 0, x % 0 and INT_MIN / -1 are unspecified by the ABI; they give 0 and the wrapped
  // quotient here (as on the CPU plugin) instead of trapping.
  if (b.u == 0) return int_lane(0);
  if (is_signed(dt)) {
    if (b.i == -1) return int_lane(op == TG_OP_IDIV ? wrap(dt, 0 - a.u) : 0);
    return int_lane(wrap(dt, uint64_t(op == TG_OP_IDIV ? a.i / b.i : a.i % b.i)));
  }
  return int_lane(op == TG_OP_IDIV ? a.u / b.u : a.u % b.u);
}

Lane binary_bool(tg_op op, Lane a, Lane b) {
  uint64_t x = a.u, y = b.u;
  switch (op) {
  case TG_OP_ADD:
  case TG_OP_MAX:
  case TG_OP_OR:
    return int_lane(x | y);
  case TG_OP_SUB:
  case TG_OP_XOR:
  case TG_OP_CMPNE:
    return int_lane(x ^ y);
  case TG_OP_MUL:
  case TG_OP_AND:
    return int_lane(x & y);
  case TG_OP_IDIV:
  case TG_OP_SHL:
  case TG_OP_SHR:
    return int_lane(x);
  case TG_OP_MOD:
    return int_lane(0);
  case TG_OP_CMPLT:
    return int_lane(!x && y ? 1 : 0);
  case TG_OP_CMPEQ:
    return int_lane(x == y ? 1 : 0);
  default:
    throw std::logic_error(std::string("binary ") + op_name(op) + " on bool");
  }
}
} // namespace

Lane binary(tg_op op, tg_dtype dt, Lane a, Lane b) {
  if (dt == TG_DTYPE_BOOL) return binary_bool(op, a, b);
  if (is_float(dt)) {
    switch (op) {
    case TG_OP_ADD:
      return float_lane(float_math(dt, a.f, b.f, [](auto x, auto y) { return x + y; }));
    case TG_OP_SUB:
      return float_lane(float_math(dt, a.f, b.f, [](auto x, auto y) { return x - y; }));
    case TG_OP_MUL:
      return float_lane(float_math(dt, a.f, b.f, [](auto x, auto y) { return x * y; }));
    case TG_OP_FDIV:
      return float_lane(float_math(dt, a.f, b.f, [](auto x, auto y) { return x / y; }));
    case TG_OP_MAX: // NaN in either operand gives NaN
      return std::isnan(a.f) ? a : (a.f > b.f ? a : b);
    case TG_OP_CMPLT:
      return int_lane(a.f < b.f ? 1 : 0);
    case TG_OP_CMPNE:
      return int_lane(a.f != b.f ? 1 : 0); // unordered: NaN != anything
    case TG_OP_CMPEQ:
      return int_lane(a.f == b.f ? 1 : 0);
    default:
      break;
    }
    throw std::logic_error(std::string("binary ") + op_name(op) + " on " + dtype_name(dt));
  }
  const bool sg = is_signed(dt);
  switch (op) {
  case TG_OP_ADD:
    return int_lane(wrap(dt, a.u + b.u));
  case TG_OP_SUB:
    return int_lane(wrap(dt, a.u - b.u));
  case TG_OP_MUL:
    return int_lane(wrap(dt, a.u * b.u));
  case TG_OP_IDIV:
  case TG_OP_MOD:
    return int_divide(op, dt, a, b);
  case TG_OP_MAX:
    return (sg ? a.i > b.i : a.u > b.u) ? a : b;
  case TG_OP_CMPLT:
    return int_lane((sg ? a.i < b.i : a.u < b.u) ? 1 : 0);
  case TG_OP_CMPNE:
    return int_lane(a.u != b.u ? 1 : 0);
  case TG_OP_CMPEQ:
    return int_lane(a.u == b.u ? 1 : 0);
  case TG_OP_AND:
    return int_lane(a.u & b.u);
  case TG_OP_OR:
    return int_lane(a.u | b.u);
  case TG_OP_XOR:
    return int_lane(a.u ^ b.u);
  case TG_OP_SHL:
  case TG_OP_SHR: {
    unsigned amount = unsigned(b.u & (bits_of(dt) - 1)); // shifts >= the width are unspecified
    if (op == TG_OP_SHL) return int_lane(wrap(dt, a.u << amount));
    return int_lane(sg ? uint64_t(a.i >> amount) : a.u >> amount);
  }
  default:
    throw std::logic_error(std::string("binary ") + op_name(op) + " on " + dtype_name(dt));
  }
}

Lane mulacc(tg_dtype dt, Lane a, Lane b, Lane c) {
  if (dt == TG_DTYPE_BOOL) return int_lane((a.u & b.u) | c.u);
  if (!is_float(dt)) return int_lane(wrap(dt, a.u * b.u + c.u));
  if (dt == TG_DTYPE_FLOAT64) return float_lane(a.f * b.f + c.f);
  // One rounding to float per step, then to the format: a * b + c as the ABI writes it.
  float p = float(a.f) * float(b.f);
  if (dt != TG_DTYPE_FLOAT32) p = float(round_to(dt, double(p)));
  return float_lane(round_to(dt, double(p + float(c.f))));
}

} // namespace interp
} // namespace tg::sdk
