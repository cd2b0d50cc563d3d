// The warp-wide matrix multiply-accumulate of kernel IR 1.1 (TG_OP_WMMA) and the warpgroup op of
// IR 1.2 (TG_OP_WGMMA): their shapes, dtypes and operand layouts (docs/abi.md sections 5.6, 5.7).
#pragma once

#include <tg/abi.h>
#include <tg/sdk/matrix_unit.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tg::sdk {

struct WmmaShape {
  int m = 0, n = 0, k = 0;
  int warp = 32;                             // lanes that take part
  int a_lanes = 0, b_lanes = 0, c_lanes = 0; // vector lanes per warp lane of A, B and C/D
};

// The shape of a TG_WMMA_* code, or nullopt for an unknown one.
std::optional<WmmaShape> wmma_shape(int64_t code);

// Which element each lane holds: the description sdk::wmma_m16n8k16_unit (tg/sdk/matrix_unit.hpp),
// which the interpreter runs WMMA through.

// Input dtypes a shape accepts (FLOAT16, BFLOAT16 for M16N8K16); C/D are FLOAT32.
bool wmma_input_dtype(int64_t code, tg_dtype dt);

// ---- IR 1.2 WGMMA: the warpgroup op (docs/abi.md section 5.7) ----

struct WgmmaShape {
  int m = 64, n = 0, k = 16;
  int threads = 128; // a warpgroup: 4 consecutive warps
  int c_lanes = 0;   // FLOAT32 lanes of C/D per work item (n / 2)
};

// The shape of a TG_WGMMA_* code, or nullopt for an unknown one (WGMMA's arg0 without its
// kWgmmaDeferReads flag: wgmma_shape_code).
std::optional<WgmmaShape> wgmma_shape(int64_t code);
// A flag OR'ed into WGMMA's arg0 (docs/abi.md 5.7): the op's reads of its A and B tiles
// may complete as late as the work group's first BARRIER after its warpgroup starts a later run of
// WGMMAs (a run: WGMMAs with only index arithmetic between them) or leaves the innermost RANGE
// around the op; until then nothing may store to those bytes. Its result is complete when read.
// Only inside a RANGE. Lets a device keep one run in flight while the next tile is copied.
inline constexpr int64_t kWgmmaDeferReads = 0x100;
// A flag OR'ed into WGMMA's arg0 (docs/abi.md 5.7): B's tile is n-major,
// its core matrices 8 k-rows x 16 bytes (8 neighbouring n), so a matmul's B, n-contiguous in
// global memory, is copied as 16-byte rows like A (wgmma's transpose bit for B). The strides keep
// their meaning (b_k between core matrices along k, b_n along n).
inline constexpr int64_t kWgmmaBNMajor = 0x200;
// A flag OR'ed into WGMMA's arg0 (docs/abi.md 5.7): both tiles use the 128-byte
// swizzle. A K-major tile is made of rows of 128 bytes (64 k of one m or n), 8 rows a 1024-byte
// atom; an n-major B of rows of 128 bytes (64 n of one k). Within each row the eight 16-byte chunks
// are permuted: the element at (unswizzled) local byte address x lies at
// x ^ (((x >> 7) & 7) << 4) (wgmma_swizzle128), addresses counted from the DEFINE_LOCAL's start,
// which a plugin then aligns to 1024 bytes. Strides: K-major a_k = b_k = 16 (the chunks of a row),
// a_m / b_n the 8-row groups (multiples of 1024); n-major B: b_k the 8-k-row groups, b_n the 64-n
// blocks (multiples of 1024).
inline constexpr int64_t kWgmmaSwizzle128 = 0x400;
inline int64_t wgmma_shape_code(int64_t arg0) {
  return arg0 & ~(kWgmmaDeferReads | kWgmmaBNMajor | kWgmmaSwizzle128);
}
inline bool wgmma_defers_reads(int64_t arg0) { return (arg0 & kWgmmaDeferReads) != 0; }
inline bool wgmma_b_n_major(int64_t arg0) { return (arg0 & kWgmmaBNMajor) != 0; }
inline bool wgmma_swizzled(int64_t arg0) { return (arg0 & kWgmmaSwizzle128) != 0; }
// The 128-byte swizzle of a local byte address (bits 4-6 XOR bits 7-9).
inline uint64_t wgmma_swizzle128(uint64_t x) { return x ^ (((x >> 7) & 7) << 4); }
// The TG_WGMMA_* code of m64nNk16, or 0 where N is not one.
int64_t wgmma_code(int n);

// The byte strides between 8-row x 16-byte core matrices of the A (m x k) and B (n x k) tiles,
// packed 16 bits each into WGMMA's arg1 (bits 0-15 a_k, 16-31 a_m, 32-47 b_k, 48-63 b_n).
struct WgmmaStrides {
  int64_t a_k = 0, a_m = 0, b_k = 0, b_n = 0;
};
int64_t wgmma_pack(const WgmmaStrides& s);
WgmmaStrides wgmma_unpack(int64_t arg1);
// Whether every stride is a multiple of 16 below 65536 (what the hardware descriptor can hold).
bool wgmma_strides_valid(const WgmmaStrides& s);

// Byte offset of A[m][k] from A's address (and of B[k][n] from B's, with n for m and the B
// strides): (row % 8) * 16 + (k % 8) * 2 + (k / 8) * stride_k + (row / 8) * stride_row.
int64_t wgmma_tile_offset(int64_t stride_k, int64_t stride_row, int row, int k);
// The same for an n-major (kWgmmaBNMajor) tile: core matrices of 8 k-rows x 16 bytes,
// (k % 8) * 16 + (row % 8) * 2 + (k / 8) * stride_k + (row / 8) * stride_row.
int64_t wgmma_tile_offset_mn_major(int64_t stride_k, int64_t stride_row, int row, int k);
// Byte offset of B[k][n] from B's address under WGMMA's arg0 (its layout flag) and strides.
int64_t wgmma_b_offset(int64_t arg0, const WgmmaStrides& s, int n, int k);
// The local byte address of A[m][k] (operand 0) or B[k][n] (operand 1, row = n) for an op whose
// operand starts at local byte address `base`, under WGMMA's arg0 (its layout flags): base plus the
// offset above, or under kWgmmaSwizzle128 the swizzle of base plus the unswizzled offset
// (K-major: (row % 8) * 128 + (row / 8) * stride_row + (k % 8) * 2 + (k / 8) * 16; n-major B:
// (k % 8) * 128 + (k / 8) * b_k + (n % 8) * 2 + (n / 8 % 8) * 16 + (n / 64) * b_n).
uint64_t wgmma_address(int64_t arg0, const WgmmaStrides& s, int operand, uint64_t base, int row, int k);
// Why an operand's start (local byte address) does not suit a swizzled op, or "" where it does:
// a K-major operand starts in the first row of a 1024-byte atom at a multiple of 32 bytes (a k
// step of 16 inside the row), an n-major B at an atom.
std::string wgmma_swizzle_start_error(int64_t arg0, int operand, uint64_t base);

// Lane i (0 .. n/2 - 1) of work item t (0..127) of the warpgroup holds D[row][col] with
// w = t / 32, g = t % 32 / 4, q = t % 4: row 16w + g + 8 * (i / 2 % 2), col 8 * (i / 4) + 2q + i % 2.
MatrixElement wgmma_c_element(int64_t code, int item, int i);

bool wgmma_input_dtype(int64_t code, tg_dtype dt);

// WGMMA m64nNk16 (N = 64, 128, 256) for input FLOAT16 or BFLOAT16 as a local-memory unit (ABI 1.5)
// under the layout flags (kWgmmaBNMajor, kWgmmaSwizzle128): the atoms are the tiles' core
// matrices (8 rows x 16 bytes), or swizzled, 8 rows of 128 bytes; C as wgmma_c_element. Named
// "wgmma.m64n<N>k16.<f16|bf16>[.sw128][.bn]". The host lowers a 1.2/1.3 plugin's "@wg" shapes
// through these descriptions (emitting WGMMA), and the CUDA plugin declares them.
tg_matrix_unit wgmma_unit(int n, tg_dtype input, int64_t layout_flags);
// Every wgmma_unit, fastest first (a heuristic takes the first that fits): per (layout, N) entry the
// f16 unit, then the bf16 one. The tiles' 128-byte swizzle with N 256 (B n-major, then k-major),
// then N 128 swizzled (B n- or k-major) and unswizzled, N 64, and the unswizzled N 256 forms.
std::vector<tg_matrix_unit> wgmma_units();
// The layout flags of a unit laid out as a wgmma_unit description (its shape, dtypes, atoms and C
// layout, whatever its name), or -1 for another unit.
int64_t wgmma_unit_flags(const tg_matrix_unit& u);
// WGMMA's arg1 (byte strides) for tiles laid out in wgmma_unit's atoms at atom strides s (elements
// of 2 bytes). A swizzled K-major operand names 16 along k (the chunks of its rows), as
// kWgmmaSwizzle128 asks.
int64_t wgmma_strides(int64_t layout_flags, const MatrixStrides& s);

} // namespace tg::sdk
