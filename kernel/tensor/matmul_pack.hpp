// The CPU matmul over b packed into column panels. A register tile of 4 rows x 16 columns reads
// 16 adjacent values of b per reduce step; in place those rows of b are n apart (4 or 8 KB for
// n = 1024 or 2048), so every step touches a new cache line and the lines of one panel collide
// in a few L1/L2 sets. A copy kernel first stores b as (n/16, k, 16): each panel contiguous. The
// product then keeps its own (..., m, n/16, 16) shape (the kernel the heuristic tiles:
// heuristic_cpu.cpp cpu_product_tile), and the (..., m, n) result is a view of it (schedule.cpp:
// reshapes_stored).
#pragma once

#include "kernel/tensor/tensor.hpp"

#include <optional>

namespace tg {

// a (..., m, k) @ b (k, n) with b packed, when the device runs work groups as CPU tasks, the
// product is float32 and large enough for the copy to pay (m, k >= 64, n a multiple of 16, at
// least 2^24 multiply-adds), and neither NOOPT=1 nor TG_PACK=0 is set; else nullopt.
std::optional<Tensor> packed_matmul(const Tensor& a, const Tensor& b);

// Whether `device` runs work groups as CPU tasks (the devices for which packing pays), unless
// NOOPT=1 or TG_PACK=0.
bool packs_on(const std::string& device);

// The packed graph itself, on any device and size: a (..., m, k) @ b (k, n), n a multiple of 16
// (TensorError otherwise). packed_matmul's choice aside, for tests.
Tensor packed_product(const Tensor& a, const Tensor& b);

// a (..., m, k) @ b (k, n) or (..., k, n) with b's batch dims a's own, whose gradient for b
// reads a stored transposed: a^T @ g with a^T contiguous (k-contiguous for the matrix units).
// Tensor::matmul takes it for 16-bit operands on a device with matrix units for them (and
// n >= 128); for tests on any device.
Tensor matmul_with_transposed_gradient(const Tensor& a, const Tensor& b);

} // namespace tg
