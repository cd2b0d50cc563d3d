#include "kernel/ir/dtype.hpp"
#include "kernel/ir/errors.hpp"

#include <array>
#include <limits>
#include <ostream>
#include <stdexcept>
#include <vector>

namespace tg {
namespace {

struct ScalarInfo {
  const char* name; // C-style name, as tinygrad prints it
  const char* attr; // attribute of tinygrad's `dtypes` namespace, used by repr()
  int itemsize;
  int priority;
};

// Indexed by Scalar (= ABI code).
constexpr std::array<ScalarInfo, kScalarCount> kScalars{{
    {"void", "void", 0, -1},
    {"bool", "bool", 1, 0},
    {"char", "char", 1, 1},
    {"unsigned char", "uchar", 1, 2},
    {"short", "short", 2, 3},
    {"unsigned short", "ushort", 2, 4},
    {"int", "int", 4, 5},
    {"unsigned int", "uint", 4, 6},
    {"long", "long", 8, 7},
    {"unsigned long", "ulong", 8, 8},
    {"half", "half", 2, 11},
    {"__bf16", "bfloat16", 2, 12},
    {"float", "float", 4, 13},
    {"double", "double", 8, 14},
}};

const ScalarInfo& info(Scalar s) { return kScalars[static_cast<std::size_t>(s)]; }

// Direct parents in the promotion lattice (tinygrad's promo_lattice without fp8: the 64-bit
// integers promote straight to the 16-bit floats).
std::vector<Scalar> parents(Scalar s) {
  using S = Scalar;
  switch (s) {
  case S::Bool:
    return {S::Int8, S::UInt8};
  case S::Int8:
    return {S::Int16};
  case S::Int16:
    return {S::Int32};
  case S::Int32:
    return {S::Int64};
  case S::Int64:
    return {S::Float16, S::BFloat16};
  case S::UInt8:
    return {S::Int16, S::UInt16};
  case S::UInt16:
    return {S::Int32, S::UInt32};
  case S::UInt32:
    return {S::Int64, S::UInt64};
  case S::UInt64:
    return {S::Float16, S::BFloat16};
  case S::Float16:
    return {S::Float32};
  case S::BFloat16:
    return {S::Float32};
  case S::Float32:
    return {S::Float64};
  default:
    return {};
  }
}

// Bit set of s and everything above it in the lattice.
std::uint32_t ancestors(Scalar s) {
  std::uint32_t set = 1u << static_cast<unsigned>(s);
  for (Scalar p : parents(s)) set |= ancestors(p);
  return set;
}

} // namespace

int DType::itemsize() const { return info(scalar).itemsize; }
int DType::priority() const { return info(scalar).priority; }

std::string DType::name() const {
  std::string n = info(scalar).name;
  if (count > 1) n += ".vec(" + std::to_string(count) + ")";
  if (ptr) n += local ? ".ptr(local)" : "*";
  return n;
}

std::string DType::repr() const {
  std::string r = std::string("dtypes.") + info(scalar).attr;
  if (count > 1) r += ".vec(" + std::to_string(count) + ")";
  if (ptr) r += local ? ".ptr(local=True)" : ".ptr()";
  return r;
}

double DType::min_value() const {
  if (is_float()) return -std::numeric_limits<double>::infinity();
  if (is_unsigned() || is_bool()) return 0.0;
  return static_cast<double>(int_min());
}

double DType::max_value() const {
  if (is_float()) return std::numeric_limits<double>::infinity();
  if (scalar == Scalar::UInt64) return 18446744073709551615.0;
  return static_cast<double>(int_max());
}

std::int64_t DType::int_min() const {
  if (is_unsigned() || is_bool() || is_void()) return 0;
  if (is_float() || bits() == 64) return std::numeric_limits<std::int64_t>::min();
  return -(std::int64_t{1} << (bits() - 1));
}

std::int64_t DType::int_max() const {
  if (is_bool()) return 1;
  if (is_void()) return 0;
  if (is_float() || bits() == 64) return std::numeric_limits<std::int64_t>::max();
  if (is_unsigned()) return (std::int64_t{1} << bits()) - 1;
  return (std::int64_t{1} << (bits() - 1)) - 1;
}

DType least_upper_dtype(DType a, DType b) {
  if (a.base() == b.base()) return a.base();
  std::uint32_t common = ancestors(a.scalar) & ancestors(b.scalar);
  // The least upper bound is the common ancestor of lowest priority.
  std::optional<Scalar> best;
  for (int i = 0; i < kScalarCount; ++i) {
    if (!(common & (1u << i))) continue;
    auto s = static_cast<Scalar>(i);
    if (!best || info(s).priority < info(*best).priority) best = s;
  }
  if (!best) throw DTypeError("least_upper_dtype: no common type for " + a.name() + " and " + b.name());
  return DType{*best};
}

DType promote_with_weak(DType tensor, WeakScalar scalar) {
  int tensor_kind = tensor.is_float() ? 2 : tensor.is_bool() ? 0 : 1;
  int scalar_kind = static_cast<int>(scalar);
  if (scalar_kind <= tensor_kind) return tensor.base();
  return least_upper_dtype(tensor, scalar == WeakScalar::Float ? dtypes::default_float : dtypes::default_int);
}

tg_dtype to_abi(DType dt) { return static_cast<tg_dtype>(dt.scalar); }

DType dtype_from_abi(tg_dtype code) {
  if (code < 0 || code >= kScalarCount)
    throw DTypeError("dtype_from_abi: unknown tg_dtype code " + std::to_string(code));
  return DType{static_cast<Scalar>(code)};
}

std::optional<DType> dtype_from_name(const std::string& name) {
  static const std::vector<std::pair<std::string, DType>> kNames{
      {"bool", dtypes::bool_},    {"int8", dtypes::int8},         {"char", dtypes::int8},
      {"uint8", dtypes::uint8},   {"uchar", dtypes::uint8},       {"int16", dtypes::int16},
      {"short", dtypes::int16},   {"uint16", dtypes::uint16},     {"ushort", dtypes::uint16},
      {"int32", dtypes::int32},   {"int", dtypes::int32},         {"uint32", dtypes::uint32},
      {"uint", dtypes::uint32},   {"int64", dtypes::int64},       {"long", dtypes::int64},
      {"uint64", dtypes::uint64}, {"ulong", dtypes::uint64},      {"float16", dtypes::float16},
      {"half", dtypes::float16},  {"bfloat16", dtypes::bfloat16}, {"float32", dtypes::float32},
      {"float", dtypes::float32}, {"float64", dtypes::float64},   {"double", dtypes::float64},
      {"void", dtypes::void_}};
  for (const auto& [n, dt] : kNames)
    if (n == name) return dt;
  return std::nullopt;
}

std::ostream& operator<<(std::ostream& os, DType dt) { return os << dt.repr(); }

} // namespace tg
