// Helpers of the tensor-core tests (tensor_core_test.cpp: WMMA and the TC opt; wgmma_test.cpp: IR 1.2
// WGMMA and the warpgroup units): matmuls lowered from tensor expressions over placeholder buffers for an
// sm_90-like device, run in the SDK's reference interpreter and compared with a double matmul.
#pragma once

#include <boost/test/unit_test.hpp>

#include "kernel/codegen/linearize.hpp"
#include "kernel/codegen/lower.hpp"
#include "kernel/schedule/buffer.hpp"
#include "kernel/tensor/tensor.hpp"

#include <tg/sdk/interpreter.hpp>
#include <tg/sdk/kernel_ir.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <span>
#include <stdexcept>
#include <vector>

#include <tg/sdk/matrix_unit.hpp>

namespace tg::tc_check {
inline Tensor input(Dims shape, DType dt) {
  UOpRef buffer = make_buffer("CPU", dt, dims_prod(shape)); // a label: nothing is opened
  UOpRef view = UOp::make(Ops::RESHAPE, dt, {buffer}, std::vector<int64_t>(shape));
  return Tensor(view, std::move(shape), "CPU");
}

// An sm_90-like device: 1024 threads per work group, 48 KiB of shared memory, tensor cores.
inline LowerOptions gpu(bool tensor_cores) {
  LowerOptions o;
  o.compute_units = 132;
  o.max_groups = 65535;
  o.vector_bytes = 16;
  o.max_local_size = {1024, 1024, 64};
  o.max_local_threads = 1024;
  o.local_memory_bytes = 49152;
  o.subgroup_size = 32;
  if (tensor_cores) // IR 1.1 WMMA m16n8k16 as the host describes it for a 1.3 plugin
    for (tg_dtype input : {TG_DTYPE_FLOAT16, TG_DTYPE_BFLOAT16})
      o.matrix_units.push_back({sdk::wmma_m16n8k16_unit(input), TG_WMMA_M16N8K16, true});
  return o;
}

// The TC opt's amount for the unit of gpu(true) that takes `dt`.
inline int64_t tc(DType dt) { return dt == dtypes::bfloat16 ? 1 : 0; }

struct Matmul {
  ScheduleItem item;
  int64_t m, k, n;
  DType dt;
};

inline Matmul matmul(int64_t m, int64_t k, int64_t n, DType dt) {
  Tensor c = input({m, k}, dt).matmul(input({k, n}, dt));
  for (auto& item : c.schedule())
    if (item.ast->src(0)->op() == Ops::STORE) return {std::move(item), m, k, n, dt};
  throw std::logic_error("no compute kernel");
}

inline double to_double(DType dt, const std::byte* p) {
  uint16_t bits;
  std::memcpy(&bits, p, 2);
  return dt == dtypes::float16 ? sdk::half_bits_to_double(bits) : sdk::bfloat16_bits_to_double(bits);
}

inline uint16_t from_double(DType dt, double v) {
  return dt == dtypes::float16 ? sdk::float_to_half_bits(v) : sdk::float_to_bfloat16_bits(float(v));
}

struct Lowered {
  LoweredKernel kernel;
  std::vector<std::byte> ir;
};

inline Lowered lower(const Matmul& mm, const LowerOptions& options) {
  LoweredKernel k = lower_kernel(mm.item, options);
  LinearKernel linear = linearize(k.sink, k.name);
  return {std::move(k), std::move(linear.ir)};
}

// Runs the kernel in the interpreter on random inputs; the largest error against a double matmul
// of the same (16-bit) inputs, relative to the sum of |a*b| (the scale the f32 accumulation sees).
inline double run_error(const Matmul& mm, const Lowered& l, std::span<const tg_matrix_unit> units = {}) {
  std::mt19937 rng(7);
  std::map<const UOp*, std::vector<std::byte>> mem;
  for (const auto& b : mm.item.buffers) {
    std::vector<std::byte> bytes(size_t(buffer_arg(b).size() * 2));
    for (size_t i = 0; i < bytes.size(); i += 2) {
      uint16_t v = from_double(mm.dt, std::uniform_real_distribution<double>(-2, 2)(rng));
      std::memcpy(bytes.data() + i, &v, 2);
    }
    mem[b.get()] = std::move(bytes);
  }
  std::vector<std::span<std::byte>> spans;
  for (const auto& b : mm.item.buffers) spans.emplace_back(mem.at(b.get()));
  sdk::interpret(sdk::parse_kernel_ir(l.ir), l.kernel.global, l.kernel.local, spans, {}, units);
  const auto& out = mem.at(mm.item.buffers[0].get());
  const auto& a = mem.at(mm.item.buffers[1].get());
  const auto& b = mem.at(mm.item.buffers[2].get());
  double worst = 0;
  for (int64_t i = 0; i < mm.m; ++i)
    for (int64_t j = 0; j < mm.n; ++j) {
      double want = 0, scale = 0;
      for (int64_t kk = 0; kk < mm.k; ++kk) {
        const double p = to_double(mm.dt, a.data() + 2 * (i * mm.k + kk)) *
                         to_double(mm.dt, b.data() + 2 * (kk * mm.n + j));
        want += p;
        scale += std::fabs(p);
      }
      const double got = to_double(mm.dt, out.data() + 2 * (i * mm.n + j));
      worst = std::max(worst, std::fabs(got - want) / std::max(scale, 1.0));
    }
  return worst;
}

inline bool has_wmma(const std::vector<std::byte>& ir) { return sdk::uses_wmma(sdk::parse_kernel_ir(ir)); }
inline uint16_t ir_minor(const std::vector<std::byte>& ir) {
  uint16_t v;
  std::memcpy(&v, ir.data() + 6, 2);
  return v;
}

// The worst error of got = a @ b (m x k times k x n, row-major) against a double-precision
// product, relative to the sum of |products| of each output.
inline double worst_error(const std::vector<float>& got, const std::vector<float>& av,
                          const std::vector<float>& bv, int64_t m, int64_t k, int64_t n) {
  double worst = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double want = 0, scale = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        const double p = double(av[size_t(i * k + kk)]) * double(bv[size_t(kk * n + j)]);
        want += p;
        scale += std::fabs(p);
      }
      worst = std::max(worst, std::fabs(double(got[size_t(i * n + j)]) - want) / std::max(scale, 1.0));
    }
  return worst;
}

} // namespace tg::tc_check
