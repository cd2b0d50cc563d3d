#include "matrix_units.hpp"

#include <tg/sdk/matrix_unit.hpp>

namespace tg::amd {
namespace {

using sdk::matrix_layout;
using sdk::matrix_unit;

// Every layout below is read from AMD's Matrix Instruction Calculator (github.com/ROCm/
// amd_matrix_instruction_calculator, `--detail-instruction`: "Register to matrix element
// mapping"), for CDNA2 (gfx90a), CDNA3 (gfx942) and RDNA3 (gfx1100, `--wavefront 32`). There
// GPR g bits [16h+15:16h] of a packed 16-bit operand is element 2g + h of the LLVM vector, and
// GPR g of a 32-bit operand is element g.

// MFMA 16x16x16 with 16-bit inputs (the same mapping for f16 and bf16, CDNA2 and CDNA3), wave64:
//   A: i = lane % 16, k = 4 * floor(lane / 16) + element
//   B: j = lane % 16, k = 4 * floor(lane / 16) + element
//   C, D: i = 4 * floor(lane / 16) + element, j = lane % 16
tg_matrix_unit mfma_16x16x16(const char* name, tg_dtype input) {
  const auto a = matrix_layout({{1, 0}, {2, 0}, {4, 0}, {8, 0}, {0, 4}, {0, 8}}, {{0, 1}, {0, 2}});
  const auto b = matrix_layout({{0, 1}, {0, 2}, {0, 4}, {0, 8}, {4, 0}, {8, 0}}, {{1, 0}, {2, 0}});
  const auto c = matrix_layout({{0, 1}, {0, 2}, {0, 4}, {0, 8}, {4, 0}, {8, 0}}, {{1, 0}, {2, 0}});
  return matrix_unit(name, 16, 16, 16, 6, input, input, TG_DTYPE_FLOAT32, a, b, c);
}

// WMMA 16x16x16 with 16-bit inputs and f32 C/D (RDNA3), wave32. A and B are held by both
// half-waves (lanes i and i + 16 hold the same row of A, column of B):
//   A: i = lane % 16, k = element
//   B: j = lane % 16, k = element
//   C, D: i = 2 * element + floor(lane / 16), j = lane % 16
tg_matrix_unit wmma_16x16x16(const char* name, tg_dtype input) {
  const auto a = matrix_layout({{1, 0}, {2, 0}, {4, 0}, {8, 0}, {0, 0}}, {{0, 1}, {0, 2}, {0, 4}, {0, 8}});
  const auto b = matrix_layout({{0, 1}, {0, 2}, {0, 4}, {0, 8}, {0, 0}}, {{1, 0}, {2, 0}, {4, 0}, {8, 0}});
  const auto c = matrix_layout({{0, 1}, {0, 2}, {0, 4}, {0, 8}, {1, 0}}, {{2, 0}, {4, 0}, {8, 0}});
  return matrix_unit(name, 16, 16, 16, 5, input, input, TG_DTYPE_FLOAT32, a, b, c);
}

} // namespace

std::vector<AmdMatrixUnit> amd_matrix_units(const std::string& gfx) {
  // The intrinsics' operand types: A and B as <4 x half> / <4 x i16> (bf16 bits; LLVM 14 and 19
  // both take i16 vectors), C/D <4 x float>; WMMA (LLVM 16+, reached through llc-19) <16 x half> /
  // <16 x i16>, C/D <8 x float>. CDNA3 renamed the instructions (no "_1k", an underscore before
  // the type).
  if (gfx == "gfx90a")
    return {{mfma_16x16x16("v_mfma_f32_16x16x16f16", TG_DTYPE_FLOAT16), "llvm.amdgcn.mfma.f32.16x16x16f16",
             true, "v_mfma_f32_16x16x16f16"},
            {mfma_16x16x16("v_mfma_f32_16x16x16bf16_1k", TG_DTYPE_BFLOAT16),
             "llvm.amdgcn.mfma.f32.16x16x16bf16.1k", true, "v_mfma_f32_16x16x16bf16_1k"}};
  if (gfx == "gfx942")
    return {{mfma_16x16x16("v_mfma_f32_16x16x16_f16", TG_DTYPE_FLOAT16), "llvm.amdgcn.mfma.f32.16x16x16f16",
             true, "v_mfma_f32_16x16x16_f16"},
            {mfma_16x16x16("v_mfma_f32_16x16x16_bf16", TG_DTYPE_BFLOAT16),
             "llvm.amdgcn.mfma.f32.16x16x16bf16.1k", true, "v_mfma_f32_16x16x16_bf16"}};
  if (gfx == "gfx1100")
    return {{wmma_16x16x16("v_wmma_f32_16x16x16_f16", TG_DTYPE_FLOAT16), "llvm.amdgcn.wmma.f32.16x16x16.f16",
             false, "v_wmma_f32_16x16x16_f16"},
            {wmma_16x16x16("v_wmma_f32_16x16x16_bf16", TG_DTYPE_BFLOAT16),
             "llvm.amdgcn.wmma.f32.16x16x16.bf16", false, "v_wmma_f32_16x16x16_bf16"}};
  return {};
}

std::vector<tg_matrix_unit> matrix_unit_descriptions(const std::string& gfx) {
  std::vector<tg_matrix_unit> out;
  for (const AmdMatrixUnit& u : amd_matrix_units(gfx)) out.push_back(u.unit);
  return out;
}

} // namespace tg::amd
