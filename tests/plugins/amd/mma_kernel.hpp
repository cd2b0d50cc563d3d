// The AMD plugin's matrix units as the tests expect them (read independently of the plugin's table
// from AMD's Matrix Instruction Calculator, `--detail-instruction`), and a kernel that runs one MMA.
#pragma once

#include <tg/sdk/kernel_ir.hpp>

#include <string>
#include <vector>

namespace amdtest {

struct ExpectedUnit {
  const char* gfx;
  int index;               // MMA's arg0
  const char* name;        // tg_matrix_unit.name: the ISA mnemonic
  const char* instruction; // what llvm-objdump prints
  tg_dtype input;          // A's and B's dtype; C/D are float32
  uint32_t item_bits;      // log2 of the wave
  uint16_t ab_lanes, c_lanes;
  const char* tools; // suffix of the LLVM tools that know the processor
};

inline std::vector<ExpectedUnit> expected_units() {
  return {
      {"gfx90a", 0, "v_mfma_f32_16x16x16f16", "v_mfma_f32_16x16x16f16", TG_DTYPE_FLOAT16, 6, 4, 4, "14"},
      {"gfx90a", 1, "v_mfma_f32_16x16x16bf16_1k", "v_mfma_f32_16x16x16bf16_1k", TG_DTYPE_BFLOAT16, 6, 4, 4,
       "14"},
      {"gfx942", 0, "v_mfma_f32_16x16x16_f16", "v_mfma_f32_16x16x16_f16", TG_DTYPE_FLOAT16, 6, 4, 4, "19"},
      {"gfx942", 1, "v_mfma_f32_16x16x16_bf16", "v_mfma_f32_16x16x16_bf16", TG_DTYPE_BFLOAT16, 6, 4, 4, "19"},
      {"gfx1100", 0, "v_wmma_f32_16x16x16_f16", "v_wmma_f32_16x16x16_f16", TG_DTYPE_FLOAT16, 5, 16, 8, "19"},
      {"gfx1100", 1, "v_wmma_f32_16x16x16_bf16", "v_wmma_f32_16x16x16_bf16", TG_DTYPE_BFLOAT16, 5, 16, 8,
       "19"},
  };
}

// D = A * B + C by one group of 2^item_bits work items on unit `u`: buffer 0 receives D, buffers
// 1, 2 and 3 hold A, B and C, each work item's operand elements after the previous item's.
inline tg::sdk::KernelBuilder mma_kernel(const std::string& name, const ExpectedUnit& u,
                                         uint16_t a_lanes_override = 0) {
  using Ref = tg::sdk::KernelBuilder::Ref;
  tg::sdk::KernelBuilder k(name);
  const uint16_t a_lanes = a_lanes_override ? a_lanes_override : u.ab_lanes;
  const Ref d = k.global(0, TG_DTYPE_FLOAT32), a = k.global(1, u.input), b = k.global(2, u.input),
            c = k.global(3, TG_DTYPE_FLOAT32);
  const Ref item = k.local_id(0);
  auto fragment = [&](Ref buffer, uint16_t lanes) {
    return k.load(k.index(buffer, k.mul(item, k.i32(lanes))), lanes);
  };
  const Ref result = k.mma(fragment(a, a_lanes), fragment(b, u.ab_lanes), fragment(c, u.c_lanes), u.index);
  k.store(k.index(d, k.mul(item, k.i32(u.c_lanes))), result);
  return k;
}

} // namespace amdtest
