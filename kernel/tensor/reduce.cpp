// Reductions: SUM and MAX are primitives (REDUCE_AXIS); everything else is built from them.
#include "kernel/tensor/tensor.hpp"

#include <algorithm>

#include "kernel/engine/config.hpp"
#include "kernel/engine/realize.hpp"
#include "kernel/runtime/devices.hpp"

#include <cmath>
#include <limits>

namespace tg {

namespace {

bool reduced_in(const std::vector<int64_t>& axes, int64_t d) {
  return std::find(axes.begin(), axes.end(), d) != axes.end();
}

// Sums accumulate small ints in 32 bits and half floats in float32 (tinygrad's sum_acc_dtype).
DType sum_dtype(DType dt) {
  if (dt.is_bool() || dt == dtypes::int8 || dt == dtypes::int16) return dtypes::int32;
  if (dt == dtypes::uint8 || dt == dtypes::uint16) return dtypes::uint32;
  return dt;
}

// A matmul's result of at least this many elements is not merged into a reduce of it (below).
constexpr int64_t kLargeMatmul = 65536;

// Whether u is a product of two operands that are each broadcast (an EXPAND under movement ops or
// casts): a matmul's a.expand(...) * b.expand(...) before its sum.
bool is_broadcast_product(UOpRef u) {
  while (u->op() == Ops::CAST) u = u->src(0);
  if (u->op() != Ops::MUL) return false;
  auto broadcast = [](UOpRef x) {
    while (is_movement(x->op()) || x->op() == Ops::CAST) {
      if (x->op() == Ops::EXPAND) return true;
      x = x->src(0);
    }
    return false;
  };
  return broadcast(u->src(0)) && broadcast(u->src(1));
}

} // namespace

// A reduce of a reduce (same op, nothing in between but the reshape that drops the reduced
// dims) is one reduce over both axis sets: one kernel, as tinygrad does (e.g. (x @ y).sum(1)).
// Not for a large matmul: merged, its multiply-adds would run over the outer sum's few outputs
// without a matmul's tiling, and where the product is also used elsewhere (a gradient that both a
// LayerNorm's input gradient and its bias gradient read) it would be computed twice. GPT-2's final
// LayerNorm bias gradient, (dlogits @ W).sum over 1024 tokens, took 8.4 s merged on the CPU.
// Stored, it is read back by a cheap sum.
std::optional<Tensor> Tensor::merge_into_inner_reduce(Ops op, const Axes& axes,
                                                      const Dims& final_shape) const {
  UOpRef src = uop(), inner = src;
  bool dropped_dims = false;
  if (src->op() == Ops::RESHAPE && src->src(0)->op() == Ops::REDUCE_AXIS) {
    inner = src->src(0);
    dropped_dims = true;
  }
  if (inner->op() != Ops::REDUCE_AXIS || inner->dtype() != dtype()) return std::nullopt;
  const ReduceArg& ia = *inner->arg_if<ReduceArg>();
  if (ia.op != op) return std::nullopt;
  ShapeMap shapes;
  Dims in_shape = shapes(inner->src(0)), inner_kept = shapes(inner);
  if (dims_prod(inner_kept) >= kLargeMatmul && is_broadcast_product(inner->src(0))) return std::nullopt;
  std::vector<int64_t> remaining; // dims of inner's result that this tensor still has
  for (int64_t d = 0; d < int64_t(inner_kept.size()); ++d)
    if (!dropped_dims || std::find(ia.axes.begin(), ia.axes.end(), d) == ia.axes.end())
      remaining.push_back(d);
  Dims visible;
  for (auto d : remaining) visible.push_back(inner_kept[size_t(d)]);
  if (visible != this->shape()) return std::nullopt; // the reshape did more than drop the reduced dims
  std::vector<int64_t> merged = ia.axes;
  for (auto a : axes) merged.push_back(remaining[size_t(a)]);
  std::sort(merged.begin(), merged.end());
  Dims kept = in_shape;
  for (auto a : merged) kept[size_t(a)] = 1;
  Tensor r = with(UOp::make(Ops::REDUCE_AXIS, dtype(), {inner->src(0)}, ReduceArg{op, merged}), kept);
  return r.reshape(final_shape);
}

// Few outputs of a long reduce over several axes (BatchNorm's per-channel sums over N, H, W of an
// NCHW tensor): one work group per output leaves most of a GPU idle (32 groups on 132 SMs ran at
// 115-230 GB/s on an H200). Two kernels instead: partial results over S slices of the first
// reduced axis, then their reduction. Adjacent reduced dims are merged first (H, W -> H*W) so the
// partial kernel's innermost reduce axis is one long contiguous row, which the GPU heuristic
// groups (neighbouring threads read neighbouring words). A split that keeps H and W apart leaves
// the partial kernel without a usable GROUP axis and runs 10-70x slower (docs/cuda.md,
// "Reductions on the GPU"). GPUs only (devices whose work groups run in parallel): on the CPU the
// split's partial kernel (2048 outputs of 8 x 400) ran slower than the one reduce (a DEBUG=2
// training step, Debian machine).
std::optional<Tensor> Tensor::split_multi_axis_reduce(Ops op, const Axes& axes,
                                                      const Dims& final_shape) const {
  const Dims& shape = this->shape();
  auto reduced = [&](int64_t d) { return reduced_in(axes, d); };
  Dims merged;         // the shape with each run of adjacent reduced dims as one dim
  Axes merged_reduced; // the reduced dims of `merged`
  for (int64_t d = 0; d < ndim(); ++d) {
    if (reduced(d) && d > 0 && reduced(d - 1)) {
      merged.back() *= shape[size_t(d)];
      continue;
    }
    if (reduced(d)) merged_reduced.push_back(int64_t(merged.size()));
    merged.push_back(shape[size_t(d)]);
  }
  // at least two runs (one run is the one-axis split's case), the last one the innermost dims
  if (merged_reduced.size() < 2 || merged_reduced.back() != int64_t(merged.size()) - 1 || merged.back() < 64)
    return std::nullopt;
  int64_t outputs = 1, count = 1;
  for (int64_t d = 0; d < int64_t(merged.size()); ++d)
    (reduced_in(merged_reduced, d) ? count : outputs) *= merged[size_t(d)];
  const int64_t a = merged_reduced[0], n = merged[size_t(a)];
  int64_t split = 0; // the most slices with <= 2048 partial outputs, each reducing >= 1024 values
  for (int64_t s : {256, 128, 64, 32, 16, 8, 4, 2})
    if (n % s == 0 && s * outputs <= 2048 && s * outputs >= 64 && count / s >= 1024) {
      split = s;
      break;
    }
  if (split == 0 || !parallel_work_groups(device())) return std::nullopt;
  Dims sliced = merged;
  sliced[size_t(a)] = n / split;
  sliced.insert(sliced.begin() + a, split);
  Axes partial_axes;
  for (int64_t r : merged_reduced) partial_axes.push_back(r + 1); // a + 1 is the slice's rest of a
  Tensor partial = reshape(sliced).reduce(op, partial_axes, true).contiguous();
  return partial.reduce(op, {a}, true).reshape(final_shape);
}

// Column sums on a GPU (a bias gradient: 768 columns of (8, 1024, 768) summed over the 8192
// rows): the reduced dims lead and the columns are contiguous, so the heuristic gives 16 columns
// per work group (heuristic.cpp, column sums) and the whole reduce 48 work groups on 132 SMs.
// Two kernels instead: the rows in S slices (S x columns >= 16384 partial sums, each slice >= 64
// rows), then the slices' sum. Devices whose work groups run in parallel only.
std::optional<Tensor> Tensor::split_column_sums(Ops op, const Axes& axes, const Dims& final_shape) const {
  const Dims& shape = this->shape();
  int64_t lead = 0; // the reduced dims must be the leading ones (size-1 dims aside)
  while (lead < ndim() && (reduced_in(axes, lead) || shape[size_t(lead)] == 1)) ++lead;
  for (int64_t d = lead; d < ndim(); ++d)
    if (reduced_in(axes, d) && shape[size_t(d)] != 1) return std::nullopt;
  int64_t rows = 1, columns = 1;
  for (int64_t d = 0; d < ndim(); ++d) (d < lead ? rows : columns) *= shape[size_t(d)];
  int64_t split = 0;
  for (int64_t s = 2; s <= 256 && split == 0; s *= 2)
    if (rows % s == 0 && rows / s >= 64 && s * columns >= 16384) split = s;
  if (split == 0 || !parallel_work_groups(device())) return std::nullopt;
  Dims sliced(shape.begin() + lead, shape.end());
  sliced.insert(sliced.begin(), {split, rows / split});
  Tensor partial = reshape(sliced).reduce(op, {1}, false).contiguous();
  return partial.reduce(op, {0}, false).reshape(final_shape);
}

Tensor Tensor::reduce(Ops op, const Axes& axes_in, bool keepdim) const {
  Axes axes = axes_or_all(axes_in);
  Dims kept = this->shape(), dropped;
  for (auto a : axes) kept[size_t(a)] = 1;
  for (int64_t i = 0; i < ndim(); ++i)
    if (std::find(axes.begin(), axes.end(), i) == axes.end()) dropped.push_back(this->shape()[size_t(i)]);
  for (auto a : axes)
    if (this->shape()[size_t(a)] == 0 && op == Ops::MAX)
      throw TensorError("max of an empty dimension (axis " + std::to_string(a) + " of " +
                        dims_str(this->shape()) + ")");
  Tensor out = *this;
  std::vector<int64_t> real_axes;
  for (auto a : axes)
    if (this->shape()[size_t(a)] != 1) real_axes.push_back(a);
  if (!real_axes.empty()) {
    int64_t count = 1, outputs = dims_prod(kept);
    for (auto a : real_axes) count *= this->shape()[size_t(a)];
    // Adjacent reduced axes (a whole matrix's sum: each parameter's part of a gradient norm) are
    // one run of values: reduced as one axis, the split below applies to them. Unsplit, GPT-2's
    // 50304 x 768 embedding gradient's sum of squares ran in one work group, 3 s on an H100.
    if (!config().noopt && real_axes.size() >= 2 && count >= 32768 && outputs < 64 &&
        real_axes.back() - real_axes.front() == int64_t(real_axes.size()) - 1) {
      const Dims& sh = this->shape();
      Dims one_run(sh.begin(), sh.begin() + real_axes.front());
      one_run.push_back(count);
      one_run.insert(one_run.end(), sh.begin() + real_axes.back() + 1, sh.end());
      return reshape(one_run).reduce(op, {real_axes.front()}, false).reshape(keepdim ? kept : dropped);
    }
    // A long reduction with few outputs runs on one core; split it into two kernels (partial
    // results, then their reduction), as tinygrad's split_reduceop does.
    if (!config().noopt && real_axes.size() == 1 && count >= 32768 && outputs < 64) {
      int64_t a = real_axes[0], n = this->shape()[size_t(a)], split = 0;
      for (int64_t s : {256, 128, 64, 32, 16})
        if (n % s == 0 && n / s >= 256) {
          split = s;
          break;
        }
      if (split) {
        Dims sh = this->shape();
        sh[size_t(a)] = n / split;
        sh.insert(sh.begin() + a, split);
        Tensor partial = reshape(sh).reduce(op, {a + 1}, true).contiguous();
        return partial.reduce(op, {a}, false).reshape(keepdim ? kept : dropped);
      }
    }
    if (!config().noopt && real_axes.size() >= 2 && count >= 32768 && outputs < 64)
      if (auto split = split_multi_axis_reduce(op, real_axes, keepdim ? kept : dropped)) return *split;
    if (!config().noopt && count >= 8192 && outputs >= 64 && outputs < 4096)
      if (auto split = split_column_sums(op, real_axes, keepdim ? kept : dropped)) return *split;
    if (auto merged = merge_into_inner_reduce(op, real_axes, keepdim ? kept : dropped)) return *merged;
    out = with(UOp::make(Ops::REDUCE_AXIS, dtype(), {uop()}, ReduceArg{op, real_axes}), kept);
  }
  return out.reshape(keepdim ? kept : dropped);
}

Tensor Tensor::sum(Axes axes, bool keepdim) const {
  if (dtype() == dtypes::float16 || dtype() == dtypes::bfloat16)
    return cast(dtypes::float32).reduce(Ops::ADD, axes, keepdim).cast(dtype());
  return cast(sum_dtype(dtype())).reduce(Ops::ADD, axes, keepdim);
}

Tensor Tensor::max(Axes axes, bool keepdim) const { return reduce(Ops::MAX, axes, keepdim); }

Tensor Tensor::min(Axes axes, bool keepdim) const {
  if (dtype().is_bool()) return logical_not().max(axes, keepdim).logical_not();
  if (dtype().is_int()) { // x ^ all-ones (~x) reverses the order of ints without -x's wrap at the minimum
    Tensor m = bitwise_xor(const_like(-1)).max(axes, keepdim);
    return m.bitwise_xor(m.const_like(-1));
  }
  return -((-*this).max(axes, keepdim));
}

Tensor Tensor::prod(Axes axes, bool keepdim) const {
  if (dtype() == dtypes::float16 || dtype() == dtypes::bfloat16)
    return cast(dtypes::float32).reduce(Ops::MUL, axes, keepdim).cast(dtype());
  return cast(sum_dtype(dtype())).reduce(Ops::MUL, axes, keepdim);
}

Tensor Tensor::mean(Axes axes, bool keepdim) const {
  Axes all = axes_or_all(axes);
  int64_t count = 1;
  for (auto a : all) count *= this->shape()[size_t(a)];
  Tensor x = dtype().is_float() ? *this : cast(dtypes::default_float);
  Tensor s = x.sum(axes, keepdim);
  if (count == 0) return s * std::numeric_limits<double>::quiet_NaN();
  return s * (1.0 / double(count));
}

Tensor Tensor::var(Axes axes, bool keepdim, double correction) const {
  Axes all = axes_or_all(axes);
  int64_t count = 1;
  for (auto a : all) count *= this->shape()[size_t(a)];
  Tensor x = dtype().is_float() ? *this : cast(dtypes::default_float);
  Tensor centered = x - x.mean(axes, true);
  return (centered * centered).sum(axes, keepdim) * (1.0 / std::max(0.0, double(count) - correction));
}

Tensor Tensor::std(Axes axes, bool keepdim, double correction) const {
  return var(axes, keepdim, correction).sqrt();
}

Tensor Tensor::argmax(std::optional<int64_t> ax, bool keepdim) const {
  if (!ax) return flatten().argmax(int64_t{0}, false).reshape(keepdim ? Dims(size_t(ndim()), 1) : Dims{});
  int64_t a = axis(*ax);
  int64_t n = this->shape()[size_t(a)];
  if (n == 0) throw TensorError("argmax of an empty dimension");
  Dims ar_shape(size_t(ndim()), 1);
  ar_shape[size_t(a)] = n;
  // the first index reaching the max: max over (n - i) where x == max. A float max is NaN when
  // the row holds a NaN (NaN equals nothing), so there the hits are the NaNs: PyTorch's first NaN.
  Tensor rev = Tensor::arange(double(n), 0, -1, dtypes::int32, this->device()).reshape(ar_shape);
  Tensor hit = eq(max({a}, true));
  if (dtype().is_float()) hit = hit.logical_or(ne(*this));
  Tensor idx =
      hit.where(rev.expand(this->shape()), rev.const_like(0).expand(this->shape())).max({a}, keepdim);
  return (idx.const_like(double(n)) - idx).cast(dtypes::int32);
}

Tensor Tensor::argmin(std::optional<int64_t> ax, bool keepdim) const {
  if (dtype().is_bool()) return logical_not().argmax(ax, keepdim);
  if (dtype().is_int()) return bitwise_xor(const_like(-1)).argmax(ax, keepdim); // ~x: no wrap at the minimum
  return neg().argmax(ax, keepdim);
}

Tensor Tensor::softmax(int64_t ax) const {
  Tensor x = dtype().is_float() ? *this : cast(dtypes::default_float);
  Tensor e = (x - x.max({ax}, true)).exp();
  return e * e.sum({ax}, true).reciprocal(); // one division per row, not per element (as tinygrad)
}

Tensor Tensor::log_softmax(int64_t ax) const {
  Tensor x = dtype().is_float() ? *this : cast(dtypes::default_float);
  Tensor m = x - x.max({ax}, true);
  return m - m.exp().sum({ax}, true).log();
}

Tensor Tensor::logsumexp(int64_t ax, bool keepdim) const {
  Tensor x = dtype().is_float() ? *this : cast(dtypes::default_float);
  // An infinite max is not subtracted (inf - inf is NaN): the row's result is then that infinity.
  Tensor m = x.max({ax}, true);
  m = m.abs().eq(m.const_like(std::numeric_limits<double>::infinity())).where(m.const_like(0), m);
  Tensor s = (x - m).exp().sum({ax}, true).log() + m;
  return keepdim ? s : s.squeeze(ax);
}

Tensor Tensor::cumsum(int64_t ax) const {
  int64_t a = axis(ax);
  int64_t n = this->shape()[size_t(a)];
  // out[i] = sum_{j <= i} x[j]: a lower-triangular selection summed over j. Selected with where,
  // not multiplied by a 0/1 mask: inf * 0 would put NaN into every earlier output.
  Tensor x = transpose(a, -1).cast(sum_dtype(dtype()));
  Tensor rows = Tensor::arange(0, double(n), 1, dtypes::int32, this->device()).reshape({n, 1});
  Tensor cols = Tensor::arange(0, double(n), 1, dtypes::int32, this->device()).reshape({1, n});
  Dims sel_shape = x.shape();
  sel_shape.insert(sel_shape.end() - 1, n);
  Tensor xs = x.unsqueeze(-2).expand(sel_shape);
  Tensor out = cols.le(rows).expand(sel_shape).where(xs, xs.const_like(0)).sum({-1});
  return out.transpose(a, -1).cast(dtype().is_float() ? dtype() : sum_dtype(dtype()));
}

} // namespace tg
