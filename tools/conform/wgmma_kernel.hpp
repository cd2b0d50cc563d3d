// A hand-built IR 1.2 program around WGMMA (docs/abi.md 5.7), checking the op without the core's
// codegen: the interpreter against a double matmul (tensor_core_test), the CUDA rendering through
// NVRTC for sm_90a, the real instruction on a Hopper GPU (cuda_plugin_test), and `tg conform`
// (builtin kernel wgmma_matmul_*: a device's result against the interpreter's).
//
// D (M x N float32) = A (M x K) . B (K x N), A and B float16 or bfloat16, row-major in global
// memory. One work group of 128 * groups work items; warpgroup g computes rows 64g .. 64g + 63.
// Each item copies its share of A and B into two local tiles in the core-matrix layout (A m x k,
// B n x k, with 16 bytes of padding between 8-row groups so that the strides along k and along
// m/n differ and a swapped pair of descriptor fields shows), then each warpgroup runs K / 16
// WGMMAs back to back on one accumulator and stores its lanes at the positions of
// wgmma_c_element. With b_n_major, B's tile is n-major (sdk::kWgmmaBNMajor: core matrices of 8 k
// x 16 bytes of neighbouring n, wgmma's transpose bit), the same strides. With swizzle, both tiles
// are 128-byte swizzled (sdk::kWgmmaSwizzle128): A m x k and a k-major B n x k in rows of 64 k
// (a_k = b_k = 16), 8-row groups 2048 bytes apart (1024 of padding), the next 64 k a tile of rows
// further; an n-major B in rows of 64 n per k, 8-k groups 2048 bytes apart, 64-n blocks a whole k
// extent of them plus 1024 further (so that b_k and b_n differ and a swapped pair shows).
#pragma once

#include <tg/sdk/kernel_ir.hpp>
#include <tg/sdk/wmma.hpp>

#include <cstdint>
#include <vector>

namespace tg::conform {

struct WgmmaMatmul {
  int m = 0, n = 0, k = 0, threads = 0;
  tg_dtype input = TG_DTYPE_FLOAT16;
  std::vector<std::byte> ir;
};

inline WgmmaMatmul wgmma_matmul_kernel(tg_dtype input, int n, int k, int groups, bool b_n_major = false,
                                       bool swizzle = false) {
  using tg::sdk::KernelBuilder;
  WgmmaMatmul out;
  out.m = 64 * groups;
  out.n = n;
  out.k = k;
  out.threads = 128 * groups;
  out.input = input;
  const int m = out.m, threads = out.threads;
  const int kcols = (k + 63) / 64; // swizzled K-major tiles: atom columns of 64 k
  const tg::sdk::WgmmaStrides st =
      !swizzle    ? tg::sdk::WgmmaStrides{128, 128 * (k / 8) + 16, 128 * (n / 8) + 16, 128}
      : b_n_major ? tg::sdk::WgmmaStrides{16, 2048, 2048, 2048 * (k / 8) + 1024}
                  : tg::sdk::WgmmaStrides{16, 2048, 16, 2048};
  const int col_a = 2048 * (m / 8), col_b = 2048 * (n / 8); // swizzled: bytes between atom columns
  const int64_t a_elems = swizzle ? col_a / 2 * kcols : st.a_m / 2 * (m / 8);
  const int64_t b_elems = !swizzle    ? st.b_k / 2 * (k / 8)
                          : b_n_major ? st.b_n / 2 * ((n + 63) / 64)
                                      : col_b / 2 * kcols;
  KernelBuilder b("wgmma_matmul");
  const auto d = b.global(0, TG_DTYPE_FLOAT32), a = b.global(1, input), bb = b.global(2, input);
  const auto la = b.local(a_elems, input), lb = b.local(b_elems, input);
  const auto t = b.local_id(0);
  auto c = [&](int v) { return b.i32(v); };
  auto op = [&](tg_op o, KernelBuilder::Ref x, KernelBuilder::Ref y) { return b.alu(o, x, y); };
  // the 128-byte swizzle of element index e (bytes 2e): e ^ ((e / 64 % 8) * 8)
  auto swz = [&](KernelBuilder::Ref e) {
    return op(TG_OP_XOR, e, op(TG_OP_MUL, op(TG_OP_MOD, op(TG_OP_IDIV, e, c(64)), c(8)), c(8)));
  };
  // swizzled K-major: element of row `row`, column `col` (k): unswizzled, then swizzled
  auto swz_k_major = [&](KernelBuilder::Ref row, KernelBuilder::Ref col, int col_bytes) {
    auto x = op(TG_OP_ADD, op(TG_OP_MUL, op(TG_OP_IDIV, col, c(64)), c(col_bytes / 2)),
                op(TG_OP_MUL, op(TG_OP_IDIV, row, c(8)), c(1024)));
    x = op(TG_OP_ADD, x,
           op(TG_OP_ADD, op(TG_OP_MUL, op(TG_OP_MOD, row, c(8)), c(64)), op(TG_OP_MOD, col, c(64))));
    return swz(x);
  };
  // swizzled n-major B: element of k row `kk`, column `col` (n)
  auto swz_n_major = [&](KernelBuilder::Ref col, KernelBuilder::Ref kk) {
    auto x = op(TG_OP_ADD, op(TG_OP_MUL, op(TG_OP_MOD, kk, c(8)), c(64)),
                op(TG_OP_MUL, op(TG_OP_IDIV, kk, c(8)), c(int(st.b_k / 2))));
    x = op(TG_OP_ADD, x,
           op(TG_OP_ADD, op(TG_OP_MOD, col, c(64)),
              op(TG_OP_MUL, op(TG_OP_IDIV, col, c(64)), c(int(st.b_n / 2)))));
    return swz(x);
  };
  // local element of row `row` (m or n) and column `col` (k) in a tile with these strides
  auto tile_index = [&](KernelBuilder::Ref row, KernelBuilder::Ref col, int64_t stride_k, int64_t stride_row,
                        bool mn_major = false) {
    auto x = mn_major
                 ? op(TG_OP_ADD, op(TG_OP_MUL, op(TG_OP_MOD, col, c(8)), c(8)), op(TG_OP_MOD, row, c(8)))
                 : op(TG_OP_ADD, op(TG_OP_MUL, op(TG_OP_MOD, row, c(8)), c(8)), op(TG_OP_MOD, col, c(8)));
    x = op(TG_OP_ADD, x, op(TG_OP_MUL, op(TG_OP_IDIV, col, c(8)), c(int(stride_k / 2))));
    return op(TG_OP_ADD, x, op(TG_OP_MUL, op(TG_OP_IDIV, row, c(8)), c(int(stride_row / 2))));
  };
  for (int j = 0; j < m * k / threads; ++j) { // A: e = row * K + col
    const auto e = op(TG_OP_ADD, t, c(j * threads));
    const auto v = b.load(b.index(a, e));
    const auto row = op(TG_OP_IDIV, e, c(k)), col = op(TG_OP_MOD, e, c(k));
    b.store(b.index(la, swizzle ? swz_k_major(row, col, col_a) : tile_index(row, col, st.a_k, st.a_m)), v);
  }
  for (int j = 0; j < k * n / threads; ++j) { // B: e = kk * N + col, stored as row col, column kk
    const auto e = op(TG_OP_ADD, t, c(j * threads));
    const auto v = b.load(b.index(bb, e));
    const auto col = op(TG_OP_MOD, e, c(n)), kk = op(TG_OP_IDIV, e, c(n));
    b.store(b.index(lb, !swizzle    ? tile_index(col, kk, st.b_k, st.b_n, b_n_major)
                        : b_n_major ? swz_n_major(col, kk)
                                    : swz_k_major(col, kk, col_b)),
            v);
  }
  b.barrier();
  const auto g = op(TG_OP_IDIV, t, c(128)), r = op(TG_OP_MOD, t, c(128));
  const auto zero = b.f32(0);
  std::vector<KernelBuilder::Ref> zeros(size_t(n / 2), zero);
  auto acc = b.vectorize(zeros);
  const int64_t shape = tg::sdk::wgmma_code(n) | (b_n_major ? tg::sdk::kWgmmaBNMajor : 0) |
                        (swizzle ? tg::sdk::kWgmmaSwizzle128 : 0),
                strides = tg::sdk::wgmma_pack(st);
  const auto a_base = op(TG_OP_MUL, g, c(int(8 * st.a_m / 2))); // 8 row groups of 8 per warpgroup
  for (int s = 0; s < k / 16; ++s) {                            // each step: the next 2 core matrices along k
    // swizzled K-major: 16 k further in the row (32 bytes), the next atom column every 64 k
    const int ka = swizzle ? s / 4 * col_a / 2 + s % 4 * 16 : int(s * st.a_k); // 2 * a_k / 2 elements
    const int kb = !swizzle || b_n_major ? int(s * st.b_k) : s / 4 * col_b / 2 + s % 4 * 16;
    const auto pa = b.index(la, op(TG_OP_ADD, a_base, c(ka)));
    const auto pb = b.index(lb, c(kb));
    acc = b.wgmma(pa, pb, acc, shape, strides);
  }
  // lane i of item r: row 16 (r / 32) + r % 32 / 4 + 8 (i / 2 % 2), column 8 (i / 4) + 2 (r % 4) + i % 2
  const auto row0 =
      op(TG_OP_ADD, op(TG_OP_ADD, op(TG_OP_MUL, g, c(64)), op(TG_OP_MUL, op(TG_OP_IDIV, r, c(32)), c(16))),
         op(TG_OP_IDIV, op(TG_OP_MOD, r, c(32)), c(4)));
  const auto col0 = op(TG_OP_MUL, op(TG_OP_MOD, r, c(4)), c(2));
  const auto at0 = op(TG_OP_ADD, op(TG_OP_MUL, row0, c(n)), col0);
  for (int i = 0; i < n / 2; ++i) {
    const int off = 8 * (i / 2 % 2) * n + 8 * (i / 4) + i % 2;
    b.store(b.index(d, op(TG_OP_ADD, at0, c(off))), b.gep(acc, uint16_t(i)));
  }
  out.ir = b.serialize();
  return out;
}

} // namespace tg::conform
