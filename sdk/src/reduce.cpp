#include <tg/sdk/interpreter.hpp>
#include <tg/sdk/plugin.hpp>
#include <tg/sdk/reduce.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>

namespace tg::sdk {
namespace {

template <class T> T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T> void store(std::byte* p, T v) { std::memcpy(p, &v, sizeof v); }

// NaN wins, as a max over floats on a GPU (fmax would drop it) and the interpreter's MAX do.
template <class T> T max_of(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
  }
  return a < b ? b : a;
}

// Storage type S, arithmetic in U (unsigned for wrapping integer sums).
template <class S, class U> void combine(ReduceOp op, std::byte* acc, const std::byte* in, uint64_t count) {
  for (uint64_t i = 0; i < count; ++i) {
    S a = load<S>(acc + i * sizeof(S)), b = load<S>(in + i * sizeof(S));
    S r = op == ReduceOp::sum ? S(U(a) + U(b)) : max_of(a, b);
    store(acc + i * sizeof(S), r);
  }
}

template <class ToFloat, class FromFloat>
void combine16(ReduceOp op, std::byte* acc, const std::byte* in, uint64_t count, ToFloat widen,
               FromFloat narrow) {
  for (uint64_t i = 0; i < count; ++i) {
    float a = float(widen(load<uint16_t>(acc + 2 * i))), b = float(widen(load<uint16_t>(in + 2 * i)));
    store<uint16_t>(acc + 2 * i, narrow(op == ReduceOp::sum ? a + b : max_of(a, b)));
  }
}

} // namespace

void reduce_into(tg_dtype dtype, ReduceOp op, std::byte* acc, const std::byte* in, uint64_t count) {
  switch (dtype) {
  case TG_DTYPE_BOOL:
    for (uint64_t i = 0; i < count; ++i)
      acc[i] = std::byte(acc[i] != std::byte{0} || in[i] != std::byte{0}); // OR is both sum and max
    return;
  case TG_DTYPE_INT8:
    return combine<int8_t, uint8_t>(op, acc, in, count);
  case TG_DTYPE_UINT8:
    return combine<uint8_t, uint8_t>(op, acc, in, count);
  case TG_DTYPE_INT16:
    return combine<int16_t, uint16_t>(op, acc, in, count);
  case TG_DTYPE_UINT16:
    return combine<uint16_t, uint16_t>(op, acc, in, count);
  case TG_DTYPE_INT32:
    return combine<int32_t, uint32_t>(op, acc, in, count);
  case TG_DTYPE_UINT32:
    return combine<uint32_t, uint32_t>(op, acc, in, count);
  case TG_DTYPE_INT64:
    return combine<int64_t, uint64_t>(op, acc, in, count);
  case TG_DTYPE_UINT64:
    return combine<uint64_t, uint64_t>(op, acc, in, count);
  case TG_DTYPE_FLOAT32:
    return combine<float, float>(op, acc, in, count);
  case TG_DTYPE_FLOAT64:
    return combine<double, double>(op, acc, in, count);
  case TG_DTYPE_FLOAT16:
    return combine16(op, acc, in, count, half_bits_to_double,
                     [](float v) { return float_to_half_bits(double(v)); });
  case TG_DTYPE_BFLOAT16:
    return combine16(op, acc, in, count, bfloat16_bits_to_double, float_to_bfloat16_bits);
  default:
    throw PluginError(TG_ERROR_INVALID_ARGUMENT, "cannot reduce dtype " + std::to_string(dtype));
  }
}

} // namespace tg::sdk
