#include "matrix_units.hpp"

#include <tg/sdk/matrix_unit.hpp>
#include <tg/sdk/wmma.hpp>

#include <cstdlib>
#include <string>

namespace tg::cuda {
namespace {

bool off(const char* name) {
  const char* env = std::getenv(name);
  return env && std::string(env) == "0";
}

} // namespace

bool warpgroup_mma(int compute_capability) { return compute_capability == 90 && !off("TG_CUDA_WGMMA"); }

std::vector<tg_matrix_unit> matrix_units(int compute_capability) {
  if (compute_capability < 80 || off("TG_CUDA_TENSOR_CORES") || off("TG_CUDA_MATRIX_UNITS")) return {};
  std::vector<tg_matrix_unit> out{sdk::wmma_m16n8k16_unit(TG_DTYPE_FLOAT16),
                                  sdk::wmma_m16n8k16_unit(TG_DTYPE_BFLOAT16)};
  if (warpgroup_mma(compute_capability))
    for (const tg_matrix_unit& u : sdk::wgmma_units()) out.push_back(u);
  return out;
}

} // namespace tg::cuda
