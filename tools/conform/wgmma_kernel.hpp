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
// x 16 bytes of neighbouring n, wgmma's transpose bit), the same strides.
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

inline WgmmaMatmul wgmma_matmul_kernel(tg_dtype input, int n, int k, int groups, bool b_n_major = false) {
  using tg::sdk::KernelBuilder;
  WgmmaMatmul out;
  out.m = 64 * groups;
  out.n = n;
  out.k = k;
  out.threads = 128 * groups;
  out.input = input;
  const int m = out.m, threads = out.threads;
  const tg::sdk::WgmmaStrides st{128, 128 * (k / 8) + 16, 128 * (n / 8) + 16, 128};
  KernelBuilder b("wgmma_matmul");
  const auto d = b.global(0, TG_DTYPE_FLOAT32), a = b.global(1, input), bb = b.global(2, input);
  const auto la = b.local(st.a_m / 2 * (m / 8), input), lb = b.local(st.b_k / 2 * (k / 8), input);
  const auto t = b.local_id(0);
  auto c = [&](int v) { return b.i32(v); };
  auto op = [&](tg_op o, KernelBuilder::Ref x, KernelBuilder::Ref y) { return b.alu(o, x, y); };
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
    b.store(b.index(la, tile_index(op(TG_OP_IDIV, e, c(k)), op(TG_OP_MOD, e, c(k)), st.a_k, st.a_m)), v);
  }
  for (int j = 0; j < k * n / threads; ++j) { // B: e = kk * N + col, stored as row col, column kk
    const auto e = op(TG_OP_ADD, t, c(j * threads));
    const auto v = b.load(b.index(bb, e));
    b.store(
        b.index(lb, tile_index(op(TG_OP_MOD, e, c(n)), op(TG_OP_IDIV, e, c(n)), st.b_k, st.b_n, b_n_major)),
        v);
  }
  b.barrier();
  const auto g = op(TG_OP_IDIV, t, c(128)), r = op(TG_OP_MOD, t, c(128));
  const auto zero = b.f32(0);
  std::vector<KernelBuilder::Ref> zeros(size_t(n / 2), zero);
  auto acc = b.vectorize(zeros);
  const int64_t shape = tg::sdk::wgmma_code(n) | (b_n_major ? tg::sdk::kWgmmaBNMajor : 0),
                strides = tg::sdk::wgmma_pack(st);
  const auto a_base = op(TG_OP_MUL, g, c(int(8 * st.a_m / 2))); // 8 row groups of 8 per warpgroup
  for (int s = 0; s < k / 16; ++s) {                            // each step: the next 2 core matrices along k
    const auto pa = b.index(la, op(TG_OP_ADD, a_base, c(int(s * st.a_k)))); // 2 * a_k / 2 elements
    const auto pb = b.index(lb, c(int(s * st.b_k)));
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
