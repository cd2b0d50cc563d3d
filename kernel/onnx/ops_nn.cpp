// Neural-network ops: convolutions, pooling, normalizations, Gemm/MatMul, quantization, Dropout and
// Resize/Upsample. Shapes, padding and resampling tables are worked out on the host from the
// attributes and input shapes; the values stay lazy Tensor expressions.
#include "kernel/onnx/ops.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace tg::onnx {

namespace {

using Ints = std::vector<int64_t>;

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

Dims spatial_of(const Tensor& x) { return Dims(x.shape().begin() + 2, x.shape().end()); }

// A per-spatial-dim attribute (strides, dilations, ...): `fill` for each dim when absent.
Dims dims_attr(const OpContext& ctx, const std::string& name, size_t n, int64_t fill) {
  Ints v = ctx.attr_ints(name);
  if (v.empty()) return Dims(n, fill);
  if (v.size() != n)
    ctx.fail("attribute " + name + " " + ints_str(v) + " needs " + std::to_string(n) +
             " entries, one per spatial dim");
  return v;
}

void check_spatial_input(const OpContext& ctx, const Tensor& x, const char* what) {
  if (x.ndim() < 3)
    ctx.fail(std::string(what) + " input must be (N, C, d1, ...), got " + dims_str(x.shape()));
}

// The (begin, end) padding of each spatial dim from auto_pad / pads, as Conv and the pools read
// them. SAME_*: the output is ceil(in / stride) and the padding what that needs.
Pads conv_pads(const OpContext& ctx, const Dims& in, const Dims& kernel, const Dims& stride,
               const Dims& dilation) {
  size_t n = in.size();
  std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  Pads pads(n, {0, 0});
  if (auto_pad == "NOTSET" || auto_pad.empty()) {
    Ints p = ctx.attr_ints("pads");
    if (p.empty()) return pads;
    if (p.size() != 2 * n)
      ctx.fail("pads " + ints_str(p) + " needs " + std::to_string(2 * n) + " entries (begins, then ends)");
    for (size_t i = 0; i < n; ++i) {
      if (p[i] < 0 || p[i + n] < 0) ctx.fail("pads " + ints_str(p) + " must be >= 0");
      pads[i] = {p[i], p[i + n]};
    }
    return pads;
  }
  if (auto_pad == "VALID") return pads;
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") ctx.fail("unknown auto_pad '" + auto_pad + "'");
  for (size_t i = 0; i < n; ++i) {
    int64_t out = (in[i] + stride[i] - 1) / stride[i];
    int64_t total = std::max<int64_t>(0, (out - 1) * stride[i] + (kernel[i] - 1) * dilation[i] + 1 - in[i]);
    int64_t small = total / 2, big = total - small;
    pads[i] = auto_pad == "SAME_UPPER" ? std::pair{small, big} : std::pair{big, small};
  }
  return pads;
}

// Reshapes a per-channel vector (C) to broadcast against (N, C, d1..dn): (C, 1, .., 1).
Tensor per_channel(const Tensor& v, int64_t rank) {
  if (v.ndim() != 1) return v;
  Dims s(size_t(std::max<int64_t>(rank - 1, 1)), 1);
  s[0] = v.shape()[0];
  return v.reshape(s);
}

// A weight's per-output-channel vector (M) reshaped against (M, C/group, k1..kn): (M, 1, .., 1).
Tensor per_out_channel(const Tensor& v, int64_t rank) {
  if (v.ndim() != 1) return v;
  Dims s(size_t(rank), 1);
  s[0] = v.shape()[0];
  return v.reshape(s);
}

// A per-axis (1-D) quantization parameter reshaped to broadcast along `axis` of a rank-`rank`
// tensor; a scalar (or a 1-element vector) stays as it is.
Tensor along_axis(const OpContext& ctx, const Tensor& v, int64_t axis, int64_t rank) {
  if (v.ndim() == 0 || (v.ndim() == 1 && v.shape()[0] == 1)) return v.reshape({});
  if (v.ndim() != 1)
    ctx.fail("a quantization scale or zero point must be a scalar or 1-D, got " + dims_str(v.shape()));
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank)
    ctx.fail("axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  Dims s(size_t(rank), 1);
  s[size_t(axis)] = v.shape()[0];
  return v.reshape(s);
}

// round(x) + zero_point, saturated to `dt` and cast to it.
Tensor saturate_cast(const Tensor& rounded, DType dt) {
  return rounded.clip(double(dt.int_min()), double(dt.int_max())).cast(dt);
}

Tensor as_int32(const Tensor& x) { return x.dtype() == dtypes::int32 ? x : x.cast(dtypes::int32); }

// x - zero_point in int32 (zero_point optional).
Tensor minus_zero_point(const Tensor& x, const std::optional<Tensor>& zp) {
  Tensor xi = as_int32(x);
  return zp ? xi - as_int32(*zp) : xi;
}

// The float32 result of an int32 accumulator requantized: round(acc * scale) + zp, saturated.
Tensor requantize(const Tensor& acc, const Tensor& scale, const std::optional<Tensor>& zp, DType out) {
  Tensor y = (acc.cast(dtypes::float32) * scale.cast(dtypes::float32)).round();
  if (zp) y = y + zp->cast(dtypes::float32);
  return saturate_cast(y, out);
}

// ---- Conv family ----

struct ConvParams {
  Dims kernel, stride, dilation;
  Pads pads;
  int64_t groups = 1;
};

ConvParams conv_params(const OpContext& ctx, const Tensor& x, const Tensor& w) {
  check_spatial_input(ctx, x, "Conv");
  if (w.ndim() != x.ndim())
    ctx.fail("weight " + dims_str(w.shape()) + " must have the input's rank (" + dims_str(x.shape()) + ")");
  size_t n = size_t(x.ndim() - 2);
  ConvParams p;
  p.kernel = Dims(w.shape().begin() + 2, w.shape().end());
  Ints ks = ctx.attr_ints("kernel_shape");
  if (!ks.empty() && ks != p.kernel)
    ctx.fail("kernel_shape " + ints_str(ks) + " does not match the weight " + dims_str(w.shape()));
  p.stride = dims_attr(ctx, "strides", n, 1);
  p.dilation = dims_attr(ctx, "dilations", n, 1);
  p.groups = ctx.attr_int("group", 1);
  if (p.groups < 1) ctx.fail("group must be >= 1");
  for (size_t i = 0; i < n; ++i)
    if (p.stride[i] < 1 || p.dilation[i] < 1) ctx.fail("strides and dilations must be >= 1");
  if (x.shape()[1] != w.shape()[1] * p.groups)
    ctx.fail("input " + dims_str(x.shape()) + " has " + std::to_string(x.shape()[1]) + " channels; weight " +
             dims_str(w.shape()) + " with group=" + std::to_string(p.groups) + " expects " +
             std::to_string(w.shape()[1] * p.groups));
  if (w.shape()[0] % p.groups != 0)
    ctx.fail("weight " + dims_str(w.shape()) +
             ": output channels not divisible by group=" + std::to_string(p.groups));
  p.pads = conv_pads(ctx, spatial_of(x), p.kernel, p.stride, p.dilation);
  return p;
}

Tensor run_conv(const Tensor& x, const Tensor& w, const std::optional<Tensor>& b, const ConvParams& p) {
  return x.conv(w, b, ConvOptions{p.stride, p.dilation, p.pads, p.groups});
}

std::vector<Value> op_conv(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  const Tensor& w = ctx.tensor(1);
  ConvParams p = conv_params(ctx, x, w);
  std::optional<Tensor> b = ctx.optional_tensor(2);
  if (b && (b->ndim() != 1 || b->shape()[0] != w.shape()[0]))
    ctx.fail("bias " + dims_str(b->shape()) + " must be (" + std::to_string(w.shape()[0]) + ")");
  return {run_conv(x, w, b, p)};
}

std::vector<Value> op_conv_integer(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  const Tensor& w = ctx.tensor(1);
  ConvParams p = conv_params(ctx, x, w);
  Tensor xi = minus_zero_point(x, ctx.optional_tensor(2));
  std::optional<Tensor> wzp = ctx.optional_tensor(3);
  if (wzp) wzp = per_out_channel(*wzp, w.ndim());
  Tensor wi = minus_zero_point(w, wzp);
  return {run_conv(xi, wi, std::nullopt, p)};
}

std::vector<Value> op_qlinear_conv(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  const Tensor& w = ctx.tensor(3);
  ConvParams p = conv_params(ctx, x, w);
  const Tensor& x_scale = ctx.tensor(1);
  const Tensor& w_scale = ctx.tensor(4);
  const Tensor& y_scale = ctx.tensor(6);
  std::optional<Tensor> y_zp = ctx.optional_tensor(7);
  std::optional<Tensor> wzp = ctx.optional_tensor(5);
  if (wzp) wzp = per_out_channel(*wzp, w.ndim());
  Tensor acc =
      run_conv(minus_zero_point(x, ctx.optional_tensor(2)), minus_zero_point(w, wzp), std::nullopt, p);
  if (auto b = ctx.optional_tensor(8)) acc = acc + per_channel(as_int32(*b), x.ndim());
  // the real multiplier x_scale * w_scale / y_scale, per output channel when w_scale is (M)
  Tensor ws =
      w_scale.ndim() == 1 && w_scale.shape()[0] > 1 ? per_channel(w_scale, x.ndim()) : w_scale.reshape({});
  Tensor scale = x_scale.reshape({}).cast(dtypes::float32) * ws.cast(dtypes::float32) /
                 y_scale.reshape({}).cast(dtypes::float32);
  DType out = y_zp ? y_zp->dtype() : x.dtype();
  return {requantize(acc, scale, y_zp ? std::optional<Tensor>(y_zp->reshape({})) : std::nullopt, out)};
}

std::vector<Value> op_conv_transpose(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  const Tensor& w = ctx.tensor(1);
  check_spatial_input(ctx, x, "ConvTranspose");
  if (w.ndim() != x.ndim())
    ctx.fail("weight " + dims_str(w.shape()) + " must have the input's rank (" + dims_str(x.shape()) + ")");
  size_t n = size_t(x.ndim() - 2);
  Dims in = spatial_of(x), kernel(w.shape().begin() + 2, w.shape().end());
  Ints ks = ctx.attr_ints("kernel_shape");
  if (!ks.empty() && ks != kernel)
    ctx.fail("kernel_shape " + ints_str(ks) + " does not match the weight " + dims_str(w.shape()));
  Dims stride = dims_attr(ctx, "strides", n, 1), dilation = dims_attr(ctx, "dilations", n, 1);
  Dims out_pad = dims_attr(ctx, "output_padding", n, 0);
  int64_t groups = ctx.attr_int("group", 1);
  if (groups < 1) ctx.fail("group must be >= 1");
  if (w.shape()[0] != x.shape()[1] || x.shape()[1] % groups != 0)
    ctx.fail("input " + dims_str(x.shape()) + " and weight " + dims_str(w.shape()) +
             " (C, M/group, k...) with group=" + std::to_string(groups) + " do not match");
  int64_t cout = w.shape()[1] * groups;
  std::optional<Tensor> b = ctx.optional_tensor(2);
  if (b && (b->ndim() != 1 || b->shape()[0] != cout))
    ctx.fail("bias " + dims_str(b->shape()) + " must be (" + std::to_string(cout) + ")");
  std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  Ints output_shape = ctx.attr_ints("output_shape");
  if (output_shape.size() == n + 2) output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  if (!output_shape.empty() && output_shape.size() != n)
    ctx.fail("output_shape " + ints_str(output_shape) + " needs one entry per spatial dim");
  // the full (uncropped) output size, then (begin, end) crops; negative crops extend with zeros
  Pads crop(n, {0, 0});
  bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  for (size_t i = 0; i < n; ++i) {
    int64_t full = stride[i] * (in[i] - 1) + out_pad[i] + (kernel[i] - 1) * dilation[i] + 1;
    if (!output_shape.empty() || same) {
      int64_t target = output_shape.empty() ? in[i] * stride[i] : output_shape[i];
      int64_t total = full - target, half = floor_div(total, 2);
      crop[i] = auto_pad == "SAME_UPPER" ? std::pair{half, total - half} : std::pair{total - half, half};
    } else if (auto_pad == "NOTSET" || auto_pad.empty()) {
      Ints p = ctx.attr_ints("pads");
      if (!p.empty()) {
        if (p.size() != 2 * n)
          ctx.fail("pads " + ints_str(p) + " needs " + std::to_string(2 * n) + " entries");
        crop[i] = {p[i], p[i + n]};
      }
    } else if (auto_pad != "VALID") {
      ctx.fail("unknown auto_pad '" + auto_pad + "'");
    }
    // output_padding extends the end: fold it into the end crop
    crop[i].second -= out_pad[i];
  }
  ConvTransposeOptions o;
  o.stride = stride;
  o.dilation = dilation;
  o.groups = groups;
  bool begin_extends = false;
  for (size_t i = 0; i < n; ++i) {
    auto [cb, ce] = crop[i];
    begin_extends |= cb < 0;
    o.padding.emplace_back(std::max<int64_t>(cb, 0), std::max<int64_t>(ce, 0));
    o.output_padding.push_back(std::max<int64_t>(-ce, 0));
  }
  if (!begin_extends) return {x.conv_transpose(w, b, o)};
  Tensor y = x.conv_transpose(w, std::nullopt, o);
  Pads extend(2, {0, 0});
  for (size_t i = 0; i < n; ++i) extend.emplace_back(std::max<int64_t>(-crop[i].first, 0), 0);
  y = y.pad(extend);
  if (b) y = y + per_channel(*b, y.ndim());
  return {y};
}

// ---- pooling ----

PoolOptions pool_options(const OpContext& ctx, const Tensor& x, bool has_dilations, bool has_ceil) {
  check_spatial_input(ctx, x, ctx.node().op_type.c_str());
  size_t n = size_t(x.ndim() - 2);
  PoolOptions o;
  o.kernel = ctx.attr_ints("kernel_shape");
  if (o.kernel.size() != n)
    ctx.fail("kernel_shape " + ints_str(o.kernel) + " needs one entry per spatial dim of " +
             dims_str(x.shape()));
  o.stride = dims_attr(ctx, "strides", n, 1);
  o.dilation = has_dilations ? dims_attr(ctx, "dilations", n, 1) : Dims(n, 1);
  o.ceil_mode = has_ceil && ctx.attr_int("ceil_mode", 0) != 0;
  for (size_t i = 0; i < n; ++i)
    if (o.kernel[i] < 1 || o.stride[i] < 1 || o.dilation[i] < 1)
      ctx.fail("kernel_shape, strides and dilations must be >= 1");
  o.padding = conv_pads(ctx, spatial_of(x), o.kernel, o.stride, o.dilation);
  return o;
}

// MaxPool's Indices: the flat index (row-major over the whole input, or column-major over the
// spatial dims when storage_order is 1) of each window's first maximum.
Tensor max_pool_indices(const Tensor& x, const PoolOptions& o, bool column_major) {
  size_t n = o.kernel.size();
  Dims in = spatial_of(x);
  Pads pads = o.padding;
  Dims out;
  for (size_t i = 0; i < n; ++i) {
    int64_t padded = in[i] + pads[i].first + pads[i].second;
    int64_t span = (o.kernel[i] - 1) * o.dilation[i] + 1, s = o.stride[i];
    int64_t room = padded - span;
    int64_t k = (o.ceil_mode ? (room + s - 1) / s : room / s) + 1;
    if (o.ceil_mode && (k - 1) * s >= in[i] + pads[i].first) --k;
    int64_t used = (k - 1) * s + span;
    if (used > padded) pads[i].second += used - padded;
    out.push_back(k);
  }
  // the flat index of every input element, int64
  int64_t spatial_numel = dims_prod(in);
  Dims lead = {x.shape()[0], x.shape()[1]};
  lead.insert(lead.end(), n, 1);
  Tensor idx =
      Tensor::arange(0, double(x.shape()[0] * x.shape()[1]), 1, dtypes::int64, x.device()).reshape(lead) *
      spatial_numel;
  int64_t stride = 1;
  std::vector<int64_t> strides(n);
  for (size_t j = 0; j < n; ++j) {
    size_t i = column_major ? j : n - 1 - j;
    strides[i] = stride;
    stride *= in[i];
  }
  for (size_t i = 0; i < n; ++i) {
    Dims s(size_t(x.ndim()), 1);
    s[2 + i] = in[i];
    idx = idx + Tensor::arange(0, double(in[i]), 1, dtypes::int64, x.device()).reshape(s) * strides[i];
  }
  idx = idx.expand(x.shape());
  double low = x.dtype().is_float() ? -std::numeric_limits<double>::infinity()
               : x.dtype().is_int() ? double(x.dtype().int_min())
                                    : 0;
  Pads all = {{0, 0}, {0, 0}};
  all.insert(all.end(), pads.begin(), pads.end());
  Dims flat = {x.shape()[0], x.shape()[1]};
  flat.insert(flat.end(), out.begin(), out.end());
  flat.push_back(-1);
  Tensor xw = x.pad(all, low).pool(o.kernel, o.stride, o.dilation).reshape(flat);
  Tensor iw = idx.pad(all, 0).pool(o.kernel, o.stride, o.dilation).reshape(flat);
  Tensor am = xw.argmax(-1, true);
  return iw.gather(-1, am).squeeze(-1).cast(dtypes::int64);
}

std::vector<Value> op_max_pool(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  PoolOptions o = pool_options(ctx, x, ctx.opset() >= 10, ctx.opset() >= 10);
  Tensor y = x.max_pool(o);
  if (!ctx.wants_output(1)) return {y};
  int64_t order = ctx.attr_int("storage_order", 0);
  return {y, max_pool_indices(x, o, order == 1)};
}

std::vector<Value> op_average_pool(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  PoolOptions o = pool_options(ctx, x, ctx.opset() >= 19, ctx.opset() >= 10);
  bool include = ctx.attr_int("count_include_pad", 0) != 0;
  return {x.avg_pool(o, include)};
}

std::vector<Value> op_lp_pool(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  PoolOptions o = pool_options(ctx, x, ctx.opset() >= 18, ctx.opset() >= 18);
  double p = ctx.attr_float("p", 2);
  return {x.lp_pool(p, o)};
}

Axes spatial_axes(const Tensor& x) {
  Axes a;
  for (int64_t i = 2; i < x.ndim(); ++i) a.push_back(i);
  return a;
}

// ---- normalization ----

std::vector<Value> op_batch_norm(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  if (x.ndim() < 2) ctx.fail("input must be (N, C, ...), got " + dims_str(x.shape()));
  DType dt = x.dtype();
  Tensor scale = ctx.tensor(1).cast(dt), bias = ctx.tensor(2).cast(dt);
  const Tensor& mean_in = ctx.tensor(3);
  const Tensor& var_in = ctx.tensor(4);
  double eps = ctx.attr_float("epsilon", 1e-5), momentum = ctx.attr_float("momentum", 0.9);
  bool training;
  if (ctx.opset() >= 14)
    training = ctx.attr_int("training_mode", 0) != 0;
  else {
    bool extra = false;
    for (size_t i = 1; i < ctx.num_outputs(); ++i) extra |= ctx.wants_output(i);
    training = extra && (ctx.opset() >= 7 || ctx.attr_int("is_test", 0) == 0);
  }
  int64_t r = x.ndim();
  auto bc = [&](const Tensor& v) { return per_channel(v, r); };
  if (!training) {
    Tensor y = (x - bc(mean_in.cast(dt))) * (bc(var_in.cast(dt)) + eps).rsqrt() * bc(scale) + bc(bias);
    std::vector<Value> out = {y};
    for (size_t i = 1; i < ctx.num_outputs(); ++i) out.push_back(i == 1 ? mean_in : var_in);
    return out;
  }
  Axes axes = {0};
  for (int64_t i = 2; i < r; ++i) axes.push_back(i);
  Tensor mean = x.mean(axes, true);
  Tensor var = (x - mean).square().mean(axes, true);
  Tensor y = (x - mean) * (var + eps).rsqrt() * bc(scale) + bc(bias);
  Tensor m = mean.reshape({x.shape()[1]}).cast(mean_in.dtype()),
         v = var.reshape({x.shape()[1]}).cast(var_in.dtype());
  Tensor running_mean = mean_in * momentum + m * (1 - momentum);
  Tensor running_var = var_in * momentum + v * (1 - momentum);
  std::vector<Value> out = {y, running_mean, running_var};
  if (ctx.opset() < 14) {
    out.push_back(m);
    out.push_back(v);
  }
  out.resize(std::min(out.size(), std::max<size_t>(ctx.num_outputs(), 1)));
  return out;
}

std::vector<Value> op_instance_norm(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  check_spatial_input(ctx, x, "InstanceNormalization");
  double eps = ctx.attr_float("epsilon", 1e-5);
  Axes axes = spatial_axes(x);
  Tensor mean = x.mean(axes, true);
  Tensor centered = x - mean;
  Tensor var = centered.square().mean(axes, true);
  int64_t r = x.ndim();
  return {centered * (var + eps).rsqrt() * per_channel(ctx.tensor(1), r) + per_channel(ctx.tensor(2), r)};
}

std::vector<Value> op_layer_norm(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  int64_t r = x.ndim();
  int64_t axis = ctx.attr_int("axis", -1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r)
    ctx.fail("axis " + std::to_string(ctx.attr_int("axis", -1)) + " out of range for " + dims_str(x.shape()));
  double eps = ctx.attr_float("epsilon", 1e-5);
  DType stash = dtype_from_onnx(ctx.attr_int("stash_type", 1), "stash_type");
  if (!stash.is_float()) ctx.fail("stash_type must be a float type");
  Axes axes;
  for (int64_t i = axis; i < r; ++i) axes.push_back(i);
  Tensor xs = x.dtype() == stash ? x : x.cast(stash);
  Tensor mean = xs.mean(axes, true);
  Tensor centered = xs - mean;
  Tensor inv_std = (centered.square().mean(axes, true) + eps).rsqrt();
  Tensor normalized = centered * inv_std;
  if (normalized.dtype() != x.dtype()) normalized = normalized.cast(x.dtype());
  Tensor y = normalized * ctx.tensor(1);
  if (auto b = ctx.optional_tensor(2)) y = y + *b;
  return {y, mean, inv_std};
}

std::vector<Value> op_lrn(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  int64_t size = ctx.required_int("size");
  if (size < 1) ctx.fail("size must be >= 1");
  if (x.ndim() < 2) ctx.fail("input must be (N, C, ...), got " + dims_str(x.shape()));
  return {
      x.lrn(size, ctx.attr_float("alpha", 1e-4), ctx.attr_float("beta", 0.75), ctx.attr_float("bias", 1.0))};
}

std::vector<Value> op_mvn(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  Axes axes = ctx.attr_ints("axes", {0, 2, 3});
  for (int64_t& a : axes) {
    if (a < 0) a += x.ndim();
    if (a < 0 || a >= x.ndim()) ctx.fail("axes out of range for " + dims_str(x.shape()));
  }
  Tensor mean = x.mean(axes, true);
  Tensor centered = x - mean;
  Tensor stdev = centered.square().mean(axes, true).sqrt();
  return {centered / (stdev + 1e-9)};
}

// ---- matrix products ----

std::vector<Value> op_gemm(OpContext& ctx) {
  Tensor a = ctx.tensor(0), b = ctx.tensor(1);
  if (a.ndim() != 2 || b.ndim() != 2)
    ctx.fail("A and B must be 2-D, got " + dims_str(a.shape()) + " and " + dims_str(b.shape()));
  if (ctx.attr_int("transA", 0)) a = a.T();
  // a constant B^T (an initializer: a Linear layer's weight) is kept transposed, so the product
  // reads it along n: made in the first run, reused while the model lives. One row of A (batch 1)
  // reads B^T as it is: each output's sum then runs along a row of it, a stream of whole cache
  // lines; along n every step of the sum touched another page.
  if (ctx.attr_int("transB", 0))
    b = a.shape()[0] == 1 ? b.T() : ctx.derived(1, "transposed", [](const Tensor& t) { return t.T(); });
  if (a.shape()[1] != b.shape()[0])
    ctx.fail("inner dims of A' " + dims_str(a.shape()) + " and B' " + dims_str(b.shape()) + " differ");
  double alpha = ctx.attr_float("alpha", 1.0), beta = ctx.attr_float("beta", 1.0);
  DType dt = a.dtype();
  Tensor y = a.matmul(b);
  if (alpha != 1) y = y * alpha;
  if (auto c = ctx.optional_tensor(2); c && beta != 0) y = y + (beta == 1 ? *c : *c * beta);
  return {y.dtype() == dt ? y : y.cast(dt)};
}

std::vector<Value> op_matmul(OpContext& ctx) {
  const Tensor& a = ctx.tensor(0);
  const Tensor& b = ctx.tensor(1);
  if (a.ndim() == 0 || b.ndim() == 0) ctx.fail("MatMul inputs must have at least 1 dim");
  return {a.matmul(b)};
}

// A's zero point or scale per row: (M) -> (M, 1) against A (..., M, K).
Tensor per_row(const Tensor& v) {
  if (v.ndim() == 1 && v.shape()[0] > 1) return v.reshape({v.shape()[0], 1});
  return v.ndim() == 1 ? v.reshape({}) : v;
}

std::vector<Value> op_matmul_integer(OpContext& ctx) {
  std::optional<Tensor> azp = ctx.optional_tensor(2), bzp = ctx.optional_tensor(3);
  if (azp) azp = per_row(*azp);
  Tensor a = minus_zero_point(ctx.tensor(0), azp), b = minus_zero_point(ctx.tensor(1), bzp);
  return {a.matmul(b)};
}

std::vector<Value> op_qlinear_matmul(OpContext& ctx) {
  std::optional<Tensor> azp = ctx.optional_tensor(2), bzp = ctx.optional_tensor(5),
                        yzp = ctx.optional_tensor(7);
  if (azp) azp = per_row(*azp);
  Tensor acc = minus_zero_point(ctx.tensor(0), azp).matmul(minus_zero_point(ctx.tensor(3), bzp));
  Tensor scale = per_row(ctx.tensor(1)).cast(dtypes::float32) * ctx.tensor(4).cast(dtypes::float32) /
                 ctx.tensor(6).reshape({}).cast(dtypes::float32);
  DType out = yzp ? yzp->dtype() : ctx.tensor(0).dtype();
  return {requantize(acc, scale, yzp ? std::optional<Tensor>(yzp->reshape({})) : std::nullopt, out)};
}

// ---- quantization ----

std::vector<Value> op_quantize(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  int64_t axis = ctx.opset() >= 13 ? ctx.attr_int("axis", 1) : 1;
  Tensor scale = along_axis(ctx, ctx.tensor(1), axis, x.ndim());
  std::optional<Tensor> zp = ctx.optional_tensor(2);
  DType out = zp ? zp->dtype() : dtypes::uint8;
  if (out != dtypes::uint8 && out != dtypes::int8) ctx.unsupported("QuantizeLinear to " + out.name());
  DType ft = x.dtype().is_float() ? x.dtype() : dtypes::float32;
  Tensor y = (x.cast(ft) / scale.cast(ft)).round();
  if (zp) y = y + along_axis(ctx, *zp, axis, x.ndim()).cast(ft);
  return {saturate_cast(y, out)};
}

std::vector<Value> op_dequantize(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  int64_t axis = ctx.opset() >= 13 ? ctx.attr_int("axis", 1) : 1;
  Tensor scale = along_axis(ctx, ctx.tensor(1), axis, x.ndim());
  std::optional<Tensor> zp = ctx.optional_tensor(2);
  if (zp) zp = along_axis(ctx, *zp, axis, x.ndim());
  Tensor xi = minus_zero_point(x, zp);
  return {xi.cast(scale.dtype()) * scale};
}

std::vector<Value> op_dynamic_quantize(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  Tensor xf = x.cast(dtypes::float32);
  Tensor zero = Tensor::scalar(0, dtypes::float32, x.device());
  Tensor lo = xf.min().minimum(zero), hi = xf.max().maximum(zero);
  Tensor scale = (hi - lo) / 255.0;
  Tensor zp = ((zero - lo) / scale).round().clip(0, 255);
  Tensor y = ((xf / scale).round() + zp).clip(0, 255).cast(dtypes::uint8);
  return {y, scale, zp.cast(dtypes::uint8)};
}

// ---- Dropout ----

std::vector<Value> op_dropout(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  double ratio;
  bool training;
  if (ctx.opset() >= 12) {
    ratio = ctx.has(1) ? ctx.double_scalar(1) : 0.5;
    training = ctx.has(2) && ctx.int_scalar(2) != 0;
  } else {
    ratio = ctx.attr_float("ratio", 0.5);
    training = ctx.opset() < 7 && ctx.attr_int("is_test", 0) == 0;
  }
  DType mask_dt = ctx.opset() >= 10 ? dtypes::bool_ : x.dtype();
  if (!training || ratio == 0) {
    std::vector<Value> out = {x};
    if (ctx.wants_output(1)) out.push_back(Tensor::ones(x.shape(), mask_dt, x.device()));
    return out;
  }
  if (ratio < 0 || ratio >= 1) ctx.fail("ratio must be in [0, 1), got " + std::to_string(ratio));
  Tensor r = Tensor::rand(x.shape(), dtypes::float32, x.device());
  Tensor keep = r.ge(r.const_like(ratio));
  Tensor y = keep.where(x / (1 - ratio), x.const_like(0));
  std::vector<Value> out = {y.dtype() == x.dtype() ? y : y.cast(x.dtype())};
  if (ctx.wants_output(1)) out.push_back(mask_dt == dtypes::bool_ ? keep : keep.cast(mask_dt));
  return out;
}

// ---- Resize / Upsample ----

// One axis's resampling: for each output position its taps (input index, weight), and whether
// it lies outside the input (tf_crop_and_resize: the extrapolation value).
struct AxisTable {
  std::vector<std::vector<std::pair<int64_t, double>>> taps;
  std::vector<bool> outside;
  bool any_outside = false;
};

struct ResizeAttrs {
  std::string mode = "nearest";                    // nearest, linear, cubic
  std::string coord = "half_pixel";                // coordinate_transformation_mode
  std::string nearest_mode = "round_prefer_floor"; // or "legacy" (Upsample, Resize-10), "floor_legacy"
  double cubic_a = -0.75;
  bool exclude_outside = false;
};

std::vector<double> resize_coeffs(const OpContext& ctx, const ResizeAttrs& a, double ratio, bool integer) {
  if (a.mode == "nearest") {
    if (integer) return {0, 1};
    const std::string& m = a.nearest_mode;
    if (m == "round_prefer_floor") return {double(ratio <= 0.5), double(ratio > 0.5)};
    if (m == "round_prefer_ceil") return {double(ratio < 0.5), double(ratio >= 0.5)};
    if (m == "floor") return {1, 0};
    if (m == "ceil") return {0, 1};
    ctx.fail("unknown nearest_mode '" + m + "'");
  }
  if (a.mode == "linear") return {1 - ratio, ratio};
  if (a.mode == "cubic") {
    double A = a.cubic_a, r = ratio, s = 1 - ratio;
    return {((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A, ((A + 2) * r - (A + 3)) * r * r + 1,
            ((A + 2) * s - (A + 3)) * s * s + 1, ((A * (s + 1) - 5 * A) * (s + 1) + 8 * A) * (s + 1) - 4 * A};
  }
  ctx.fail("unknown mode '" + a.mode + "'");
}

// The table of one axis: the spec's coordinate transforms, with neighbours and edges chosen so the
// outputs match ONNX's backend test data; scale is the axis's scale factor, out_width_f the float
// output width it implies.
AxisTable resize_axis(const OpContext& ctx, const ResizeAttrs& a, int64_t in, int64_t out, double scale,
                      double out_width_f, double roi_start, double roi_end) {
  AxisTable t;
  t.taps.resize(size_t(out));
  t.outside.assign(size_t(out), false);
  for (int64_t o = 0; o < out; ++o) {
    double x = double(o), xo;
    const std::string& c = a.coord;
    if (a.nearest_mode == "legacy" || a.nearest_mode == "floor_legacy") {
      // Upsample and Resize-10: asymmetric; nearest truncates (Resize-10 rounds up when downsampling)
      xo = x / scale;
      if (a.mode == "nearest") {
        int64_t i =
            a.nearest_mode == "legacy" && scale < 1 ? int64_t(std::ceil(xo)) : int64_t(std::floor(xo));
        t.taps[size_t(o)] = {{std::clamp<int64_t>(i, 0, in - 1), 1.0}};
        continue;
      }
    } else if (c == "align_corners") {
      xo = out_width_f == 1 ? 0 : x * double(in - 1) / (out_width_f - 1);
    } else if (c == "asymmetric") {
      xo = x / scale;
    } else if (c == "tf_crop_and_resize") {
      xo = out_width_f == 1 ? (roi_end - roi_start) * double(in - 1) / 2
                            : x * (roi_end - roi_start) * double(in - 1) / (out_width_f - 1);
      xo += roi_start * double(in - 1);
      if (xo < 0 || xo > double(in - 1)) {
        t.outside[size_t(o)] = true;
        t.any_outside = true;
        continue;
      }
    } else if (c == "pytorch_half_pixel") {
      xo = out_width_f == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    } else if (c == "half_pixel") {
      xo = (x + 0.5) / scale - 0.5;
    } else if (c == "tf_half_pixel_for_nn") {
      xo = (x + 0.5) / scale;
    } else {
      ctx.fail("unknown coordinate_transformation_mode '" + c + "'");
    }
    double fl = std::floor(xo);
    bool integer = fl == xo;
    double ratio = integer ? 1.0 : xo - fl;
    std::vector<double> coeffs = resize_coeffs(ctx, a, ratio, integer);
    int64_t n = int64_t(coeffs.size()), pad = (n + 1) / 2;
    // the n nearest indices of the edge-padded input (ties prefer the lower index)
    int64_t start = integer ? int64_t(xo) - n / 2 : int64_t(fl) - n / 2 + 1;
    start = std::max(start, -pad);
    start = std::min(start, in + pad - n);
    if (a.exclude_outside) {
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) {
        int64_t i = start + k;
        if (i < 0 || i >= in) coeffs[size_t(k)] = 0;
        sum += coeffs[size_t(k)];
      }
      for (double& cf : coeffs) cf /= sum;
    }
    auto& taps = t.taps[size_t(o)];
    for (int64_t k = 0; k < n; ++k) {
      if (coeffs[size_t(k)] == 0) continue;
      int64_t i = std::clamp<int64_t>(start + k, 0, in - 1);
      auto it = std::find_if(taps.begin(), taps.end(), [&](const auto& p) { return p.first == i; });
      if (it != taps.end())
        it->second += coeffs[size_t(k)];
      else
        taps.emplace_back(i, coeffs[size_t(k)]);
    }
  }
  return t;
}

bool is_identity(const AxisTable& t, int64_t in) {
  if (t.any_outside || int64_t(t.taps.size()) != in) return false;
  for (size_t o = 0; o < t.taps.size(); ++o)
    if (t.taps[o].size() != 1 || t.taps[o][0].first != int64_t(o) || t.taps[o][0].second != 1) return false;
  return true;
}

Tensor apply_table(const Tensor& y, int64_t axis, const AxisTable& t, double extrapolation) {
  size_t out = t.taps.size(), taps = 1;
  for (const auto& row : t.taps) taps = std::max(taps, row.size());
  std::vector<int32_t> index(out * taps, 0);
  std::vector<float> weight(out * taps, 0.0f);
  for (size_t o = 0; o < out; ++o)
    for (size_t k = 0; k < t.taps[o].size(); ++k) {
      index[o * taps + k] = int32_t(t.taps[o][k].first);
      weight[o * taps + k] = float(t.taps[o][k].second);
    }
  Dims shape = {int64_t(out), int64_t(taps)};
  Tensor idx = Tensor::from_vector(index, shape, dtypes::int32, y.device());
  Tensor w = Tensor::from_vector(weight, shape, y.dtype(), y.device());
  Tensor r = y.resample(axis, idx, w);
  if (r.dtype() != y.dtype()) r = r.cast(y.dtype());
  if (!t.any_outside) return r;
  std::vector<bool> mask(t.outside.begin(), t.outside.end());
  Dims ms(size_t(y.ndim()), 1);
  ms[size_t(axis)] = int64_t(out);
  Tensor m = Tensor::from_vector(mask, ms, dtypes::bool_, y.device());
  return m.where(r.const_like(extrapolation), r);
}

// Resamples x to `out` sizes; scales (per axis) are those the coordinate transforms use, and
// out_width_f the float output widths (scale * in for given scales, as ONNX's reference has it).
Tensor resize_nd(const OpContext& ctx, const Tensor& x, const ResizeAttrs& a, const Dims& out,
                 const std::vector<double>& scales, const std::vector<double>& out_width_f,
                 const std::vector<double>& roi, double extrapolation) {
  int64_t r = x.ndim();
  DType dt = x.dtype();
  Tensor y = dt.is_float() ? x : x.cast(dtypes::float32);
  for (int64_t ax = r - 1; ax >= 0; --ax) {
    int64_t in = x.shape()[size_t(ax)];
    if (out[size_t(ax)] < 0) ctx.fail("output size " + dims_str(out) + " must be >= 0");
    if (out[size_t(ax)] == 0 || in == 0) {
      Dims s = y.shape();
      s[size_t(ax)] = out[size_t(ax)];
      if (in == 0 && out[size_t(ax)] > 0)
        ctx.fail("cannot resize an empty axis to " + std::to_string(out[size_t(ax)]));
      y = Tensor::zeros(s, y.dtype(), y.device());
      continue;
    }
    double rs = roi.empty() ? 0 : roi[size_t(ax)], re = roi.empty() ? 1 : roi[size_t(ax + r)];
    AxisTable t =
        resize_axis(ctx, a, in, out[size_t(ax)], scales[size_t(ax)], out_width_f[size_t(ax)], rs, re);
    if (is_identity(t, in)) continue;
    y = apply_table(y, ax, t, extrapolation);
  }
  if (y.dtype() == dt) return y;
  if (a.mode != "nearest") y = y.round().clip(dt.min_value(), dt.max_value());
  return y.cast(dt);
}

ResizeAttrs resize_attrs(const OpContext& ctx, bool legacy) {
  ResizeAttrs a;
  a.mode = ctx.attr_string("mode", "nearest");
  if (a.mode == "bilinear" || a.mode == "trilinear") a.mode = "linear";
  if (a.mode != "nearest" && a.mode != "linear" && a.mode != "cubic")
    ctx.fail("unknown mode '" + a.mode + "'");
  if (legacy) {
    if (a.mode == "cubic") ctx.fail("mode 'cubic' needs Resize-11 or newer");
    a.coord = "asymmetric";
    a.nearest_mode = ctx.node().op_type == "Upsample" ? "floor_legacy" : "legacy";
    return a;
  }
  a.coord = ctx.attr_string("coordinate_transformation_mode", "half_pixel");
  a.nearest_mode = ctx.attr_string("nearest_mode", "round_prefer_floor");
  if (a.nearest_mode == "legacy" || a.nearest_mode == "floor_legacy")
    ctx.fail("unknown nearest_mode '" + a.nearest_mode + "'");
  a.cubic_a = ctx.attr_float("cubic_coeff_a", -0.75);
  a.exclude_outside = ctx.attr_int("exclude_outside", 0) != 0;
  return a;
}

// Output sizes, scales and float widths from per-axis scales (float32 values, as ONNX's
// reference multiplies them).
void from_scales(const OpContext& ctx, const Tensor& x, const std::vector<double>& sc, Dims& out,
                 std::vector<double>& scales, std::vector<double>& widths) {
  if (int64_t(sc.size()) != x.ndim())
    ctx.fail("scales has " + std::to_string(sc.size()) + " entries for an input of rank " +
             std::to_string(x.ndim()));
  for (size_t i = 0; i < sc.size(); ++i) {
    if (!(sc[i] > 0)) ctx.fail("scales must be > 0");
    int64_t in = x.shape()[i];
    out.push_back(int64_t(std::floor(sc[i] * double(in))));
    scales.push_back(sc[i]);
    widths.push_back(double(float(sc[i]) * float(in)));
  }
}

std::vector<Value> op_resize(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  if (ctx.has_attr("axes") || ctx.has_attr("antialias") || ctx.has_attr("keep_aspect_ratio_policy"))
    ctx.unsupported("Resize-18 attributes (axes, antialias, keep_aspect_ratio_policy)");
  bool legacy = ctx.opset() < 11;
  ResizeAttrs a = resize_attrs(ctx, legacy);
  Dims out;
  std::vector<double> scales, widths, roi;
  if (legacy) {
    from_scales(ctx, x, ctx.doubles(1), out, scales, widths);
  } else {
    std::vector<double> sc = ctx.has(2) ? ctx.doubles(2) : std::vector<double>{};
    Ints sizes = ctx.has(3) ? ctx.ints(3) : Ints{};
    if (!sc.empty() && !sizes.empty()) ctx.fail("only one of scales and sizes may be given");
    if (!sc.empty()) {
      from_scales(ctx, x, sc, out, scales, widths);
    } else if (!sizes.empty()) {
      if (int64_t(sizes.size()) != x.ndim())
        ctx.fail("sizes " + ints_str(sizes) + " needs one entry per dim of " + dims_str(x.shape()));
      for (size_t i = 0; i < sizes.size(); ++i) {
        out.push_back(sizes[i]);
        double s = x.shape()[i] ? double(sizes[i]) / double(x.shape()[i]) : 1.0;
        scales.push_back(s);
        widths.push_back(s * double(x.shape()[i]));
      }
    } else {
      ctx.fail("one of scales and sizes must be given");
    }
    if (a.coord == "tf_crop_and_resize") {
      if (!ctx.has(1)) ctx.fail("tf_crop_and_resize needs roi");
      roi = ctx.doubles(1);
      if (int64_t(roi.size()) != 2 * x.ndim())
        ctx.fail("roi has " + std::to_string(roi.size()) + " entries, needs " + std::to_string(2 * x.ndim()));
    }
  }
  return {resize_nd(ctx, x, a, out, scales, widths, roi, ctx.attr_float("extrapolation_value", 0.0))};
}

std::vector<Value> op_upsample(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  ResizeAttrs a = resize_attrs(ctx, true);
  std::vector<double> sc = ctx.opset() >= 9 ? ctx.doubles(1) : ctx.attr_floats("scales");
  if (ctx.opset() < 7) {
    // Upsample-1: height_scale / width_scale on the last two dims
    sc.assign(size_t(x.ndim()), 1.0);
    if (x.ndim() < 2) ctx.fail("input must have at least 2 dims");
    sc[size_t(x.ndim() - 2)] = ctx.attr_float("height_scale", 1.0);
    sc[size_t(x.ndim() - 1)] = ctx.attr_float("width_scale", 1.0);
  }
  Dims out;
  std::vector<double> scales, widths;
  from_scales(ctx, x, sc, out, scales, widths);
  return {resize_nd(ctx, x, a, out, scales, widths, {}, 0.0)};
}

} // namespace

void register_nn_ops(OpTable& table) {
  table["Conv"] = op_conv;
  table["ConvInteger"] = op_conv_integer;
  table["QLinearConv"] = op_qlinear_conv;
  table["ConvTranspose"] = op_conv_transpose;
  table["MaxPool"] = op_max_pool;
  table["AveragePool"] = op_average_pool;
  table["LpPool"] = op_lp_pool;
  table["GlobalAveragePool"] = [](OpContext& ctx) -> std::vector<Value> {
    const Tensor& x = ctx.tensor(0);
    check_spatial_input(ctx, x, "GlobalAveragePool");
    return {x.mean(spatial_axes(x), true)};
  };
  table["GlobalMaxPool"] = [](OpContext& ctx) -> std::vector<Value> {
    const Tensor& x = ctx.tensor(0);
    check_spatial_input(ctx, x, "GlobalMaxPool");
    return {x.max(spatial_axes(x), true)};
  };
  table["GlobalLpPool"] = [](OpContext& ctx) -> std::vector<Value> {
    const Tensor& x = ctx.tensor(0);
    check_spatial_input(ctx, x, "GlobalLpPool");
    double p = ctx.attr_float("p", 2);
    if (!(p > 0)) ctx.fail("p must be > 0");
    Tensor a = x.abs();
    return {(p == 1 ? a : a.pow(p)).sum(spatial_axes(x), true).pow(1 / p)};
  };
  table["BatchNormalization"] = op_batch_norm;
  table["InstanceNormalization"] = op_instance_norm;
  table["LayerNormalization"] = op_layer_norm;
  table["LRN"] = op_lrn;
  table["MeanVarianceNormalization"] = op_mvn;
  table["Gemm"] = op_gemm;
  table["MatMul"] = op_matmul;
  table["MatMulInteger"] = op_matmul_integer;
  table["QLinearMatMul"] = op_qlinear_matmul;
  table["QuantizeLinear"] = op_quantize;
  table["DequantizeLinear"] = op_dequantize;
  table["DynamicQuantizeLinear"] = op_dynamic_quantize;
  table["Dropout"] = op_dropout;
  table["Resize"] = op_resize;
  table["Upsample"] = op_upsample;
}

} // namespace tg::onnx
