#include <tg/sdk/wmma.hpp>

namespace tg::sdk {

std::optional<WmmaShape> wmma_shape(int64_t code) {
  if (code == TG_WMMA_M16N8K16) return WmmaShape{16, 8, 16, 32, 8, 4, 4};
  return std::nullopt;
}

// Only M16N8K16 exists; callers validated the code.
MatrixElement wmma_a_element(int64_t, int lane, int i) {
  const int g = lane / 4, t = lane % 4;
  return {g + 8 * (i / 2 % 2), 2 * t + i % 2 + 8 * (i / 4)};
}

MatrixElement wmma_b_element(int64_t, int lane, int i) {
  const int g = lane / 4, t = lane % 4;
  return {2 * t + i % 2 + 8 * (i / 2), g};
}

MatrixElement wmma_c_element(int64_t, int lane, int i) {
  const int g = lane / 4, t = lane % 4;
  return {g + 8 * (i / 2), 2 * t + i % 2};
}

bool wmma_input_dtype(int64_t code, tg_dtype dt) {
  return code == TG_WMMA_M16N8K16 && (dt == TG_DTYPE_FLOAT16 || dt == TG_DTYPE_BFLOAT16);
}

} // namespace tg::sdk
