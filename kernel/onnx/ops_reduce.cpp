// Reductions and the ops that reduce along an axis: Reduce*, ArgMax/ArgMin, the softmax family,
// CumSum, TopK and the two classification losses (NegativeLogLikelihoodLoss,
// SoftmaxCrossEntropyLoss). Outputs keep the input's dtype as ONNX says (tg's sum widens small
// ints; those are cast back), and indices come out int64.
#include "kernel/onnx/ops.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tg::onnx {

namespace {

// The reduced axes, resolved and sorted; empty means all (or none: see noop).
struct ReduceAxes {
  Axes axes;
  bool noop = false; // empty axes with noop_with_empty_axes: the input unchanged
};

ReduceAxes reduce_axes(OpContext& ctx, const Tensor& x, bool axes_input) {
  std::vector<int64_t> axes;
  if (axes_input) {
    if (ctx.has(1)) axes = ctx.ints(1);
  } else {
    axes = ctx.attr_ints("axes");
  }
  ReduceAxes r;
  if (axes.empty()) {
    if (ctx.attr_int("noop_with_empty_axes", 0) != 0) r.noop = true;
    for (int64_t i = 0; i < x.ndim(); ++i) r.axes.push_back(i);
    return r;
  }
  for (int64_t a : axes) {
    if (a < -x.ndim() || a >= x.ndim())
      ctx.fail("axis " + std::to_string(a) + " out of range for an input of shape " + dims_str(x.shape()));
    int64_t n = a < 0 ? a + x.ndim() : a;
    if (std::find(r.axes.begin(), r.axes.end(), n) != r.axes.end())
      ctx.fail("axis " + std::to_string(a) + " repeated");
    r.axes.push_back(n);
  }
  std::sort(r.axes.begin(), r.axes.end());
  return r;
}

// Minimum over axes without negation (negating INT_MIN wraps): ~max(~x) for ints.
Tensor min_reduce(const Tensor& x, const Axes& axes, bool keep) {
  if (x.dtype().is_float() || x.dtype().is_bool()) return x.min(axes, keep);
  Tensor inv = x.bitwise_xor(x.const_like(-1));
  Tensor m = inv.max(axes, keep);
  return m.bitwise_xor(m.const_like(-1));
}

enum class Kind { sum, mean, max, min, prod, l1, l2, log_sum, log_sum_exp, sum_square };

Tensor reduce_kind(Kind kind, const Tensor& x, const Axes& axes, bool keep) {
  DType dt = x.dtype();
  // A reduction over an empty dim gives the reduction's identity.
  bool empty = false;
  for (int64_t a : axes) empty |= x.shape()[size_t(a)] == 0;
  if (empty) {
    Dims shape;
    for (int64_t i = 0; i < x.ndim(); ++i) {
      bool reduced = std::find(axes.begin(), axes.end(), i) != axes.end();
      if (!reduced)
        shape.push_back(x.shape()[size_t(i)]);
      else if (keep)
        shape.push_back(1);
    }
    double inf = std::numeric_limits<double>::infinity();
    double v = 0;
    switch (kind) {
    case Kind::prod:
      v = 1;
      break;
    case Kind::max:
      v = dt.is_float() ? -inf : dt.min_value();
      break;
    case Kind::min:
      v = dt.is_float() ? inf : dt.max_value();
      break;
    case Kind::log_sum:
    case Kind::log_sum_exp:
      v = -inf;
      break;
    case Kind::mean:
      v = std::numeric_limits<double>::quiet_NaN();
      break;
    default:
      break;
    }
    return Tensor::full(shape, v, dt, x.device());
  }
  auto floaty = [&](const Tensor& t) { return dt.is_float() && !is_half(dt) ? t : t.cast(dtypes::float32); };
  Tensor r = x;
  switch (kind) {
  case Kind::sum:
    r = x.sum(axes, keep);
    break;
  case Kind::mean:
    r = floaty(x).mean(axes, keep);
    break;
  case Kind::max:
    r = x.max(axes, keep);
    break;
  case Kind::min:
    r = min_reduce(x, axes, keep);
    break;
  case Kind::prod:
    r = x.prod(axes, keep);
    break;
  case Kind::l1:
    r = x.abs().sum(axes, keep);
    break;
  case Kind::l2: {
    Tensor f = floaty(x);
    r = (f * f).sum(axes, keep).sqrt();
    break;
  }
  case Kind::log_sum:
    r = floaty(x).sum(axes, keep).log();
    break;
  case Kind::log_sum_exp: {
    Tensor f = floaty(x);
    Tensor m = f.max(axes, true);
    // an infinite max is not subtracted (inf - inf is NaN): the result is then that infinity
    m = m.abs().eq(m.const_like(std::numeric_limits<double>::infinity())).where(m.const_like(0), m);
    Tensor s = (f - m).exp().sum(axes, true).log() + m;
    if (!keep) {
      Dims shape;
      for (int64_t i = 0; i < x.ndim(); ++i)
        if (std::find(axes.begin(), axes.end(), i) == axes.end()) shape.push_back(x.shape()[size_t(i)]);
      s = s.reshape(shape);
    }
    r = s;
    break;
  }
  case Kind::sum_square:
    r = (x * x).sum(axes, keep);
    break;
  }
  return r.cast(dt);
}

void reduce_op(OpTable& t, const char* name, Kind kind, int64_t axes_input_from) {
  t[name] = [kind, axes_input_from](OpContext& ctx) -> std::vector<Value> {
    const Tensor& x = ctx.tensor(0);
    bool keep = ctx.attr_int("keepdims", 1) != 0;
    ReduceAxes ra = reduce_axes(ctx, x, ctx.opset() >= axes_input_from || ctx.has(1));
    if (ra.noop) return {x};
    if (x.dtype().is_bool()) ctx.fail("reduction of a bool tensor");
    return {reduce_kind(kind, x, ra.axes, keep)};
  };
}

// The first index of the max along ax, int64: tg's argmax built in int64 (Tensor::argmax gives
// int32, and its cast to int64 after an upcast reduce loses the CAST in codegen: invalid IR).
// A NaN counts as the max (the first NaN wins), as numpy does.
Tensor argmax_i64(const Tensor& x, int64_t ax, bool keep) {
  int64_t n = x.shape()[size_t(ax)];
  Dims ar(size_t(x.ndim()), 1);
  ar[size_t(ax)] = n;
  Tensor rev = Tensor::arange(double(n), 0, -1, dtypes::int64, x.device()).reshape(ar).expand(x.shape());
  Tensor hit = x.eq(x.max({ax}, true));
  if (x.dtype().is_float()) hit = hit.logical_or(x.ne(x));
  Tensor idx = hit.where(rev, Tensor::full({}, 0, dtypes::int64, x.device())).max({ax}, keep);
  return idx.const_like(double(n)) - idx;
}

// ArgMax / ArgMin: int64 indices; ties give the first index, or the last with select_last_index.
Tensor arg_extreme(OpContext& ctx, bool is_max) {
  const Tensor& x = ctx.tensor(0);
  int64_t ax = ctx.attr_int("axis", 0);
  if (ax < -x.ndim() || ax >= x.ndim())
    ctx.fail("axis " + std::to_string(ax) + " out of range for an input of shape " + dims_str(x.shape()));
  if (ax < 0) ax += x.ndim();
  bool keep = ctx.attr_int("keepdims", 1) != 0;
  bool last = ctx.attr_int("select_last_index", 0) != 0;
  int64_t n = x.shape()[size_t(ax)];
  if (n == 0) ctx.fail("ArgMax/ArgMin over an empty axis");
  Tensor v = x;
  if (v.dtype().is_bool()) v = v.cast(dtypes::int32);
  if (!is_max) { // order reversed without negation (INT_MIN): ~x for ints
    v = v.dtype().is_float() ? v.neg() : v.bitwise_xor(v.const_like(-1));
  }
  if (last) v = v.flip({ax});
  Tensor idx = argmax_i64(v, ax, keep);
  if (last) idx = idx.const_like(double(n - 1)) - idx;
  return idx;
}

// The softmax family: opset < 13 flattens to 2-D at axis (default 1) and works along dim 1;
// opset 13 works along axis (default -1).
template <class Fn> Tensor along_axis(OpContext& ctx, Fn fn) {
  const Tensor& x = ctx.tensor(0);
  bool old = ctx.opset() < 13;
  int64_t ax = ctx.attr_int("axis", old ? 1 : -1);
  int64_t nd = x.ndim();
  if (ax < -nd || ax >= nd)
    ctx.fail("axis " + std::to_string(ax) + " out of range for an input of shape " + dims_str(x.shape()));
  if (ax < 0) ax += nd;
  if (!old) return fn(x, ax);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < nd; ++i) (i < ax ? outer : inner) *= x.shape()[size_t(i)];
  return fn(x.reshape({outer, inner}), 1).reshape(x.shape());
}

Tensor hardmax(const Tensor& x, int64_t ax) {
  int64_t n = x.shape()[size_t(ax)];
  if (x.numel() == 0) return x;
  Tensor idx = x.argmax(ax, true);
  Dims ar(size_t(x.ndim()), 1);
  ar[size_t(ax)] = n;
  Tensor pos = Tensor::arange(0, double(n), 1, idx.dtype(), x.device()).reshape(ar);
  return pos.eq(idx).cast(x.dtype());
}

// NegativeLogLikelihoodLoss on log-probabilities (N, C, d...) and int targets (N, d...).
Tensor nll_loss(OpContext& ctx, const Tensor& logp, const Tensor& target,
                const std::optional<Tensor>& weight) {
  if (logp.ndim() < 2) ctx.fail("input of shape " + dims_str(logp.shape()) + " (N, C, ...) expected");
  if (target.dtype().is_float() || target.dtype().is_bool())
    ctx.fail("target of dtype " + target.dtype().name() + " (an int type expected)");
  Dims tshape = logp.shape();
  tshape.erase(tshape.begin() + 1);
  if (target.shape() != tshape)
    ctx.fail("target of shape " + dims_str(target.shape()) + " for input " + dims_str(logp.shape()) +
             " (expected " + dims_str(tshape) + ")");
  int64_t c = logp.shape()[1];
  std::string reduction = ctx.attr_string("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    ctx.fail("reduction '" + reduction + "' (none, sum or mean)");
  DType dt = logp.dtype();
  Tensor tgt = target.cast(dtypes::int64).unsqueeze(1); // (N, 1, d...)
  Dims cshape(size_t(logp.ndim()), 1);
  cshape[1] = c;
  Tensor classes = Tensor::arange(0, double(c), 1, dtypes::int64, logp.device()).reshape(cshape);
  Tensor hit = tgt.eq(classes); // (N, C, d...): one-hot of the target (none where out of range)
  Tensor zero = Tensor::full({}, 0, dt, logp.device());
  Tensor picked = hit.where(logp, zero).sum({1}).cast(dt); // logp[n, target[n, d...], d...]
  // valid: targets that count (not ignore_index); w: their weight (1 without weights)
  Tensor valid = target.const_like(1, dtypes::bool_);
  bool has_ignore = ctx.has_attr("ignore_index");
  if (has_ignore)
    valid =
        target.ne(Tensor::full({}, double(ctx.attr_int("ignore_index", 0)), target.dtype(), target.device()));
  Tensor w = valid.cast(dt);
  if (weight) {
    if (weight->shape() != Dims{c})
      ctx.fail("weight of shape " + dims_str(weight->shape()) + " for C = " + std::to_string(c));
    Tensor wc = weight->cast(dt).reshape(cshape);
    w = valid.where(hit.where(wc, zero).sum({1}).cast(dt), zero);
  }
  Tensor loss = valid.where(-picked * w, zero);
  if (reduction == "none") return loss;
  if (reduction == "sum") return loss.sum().cast(dt);
  if (weight || has_ignore) return (loss.sum() / w.sum()).cast(dt);
  return loss.mean().cast(dt);
}

Tensor log_softmax_axis1(const Tensor& x) {
  if (is_half(x.dtype())) return x.cast(dtypes::float32).log_softmax(1).cast(x.dtype());
  return x.log_softmax(1);
}

int64_t axis_attr(OpContext& ctx, const Tensor& x, int64_t fallback) {
  int64_t ax = ctx.attr_int("axis", fallback);
  if (ax < -x.ndim() || ax >= x.ndim())
    ctx.fail("axis " + std::to_string(ax) + " out of range for an input of shape " + dims_str(x.shape()));
  return ax < 0 ? ax + x.ndim() : ax;
}

} // namespace

void register_reduce_ops(OpTable& t) {
  reduce_op(t, "ReduceSum", Kind::sum, 13);
  reduce_op(t, "ReduceMean", Kind::mean, 18);
  reduce_op(t, "ReduceMax", Kind::max, 18);
  reduce_op(t, "ReduceMin", Kind::min, 18);
  reduce_op(t, "ReduceProd", Kind::prod, 18);
  reduce_op(t, "ReduceL1", Kind::l1, 18);
  reduce_op(t, "ReduceL2", Kind::l2, 18);
  reduce_op(t, "ReduceLogSum", Kind::log_sum, 18);
  reduce_op(t, "ReduceLogSumExp", Kind::log_sum_exp, 18);
  reduce_op(t, "ReduceSumSquare", Kind::sum_square, 18);

  t["ArgMax"] = [](OpContext& ctx) -> std::vector<Value> { return {arg_extreme(ctx, true)}; };
  t["ArgMin"] = [](OpContext& ctx) -> std::vector<Value> { return {arg_extreme(ctx, false)}; };

  t["Softmax"] = [](OpContext& ctx) -> std::vector<Value> {
    if (!ctx.tensor(0).dtype().is_float()) ctx.fail("Softmax of a non-float tensor");
    return {along_axis(ctx, [](const Tensor& x, int64_t ax) {
      if (is_half(x.dtype())) return x.cast(dtypes::float32).softmax(ax).cast(x.dtype());
      return x.softmax(ax);
    })};
  };
  t["LogSoftmax"] = [](OpContext& ctx) -> std::vector<Value> {
    if (!ctx.tensor(0).dtype().is_float()) ctx.fail("LogSoftmax of a non-float tensor");
    return {along_axis(ctx, [](const Tensor& x, int64_t ax) {
      if (is_half(x.dtype())) return x.cast(dtypes::float32).log_softmax(ax).cast(x.dtype());
      return x.log_softmax(ax);
    })};
  };
  t["Hardmax"] = [](OpContext& ctx) -> std::vector<Value> { return {along_axis(ctx, hardmax)}; };

  t["CumSum"] = [](OpContext& ctx) -> std::vector<Value> {
    const Tensor& x = ctx.tensor(0);
    if (x.ndim() == 0) ctx.fail("CumSum of a scalar");
    int64_t ax = ctx.int_scalar(1);
    if (ax < -x.ndim() || ax >= x.ndim())
      ctx.fail("axis " + std::to_string(ax) + " out of range for an input of shape " + dims_str(x.shape()));
    if (ax < 0) ax += x.ndim();
    bool exclusive = ctx.attr_int("exclusive", 0) != 0, reverse = ctx.attr_int("reverse", 0) != 0;
    if (x.dtype().is_bool()) ctx.fail("CumSum of a bool tensor");
    Tensor v = reverse ? x.flip({ax}) : x;
    int64_t n = v.shape()[size_t(ax)];
    if (exclusive && n > 0) { // shift by one: 0, x0, x0 + x1, ...
      std::vector<std::pair<int64_t, int64_t>> pads(size_t(v.ndim()), {0, 0});
      pads[size_t(ax)] = {1, -1};
      v = v.pad(pads);
    }
    Tensor r =
        n == 0 ? v : (is_half(v.dtype()) ? v.cast(dtypes::float32).cumsum(ax) : v.cumsum(ax)).cast(x.dtype());
    return {reverse ? r.flip({ax}) : r};
  };

  t["TopK"] = [](OpContext& ctx) -> std::vector<Value> {
    const Tensor& x = ctx.tensor(0);
    int64_t k = 0;
    if (ctx.opset() < 10) {
      k = ctx.required_int("k");
    } else {
      std::vector<int64_t> ks = ctx.ints(1);
      if (ks.size() != 1) ctx.fail("K must hold one value, got " + std::to_string(ks.size()));
      k = ks[0];
    }
    int64_t ax = axis_attr(ctx, x, -1);
    if (k < 0 || k > x.shape()[size_t(ax)])
      ctx.fail("K = " + std::to_string(k) + " for an axis of size " + std::to_string(x.shape()[size_t(ax)]));
    bool largest = ctx.attr_int("largest", 1) != 0;
    auto [values, indices] = x.topk(k, ax, largest);
    return {values, indices.cast(dtypes::int64)};
  };

  t["NegativeLogLikelihoodLoss"] = [](OpContext& ctx) -> std::vector<Value> {
    const Tensor& x = ctx.tensor(0);
    if (!x.dtype().is_float()) ctx.fail("input of dtype " + x.dtype().name() + " (a float type expected)");
    return {nll_loss(ctx, x, ctx.tensor(1), ctx.optional_tensor(2))};
  };
  t["SoftmaxCrossEntropyLoss"] = [](OpContext& ctx) -> std::vector<Value> {
    const Tensor& x = ctx.tensor(0);
    if (!x.dtype().is_float()) ctx.fail("scores of dtype " + x.dtype().name() + " (a float type expected)");
    if (x.ndim() < 2) ctx.fail("scores of shape " + dims_str(x.shape()) + " (N, C, ...) expected");
    Tensor logp = log_softmax_axis1(x);
    Tensor loss = nll_loss(ctx, logp, ctx.tensor(1), ctx.optional_tensor(2));
    if (ctx.num_outputs() > 1) return {loss, logp};
    return {loss};
  };
}

} // namespace tg::onnx
