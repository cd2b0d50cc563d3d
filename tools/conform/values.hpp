// Buffer contents for launch cases: seeded random values of a dtype, and the comparison of a
// plugin's output with the interpreter's (exact for integers and bool; for floats a per-dtype
// tolerance scaled by the buffer's magnitude, and NaN/Inf parity).
#pragma once

#include <tg/abi.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tg::conform {

// `elements` values of `dtype`, from a generator seeded with `seed`. Integers are nonzero and
// small (|x| <= 100, unsigned 1..200) so products and divisions stay defined; floats have
// magnitudes in [0.25, 3] and either sign.
std::vector<std::byte> random_values(tg_dtype dtype, uint64_t elements, uint64_t seed);

// Empty when `got` matches `want`; otherwise a description of the first mismatches and their count.
std::string compare_values(tg_dtype dtype, std::span<const std::byte> got, std::span<const std::byte> want);

// The relative tolerance used for a float dtype (0 for exact dtypes).
double tolerance_of(tg_dtype dtype);

} // namespace tg::conform
