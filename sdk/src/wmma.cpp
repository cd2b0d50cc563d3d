#include <tg/sdk/wmma.hpp>

#include <cstring>
#include <vector>

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

tg_matrix_unit wgmma_unit(int n, tg_dtype input, int64_t layout_flags) {
  const bool swizzle = (layout_flags & kWgmmaSwizzle128) != 0,
             b_n_major = (layout_flags & kWgmmaBNMajor) != 0;
  // A (row m, col k) K-major: 8 k of a row are 16 bytes, then the next row; swizzled, 64 k of a row
  // (128 bytes), rows 8 at a time with chunk (k / 8) XOR row.
  const tg_matrix_atom a =
      swizzle ? matrix_atom({{0, 1}, {0, 2}, {0, 4}, {0, 8}, {0, 16}, {0, 32}, {1, 8}, {2, 16}, {4, 32}})
              : matrix_atom({{0, 1}, {0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}});
  // B (row k, col n): K-major as A with the axes swapped; n-major with n along the 16-byte rows.
  tg_matrix_atom b{};
  if (b_n_major)
    b = swizzle ? matrix_atom({{0, 1}, {0, 2}, {0, 4}, {0, 8}, {0, 16}, {0, 32}, {1, 8}, {2, 16}, {4, 32}})
                : matrix_atom({{0, 1}, {0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}});
  else
    b = swizzle ? matrix_atom({{1, 0}, {2, 0}, {4, 0}, {8, 0}, {16, 0}, {32, 0}, {8, 1}, {16, 2}, {32, 4}})
                : matrix_atom({{1, 0}, {2, 0}, {4, 0}, {0, 1}, {0, 2}, {0, 4}});
  // C: work item t = 32w + 4g + q, lane i (wgmma_c_element)
  std::vector<MatrixElement> lanes{{0, 1}, {8, 0}};
  for (int col = 8; col < n; col *= 2) lanes.push_back({0, col});
  tg_matrix_layout c = matrix_layout({{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}, {16, 0}, {32, 0}}, {});
  c.element_bits = uint32_t(lanes.size());
  for (size_t i = 0; i < lanes.size(); ++i) {
    c.element_row[i] = uint16_t(lanes[i].row);
    c.element_col[i] = uint16_t(lanes[i].col);
  }
  const std::string name = "wgmma.m64n" + std::to_string(n) + "k16." +
                           (input == TG_DTYPE_BFLOAT16 ? "bf16" : "f16") + (swizzle ? ".sw128" : "") +
                           (b_n_major ? ".bn" : "");
  return matrix_unit_local(name, 64, uint32_t(n), 16, 7, input, input, TG_DTYPE_FLOAT32, a, b, c);
}

std::vector<tg_matrix_unit> wgmma_units() {
  const int64_t sw = kWgmmaSwizzle128, bn = kWgmmaBNMajor;
  const std::pair<int, int64_t> order[] = {{256, sw | bn}, {256, sw}, {128, sw | bn}, {128, sw},
                                           {128, bn},      {128, 0},  {64, sw | bn},  {64, sw},
                                           {64, bn},       {64, 0},   {256, bn},      {256, 0}};
  std::vector<tg_matrix_unit> out;
  for (const auto& [n, flags] : order)
    for (tg_dtype input : {TG_DTYPE_FLOAT16, TG_DTYPE_BFLOAT16}) out.push_back(wgmma_unit(n, input, flags));
  return out;
}

int64_t wgmma_unit_flags(const tg_matrix_unit& u) {
  // by the layout, not the name: the unit whose shape, dtypes, atoms and C layout it has
  if (!matrix_local(u) || !wgmma_code(int(u.n)) || !wgmma_input_dtype(wgmma_code(int(u.n)), u.a_dtype))
    return -1;
  for (int64_t flags : {int64_t(0), kWgmmaBNMajor, kWgmmaSwizzle128, kWgmmaSwizzle128 | kWgmmaBNMajor}) {
    const tg_matrix_unit w = wgmma_unit(int(u.n), u.a_dtype, flags);
    if (u.m == w.m && u.k == w.k && u.item_bits == w.item_bits && u.b_dtype == w.b_dtype &&
        u.c_dtype == w.c_dtype && std::memcmp(&u.a_atom, &w.a_atom, sizeof w.a_atom) == 0 &&
        std::memcmp(&u.b_atom, &w.b_atom, sizeof w.b_atom) == 0 && std::memcmp(&u.c, &w.c, sizeof w.c) == 0)
      return flags;
  }
  return -1;
}

int64_t wgmma_strides(int64_t layout_flags, const MatrixStrides& s) {
  const bool swizzle = (layout_flags & kWgmmaSwizzle128) != 0,
             b_n_major = (layout_flags & kWgmmaBNMajor) != 0;
  WgmmaStrides w;
  w.a_m = 2 * s.a_row;
  w.a_k = swizzle ? 16 : 2 * s.a_col;
  w.b_k = swizzle && !b_n_major ? 16 : 2 * s.b_row;
  w.b_n = 2 * s.b_col;
  return wgmma_pack(w);
}

bool wgmma_input_dtype(int64_t code, tg_dtype dt) {
  return wgmma_shape(code) && (dt == TG_DTYPE_FLOAT16 || dt == TG_DTYPE_BFLOAT16);
}

} // namespace tg::sdk
