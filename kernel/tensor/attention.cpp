// Scaled dot-product attention from Tensor ops: the scores, the mask and the softmax are one
// graph, so the scheduler fuses them and autograd differentiates them with the usual rules.
#include "kernel/tensor/attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

namespace tg {

namespace {

const std::string kFn = "scaled_dot_product_attention: ";

std::string describe(const Tensor& q, const Tensor& k, const Tensor& v) {
  return "query " + dims_str(q.shape()) + ", key " + dims_str(k.shape()) + ", value " + dims_str(v.shape());
}

// numpy broadcasting of two shapes, or nullopt where a dim pair is neither equal nor 1.
std::optional<Dims> broadcast_dims(const Dims& a, const Dims& b) {
  size_t n = std::max(a.size(), b.size());
  Dims out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Dims leading(const Tensor& t) { return Dims(t.shape().begin(), t.shape().end() - 2); }

// Checks q, k, v and returns the scores' shape (..., L, S).
Dims scores_shape(const Tensor& q, const Tensor& k, const Tensor& v) {
  if (q.ndim() < 2 || k.ndim() < 2 || v.ndim() < 2)
    throw TensorError(kFn + describe(q, k, v) + ": each needs at least 2 dims (..., sequence, features)");
  if (!q.dtype().is_float() || k.dtype() != q.dtype() || v.dtype() != q.dtype())
    throw TensorError(kFn + "query, key and value must share one float dtype, got " + q.dtype().name() +
                      ", " + k.dtype().name() + ", " + v.dtype().name());
  const int64_t E = q.shape().back(), Ek = k.shape().back();
  if (E != Ek)
    throw TensorError(kFn + describe(q, k, v) + ": query and key differ in the last dim E (" +
                      std::to_string(E) + " vs " + std::to_string(Ek) + ")");
  const int64_t S = k.shape()[size_t(k.ndim() - 2)], Sv = v.shape()[size_t(v.ndim() - 2)];
  if (S != Sv)
    throw TensorError(kFn + describe(q, k, v) + ": key and value differ in the sequence length S (" +
                      std::to_string(S) + " vs " + std::to_string(Sv) + ")");
  std::optional<Dims> batch = broadcast_dims(leading(q), leading(k));
  if (batch) batch = broadcast_dims(*batch, leading(v));
  if (!batch)
    throw TensorError(kFn + describe(q, k, v) + ": the batch dims (all but the last two) do not broadcast");
  batch->push_back(q.shape()[size_t(q.ndim() - 2)]);
  batch->push_back(S);
  return *batch;
}

void check_options(const AttentionOptions& o, const Dims& scores) {
  if (o.is_causal && o.mask)
    throw TensorError(kFn + "is_causal and a mask " + dims_str(o.mask->shape()) +
                      " were both given; pass one (a causal mask can be part of the mask)");
  if (!(o.dropout_p >= 0 && o.dropout_p <= 1))
    throw TensorError(kFn + "dropout_p must be in [0, 1], got " + std::to_string(o.dropout_p));
  if (o.scale && !std::isfinite(*o.scale))
    throw TensorError(kFn + "scale must be finite, got " + std::to_string(*o.scale));
  if (!o.mask) return;
  const Tensor& m = *o.mask;
  if (!m.dtype().is_bool() && !m.dtype().is_float())
    throw TensorError(kFn + "mask must be bool (true = attend) or float (added to the scores), got " +
                      m.dtype().name() + " " + dims_str(m.shape()));
  auto b = broadcast_dims(m.shape(), scores);
  if (!b || *b != scores)
    throw TensorError(kFn + "mask " + dims_str(m.shape()) +
                      " does not broadcast to the scores' shape (..., L, S) " + dims_str(scores));
}

// softmax over the last dim where a row of only -inf (every key masked) gives zeros, as torch's
// _safe_softmax, instead of NaN (-inf - -inf); its gradient is then zero too, not NaN.
Tensor masked_softmax(const Tensor& scores) {
  const double inf = std::numeric_limits<double>::infinity();
  // softmax does not depend on the shift, so the max needs no gradient
  Tensor m = scores.max({-1}, true).detach();
  m = m.eq(m.const_like(-inf)).where(m.const_like(0), m); // such a row: exp(-inf - 0) = 0
  Tensor e = (scores - m).exp();
  Tensor sum = e.sum({-1}, true);
  sum = sum.eq(sum.const_like(0)).where(sum.const_like(1), sum); // only such a row sums to 0
  return e * sum.reciprocal();                                   // one division per row, as Tensor::softmax
}

Tensor dropout(const Tensor& weights, double p) {
  if (p == 0) return weights;
  if (p == 1) return weights * 0;
  Tensor r = Tensor::rand(weights.shape(), dtypes::float32, weights.device());
  // its own kernel (as nn::Dropout): the matmul with v would otherwise recompute the random bits
  // once per output column
  Tensor keep = r.ge(r.const_like(p)).contiguous();
  return keep.where(weights, weights.const_like(0)) * (1.0 / (1.0 - p));
}

} // namespace

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const AttentionOptions& options) {
  const Dims shape = scores_shape(q, k, v);
  check_options(options, shape);
  const int64_t L = shape[shape.size() - 2], S = shape.back();
  const double scale = options.scale.value_or(1.0 / std::sqrt(double(q.shape().back())));
  Tensor scores = q.matmul(k.transpose(-1, -2)) * scale;
  const double inf = std::numeric_limits<double>::infinity();
  if (options.is_causal) {
    Tensor keep = Tensor::ones({L, S}, dtypes::bool_, q.device()).tril(); // top-left aligned
    scores = keep.where(scores, scores.const_like(-inf));
  }
  if (options.mask) {
    const Tensor& m = *options.mask;
    scores = m.dtype().is_bool() ? m.where(scores, scores.const_like(-inf)) : scores + m.cast(scores.dtype());
  }
  return dropout(masked_softmax(scores), options.dropout_p).matmul(v);
}

} // namespace tg
