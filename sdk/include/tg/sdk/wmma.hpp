// The warp-wide matrix multiply-accumulate of kernel IR 1.1 (TG_OP_WMMA): its shapes and which
// matrix element each lane holds in each fragment position. The interpreter, the renderers'
// tests and the core's lowering agree on this one table (docs/abi.md section 5.3).
#pragma once

#include <tg/abi.h>

#include <cstdint>
#include <optional>

namespace tg::sdk {

struct WmmaShape {
  int m = 0, n = 0, k = 0;
  int warp = 32;                             // lanes that take part
  int a_lanes = 0, b_lanes = 0, c_lanes = 0; // vector lanes per warp lane of A, B and C/D
};

// The shape of a TG_WMMA_* code, or nullopt for an unknown one.
std::optional<WmmaShape> wmma_shape(int64_t code);

// Row and column of a matrix element.
struct MatrixElement {
  int row = 0, col = 0;
};

// Fragment position `i` of warp lane `lane` holds: A[row = m][col = k], B[row = k][col = n],
// C/D[row = m][col = n]. For M16N8K16 (with g = lane / 4, t = lane % 4):
//   A i = 0..7: row g + 8 * (i / 2 % 2), col 2t + i % 2 + 8 * (i / 4)
//   B i = 0..3: row 2t + i % 2 + 8 * (i / 2), col g
//   C i = 0..3: row g + 8 * (i / 2), col 2t + i % 2
MatrixElement wmma_a_element(int64_t code, int lane, int i);
MatrixElement wmma_b_element(int64_t code, int lane, int i);
MatrixElement wmma_c_element(int64_t code, int lane, int i);

// Input dtypes a shape accepts (FLOAT16, BFLOAT16 for M16N8K16); C/D are FLOAT32.
bool wmma_input_dtype(int64_t code, tg_dtype dt);

} // namespace tg::sdk
