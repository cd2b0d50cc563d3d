// The reference interpreter's values and their arithmetic (sdk/src/interpreter.cpp's machine runs
// the kernel IR on these): one 8-byte lane per element, each op as the ABI defines it for a dtype.
#pragma once

#include <tg/abi.h>
#include <tg/sdk/kernel_ir.hpp> // dtype_is_float, dtype_is_signed_int

#include <cstddef>
#include <cstdint>

namespace tg::sdk::interp {

// Integers are kept sign- or zero-extended from their width, bool as 0/1, floats as the double
// holding the exact value of their format.
union Lane {
  int64_t i;
  uint64_t u;
  double f;
};

inline bool is_float(tg_dtype dt) { return dtype_is_float(dt); }
inline bool is_signed(tg_dtype dt) { return dtype_is_signed_int(dt); }

uint64_t wrap(tg_dtype dt, uint64_t v); // an integer wrapped to its dtype's width
double round_to(tg_dtype dt, double v); // a value rounded to a float format
Lane int_lane(uint64_t u);
Lane float_lane(double f);
Lane load_element(tg_dtype dt, const std::byte* p);
void store_element(tg_dtype dt, std::byte* p, Lane v);
Lane cast_lane(Lane v, tg_dtype from, tg_dtype to);
Lane bitcast_lane(Lane v, tg_dtype from, tg_dtype to);
Lane unary(tg_op op, tg_dtype dt, Lane a);
Lane binary(tg_op op, tg_dtype dt, Lane a, Lane b);
Lane mulacc(tg_dtype dt, Lane a, Lane b, Lane c); // a * b + c, rounded as the ABI writes it

} // namespace tg::sdk::interp
