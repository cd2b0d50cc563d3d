#include "matrix_units.hpp"

#include <tg/sdk/matrix_unit.hpp>

#include <cstdlib>
#include <string>

namespace tg::cuda {

std::vector<tg_matrix_unit> matrix_units(int compute_capability) {
  auto off = [](const char* name) {
    const char* env = std::getenv(name);
    return env && std::string(env) == "0";
  };
  if (compute_capability < 80 || off("TG_CUDA_TENSOR_CORES") || off("TG_CUDA_MATRIX_UNITS")) return {};
  return {sdk::wmma_m16n8k16_unit(TG_DTYPE_FLOAT16), sdk::wmma_m16n8k16_unit(TG_DTYPE_BFLOAT16)};
}

} // namespace tg::cuda
