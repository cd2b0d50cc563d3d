// A kernel with its launch: the IR, the grid, the buffers (dtype and element count; filled with
// seeded random values by the runner) and scalar arguments. The built-in kernels use it now;
// the lead's golden corpus (tools/conform/corpus.hpp) has the same fields.
#pragma once

#include <tg/abi.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tg::conform {

struct KernelBuffer {
  tg_dtype dtype = TG_DTYPE_FLOAT32;
  uint64_t elements = 0;
};

struct KernelCase {
  std::string name;
  std::vector<std::byte> ir;
  std::array<uint32_t, 3> global{1, 1, 1};
  std::array<uint32_t, 3> local{1, 1, 1};
  std::vector<KernelBuffer> buffers;
  std::vector<tg_scalar_arg> scalars;
};

// Kernels written with tg::sdk::KernelBuilder: elementwise per dtype, casts, gated loads,
// broadcast, reductions, matmul, conv, vectors, locals + barrier, many buffers, scalars, odd and
// empty grids. Cases the device cannot run are skipped by the runner, not left out.
std::vector<KernelCase> builtin_kernels();

} // namespace tg::conform
