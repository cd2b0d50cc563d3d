#pragma once
// Scalar semantics of every ALU op, shared by constant folding and the evaluator so both agree:
// integers follow C (wrapping to the dtype's width, truncating division), floats follow IEEE,
// computed in double and rounded to the result dtype's precision.
#include <cstdint>
#include <optional>
#include <span>
#include <variant>

#include "kernel/ir/dtype.hpp"
#include "kernel/ir/ops.hpp"

namespace tg {

// A constant's value. Integers of every width (uint64 as its bit pattern) live in int64_t.
using ConstValue = std::variant<bool, std::int64_t, double>;
// The value as stored for dtype: ints wrapped to the dtype's width, floats rounded to its precision.
ConstValue normalize_const(DType dt, ConstValue v);
double const_as_double(DType dt, ConstValue v);
std::int64_t const_as_int(ConstValue v);

struct AluResult {
  ConstValue value;
  bool overflowed = false; // an integer result did not fit its dtype and was wrapped
};

// Applies op to operands of dtype `in` (comparisons, casts) giving dtype `out`. Returns nullopt where
// C leaves the result undefined: integer division or modulo by zero, shifts by >= the width, a float
// cast to an integer it does not fit.
std::optional<AluResult> exec_alu(Ops op, DType out, DType in, std::span<const ConstValue> operands);

// Rounding of a double to the 16-bit float formats, and their bit patterns (for BITCAST).
double round_to_half(double x);
double round_to_bfloat16(double x);
std::uint16_t half_to_bits(double x);
double half_from_bits(std::uint16_t bits);

} // namespace tg
