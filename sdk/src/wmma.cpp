#include <tg/sdk/wmma.hpp>

namespace tg::sdk {

std::optional<WmmaShape> wmma_shape(int64_t code) {
  if (code == TG_WMMA_M16N8K16) return WmmaShape{16, 8, 16, 32, 8, 4, 4};
  return std::nullopt;
}

bool wmma_input_dtype(int64_t code, tg_dtype dt) {
  return code == TG_WMMA_M16N8K16 && (dt == TG_DTYPE_FLOAT16 || dt == TG_DTYPE_BFLOAT16);
}

std::optional<WgmmaShape> wgmma_shape(int64_t code) {
  if (code < TG_WGMMA_M64N64K16 || code > TG_WGMMA_M64N256K16) return std::nullopt;
  const int n = 64 << (code - TG_WGMMA_M64N64K16);
  return WgmmaShape{64, n, 16, 128, n / 2};
}

int64_t wgmma_code(int n) {
  for (int64_t code = TG_WGMMA_M64N64K16; code <= TG_WGMMA_M64N256K16; ++code)
    if (wgmma_shape(code)->n == n) return code;
  return 0;
}

int64_t wgmma_pack(const WgmmaStrides& s) {
  return int64_t(uint64_t(s.a_k) | uint64_t(s.a_m) << 16 | uint64_t(s.b_k) << 32 | uint64_t(s.b_n) << 48);
}

WgmmaStrides wgmma_unpack(int64_t arg1) {
  const auto u = uint64_t(arg1);
  return {int64_t(u & 0xFFFF), int64_t(u >> 16 & 0xFFFF), int64_t(u >> 32 & 0xFFFF),
          int64_t(u >> 48 & 0xFFFF)};
}

bool wgmma_strides_valid(const WgmmaStrides& s) {
  for (int64_t v : {s.a_k, s.a_m, s.b_k, s.b_n})
    if (v < 0 || v >= 65536 || v % 16 != 0) return false;
  return true;
}

int64_t wgmma_tile_offset(int64_t stride_k, int64_t stride_row, int row, int k) {
  return (row % 8) * 16 + (k % 8) * 2 + (k / 8) * stride_k + (row / 8) * stride_row;
}

int64_t wgmma_tile_offset_mn_major(int64_t stride_k, int64_t stride_row, int row, int k) {
  return (k % 8) * 16 + (row % 8) * 2 + (k / 8) * stride_k + (row / 8) * stride_row;
}

int64_t wgmma_b_offset(int64_t arg0, const WgmmaStrides& s, int n, int k) {
  return wgmma_b_n_major(arg0) ? wgmma_tile_offset_mn_major(s.b_k, s.b_n, n, k)
                               : wgmma_tile_offset(s.b_k, s.b_n, n, k);
}

uint64_t wgmma_address(int64_t arg0, const WgmmaStrides& s, int operand, uint64_t base, int row, int k) {
  if (!wgmma_swizzled(arg0))
    return base +
           uint64_t(operand == 0 ? wgmma_tile_offset(s.a_k, s.a_m, row, k) : wgmma_b_offset(arg0, s, row, k));
  int64_t off = 0;
  if (operand == 1 && wgmma_b_n_major(arg0))
    off = (k % 8) * 128 + (k / 8) * s.b_k + (row % 8) * 2 + (row / 8 % 8) * 16 + (row / 64) * s.b_n;
  else
    off = (row % 8) * 128 + (row / 8) * (operand == 0 ? s.a_m : s.b_n) + (k % 8) * 2 + (k / 8) * 16;
  return wgmma_swizzle128(base + uint64_t(off));
}

std::string wgmma_swizzle_start_error(int64_t arg0, int operand, uint64_t base) {
  if (!wgmma_swizzled(arg0)) return "";
  if (operand == 1 && wgmma_b_n_major(arg0))
    return base % 1024 == 0 ? "" : "an n-major swizzled B starts at a multiple of 1024 bytes";
  return base % 1024 < 128 && base % 32 == 0
             ? ""
             : "a K-major swizzled operand starts in the first 128 bytes of a 1024-byte atom, at a multiple "
               "of 32 bytes";
}

MatrixElement wgmma_c_element(int64_t, int item, int i) {
  const int w = item / 32, g = item % 32 / 4, q = item % 4;
  return {16 * w + g + 8 * (i / 2 % 2), 8 * (i / 4) + 2 * q + i % 2};
}

bool wgmma_input_dtype(int64_t code, tg_dtype dt) {
  return wgmma_shape(code) && (dt == TG_DTYPE_FLOAT16 || dt == TG_DTYPE_BFLOAT16);
}

} // namespace tg::sdk
