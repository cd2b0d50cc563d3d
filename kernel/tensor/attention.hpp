// Scaled dot-product attention (torch.nn.functional.scaled_dot_product_attention), built from
// Tensor ops (matmul, where, max/sum reductions), so it fuses and differentiates like any graph.
#pragma once

#include "kernel/tensor/tensor.hpp"

#include <optional>

namespace tg {

struct AttentionOptions {
  // bool: true = attend (torch's meaning); float: added to the scores. Broadcasts to (..., L, S).
  std::optional<Tensor> mask;
  // Dropout on the attention weights (Tensor::rand), applied only when > 0; in [0, 1].
  double dropout_p = 0;
  // Query i attends keys j <= i (torch's top-left tril(ones(L, S))); not together with mask.
  bool is_causal = false;
  // Multiplies q @ k^T; default 1 / sqrt(E).
  std::optional<double> scale;
};

// q (..., L, E), k (..., S, E), v (..., S, Ev) -> (..., L, Ev): softmax(q k^T * scale + mask) v,
// the batch dims broadcast. Masked scores are -inf; a query row whose keys are all masked gives
// zeros (and zero gradients), as torch >= 2.5 does (older torch gave NaN). q, k and v must share
// one float dtype; a float mask is cast to it. Bad shapes, dtypes or options throw TensorError
// naming them.
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const AttentionOptions& options = {});

} // namespace tg
