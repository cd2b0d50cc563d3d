// n-d convolution, transposed convolution, pooling, LRN, layer normalization and resampling
// (interpolation), built from existing tensor ops: windows come from Tensor::pool (a zero-copy
// view), padding from pad, and resampling from a one-hot selection of taps.
#include "kernel/tensor/tensor.hpp"

#include <cmath>
#include <limits>
#include <numeric>
#include <string>

namespace tg {

namespace {

std::string pads_str(const Pads& p) {
  std::string s = "(";
  for (size_t i = 0; i < p.size(); ++i)
    s += (i ? ", (" : "(") + std::to_string(p[i].first) + ", " + std::to_string(p[i].second) + ")";
  return s + ")";
}

// An option vector of one entry per spatial dim, or `fill` for each when empty.
Dims per_dim(const std::string& op, const char* name, const Dims& v, size_t n, int64_t fill) {
  if (v.empty()) return Dims(n, fill);
  if (v.size() != n)
    throw TensorError(op + ": " + name + " " + dims_str(v) + " needs " + std::to_string(n) +
                      " entries, one per spatial dim");
  return v;
}

Pads per_dim_pads(const std::string& op, const Pads& p, size_t n) {
  if (p.empty()) return Pads(n, {0, 0});
  if (p.size() != n)
    throw TensorError(op + ": padding " + pads_str(p) + " needs " + std::to_string(n) +
                      " (begin, end) pairs, one per spatial dim");
  return p;
}

void check_at_least(const std::string& op, const char* name, const Dims& v, int64_t low) {
  for (int64_t e : v)
    if (e < low)
      throw TensorError(op + ": " + name + " " + dims_str(v) + " must be >= " + std::to_string(low));
}

void check_pads(const std::string& op, const Pads& p) {
  for (auto [b, e] : p)
    if (b < 0 || e < 0) throw TensorError(op + ": padding " + pads_str(p) + " must be >= 0");
}

// dilation * (kernel - 1) + 1, or int64 max when that overflows (it then fits nothing).
int64_t window_span(int64_t kernel, int64_t dilation) {
  int64_t span = 0;
  if (__builtin_mul_overflow(dilation, kernel - 1, &span) || __builtin_add_overflow(span, 1, &span))
    return std::numeric_limits<int64_t>::max();
  return span;
}

// Pads the last pads.size() dims of x (no node when nothing is padded).
Tensor pad_last(const Tensor& x, const Pads& pads, double value = 0) {
  bool any = false;
  for (auto [b, e] : pads) any |= b != 0 || e != 0;
  if (!any) return x;
  Pads all(size_t(x.ndim()) - pads.size(), {0, 0});
  all.insert(all.end(), pads.begin(), pads.end());
  return x.pad(all, value);
}

// Keeps [0, size[i]) of each of the last size.size() dims.
Tensor crop_last(const Tensor& x, const Dims& size) {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  size_t lead = size_t(x.ndim()) - size.size();
  bool same = true;
  for (size_t i = 0; i < size_t(x.ndim()); ++i) {
    int64_t e = i < lead ? x.shape()[i] : size[i - lead];
    same &= e == x.shape()[i];
    ranges.emplace_back(0, e);
  }
  return same ? x : x.shrink(ranges);
}

// A pooling's resolved arguments: per-dim kernel, stride, dilation and padding, the extra end
// padding that ceil_mode's last partial windows need, the output size, and how much of the padded
// input the windows use.
struct PoolPlan {
  Dims kernel, stride, dilation;
  Pads padding, extra;
  Dims out, used;
};

PoolPlan plan_pool(const std::string& op, const Tensor& x, const PoolOptions& o) {
  size_t n = o.kernel.size();
  if (n == 0) throw TensorError(op + ": the kernel needs at least one dim");
  if (size_t(x.ndim()) < n)
    throw TensorError(op + ": input " + dims_str(x.shape()) + " has fewer dims than the kernel " +
                      dims_str(o.kernel));
  PoolPlan p;
  p.kernel = o.kernel;
  p.stride = per_dim(op, "stride", o.stride, n, 0);
  if (o.stride.empty()) p.stride = o.kernel;
  p.dilation = per_dim(op, "dilation", o.dilation, n, 1);
  p.padding = per_dim_pads(op, o.padding, n);
  check_at_least(op, "kernel", p.kernel, 1);
  check_at_least(op, "stride", p.stride, 1);
  check_at_least(op, "dilation", p.dilation, 1);
  check_pads(op, p.padding);
  size_t lead = size_t(x.ndim()) - n;
  for (size_t i = 0; i < n; ++i) {
    int64_t d = x.shape()[lead + i], s = p.stride[i];
    int64_t padded = d + p.padding[i].first + p.padding[i].second;
    int64_t span = window_span(p.kernel[i], p.dilation[i]);
    if (padded < span)
      throw TensorError(op + ": kernel " + dims_str(p.kernel) + " (dilation " + dims_str(p.dilation) +
                        ") is larger than the padded input: input " + dims_str(x.shape()) + ", padding " +
                        pads_str(p.padding));
    int64_t room = padded - span;
    int64_t out = (o.ceil_mode ? (room + s - 1) / s : room / s) + 1;
    // torch/ONNX: the last window must start inside the input or its left padding
    if (o.ceil_mode && (out - 1) * s >= d + p.padding[i].first) --out;
    int64_t used = (out - 1) * s + span;
    p.out.push_back(out);
    p.used.push_back(used);
    p.extra.emplace_back(0, std::max<int64_t>(0, used - padded));
  }
  return p;
}

// x padded with `value` by the plan's padding, then with `extra_value` for ceil_mode's windows, as
// windows (..., o1..on, k1..kn).
Tensor plan_windows(const Tensor& x, const PoolPlan& p, double value, double extra_value) {
  Tensor y = pad_last(pad_last(x, p.padding, value), p.extra, extra_value);
  // cut only where the windows would otherwise be more than the plan's (ceil_mode's dropped last
  // window); elements past the last window pool() leaves out anyway
  size_t n = p.kernel.size(), lead = size_t(y.ndim()) - n;
  bool cut = false;
  for (size_t i = 0; i < n; ++i)
    cut |= (y.shape()[lead + i] - window_span(p.kernel[i], p.dilation[i])) / p.stride[i] + 1 > p.out[i];
  return (cut ? crop_last(y, p.used) : y).pool(p.kernel, p.stride, p.dilation);
}

Axes last_axes(size_t n) {
  Axes a;
  for (size_t i = 0; i < n; ++i) a.push_back(-int64_t(n) + int64_t(i));
  return a;
}

// How many of each window's elements count for an average: 1 where the input is (and in its
// padding when count_include_pad), 0 in padding otherwise and in ceil_mode's extra windows.
// nullopt when every window counts all its kernel's elements.
std::optional<Tensor> window_counts(const Tensor& x, const PoolPlan& p, bool count_include_pad, DType dt) {
  bool any_pad = false, any_extra = false;
  for (auto [b, e] : p.padding) any_pad |= b != 0 || e != 0;
  for (auto [b, e] : p.extra) any_extra |= e != 0;
  if (!any_extra && (!any_pad || count_include_pad)) return std::nullopt;
  size_t n = p.kernel.size();
  Dims spatial(x.shape().end() - int64_t(n), x.shape().end());
  Tensor ones = Tensor::ones(spatial, dt, x.device());
  return plan_windows(ones, p, count_include_pad ? 1 : 0, 0).sum(last_axes(n));
}

// The float dtype a mean or norm of x is computed in.
DType float_of(const Tensor& x) { return x.dtype().is_float() ? x.dtype() : dtypes::float32; }

} // namespace

Tensor Tensor::conv(const Tensor& weight, const std::optional<Tensor>& bias,
                    const ConvOptions& options) const {
  const std::string op = "conv";
  if (ndim() < 3 || weight.ndim() != ndim())
    throw TensorError("conv needs input (N, C, d1..dn) and weight (Cout, C/groups, k1..kn) of the same rank "
                      ">= 3, got " +
                      dims_str(this->shape()) + " and " + dims_str(weight.shape()));
  size_t n = size_t(ndim() - 2);
  Dims stride = per_dim(op, "stride", options.stride, n, 1);
  Dims dilation = per_dim(op, "dilation", options.dilation, n, 1);
  Pads padding = per_dim_pads(op, options.padding, n);
  check_at_least(op, "stride", stride, 1);
  check_at_least(op, "dilation", dilation, 1);
  check_pads(op, padding);
  int64_t groups = options.groups;
  int64_t N = this->shape()[0], C = this->shape()[1], cout = weight.shape()[0], cin = weight.shape()[1];
  if (groups < 1) throw TensorError("conv: groups must be >= 1, got " + std::to_string(groups));
  if (C != cin * groups || cout % groups != 0)
    throw TensorError("conv: input " + dims_str(this->shape()) + " has " + std::to_string(C) +
                      " channels; weight " + dims_str(weight.shape()) +
                      " with groups=" + std::to_string(groups) + " expects " + std::to_string(cin * groups) +
                      " and output channels divisible by groups");
  if (bias && (bias->ndim() != 1 || bias->shape()[0] != cout))
    throw TensorError("conv: bias shape " + dims_str(bias->shape()) + " does not match " +
                      std::to_string(cout) + " output channels");
  Dims kernel(weight.shape().begin() + 2, weight.shape().end());
  check_at_least(op, "kernel", kernel, 1);
  for (size_t i = 0; i < n; ++i)
    if (this->shape()[2 + i] + padding[i].first + padding[i].second < window_span(kernel[i], dilation[i]))
      throw TensorError("conv: kernel " + dims_str(kernel) + " (dilation " + dims_str(dilation) +
                        ") is larger than the padded input: input " + dims_str(this->shape()) + ", padding " +
                        pads_str(padding));
  bool uniform = std::all_of(stride.begin(), stride.end(), [&](int64_t s) { return s == stride[0]; }) &&
                 std::all_of(dilation.begin(), dilation.end(), [&](int64_t d) { return d == dilation[0]; });
  if (n <= 2 && uniform) {
    // conv2d (its weight layout, and its custom gradient at stride 1); 1-D as height 1
    Tensor x = *this, w = weight;
    int64_t pad = 0;
    bool symmetric = n == 2 && std::all_of(padding.begin(), padding.end(), [&](const auto& pr) {
                       return pr.first == padding[0].first && pr.second == padding[0].first;
                     });
    if (symmetric)
      pad = padding[0].first;
    else
      x = pad_last(x, padding);
    if (n == 1) {
      x = x.unsqueeze(2);
      w = w.unsqueeze(2);
    }
    Tensor out = x.conv2d(w, bias, stride[0], pad, dilation[0], groups);
    return n == 1 ? out.squeeze(2) : out;
  }
  // (N, C, o.., k..) windows times (1, g, Cout/g, C/g, 1.., k..), summed over C/g and the kernel
  Tensor win = pad_last(*this, padding).pool(kernel, stride, dilation);
  Dims out_size(win.shape().begin() + 2, win.shape().begin() + 2 + int64_t(n));
  int64_t g = groups, rcout = cout / groups;
  Dims xs = {N, g, 1, cin}, ws = {1, g, rcout, cin};
  xs.insert(xs.end(), out_size.begin(), out_size.end());
  xs.insert(xs.end(), kernel.begin(), kernel.end());
  ws.insert(ws.end(), n, 1);
  ws.insert(ws.end(), kernel.begin(), kernel.end());
  Axes red = {3};
  for (size_t i = 0; i < n; ++i) red.push_back(int64_t(4 + n + i));
  Dims final_shape = {N, cout};
  final_shape.insert(final_shape.end(), out_size.begin(), out_size.end());
  Tensor out = (win.reshape(xs) * weight.reshape(ws)).sum(red).reshape(final_shape);
  if (!bias) return out;
  Dims bs(size_t(ndim()), 1);
  bs[1] = cout;
  return out + bias->reshape(bs);
}

Tensor Tensor::conv_transpose(const Tensor& weight, const std::optional<Tensor>& bias,
                              const ConvTransposeOptions& options) const {
  const std::string op = "conv_transpose";
  if (ndim() < 3 || weight.ndim() != ndim())
    throw TensorError("conv_transpose needs input (N, C, d1..dn) and weight (C, Cout/groups, k1..kn) of the "
                      "same rank >= 3, got " +
                      dims_str(this->shape()) + " and " + dims_str(weight.shape()));
  size_t n = size_t(ndim() - 2);
  Dims stride = per_dim(op, "stride", options.stride, n, 1);
  Dims dilation = per_dim(op, "dilation", options.dilation, n, 1);
  Dims out_pad = per_dim(op, "output_padding", options.output_padding, n, 0);
  Pads padding = per_dim_pads(op, options.padding, n);
  check_at_least(op, "stride", stride, 1);
  check_at_least(op, "dilation", dilation, 1);
  check_at_least(op, "output_padding", out_pad, 0);
  check_pads(op, padding);
  int64_t groups = options.groups;
  int64_t N = this->shape()[0], C = this->shape()[1], rcout = weight.shape()[1];
  if (groups < 1) throw TensorError("conv_transpose: groups must be >= 1, got " + std::to_string(groups));
  if (weight.shape()[0] != C || C % groups != 0)
    throw TensorError("conv_transpose: input " + dims_str(this->shape()) + " has " + std::to_string(C) +
                      " channels; weight " + dims_str(weight.shape()) + " needs as many in its first dim, " +
                      "divisible by groups=" + std::to_string(groups));
  int64_t cout = rcout * groups;
  if (bias && (bias->ndim() != 1 || bias->shape()[0] != cout))
    throw TensorError("conv_transpose: bias shape " + dims_str(bias->shape()) + " does not match " +
                      std::to_string(cout) + " output channels");
  Dims kernel(weight.shape().begin() + 2, weight.shape().end());
  check_at_least(op, "kernel", kernel, 1);
  Dims spatial(this->shape().begin() + 2, this->shape().end());
  for (size_t i = 0; i < n; ++i) {
    int64_t o = (spatial[i] - 1) * stride[i] - padding[i].first - padding[i].second +
                dilation[i] * (kernel[i] - 1) + out_pad[i] + 1;
    if (spatial[i] < 1 || o < 1)
      throw TensorError("conv_transpose: input " + dims_str(this->shape()) + ", weight " +
                        dims_str(weight.shape()) + ", stride " + dims_str(stride) + ", padding " +
                        pads_str(padding) + " and output_padding " + dims_str(out_pad) +
                        " give an empty output");
  }
  // Insert stride-1 zeros between the input's elements ((.., d, 1) padded to (.., d, s), then
  // flattened), and pad by dilation*(k-1) - padding (negative amounts crop), output_padding at the
  // end. A dim's s-1 inserted zeros go after each element where the left edge is padded, else before
  // it, where they count toward the left crop: this way every dilated dim is padded on the left or
  // cropped there, never only cropped at its end (ShapeTracker::merge_views cannot yet merge a
  // prefix shrink of a flattened padded view: View::reshape sees a size mismatch).
  Tensor x = *this;
  Pads edges;
  for (size_t i = 0; i < n; ++i) {
    int64_t edge = dilation[i] * (kernel[i] - 1);
    edges.emplace_back(edge - padding[i].first, edge - padding[i].second + out_pad[i]);
  }
  if (std::any_of(stride.begin(), stride.end(), [](int64_t s) { return s > 1; })) {
    Dims split = {N, C};
    Pads zeros = {{0, 0}, {0, 0}};
    Dims merged = {N, C};
    for (size_t i = 0; i < n; ++i) {
      int64_t s = stride[i];
      split.insert(split.end(), {spatial[i], 1});
      bool after = edges[i].first >= 1;
      zeros.insert(zeros.end(), {{0, 0}, {after ? 0 : s - 1, after ? s - 1 : 0}});
      (after ? edges[i].second : edges[i].first) -= s - 1;
      merged.push_back(spatial[i] * s);
    }
    x = x.reshape(split).pad(zeros).reshape(merged);
  }
  // the padding first, then the crops (a padded view is masked: never the merge above)
  Pads grow, cut;
  for (auto [b, e] : edges) {
    grow.emplace_back(std::max<int64_t>(b, 0), std::max<int64_t>(e, 0));
    cut.emplace_back(std::min<int64_t>(b, 0), std::min<int64_t>(e, 0));
  }
  x = pad_last(pad_last(x, grow), cut);
  // weight (C, Cout/g, k..) -> (Cout, C/g, k..), flipped in space
  Dims wsplit = {groups, C / groups, rcout}, wmerged = {cout, C / groups};
  Axes order = {0, 2, 1}, flip_axes;
  for (size_t i = 0; i < n; ++i) {
    wsplit.push_back(kernel[i]);
    wmerged.push_back(kernel[i]);
    order.push_back(int64_t(3 + i));
    flip_axes.push_back(int64_t(2 + i));
  }
  Tensor w = weight.reshape(wsplit).permute(order).reshape(wmerged).flip(flip_axes);
  return x.conv(w, bias, ConvOptions{{}, dilation, {}, groups});
}

Tensor Tensor::max_pool(const PoolOptions& options) const {
  PoolPlan p = plan_pool("max_pool", *this, options);
  double low = dtype().is_float() ? -std::numeric_limits<double>::infinity()
               : dtype().is_int() ? double(dtype().int_min())
                                  : 0;
  return plan_windows(*this, p, low, low).max(last_axes(p.kernel.size()));
}

Tensor Tensor::avg_pool(const PoolOptions& options, bool count_include_pad) const {
  PoolPlan p = plan_pool("avg_pool", *this, options);
  DType dt = float_of(*this);
  Tensor x = dtype() == dt ? *this : cast(dt);
  size_t n = p.kernel.size();
  Tensor sums = plan_windows(x, p, 0, 0).sum(last_axes(n));
  if (auto counts = window_counts(*this, p, count_include_pad, dt)) return sums / *counts;
  return sums / double(std::accumulate(p.kernel.begin(), p.kernel.end(), int64_t(1), std::multiplies<>()));
}

Tensor Tensor::lp_pool(double p, const PoolOptions& options) const {
  if (!(p > 0) || std::isinf(p))
    throw TensorError("lp_pool: p must be positive and finite, got " + std::to_string(p));
  PoolPlan plan = plan_pool("lp_pool", *this, options);
  DType dt = float_of(*this);
  Tensor x = (dtype() == dt ? *this : cast(dt)).abs();
  Tensor powered = p == 1 ? x : x.pow(p);
  Tensor sums = plan_windows(powered, plan, 0, 0).sum(last_axes(plan.kernel.size()));
  return p == 1 ? sums : sums.pow(1 / p);
}

Tensor Tensor::lrn(int64_t size, double alpha, double beta, double k) const {
  if (ndim() < 2) throw TensorError("lrn needs input (N, C, ...), got " + dims_str(this->shape()));
  if (size < 1) throw TensorError("lrn: size must be >= 1, got " + std::to_string(size));
  DType dt = float_of(*this);
  Tensor x = dtype() == dt ? *this : cast(dt);
  int64_t N = this->shape()[0], C = this->shape()[1];
  int64_t rest = dims_prod(Dims(this->shape().begin() + 2, this->shape().end()));
  // sum of squares over channels [c - floor((size-1)/2), c + ceil((size-1)/2)] (ONNX): channels
  // moved last, zero-padded, pooled with stride 1
  Tensor sq = x.square().reshape({N, C, rest}).transpose(1, 2);
  Tensor sums = pad_last(sq, {{(size - 1) / 2, size / 2}}).pool({size}, {1}, {1}).sum({-1});
  Tensor s = sums.transpose(1, 2).reshape(this->shape());
  return x / (s * (alpha / double(size)) + k).pow(beta);
}

Tensor Tensor::layernorm(Axes axes, double eps) const {
  DType dt = float_of(*this);
  Tensor x = dtype() == dt ? *this : cast(dt);
  Axes ax;
  for (int64_t a : axes) ax.push_back(axis(a));
  if (ax.empty()) throw TensorError("layernorm needs at least one axis, input " + dims_str(this->shape()));
  Tensor centered = x - x.mean(ax, true);
  return centered * (centered.square().mean(ax, true) + eps).rsqrt();
}

Tensor Tensor::resample(int64_t ax, const Tensor& index, const Tensor& weight) const {
  int64_t a = axis(ax);
  if (index.ndim() != 2 || weight.shape() != index.shape())
    throw TensorError("resample: index " + dims_str(index.shape()) + " and weight " +
                      dims_str(weight.shape()) + " must both be (out, taps)");
  if (index.dtype().is_float() || index.dtype().is_bool())
    throw TensorError("resample: index must be an integer tensor, got " + index.dtype().name());
  int64_t n = this->shape()[size_t(a)];
  // x with the axis last, as (..., 1, 1, n); each (out, tap) selects its element (where, not a
  // product with a one-hot: an unselected inf or NaN must not leak into every output)
  Tensor x = transpose(a, -1).unsqueeze(-2).unsqueeze(-2);
  Tensor ar = Tensor::arange(0, double(n), 1, index.dtype(), device()).reshape({1, 1, n});
  Tensor onehot = index.unsqueeze(-1).eq(ar);                 // (out, taps, n)
  Tensor picked = onehot.where(x, x.const_like(0)).sum({-1}); // (..., out, taps)
  return (picked * weight).sum({-1}).transpose(a, -1);
}

namespace {

// One axis's taps for torch.nn.functional.interpolate: index and weight, (out, taps) each.
struct Taps {
  int64_t taps = 1;
  std::vector<int32_t> index;
  std::vector<double> weight;
};

double cubic_near(double x, double A) { return ((A + 2) * x - (A + 3)) * x * x + 1; }      // |x| <= 1
double cubic_far(double x, double A) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; } // 1 < |x| < 2

Taps interpolation_taps(int64_t in, int64_t out, const std::string& mode, bool align_corners) {
  Taps t;
  if (mode == "nearest") {
    // torch's legacy "nearest": floor(dst * in/out) in float32, as torch computes it
    float scale = float(in) / float(out);
    for (int64_t o = 0; o < out; ++o) {
      int64_t src = out == 2 * in ? o >> 1 : int64_t(std::floor(float(o) * scale));
      t.index.push_back(int32_t(std::min(src, in - 1)));
      t.weight.push_back(1);
    }
    return t;
  }
  bool cubic = mode == "cubic";
  double scale = align_corners ? (out > 1 ? double(in - 1) / double(out - 1) : 0) : double(in) / double(out);
  t.taps = cubic ? 4 : 2;
  for (int64_t o = 0; o < out; ++o) {
    double src = align_corners ? scale * double(o) : scale * (double(o) + 0.5) - 0.5;
    if (!cubic) {
      src = std::max(src, 0.0);
      int64_t i0 = int64_t(src);
      int64_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
      double l = src - double(i0);
      t.index.insert(t.index.end(), {int32_t(i0), int32_t(i1)});
      t.weight.insert(t.weight.end(), {1 - l, l});
    } else {
      double fl = std::floor(src), f = src - fl;
      const double A = -0.75;
      double w[4] = {cubic_far(f + 1, A), cubic_near(f, A), cubic_near(1 - f, A), cubic_far(2 - f, A)};
      for (int64_t j = 0; j < 4; ++j) {
        int64_t i = std::clamp(int64_t(fl) - 1 + j, int64_t(0), in - 1);
        t.index.push_back(int32_t(i));
        t.weight.push_back(w[j]);
      }
    }
  }
  return t;
}

} // namespace

Tensor Tensor::interpolate(Dims size, const std::string& mode, bool align_corners) const {
  std::string m = mode == "bilinear" || mode == "trilinear" ? "linear" : mode == "bicubic" ? "cubic" : mode;
  if (m != "nearest" && m != "linear" && m != "cubic")
    throw TensorError("interpolate: mode must be \"nearest\", \"linear\" or \"cubic\", got \"" + mode + "\"");
  if (size.empty() || int64_t(size.size()) + 2 != ndim())
    throw TensorError("interpolate: input " + dims_str(this->shape()) +
                      " needs (N, C) and one dim per entry of size " + dims_str(size));
  for (size_t i = 0; i < size.size(); ++i)
    if (size[i] < 1 || this->shape()[2 + i] < 1)
      throw TensorError("interpolate: sizes must be >= 1: input " + dims_str(this->shape()) + ", size " +
                        dims_str(size));
  DType dt = float_of(*this);
  Tensor x = m == "nearest" || dtype() == dt ? *this : cast(dt);
  for (size_t i = 0; i < size.size(); ++i) {
    int64_t a = int64_t(2 + i), in = x.shape()[size_t(a)], out = size[i];
    if (in == out) continue; // every mode is the identity then
    Taps t = interpolation_taps(in, out, m, align_corners);
    if (m == "nearest") {
      // whole-number factors: each element repeated (a zero-copy expand), or every r-th element
      bool repeat = out % in == 0, step = in % out == 0;
      for (int64_t o = 0; o < out; ++o) {
        repeat &= t.index[size_t(o)] == o / std::max<int64_t>(out / in, 1);
        step &= t.index[size_t(o)] == o * std::max<int64_t>(in / out, 1);
      }
      if (repeat || step) {
        Dims shape = x.shape(), split = x.shape();
        int64_t r = repeat ? out / in : in / out;
        if (repeat) {
          split.insert(split.begin() + a + 1, 1);
          Dims wide = split;
          wide[size_t(a + 1)] = r;
          shape[size_t(a)] = out;
          x = x.reshape(split).expand(wide).reshape(shape);
        } else {
          split[size_t(a)] = out;
          split.insert(split.begin() + a + 1, r);
          std::vector<std::pair<int64_t, int64_t>> ranges;
          for (int64_t e : split) ranges.emplace_back(0, e);
          ranges[size_t(a + 1)] = {0, 1};
          shape[size_t(a)] = out;
          x = x.reshape(split).shrink(ranges).reshape(shape);
        }
        continue;
      }
    }
    Tensor index = Tensor::from_vector<int32_t>(t.index, {out, t.taps}, dtypes::int32, x.device());
    Tensor weight = Tensor::from_vector<double>(t.weight, {out, t.taps}, dt, x.device());
    x = x.resample(a, index, weight);
    if (m == "nearest") x = x.cast(dtype());
  }
  return x;
}

} // namespace tg
