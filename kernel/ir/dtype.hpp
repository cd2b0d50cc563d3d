#pragma once
// Data types: scalar kinds with their ABI codes, vector/pointer decorations, and tinygrad's
// promotion lattice. A DType is a small value type; equality is field equality.
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

#include "tg/abi.h"

namespace tg {

// Scalar kinds, numbered exactly as the ABI's TG_DTYPE_* codes so conversion is a cast.
enum class Scalar : std::uint8_t {
  Void = TG_DTYPE_VOID,
  Bool = TG_DTYPE_BOOL,
  Int8 = TG_DTYPE_INT8,
  UInt8 = TG_DTYPE_UINT8,
  Int16 = TG_DTYPE_INT16,
  UInt16 = TG_DTYPE_UINT16,
  Int32 = TG_DTYPE_INT32,
  UInt32 = TG_DTYPE_UINT32,
  Int64 = TG_DTYPE_INT64,
  UInt64 = TG_DTYPE_UINT64,
  Float16 = TG_DTYPE_FLOAT16,
  BFloat16 = TG_DTYPE_BFLOAT16,
  Float32 = TG_DTYPE_FLOAT32,
  Float64 = TG_DTYPE_FLOAT64,
};
inline constexpr int kScalarCount = TG_DTYPE_COUNT;

struct DType {
  Scalar scalar = Scalar::Void;
  std::uint16_t count = 1; // vector lanes (VECTORIZE); 1 = scalar
  bool ptr = false;        // a pointer to `scalar` elements (DEFINE_GLOBAL/LOCAL, INDEX)
  bool local = false;      // pointer into work-group local memory

  constexpr bool operator==(const DType&) const = default;

  // Python-like predicates (on the scalar part).
  constexpr bool is_bool() const { return scalar == Scalar::Bool; }
  constexpr bool is_void() const { return scalar == Scalar::Void; }
  constexpr bool is_float() const {
    return scalar == Scalar::Float16 || scalar == Scalar::BFloat16 || scalar == Scalar::Float32 ||
           scalar == Scalar::Float64;
  }
  constexpr bool is_unsigned() const {
    return scalar == Scalar::UInt8 || scalar == Scalar::UInt16 || scalar == Scalar::UInt32 ||
           scalar == Scalar::UInt64;
  }
  constexpr bool is_int() const { return !is_bool() && !is_void() && !is_float(); }
  constexpr DType base() const { return DType{scalar}; } // scalar element type
  constexpr DType vec(std::uint16_t n) const { return DType{scalar, n, false, false}; }
  constexpr DType ptr_to(bool is_local = false) const { return DType{scalar, count, true, is_local}; }

  int itemsize() const; // bytes of one scalar element (bool = 1, void = 0)
  int bits() const { return itemsize() * 8; }
  int priority() const;     // tinygrad's ordering used to break ties in promotion
  std::string name() const; // "int", "float", "half", "float.vec(4)", "float*" ...
  std::string repr() const; // "dtypes.int", "dtypes.float.ptr()" ...
  // Smallest and largest representable value as double (for floats: -inf / +inf).
  double min_value() const;
  double max_value() const;
  // Integer bounds (bool 0..1); for uint64 the max saturates at INT64_MAX.
  std::int64_t int_min() const;
  std::int64_t int_max() const;
};

namespace dtypes {
inline constexpr DType void_{Scalar::Void};
inline constexpr DType bool_{Scalar::Bool};
inline constexpr DType int8{Scalar::Int8};
inline constexpr DType uint8{Scalar::UInt8};
inline constexpr DType int16{Scalar::Int16};
inline constexpr DType uint16{Scalar::UInt16};
inline constexpr DType int32{Scalar::Int32};
inline constexpr DType uint32{Scalar::UInt32};
inline constexpr DType int64{Scalar::Int64};
inline constexpr DType uint64{Scalar::UInt64};
inline constexpr DType float16{Scalar::Float16};
inline constexpr DType bfloat16{Scalar::BFloat16};
inline constexpr DType float32{Scalar::Float32};
inline constexpr DType float64{Scalar::Float64};
inline constexpr DType default_int = int32;
inline constexpr DType default_float = float32;
// The default dtype of symbolic index expressions (variables, shapes). Kernels build their index
// math in int64 instead and narrow each value that fits to int32 (codegen/index_width.hpp).
inline constexpr DType index = int32;
} // namespace dtypes

// Least upper bound in tinygrad's promotion lattice (bool < int8/uint8 < ... < float64).
DType least_upper_dtype(DType a, DType b);

// A Python scalar's "kind": the operand of `tensor * 2.5` is a weak float.
enum class WeakScalar : std::uint8_t { Bool, Int, Float };
// Result dtype of `tensor(dt) op weak_scalar`: the tensor's dtype wins unless the scalar's kind is
// higher (bool < int < float), then the default dtype of that kind joins in.
DType promote_with_weak(DType tensor, WeakScalar scalar);

// ABI mapping. Vector/pointer decorations are carried separately by the ABI (vcount, flags).
tg_dtype to_abi(DType dt);
DType dtype_from_abi(tg_dtype code);                           // throws DTypeError for an unknown code
std::optional<DType> dtype_from_name(const std::string& name); // "float32", "int", "half" ...
std::ostream& operator<<(std::ostream& os, DType dt);          // repr()

} // namespace tg
