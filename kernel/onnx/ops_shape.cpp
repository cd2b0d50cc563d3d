// Shape and indexing ops: Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Concat, Split, Slice,
// Gather*, Scatter*, Expand, Tile, Pad, Shape, Size, ConstantOfShape, Range, NonZero, OneHot, Trilu,
// DepthToSpace, SpaceToDepth, Compress, EyeLike, Einsum, ReverseSequence, Unique, Det.
//
// Inputs that decide output shapes (Reshape's shape, Slice's starts, Tile's repeats, ...) are read
// on the host with ctx.ints(). Gather selects with a one-hot compare (Tensor::gather's way), so it
// runs on any device. Ops whose output shape depends on the data (NonZero, Compress, Unique) and
// Det read their input back to the host.
#include "kernel/onnx/ops.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

namespace tg::onnx {

namespace {

using Ints = std::vector<int64_t>;

// An axis in [-rank, rank) made non-negative; fails naming `what` otherwise.
int64_t norm_axis(const OpContext& ctx, int64_t axis, int64_t rank, const std::string& what = "axis") {
  if (axis < -rank || axis >= rank)
    ctx.fail(what + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

// Normalized, distinct axes.
Ints norm_axes(const OpContext& ctx, const Ints& axes, int64_t rank, const std::string& what = "axes") {
  Ints out;
  for (int64_t a : axes) {
    int64_t n = norm_axis(ctx, a, rank, what);
    if (std::find(out.begin(), out.end(), n) != out.end())
      ctx.fail(what + " " + ints_str(axes) + " repeat an axis");
    out.push_back(n);
  }
  return out;
}

Ints shape_of(const Tensor& t) { return Ints(t.shape().begin(), t.shape().end()); }

int64_t prod(const Ints& v, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= v[i];
  return p;
}

Tensor as_int_index(const Tensor& idx) {
  if (idx.dtype().is_float() || idx.dtype().is_bool()) return idx.cast(dtypes::int64);
  return idx;
}

// Negative indices count from the end of a dim of size n.
Tensor wrap_negative(const Tensor& idx, int64_t n) {
  Tensor i = as_int_index(idx);
  if (i.dtype().is_unsigned()) return i;
  return i.lt(i.const_like(0)).where(i + n, i);
}

// Negative indices count from the end, per last-dim component: component j against dims[j].
Tensor wrap_negative_last(const Tensor& idx, const Ints& dims, const std::string& device) {
  Tensor i = as_int_index(idx);
  if (i.dtype().is_unsigned() || dims.empty()) return i;
  Tensor n = host_ints_tensor(dims, device).cast(i.dtype());
  return i.lt(i.const_like(0)).where(i + n, i);
}

// numpy take: out = x.shape[:axis] + idx.shape + x.shape[axis+1:], out[p, i, q] = x[p, idx[i], q].
// Indices must already be in [0, n); others select zero. A one-hot compare over the axis.
Tensor take(const Tensor& x, int64_t axis, const Tensor& index) {
  Tensor idx = as_int_index(index);
  const Ints xs = shape_of(x), is = shape_of(idx);
  const size_t a = size_t(axis), ni = is.size(), npost = xs.size() - a - 1;
  const int64_t n = xs[a];
  Ints out(xs.begin(), xs.begin() + int64_t(a));
  out.insert(out.end(), is.begin(), is.end());
  out.insert(out.end(), xs.begin() + int64_t(a) + 1, xs.end());
  if (prod(out, 0, out.size()) == 0 || n == 0) return Tensor::zeros(out, x.dtype(), x.device());
  // x: pre + [1]*ni + [n] + post
  Ints xr(xs.begin(), xs.begin() + int64_t(a));
  xr.insert(xr.end(), ni, 1);
  xr.push_back(n);
  xr.insert(xr.end(), xs.begin() + int64_t(a) + 1, xs.end());
  // one-hot: [1]*a + idx.shape + [n] + [1]*npost
  Ints ir(a, 1);
  ir.insert(ir.end(), is.begin(), is.end());
  ir.push_back(1);
  ir.insert(ir.end(), npost, 1);
  Ints ar(a + ni, 1);
  ar.push_back(n);
  ar.insert(ar.end(), npost, 1);
  Tensor range = Tensor::arange(0, double(n), 1, idx.dtype(), x.device()).reshape(ar);
  Tensor onehot = idx.reshape(ir).eq(range);
  Tensor xv = x.reshape(xr);
  Tensor sel = onehot.where(xv, Tensor::zeros({}, x.dtype(), x.device()));
  return sel.sum({int64_t(a + ni)}).cast(x.dtype());
}

// Builds a tensor of `dtype` from host doubles.
Tensor host_tensor(const std::vector<double>& values, const Ints& shape, DType dtype,
                   const std::string& device) {
  if (dtype == dtypes::float64) return Tensor::from_vector(values, shape, {}, device);
  if (dtype.is_float()) {
    std::vector<float> f(values.begin(), values.end());
    return Tensor::from_vector(f, shape, dtype, device);
  }
  std::vector<int64_t> i;
  for (double v : values) i.push_back(int64_t(v));
  return Tensor::from_vector(i, shape, dtype, device);
}

ScatterReduce scatter_reduction(const OpContext& ctx) {
  std::string r = ctx.attr_string("reduction", "none");
  if (r == "none") return ScatterReduce::none;
  if (r == "add") return ScatterReduce::add;
  if (r == "mul") return ScatterReduce::mul;
  if (r == "max") return ScatterReduce::max;
  if (r == "min") return ScatterReduce::min;
  ctx.fail("unknown reduction '" + r + "'");
}

std::vector<Value> one(Tensor t) { return {Value(std::move(t))}; }

// ---- Reshape and friends ----

std::vector<Value> reshape_op(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  Ints shape = ctx.opset() < 5 ? ctx.attr_ints("shape") : ctx.ints(1);
  bool allowzero = ctx.attr_int("allowzero", 0) != 0;
  int infer = 0;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allowzero) {
      if (int64_t(i) >= x.ndim())
        ctx.fail("shape " + ints_str(shape) + " copies dim " + std::to_string(i) + " of an input of rank " +
                 std::to_string(x.ndim()));
      shape[i] = x.shape()[i];
    } else if (shape[i] == -1) {
      ++infer;
    } else if (shape[i] < 0) {
      ctx.fail("invalid shape " + ints_str(shape));
    }
  }
  if (infer > 1) ctx.fail("shape " + ints_str(shape) + " has more than one -1");
  if (infer == 1) {
    int64_t known = 1;
    for (int64_t d : shape)
      if (d != -1) known *= d;
    if (known == 0 || x.numel() % known != 0)
      ctx.fail("cannot reshape " + ints_str(shape_of(x)) + " to " + ints_str(shape));
    for (auto& d : shape)
      if (d == -1) d = x.numel() / known;
  }
  if (prod(shape, 0, shape.size()) != x.numel())
    ctx.fail("cannot reshape " + ints_str(shape_of(x)) + " to " + ints_str(shape));
  return one(x.reshape(shape));
}

std::vector<Value> flatten_op(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  int64_t r = x.ndim(), axis = ctx.attr_int("axis", 1);
  if (axis < -r || axis > r)
    ctx.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
  if (axis < 0) axis += r;
  Ints s = shape_of(x);
  return one(x.reshape({prod(s, 0, size_t(axis)), prod(s, size_t(axis), s.size())}));
}

Ints axes_from(OpContext& ctx, size_t input, int64_t since) {
  if (ctx.opset() >= since) return ctx.has(input) ? ctx.ints(input) : Ints{};
  return ctx.attr_ints("axes");
}

std::vector<Value> squeeze_op(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  bool given = ctx.opset() >= 13 ? ctx.has(1) : ctx.has_attr("axes");
  Ints axes = norm_axes(ctx, axes_from(ctx, 1, 13), x.ndim());
  Ints out;
  for (int64_t i = 0; i < x.ndim(); ++i) {
    bool listed = std::find(axes.begin(), axes.end(), i) != axes.end();
    int64_t d = x.shape()[size_t(i)];
    if (listed && d != 1)
      ctx.fail("cannot squeeze axis " + std::to_string(i) + " of size " + std::to_string(d));
    if (listed || (!given && d == 1)) continue;
    out.push_back(d);
  }
  return one(x.reshape(out));
}

std::vector<Value> unsqueeze_op(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  Ints axes = axes_from(ctx, 1, 13);
  int64_t rank = x.ndim() + int64_t(axes.size());
  axes = norm_axes(ctx, axes, rank);
  Ints out;
  size_t src = 0;
  for (int64_t i = 0; i < rank; ++i) {
    if (std::find(axes.begin(), axes.end(), i) != axes.end())
      out.push_back(1);
    else
      out.push_back(x.shape()[src++]);
  }
  return one(x.reshape(out));
}

std::vector<Value> transpose_op(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  Ints perm = ctx.attr_ints("perm");
  if (!ctx.has_attr("perm")) {
    perm.resize(size_t(x.ndim()));
    std::iota(perm.rbegin(), perm.rend(), 0);
  }
  if (int64_t(perm.size()) != x.ndim())
    ctx.fail("perm " + ints_str(perm) + " does not match rank " + std::to_string(x.ndim()));
  return one(x.permute(norm_axes(ctx, perm, x.ndim(), "perm")));
}

std::vector<Value> concat_op(OpContext& ctx) {
  std::vector<Tensor> ts;
  for (size_t i = 0; i < ctx.num_inputs(); ++i)
    if (ctx.has(i)) ts.push_back(ctx.tensor(i));
  if (ts.empty()) ctx.fail("no inputs");
  int64_t r = ts[0].ndim();
  int64_t axis = norm_axis(ctx, ctx.required_int("axis"), r);
  Ints out = shape_of(ts[0]);
  out[size_t(axis)] = 0;
  for (const auto& t : ts) {
    if (t.ndim() != r) ctx.fail("inputs differ in rank");
    if (t.dtype() != ts[0].dtype()) ctx.fail("inputs differ in dtype");
    for (int64_t d = 0; d < r; ++d)
      if (d != axis && t.shape()[size_t(d)] != ts[0].shape()[size_t(d)])
        ctx.fail("input shapes " + ints_str(shape_of(ts[0])) + " and " + ints_str(shape_of(t)) + " differ");
    out[size_t(axis)] += t.shape()[size_t(axis)];
  }
  if (ts.size() == 1) return one(ts[0]);
  if (prod(out, 0, out.size()) == 0) return one(Tensor::zeros(out, ts[0].dtype(), ts[0].device()));
  std::vector<Tensor> nonempty;
  for (const auto& t : ts)
    if (t.numel() != 0) nonempty.push_back(t);
  if (nonempty.size() == 1) return one(nonempty[0]);
  return one(Tensor::cat(nonempty, axis));
}

std::vector<Value> split_op(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  int64_t axis = norm_axis(ctx, ctx.attr_int("axis", 0), x.ndim());
  int64_t n = x.shape()[size_t(axis)];
  Ints split;
  if (ctx.has(1))
    split = ctx.ints(1);
  else if (ctx.has_attr("split"))
    split = ctx.attr_ints("split");
  size_t outputs = ctx.num_outputs();
  if (split.empty()) { // equal parts; the last one smaller when n does not divide (num_outputs, opset 18)
    int64_t parts = ctx.attr_int("num_outputs", int64_t(outputs));
    if (parts <= 0) ctx.fail("cannot split into " + std::to_string(parts) + " parts");
    int64_t size = (n + parts - 1) / parts;
    for (int64_t i = 0, left = n; i < parts; ++i) {
      split.push_back(std::min(size, left));
      left -= split.back();
    }
  }
  if (split.size() != outputs)
    ctx.fail("split " + ints_str(split) + " does not match " + std::to_string(outputs) + " outputs");
  int64_t total = 0;
  for (int64_t s : split) {
    if (s < 0) ctx.fail("negative split " + ints_str(split));
    total += s;
  }
  if (total != n) ctx.fail("split " + ints_str(split) + " does not add up to dim " + std::to_string(n));
  std::vector<Value> out;
  int64_t start = 0;
  for (int64_t s : split) {
    std::vector<std::pair<int64_t, int64_t>> ranges;
    for (int64_t d = 0; d < x.ndim(); ++d)
      ranges.emplace_back(d == axis ? std::make_pair(start, start + s)
                                    : std::make_pair(int64_t(0), x.shape()[size_t(d)]));
    out.emplace_back(x.shrink(ranges));
    start += s;
  }
  return out;
}

std::vector<Value> slice_op(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  Ints starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    starts = ctx.attr_ints("starts");
    ends = ctx.attr_ints("ends");
    axes = ctx.attr_ints("axes");
  } else {
    starts = ctx.ints(1);
    ends = ctx.ints(2);
    if (ctx.has(3)) axes = ctx.ints(3);
    if (ctx.has(4)) steps = ctx.ints(4);
  }
  if (starts.size() != ends.size()) ctx.fail("starts and ends differ in length");
  if (axes.empty()) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size())
    ctx.fail("starts, ends, axes and steps differ in length");
  axes = norm_axes(ctx, axes, x.ndim());
  std::vector<Slice> slices(size_t(x.ndim()));
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t n = x.shape()[size_t(axes[i])];
    if (steps[i] == 0) ctx.fail("step 0 on axis " + std::to_string(axes[i]));
    const int64_t step = std::clamp<int64_t>(steps[i], -n - 1, n + 1); // (same elements, no overflow)
    int64_t s = starts[i], e = ends[i];
    if (s < 0) s = s < -n ? -1 : s + n; // (INT64_MIN stays below every clamp without overflow)
    if (e < 0) e = e < -n ? -1 : e + n;
    Slice sl;
    sl.step = step;
    if (step > 0) {
      sl.start = std::clamp<int64_t>(s, 0, n);
      sl.stop = std::clamp<int64_t>(e, 0, n);
    } else {
      if (n == 0) { // nothing to take
        sl.start = 0;
        sl.stop = 0;
        sl.step = 1;
      } else {
        sl.start = std::clamp<int64_t>(s, 0, n - 1); // (the spec clamps start to [0, n - 1] here)
        e = std::clamp<int64_t>(e, -1, n - 1);
        if (e >= 0) sl.stop = e; // else: down to the first element (stop unset)
      }
    }
    slices[size_t(axes[i])] = sl;
  }
  return one(x.slice(slices));
}

// ---- gather and scatter ----

std::vector<Value> gather_op(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  int64_t axis = norm_axis(ctx, ctx.attr_int("axis", 0), x.ndim());
  Tensor idx = wrap_negative(ctx.tensor(1), x.shape()[size_t(axis)]);
  return one(take(x, axis, idx));
}

std::vector<Value> gather_elements_op(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  const Tensor& index = ctx.tensor(1);
  int64_t axis = norm_axis(ctx, ctx.attr_int("axis", 0), x.ndim());
  if (index.ndim() != x.ndim()) ctx.fail("indices and data differ in rank");
  if (index.numel() == 0) return one(Tensor::zeros(index.shape(), x.dtype(), x.device()));
  return one(x.gather(axis, wrap_negative(index, x.shape()[size_t(axis)])));
}

std::vector<Value> gather_nd_op(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  const Tensor& index = ctx.tensor(1);
  int64_t b = ctx.attr_int("batch_dims", 0);
  if (index.ndim() < 1) ctx.fail("indices must have rank >= 1");
  int64_t k = index.shape().back();
  if (b < 0 || b + k > x.ndim() || b >= index.ndim()) ctx.fail("indices do not fit the data's shape");
  Ints dims(x.shape().begin() + b, x.shape().begin() + b + k);
  return one(x.gather_nd(wrap_negative_last(index, dims, x.device()), b));
}

std::vector<Value> scatter_elements_op(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  const Tensor& index = ctx.tensor(1);
  const Tensor& updates = ctx.tensor(2);
  int64_t axis = norm_axis(ctx, ctx.attr_int("axis", 0), x.ndim());
  if (index.shape() != updates.shape()) ctx.fail("indices and updates differ in shape");
  if (index.numel() == 0) return one(x);
  return one(x.scatter_elements(axis, wrap_negative(index, x.shape()[size_t(axis)]), updates.cast(x.dtype()),
                                scatter_reduction(ctx)));
}

std::vector<Value> scatter_nd_op(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  const Tensor& index = ctx.tensor(1);
  const Tensor& updates = ctx.tensor(2);
  if (index.ndim() < 1) ctx.fail("indices must have rank >= 1");
  int64_t k = index.shape().back();
  if (k > x.ndim()) ctx.fail("indices' last dim exceeds the data's rank");
  if (index.numel() == 0) return one(x);
  Ints dims(x.shape().begin(), x.shape().begin() + k);
  return one(x.scatter_nd(wrap_negative_last(index, dims, x.device()), updates.cast(x.dtype()),
                          scatter_reduction(ctx)));
}

// ---- expand, tile, pad ----

std::vector<Value> expand_op(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  Ints shape = ctx.ints(1);
  Ints xs = shape_of(x);
  // bidirectional broadcasting
  size_t r = std::max(xs.size(), shape.size());
  xs.insert(xs.begin(), r - xs.size(), 1);
  shape.insert(shape.begin(), r - shape.size(), 1);
  Ints out(r);
  for (size_t i = 0; i < r; ++i) {
    if (xs[i] == shape[i] || shape[i] == 1)
      out[i] = xs[i];
    else if (xs[i] == 1)
      out[i] = shape[i];
    else
      ctx.fail("cannot expand " + ints_str(shape_of(x)) + " to " + ints_str(ctx.ints(1)));
  }
  if (prod(out, 0, out.size()) == 0) return one(Tensor::zeros(out, x.dtype(), x.device()));
  return one(x.reshape(xs).expand(out));
}

std::vector<Value> tile_op(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  Ints repeats;
  if (ctx.opset() < 6) { // Tile-1: (input, tiles, axis)
    repeats.assign(size_t(x.ndim()), 1);
    repeats[size_t(norm_axis(ctx, ctx.int_scalar(2), x.ndim()))] = ctx.int_scalar(1);
  } else {
    repeats = ctx.ints(1);
  }
  if (int64_t(repeats.size()) != x.ndim())
    ctx.fail("repeats " + ints_str(repeats) + " do not match rank " + std::to_string(x.ndim()));
  Ints out = shape_of(x);
  for (size_t i = 0; i < out.size(); ++i) {
    if (repeats[i] < 0) ctx.fail("negative repeats " + ints_str(repeats));
    out[i] *= repeats[i];
  }
  if (prod(out, 0, out.size()) == 0) return one(Tensor::zeros(out, x.dtype(), x.device()));
  return one(x.repeat(repeats));
}

std::vector<Value> pad_op(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  const int64_t r = x.ndim();
  Ints pads;
  double value = 0;
  Ints axes;
  if (ctx.opset() < 11) {
    pads = ctx.has_attr("pads") ? ctx.attr_ints("pads") : ctx.attr_ints("paddings");
    value = ctx.attr_float("value", 0);
  } else {
    pads = ctx.ints(1);
    if (ctx.has(2)) {
      std::vector<double> v = ctx.doubles(2);
      if (v.size() != 1) ctx.fail("constant_value must have one element");
      value = v[0];
    }
    if (ctx.has(3)) axes = ctx.ints(3);
  }
  if (axes.empty()) {
    axes.resize(size_t(r));
    std::iota(axes.begin(), axes.end(), 0);
  }
  axes = norm_axes(ctx, axes, r);
  if (pads.size() != 2 * axes.size())
    ctx.fail("pads " + ints_str(pads) + " do not match rank " + std::to_string(r));
  Pads padding(size_t(r), {0, 0});
  bool any = false;
  for (size_t i = 0; i < axes.size(); ++i) {
    padding[size_t(axes[i])] = {pads[i], pads[i + axes.size()]};
    any |= pads[i] != 0 || pads[i + axes.size()] != 0;
    if (x.shape()[size_t(axes[i])] + pads[i] + pads[i + axes.size()] < 0)
      ctx.fail("pads " + ints_str(pads) + " crop more than the dim");
  }
  if (!any) return one(x);
  std::string mode = ctx.attr_string("mode", "constant");
  if (mode == "constant") return one(x.pad(padding, value));
  PadMode m;
  if (mode == "reflect")
    m = PadMode::reflect;
  else if (mode == "edge")
    m = PadMode::edge;
  else if (mode == "wrap")
    m = PadMode::wrap;
  else
    ctx.fail("unknown mode '" + mode + "'");
  return one(x.pad(padding, m, value));
}

// ---- shape queries and creation ----

std::vector<Value> shape_op(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  int64_t r = x.ndim();
  int64_t start = ctx.attr_int("start", 0), end = ctx.attr_int("end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, 0, r);
  Ints dims;
  for (int64_t i = start; i < end; ++i) dims.push_back(x.shape()[size_t(i)]);
  return one(host_ints_tensor(dims, x.device()));
}

std::vector<Value> size_op(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  return one(host_ints_tensor({x.numel()}, x.device()).reshape({}));
}

std::vector<Value> constant_of_shape_op(OpContext& ctx) {
  Ints shape = ctx.ints(0);
  for (int64_t d : shape)
    if (d < 0) ctx.fail("negative dim in shape " + ints_str(shape));
  if (!ctx.has_attr("value")) return one(Tensor::zeros(shape, dtypes::float32, ctx.device()));
  const HostTensor& v = ctx.attr_tensor("value");
  if (v.numel() != 1) ctx.fail("value must have one element");
  if (prod(shape, 0, shape.size()) == 0) return one(Tensor::zeros(shape, v.dtype, ctx.device()));
  Tensor t = v.to_tensor(ctx.device()).reshape(Ints(shape.size(), 1));
  return one(t.expand(shape));
}

std::vector<Value> range_op(OpContext& ctx) {
  const Tensor& s = ctx.tensor(0);
  DType dt = s.dtype();
  double start, delta;
  int64_t n;
  if (dt.is_float()) {
    start = ctx.double_scalar(0), delta = ctx.double_scalar(2);
    double limit = ctx.double_scalar(1);
    if (delta == 0) ctx.fail("delta is 0");
    n = int64_t(std::max(std::ceil((limit - start) / delta), 0.0));
  } else {
    int64_t a = ctx.int_scalar(0), b = ctx.int_scalar(1), d = ctx.int_scalar(2);
    if (d == 0) ctx.fail("delta is 0");
    int64_t span = b - a;
    n = d > 0 ? (span > 0 ? (span + d - 1) / d : 0) : (span < 0 ? (-span + (-d) - 1) / (-d) : 0);
    start = double(a), delta = double(d);
  }
  if (n == 0) return one(Tensor::zeros({0}, dt, s.device()));
  return one(Tensor::arange(start, start + double(n) * delta - delta / 2, delta, dt, s.device()));
}

std::vector<Value> nonzero_op(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  if (x.ndim() == 0) return one(x.reshape({1}).nonzero()); // numpy treats a scalar as 1-d
  if (x.numel() == 0) return one(Tensor::zeros({x.ndim(), 0}, dtypes::int64, x.device()));
  return one(x.nonzero());
}

std::vector<Value> one_hot_op(OpContext& ctx) {
  Tensor idx = as_int_index(ctx.tensor(0));
  std::vector<double> dv = ctx.doubles(1);
  if (dv.size() != 1) ctx.fail("depth must be a scalar");
  int64_t depth = int64_t(dv[0]);
  if (depth < 1) ctx.fail("depth must be positive");
  const Tensor& values = ctx.tensor(2);
  if (values.numel() != 2) ctx.fail("values must have two elements");
  int64_t r = idx.ndim() + 1;
  int64_t axis = norm_axis(ctx, ctx.attr_int("axis", -1), r);
  idx = idx.cast(dtypes::int64);
  idx = idx.lt(idx.const_like(0)).where(idx + depth, idx);
  Ints ar(size_t(r), 1);
  ar[size_t(axis)] = depth;
  Tensor range = Tensor::arange(0, double(depth), 1, dtypes::int64, idx.device()).reshape(ar);
  Tensor hot = idx.unsqueeze(axis).eq(range);
  Tensor v = values.reshape({2});
  Tensor off = v.shrink({{0, 1}}).reshape({}), on = v.shrink({{1, 2}}).reshape({});
  return one(hot.where(on, off));
}

// (cols - rows) for the last two dims of `shape`, int32, shaped (m, n).
Tensor diagonal_offsets(int64_t m, int64_t n, const std::string& device) {
  Tensor rows = Tensor::arange(0, double(m), 1, dtypes::int32, device).reshape({m, 1});
  Tensor cols = Tensor::arange(0, double(n), 1, dtypes::int32, device).reshape({1, n});
  return cols - rows;
}

std::vector<Value> trilu_op(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  if (x.ndim() < 2) ctx.fail("input must have rank >= 2");
  int64_t k = ctx.has(1) ? ctx.int_scalar(1) : 0;
  bool upper = ctx.attr_int("upper", 1) != 0;
  if (x.numel() == 0) return one(x);
  int64_t m = x.shape()[size_t(x.ndim() - 2)], n = x.shape().back();
  k = std::clamp<int64_t>(k, -m - 1, n + 1);
  Tensor off = diagonal_offsets(m, n, x.device());
  Tensor keep = upper ? off.ge(off.const_like(double(k))) : off.le(off.const_like(double(k)));
  return one(keep.where(x, Tensor::zeros({}, x.dtype(), x.device())));
}

std::vector<Value> eye_like_op(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  if (x.ndim() != 2) ctx.fail("input must be 2-d");
  DType dt = ctx.has_attr("dtype") ? dtype_from_onnx(ctx.attr_int("dtype", 1), "EyeLike's dtype") : x.dtype();
  int64_t m = x.shape()[0], n = x.shape()[1];
  if (m == 0 || n == 0) return one(Tensor::zeros({m, n}, dt, x.device()));
  int64_t k = std::clamp<int64_t>(ctx.attr_int("k", 0), -m - 1, n + 1);
  Tensor off = diagonal_offsets(m, n, x.device());
  return one(off.eq(off.const_like(double(k))).cast(dt));
}

std::vector<Value> depth_to_space_op(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  if (x.ndim() != 4) ctx.fail("input must be 4-d");
  int64_t bs = ctx.required_int("blocksize");
  std::string mode = ctx.attr_string("mode", "DCR");
  int64_t b = x.shape()[0], c = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
  if (bs <= 0 || c % (bs * bs) != 0)
    ctx.fail("channels " + std::to_string(c) + " do not divide by blocksize^2");
  int64_t oc = c / (bs * bs);
  if (mode != "DCR" && mode != "CRD") ctx.fail("unknown mode '" + mode + "'");
  Tensor t = mode == "DCR" ? x.reshape({b, bs, bs, oc, h, w}).permute({0, 3, 4, 1, 5, 2})
                           : x.reshape({b, oc, bs, bs, h, w}).permute({0, 1, 4, 2, 5, 3});
  return one(t.reshape({b, oc, h * bs, w * bs}));
}

std::vector<Value> space_to_depth_op(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  if (x.ndim() != 4) ctx.fail("input must be 4-d");
  int64_t bs = ctx.required_int("blocksize");
  int64_t b = x.shape()[0], c = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
  if (bs <= 0 || h % bs != 0 || w % bs != 0) ctx.fail("spatial dims do not divide by blocksize");
  Tensor t = x.reshape({b, c, h / bs, bs, w / bs, bs}).permute({0, 3, 5, 1, 2, 4});
  return one(t.reshape({b, c * bs * bs, h / bs, w / bs}));
}

std::vector<Value> compress_op(OpContext& ctx) {
  Tensor x = ctx.tensor(0);
  int64_t axis = 0;
  if (ctx.has_attr("axis"))
    axis = norm_axis(ctx, ctx.attr_int("axis", 0), x.ndim());
  else
    x = x.reshape({x.numel()});
  Ints cond = ctx.ints(1);
  int64_t n = x.shape()[size_t(axis)];
  if (int64_t(cond.size()) > n) {
    for (size_t i = size_t(n); i < cond.size(); ++i)
      if (cond[i])
        ctx.fail("condition selects index " + std::to_string(i) + " beyond dim " + std::to_string(n));
  }
  Ints sel;
  for (size_t i = 0; i < cond.size() && int64_t(i) < n; ++i)
    if (cond[i]) sel.push_back(int64_t(i));
  if (sel.empty()) {
    std::vector<std::pair<int64_t, int64_t>> ranges;
    for (int64_t d = 0; d < x.ndim(); ++d) ranges.emplace_back(0, d == axis ? 0 : x.shape()[size_t(d)]);
    return one(x.shrink(ranges));
  }
  return one(take(x, axis, host_ints_tensor(sel, x.device())));
}

std::vector<Value> einsum_op(OpContext& ctx) {
  std::string eq = ctx.attr_string("equation", "");
  eq.erase(std::remove_if(eq.begin(), eq.end(), [](unsigned char c) { return std::isspace(c) != 0; }),
           eq.end());
  std::vector<Tensor> ops;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) ops.push_back(ctx.tensor(i));
  return one(Tensor::einsum(eq, ops));
}

std::vector<Value> reverse_sequence_op(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  const Tensor& lens = ctx.tensor(1);
  if (x.ndim() < 2) ctx.fail("input must have rank >= 2");
  int64_t bax = norm_axis(ctx, ctx.attr_int("batch_axis", 1), x.ndim(), "batch_axis");
  int64_t tax = norm_axis(ctx, ctx.attr_int("time_axis", 0), x.ndim(), "time_axis");
  if (bax == tax) ctx.fail("batch_axis and time_axis are the same");
  int64_t T = x.shape()[size_t(tax)], B = x.shape()[size_t(bax)];
  if (lens.numel() != B) ctx.fail("sequence_lens must have one entry per batch");
  if (x.numel() == 0) return one(x);
  Ints ts(size_t(x.ndim()), 1), bs(size_t(x.ndim()), 1);
  ts[size_t(tax)] = T;
  bs[size_t(bax)] = B;
  Tensor t = Tensor::arange(0, double(T), 1, dtypes::int64, x.device()).reshape(ts);
  Tensor l = lens.cast(dtypes::int64).reshape(bs);
  Tensor idx = t.lt(l).where(l - 1 - t, t);
  return one(x.gather(tax, idx.expand(x.shape())));
}

// ---- host-side ops ----

std::vector<Value> unique_op(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  bool sorted = ctx.attr_int("sorted", 1) != 0;
  int64_t axis = ctx.has_attr("axis") ? norm_axis(ctx, ctx.attr_int("axis", 0), x.ndim()) : -1;
  auto as_rows = [&] { // (n, m): the items to compare, one per row
    if (axis < 0) return x.reshape({x.numel(), 1});
    Ints order{axis};
    for (int64_t d = 0; d < x.ndim(); ++d)
      if (d != axis) order.push_back(d);
    int64_t n = x.shape()[size_t(axis)];
    return x.permute(order).reshape({n, n == 0 ? 0 : x.numel() / n});
  };
  const Tensor rows = as_rows();
  const int64_t n = rows.shape()[0], m = rows.shape()[1];
  Ints first, inverse(static_cast<size_t>(n)), counts;
  auto run = [&](auto values) {
    using T = typename decltype(values)::value_type;
    // rows in lexicographic order; NaNs sort last and equal each other (numpy's unique)
    auto less = [](const std::vector<T>& a, const std::vector<T>& b) {
      for (size_t k = 0; k < a.size(); ++k) {
        bool na = a[k] != a[k], nb = b[k] != b[k];
        if (na || nb) {
          if (na != nb) return nb;
          continue;
        }
        if (a[k] != b[k]) return a[k] < b[k];
      }
      return false;
    };
    std::map<std::vector<T>, size_t, decltype(less)> seen(less); // row -> position in `first`
    for (int64_t i = 0; i < n; ++i) {
      std::vector<T> row(values.begin() + i * m, values.begin() + (i + 1) * m);
      auto [it, added] = seen.emplace(std::move(row), first.size());
      if (added) {
        first.push_back(i);
        counts.push_back(0);
      }
      inverse[size_t(i)] = int64_t(it->second);
      ++counts[it->second];
    }
    if (sorted) { // renumber in the rows' order
      Ints rank(first.size());
      Ints new_first, new_counts;
      size_t k = 0;
      for (auto& [row, pos] : seen) {
        rank[pos] = int64_t(k++);
        new_first.push_back(first[pos]);
        new_counts.push_back(counts[pos]);
      }
      for (auto& v : inverse) v = rank[size_t(v)];
      first = std::move(new_first);
      counts = std::move(new_counts);
    }
  };
  if (x.dtype().is_float())
    run(rows.to_vector<double>());
  else if (x.dtype() == dtypes::uint64)
    run(rows.to_vector<uint64_t>());
  else
    run(rows.to_vector<int64_t>());
  std::vector<Value> out;
  Tensor first_t = host_ints_tensor(first, x.device());
  if (axis >= 0)
    out.emplace_back(first.empty() ? x : take(x, axis, first_t));
  else
    out.emplace_back(first.empty() ? x.reshape({0}) : take(x.reshape({x.numel()}), 0, first_t));
  out.emplace_back(first_t);
  out.emplace_back(host_ints_tensor(inverse, x.device()));
  out.emplace_back(host_ints_tensor(counts, x.device()));
  out.resize(std::max<size_t>(1, std::min<size_t>(4, ctx.num_outputs())));
  return out;
}

std::vector<Value> det_op(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  if (x.ndim() < 2 || x.shape().back() != x.shape()[size_t(x.ndim() - 2)])
    ctx.fail("input must be (..., n, n)");
  if (!x.dtype().is_float()) ctx.fail("input must be a float tensor");
  const int64_t n = x.shape().back();
  Ints batch(x.shape().begin(), x.shape().end() - 2);
  const int64_t count = prod(batch, 0, batch.size());
  std::vector<double> a = count * n == 0 ? std::vector<double>{} : x.to_vector<double>();
  std::vector<double> det(static_cast<size_t>(count));
  for (int64_t b = 0; b < count; ++b) {
    double* m = a.data() + b * n * n;
    double d = 1;
    for (int64_t c = 0; c < n && d != 0; ++c) { // LU with partial pivoting
      int64_t p = c;
      for (int64_t r = c + 1; r < n; ++r)
        if (std::abs(m[r * n + c]) > std::abs(m[p * n + c])) p = r;
      if (m[p * n + c] == 0) {
        d = 0;
        break;
      }
      if (p != c) {
        for (int64_t k = 0; k < n; ++k) std::swap(m[p * n + k], m[c * n + k]);
        d = -d;
      }
      d *= m[c * n + c];
      for (int64_t r = c + 1; r < n; ++r) {
        double f = m[r * n + c] / m[c * n + c];
        for (int64_t k = c; k < n; ++k) m[r * n + k] -= f * m[c * n + k];
      }
    }
    det[size_t(b)] = d;
  }
  return one(host_tensor(det, batch, x.dtype(), x.device()));
}

} // namespace

void register_shape_ops(OpTable& table) {
  table["Reshape"] = reshape_op;
  table["Flatten"] = flatten_op;
  table["Squeeze"] = squeeze_op;
  table["Unsqueeze"] = unsqueeze_op;
  table["Transpose"] = transpose_op;
  table["Concat"] = concat_op;
  table["Split"] = split_op;
  table["Slice"] = slice_op;
  table["Gather"] = gather_op;
  table["GatherElements"] = gather_elements_op;
  table["GatherND"] = gather_nd_op;
  table["Scatter"] = scatter_elements_op; // deprecated (opset 9, 11): ScatterElements without reduction
  table["ScatterElements"] = scatter_elements_op;
  table["ScatterND"] = scatter_nd_op;
  table["Expand"] = expand_op;
  table["Tile"] = tile_op;
  table["Pad"] = pad_op;
  table["Shape"] = shape_op;
  table["Size"] = size_op;
  table["ConstantOfShape"] = constant_of_shape_op;
  table["Range"] = range_op;
  table["NonZero"] = nonzero_op;
  table["OneHot"] = one_hot_op;
  table["Trilu"] = trilu_op;
  table["EyeLike"] = eye_like_op;
  table["DepthToSpace"] = depth_to_space_op;
  table["SpaceToDepth"] = space_to_depth_op;
  table["Compress"] = compress_op;
  table["Einsum"] = einsum_op;
  table["ReverseSequence"] = reverse_sequence_op;
  table["Unique"] = unique_op;
  table["Det"] = det_op;
}

} // namespace tg::onnx
