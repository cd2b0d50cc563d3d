#include "kernel/tensor/matmul_pack.hpp"

#include "kernel/engine/config.hpp"
#include "kernel/engine/realize.hpp"
#include "kernel/runtime/devices.hpp"

namespace tg {

namespace {

constexpr int64_t kPanel = 16; // the register tile's width: two 8-lane vectors

// A 0/1 matrix made from a comparison (one_hot(i), seen through movement ops): the product with
// it is a selection that lowering gates (an embedding's gradient reads the rows of b its indices
// pick, a few per output), not a dense product whose tiles reread b.
bool is_selection(const Tensor& t) {
  UOpRef u = t.uop();
  while (is_movement(u->op())) u = u->src(0);
  return u->op() == Ops::CAST && u->src(0)->dtype().is_bool();
}

} // namespace

bool packs_on(const std::string& device) {
  if (config().noopt || !config().pack) return false;
  return !parallel_work_groups(device);
}

std::optional<Tensor> packed_matmul(const Tensor& a, const Tensor& b) {
  if (a.ndim() < 2 || b.ndim() != 2) return std::nullopt;
  if (a.dtype() != dtypes::float32 || b.dtype() != dtypes::float32 || a.device() != b.device())
    return std::nullopt;
  const Dims& as = a.shape();
  const int64_t m = as[as.size() - 2], k = as.back(), n = b.shape()[1];
  // (a shape mismatch: matmul reports it)
  if (k != b.shape()[0] || m < 64 || k < 64 || n % kPanel != 0 || n < 4 * kPanel) return std::nullopt;
  int64_t rows = 1; // m times a's batch dims
  for (size_t i = 0; i + 1 < as.size(); ++i) rows *= as[i];
  if (rows * n * k < (int64_t(1) << 24) || is_selection(a) || is_selection(b)) return std::nullopt;
  if (!packs_on(a.device())) return std::nullopt;
  return packed_product(a, b);
}

Tensor packed_product(const Tensor& a, const Tensor& b) {
  const Dims& as = a.shape();
  if (a.ndim() < 2 || b.ndim() != 2 || as.back() != b.shape()[0] || b.shape()[1] % kPanel != 0)
    throw TensorError("packed_product: a (..., m, k) @ b (k, n) with n a multiple of 16, got " +
                      dims_str(as) + " and " + dims_str(b.shape()));
  const int64_t k = as.back(), n = b.shape()[1];
  // b (k, n) -> (n/16, k, 16), stored: panel p holds columns 16p..16p+15, row after row
  Tensor panels = b.reshape({k, n / kPanel, kPanel}).permute({1, 0, 2}).contiguous();
  Dims lhs = as, rhs(as.size() - 2, 1), out(as.begin(), as.end() - 1);
  lhs.insert(lhs.end() - 1, 1);                                      // (..., m, 1, k)
  lhs.push_back(1);                                                  // (..., m, 1, k, 1)
  rhs.insert(rhs.end(), {1, n / kPanel, k, kPanel});                 // (1.., 1, n/16, k, 16)
  Tensor product = (a.reshape(lhs) * panels.reshape(rhs)).sum({-2}); // (..., m, n/16, 16)
  out.push_back(n);
  return product.contiguous().reshape(out);
}

} // namespace tg
