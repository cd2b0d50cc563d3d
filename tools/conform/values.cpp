#include "tools/conform/values.hpp"

#include <tg/sdk/interpreter.hpp>
#include <tg/sdk/kernel_ir.hpp>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

namespace tg::conform {
namespace {

double read_float(tg_dtype dt, const std::byte* p) {
  switch (dt) {
  case TG_DTYPE_FLOAT16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return tg::sdk::half_bits_to_double(h);
  }
  case TG_DTYPE_BFLOAT16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return tg::sdk::bfloat16_bits_to_double(h);
  }
  case TG_DTYPE_FLOAT32: {
    float f;
    std::memcpy(&f, p, 4);
    return double(f);
  }
  default: {
    double d;
    std::memcpy(&d, p, 8);
    return d;
  }
  }
}

void write_float(tg_dtype dt, std::byte* p, double v) {
  switch (dt) {
  case TG_DTYPE_FLOAT16: {
    uint16_t h = tg::sdk::float_to_half_bits(v);
    std::memcpy(p, &h, 2);
    return;
  }
  case TG_DTYPE_BFLOAT16: {
    uint16_t h = tg::sdk::float_to_bfloat16_bits(float(v));
    std::memcpy(p, &h, 2);
    return;
  }
  case TG_DTYPE_FLOAT32: {
    float f = float(v);
    std::memcpy(p, &f, 4);
    return;
  }
  default:
    std::memcpy(p, &v, 8);
  }
}

// Integers as int64 (signed sign-extended, unsigned zero-extended) for printing and comparing.
int64_t read_int(tg_dtype dt, const std::byte* p) {
  uint64_t raw = 0;
  const size_t n = tg::sdk::dtype_size(dt);
  std::memcpy(&raw, p, n);
  if (dt == TG_DTYPE_BOOL) return raw != 0 ? 1 : 0;
  if (tg::sdk::dtype_is_signed_int(dt) && n < 8 && (raw >> (n * 8 - 1)) != 0) raw |= ~uint64_t(0) << (n * 8);
  return int64_t(raw);
}

} // namespace

double tolerance_of(tg_dtype dtype) {
  switch (dtype) {
  case TG_DTYPE_FLOAT16:
    return 1e-2; // ~10 ulp
  case TG_DTYPE_BFLOAT16:
    return 4e-2; // ~10 ulp
  case TG_DTYPE_FLOAT32:
    return 2e-5;
  case TG_DTYPE_FLOAT64:
    return 1e-12;
  default:
    return 0;
  }
}

std::vector<std::byte> random_values(tg_dtype dtype, uint64_t elements, uint64_t seed) {
  const size_t size = tg::sdk::dtype_size(dtype);
  std::vector<std::byte> out(size_t(elements) * size);
  std::mt19937_64 rng(seed);
  for (uint64_t i = 0; i < elements; ++i) {
    std::byte* p = out.data() + i * size;
    if (tg::sdk::dtype_is_float(dtype)) {
      double magnitude = 0.25 + 2.75 * std::uniform_real_distribution<double>(0, 1)(rng);
      write_float(dtype, p, (rng() & 1) ? -magnitude : magnitude);
    } else if (dtype == TG_DTYPE_BOOL) {
      p[0] = std::byte(rng() & 1);
    } else {
      int64_t v = int64_t(1 + rng() % (tg::sdk::dtype_is_signed_int(dtype) ? 100 : 200));
      if (tg::sdk::dtype_is_signed_int(dtype) && (rng() & 1)) v = -v;
      std::memcpy(p, &v, size); // little-endian: the low bytes
    }
  }
  return out;
}

std::string compare_values(tg_dtype dtype, std::span<const std::byte> got, std::span<const std::byte> want) {
  const size_t size = tg::sdk::dtype_size(dtype);
  const size_t n = want.size() / size;
  if (got.size() != want.size()) return "size differs";
  const bool fl = tg::sdk::dtype_is_float(dtype);
  double scale = 1.0; // absolute tolerance grows with the buffer's magnitude
  if (fl)
    for (size_t i = 0; i < n; ++i) {
      double w = read_float(dtype, want.data() + i * size);
      if (std::isfinite(w)) scale = std::max(scale, std::fabs(w));
    }
  const double tol = tolerance_of(dtype);
  size_t bad = 0;
  std::ostringstream first;
  first.precision(9);
  for (size_t i = 0; i < n; ++i) {
    const std::byte* g = got.data() + i * size;
    const std::byte* w = want.data() + i * size;
    bool ok;
    if (fl) {
      double a = read_float(dtype, g), b = read_float(dtype, w);
      if (std::isnan(b) || std::isnan(a))
        ok = std::isnan(a) && std::isnan(b);
      else if (std::isinf(b) || std::isinf(a))
        ok = a == b;
      else
        ok = std::fabs(a - b) <= tol * scale + tol * std::fabs(b);
      if (!ok && bad < 4) first << (bad ? "; " : "") << "element " << i << ": got " << a << ", want " << b;
    } else {
      int64_t a = read_int(dtype, g), b = read_int(dtype, w);
      ok = a == b;
      if (!ok && bad < 4) first << (bad ? "; " : "") << "element " << i << ": got " << a << ", want " << b;
    }
    if (!ok) ++bad;
  }
  if (bad == 0) return {};
  std::string s = std::to_string(bad) + " of " + std::to_string(n) + " " + tg::sdk::dtype_name(dtype) +
                  " elements differ (" + first.str() + (bad > 4 ? "; ..." : "") + ")";
  if (fl) {
    std::ostringstream t;
    t << "; tolerance " << tol << " relative + " << tol * scale << " absolute";
    s += t.str();
  }
  return s;
}

} // namespace tg::conform
