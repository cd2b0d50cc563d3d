// A kernel with more work-group local memory than CUDA's 48 KiB of static __shared__ arrays: two
// local arrays (48 KiB and 16 KiB of float32), so the CUDA renderer carves both out of one dynamic
// buffer and the plugin passes its size at launch. 256 items of one work group copy in[0, 16384)
// into the arrays (the second part doubled), meet at a barrier, and write the arrays back
// reversed, each item reading what others stored:
//   out[i] = in[12287 - i] for i < 12288, out[12288 + i] = 2 in[12288 + 4095 - i] for i < 4096.
#pragma once

#include <tg/sdk/kernel_ir.hpp>

#include <vector>

namespace tgtest {

inline constexpr int kBigLocalThreads = 256, kBigLocalA = 12288, kBigLocalB = 4096;

inline tg::sdk::KernelBuilder big_local_kernel() {
  tg::sdk::KernelBuilder b("big_local");
  const auto out = b.global(0, TG_DTYPE_FLOAT32), in = b.global(1, TG_DTYPE_FLOAT32);
  const auto la = b.local(kBigLocalA, TG_DTYPE_FLOAT32), lb = b.local(kBigLocalB, TG_DTYPE_FLOAT32);
  const auto t = b.local_id(0);
  auto element = [&](tg::sdk::KernelBuilder::Ref j) { return b.add(t, b.mul(j, b.i32(kBigLocalThreads))); };
  auto reversed = [&](tg::sdk::KernelBuilder::Ref e, int n) {
    return b.add(b.i32(n - 1), b.alu(TG_OP_NEG, e));
  };
  auto j = b.range(b.i32(0), b.i32(kBigLocalA / kBigLocalThreads));
  b.store(b.index(la, element(j)), b.load(b.index(in, element(j))));
  b.end_range(j);
  j = b.range(b.i32(0), b.i32(kBigLocalB / kBigLocalThreads));
  b.store(b.index(lb, element(j)),
          b.mul(b.load(b.index(in, b.add(element(j), b.i32(kBigLocalA)))), b.f32(2)));
  b.end_range(j);
  b.barrier();
  j = b.range(b.i32(0), b.i32(kBigLocalA / kBigLocalThreads));
  b.store(b.index(out, element(j)), b.load(b.index(la, reversed(element(j), kBigLocalA))));
  b.end_range(j);
  j = b.range(b.i32(0), b.i32(kBigLocalB / kBigLocalThreads));
  b.store(b.index(out, b.add(element(j), b.i32(kBigLocalA))),
          b.load(b.index(lb, reversed(element(j), kBigLocalB))));
  b.end_range(j);
  return b;
}

// The expected output for input `in` (kBigLocalA + kBigLocalB values).
inline std::vector<float> big_local_reference(const std::vector<float>& in) {
  std::vector<float> out(in.size());
  for (int i = 0; i < kBigLocalA; ++i) out[size_t(i)] = in[size_t(kBigLocalA - 1 - i)];
  for (int i = 0; i < kBigLocalB; ++i)
    out[size_t(kBigLocalA + i)] = 2 * in[size_t(kBigLocalA + kBigLocalB - 1 - i)];
  return out;
}

} // namespace tgtest
