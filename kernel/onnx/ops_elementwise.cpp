// Elementwise ONNX ops: arithmetic, math functions, activations, comparisons, logic and casts.
// ONNX requires equal input dtypes for its binary ops and keeps that dtype in the output, so
// every constant here is built with the input's dtype (never a weak scalar that could promote),
// and integer ops use integer arithmetic (Div truncates like C, Mod follows the divisor's sign).
#include "kernel/onnx/ops.hpp"

#include <cmath>
#include <limits>

namespace tg::onnx {

namespace {

// A constant of x's dtype and shape.
Tensor cst(const Tensor& x, double v) { return x.const_like(v); }

// Applies fn in float32 for half-precision inputs (their math loses too much in 16 bits), then
// casts back; other dtypes run as they are.
template <class Fn> Tensor in_float(const Tensor& x, Fn fn) {
  if (is_half(x.dtype())) return fn(x.cast(dtypes::float32)).cast(x.dtype());
  return fn(x);
}

void require_float(OpContext& ctx, const Tensor& x) {
  if (!x.dtype().is_float())
    ctx.fail("input of dtype " + x.dtype().name() + " where ONNX allows only float types");
}

// Elementwise minimum without negation (negating INT_MIN wraps).
Tensor min2(const Tensor& a, const Tensor& b) {
  if (a.dtype().is_float()) return a.minimum(b);
  auto [x, y] = broadcast_pair(a, b);
  if (x.dtype().is_bool()) return x.logical_and(y);
  return x.lt(y).where(x, y);
}
Tensor max2(const Tensor& a, const Tensor& b) {
  auto [x, y] = broadcast_pair(a, b);
  if (x.dtype().is_bool()) return x.logical_or(y);
  return x.maximum(y);
}

// Both inputs of a binary op, which ONNX requires to have one dtype.
std::pair<Tensor, Tensor> same_dtype_pair(OpContext& ctx) {
  const Tensor& a = ctx.tensor(0);
  const Tensor& b = ctx.tensor(1);
  if (a.dtype() != b.dtype())
    ctx.fail("inputs of different dtypes (" + a.dtype().name() + " and " + b.dtype().name() + ")");
  return {a, b};
}

using Unary = Tensor (*)(const Tensor&);

void unary(OpTable& t, const char* name, Unary fn, bool float_only = true) {
  t[name] = [fn, float_only](OpContext& ctx) -> std::vector<Value> {
    const Tensor& x = ctx.tensor(0);
    if (float_only) require_float(ctx, x);
    return {fn(x)};
  };
}

// Unary float math, computed in float32 for half inputs.
void unary_math(OpTable& t, const char* name, Unary fn) {
  t[name] = [fn](OpContext& ctx) -> std::vector<Value> {
    const Tensor& x = ctx.tensor(0);
    require_float(ctx, x);
    return {in_float(x, fn)};
  };
}

// x mod y for integers, with the sign of the divisor (Python's %).
Tensor int_mod(const Tensor& a, const Tensor& b) {
  Tensor r = a.mod(b);
  if (a.dtype().is_unsigned()) return r;
  Tensor zero = cst(r, 0);
  Tensor fix = r.ne(zero).logical_and(r.lt(zero).ne(b.lt(cst(b, 0))));
  return fix.where(r + b, r);
}

// float fmod (sign of the dividend) or Python-style mod (sign of the divisor).
Tensor float_mod(const Tensor& a, const Tensor& b, bool fmod) {
  return in_float(a, [&](const Tensor& x) {
    Tensor y = b.cast(x.dtype());
    Tensor q = x / y;
    Tensor r = x - (fmod ? q.trunc() : q.floor()) * y;
    if (!fmod) { // floor(q) can be off by one where q rounds to an integer
      Tensor zero = cst(r, 0);
      Tensor fix = r.ne(zero).logical_and(r.lt(zero).ne(y.lt(cst(y, 0))));
      r = fix.where(r + y, r);
    }
    return r;
  });
}

// float32 -> bfloat16 by truncation (dropping the low 16 bits), as ONNX's reference does.
Tensor to_bfloat16(const Tensor& x) {
  Tensor f = x.cast(dtypes::float32);
  Tensor bits = f.bitcast(dtypes::uint32);
  Tensor hi = bits.bitwise_and(cst(bits, double(0xFFFF0000u)));
  Tensor nan = f.ne(f);
  Tensor out = hi.bitcast(dtypes::float32).cast(dtypes::bfloat16);
  return nan.where(out.const_like(std::numeric_limits<double>::quiet_NaN()), out);
}

Tensor cast_to(const Tensor& x, DType to) {
  if (to == x.dtype()) return x;
  if (to == dtypes::bfloat16 && x.dtype().is_float() && x.dtype() != dtypes::float16) return to_bfloat16(x);
  return x.cast(to);
}

// Pow: output dtype = base dtype. Integer bases are computed in float64 and rounded back.
Tensor onnx_pow(const Tensor& base, const Tensor& exponent) {
  DType dt = base.dtype();
  if (dt.is_float()) {
    return in_float(base, [&](const Tensor& b) { return b.pow(exponent.cast(b.dtype())); });
  }
  Tensor b = base.cast(dtypes::float64);
  Tensor e = exponent.cast(dtypes::float64);
  Tensor v = b.pow(e);
  Tensor r = (v + cst(v, 0.5)).floor();
  Tensor near = (v - r).abs().lt(cst(v, 1e-6) * max2(r.abs(), cst(r, 1)));
  return near.where(r, v.trunc()).cast(dt);
}

Tensor softplus_stable(const Tensor& x) {
  // log(1 + exp(x)) = max(x, 0) + log(1 + exp(-|x|))
  Tensor zero = cst(x, 0);
  return x.maximum(zero) + ((-x.abs()).exp() + cst(x, 1)).log();
}

std::vector<Value> variadic(OpContext& ctx, const char* what,
                            Tensor (*combine)(const Tensor&, const Tensor&)) {
  if (ctx.num_inputs() == 0) ctx.fail(std::string(what) + " needs at least one input");
  Tensor acc = ctx.tensor(0);
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    const Tensor& t = ctx.tensor(i);
    if (t.dtype() != acc.dtype())
      ctx.fail("inputs of different dtypes (" + acc.dtype().name() + " and " + t.dtype().name() + ")");
    acc = combine(acc, t);
  }
  return {acc};
}

} // namespace

void register_elementwise_ops(OpTable& t) {
  // ---- arithmetic ----
  t["Add"] = [](OpContext& ctx) -> std::vector<Value> {
    auto [a, b] = same_dtype_pair(ctx);
    if (a.dtype().is_bool()) return {a.logical_xor(b)};
    return {a.add(b)};
  };
  t["Sub"] = [](OpContext& ctx) -> std::vector<Value> {
    auto [a, b] = same_dtype_pair(ctx);
    return {a.sub(b)};
  };
  t["Mul"] = [](OpContext& ctx) -> std::vector<Value> {
    auto [a, b] = same_dtype_pair(ctx);
    if (a.dtype().is_bool()) return {a.logical_and(b)};
    return {a.mul(b)};
  };
  t["Div"] = [](OpContext& ctx) -> std::vector<Value> {
    auto [a, b] = same_dtype_pair(ctx);
    if (a.dtype().is_float()) return {a.div(b)};
    if (a.dtype().is_bool()) ctx.fail("Div of bool tensors");
    return {a.idiv(b)};
  };
  t["Mod"] = [](OpContext& ctx) -> std::vector<Value> {
    auto [a, b] = same_dtype_pair(ctx);
    bool fmod = ctx.attr_int("fmod", 0) != 0;
    if (a.dtype().is_bool()) ctx.fail("Mod of bool tensors");
    if (a.dtype().is_float()) return {float_mod(a, b, fmod)};
    auto [x, y] = broadcast_pair(a, b);
    return {fmod ? x.mod(y) : int_mod(x, y)};
  };
  t["Pow"] = [](OpContext& ctx) -> std::vector<Value> {
    const Tensor& base = ctx.tensor(0);
    const Tensor& e = ctx.tensor(1);
    if (base.dtype().is_bool() || e.dtype().is_bool()) ctx.fail("Pow of bool tensors");
    // (a known one-element exponent arrives as a constant: Tensor::pow then takes its exact forms,
    // LayerNorm's x^2 as x * x)
    return {onnx_pow(base, e)};
  };
  t["Neg"] = [](OpContext& ctx) -> std::vector<Value> {
    const Tensor& x = ctx.tensor(0);
    if (x.dtype().is_bool()) ctx.fail("Neg of a bool tensor");
    return {x.neg()};
  };
  unary(
      t, "Abs", [](const Tensor& x) { return x.abs(); }, false);
  unary(
      t, "Sign", [](const Tensor& x) { return x.sign(); }, false);
  unary(t, "Reciprocal", [](const Tensor& x) { return x.reciprocal(); });
  unary(t, "Floor", [](const Tensor& x) { return x.floor(); });
  unary(t, "Ceil", [](const Tensor& x) { return x.ceil(); });
  unary(t, "Round", [](const Tensor& x) { return x.round(); });
  t["Max"] = [](OpContext& ctx) { return variadic(ctx, "Max", max2); };
  t["Min"] = [](OpContext& ctx) { return variadic(ctx, "Min", min2); };
  t["Sum"] = [](OpContext& ctx) {
    return variadic(ctx, "Sum", [](const Tensor& a, const Tensor& b) { return a.add(b); });
  };
  t["Mean"] = [](OpContext& ctx) -> std::vector<Value> {
    Tensor s = variadic(ctx, "Mean", [](const Tensor& a, const Tensor& b) { return a.add(b); })[0].tensor();
    require_float(ctx, s);
    return {s / cst(s, double(ctx.num_inputs()))};
  };
  t["Clip"] = [](OpContext& ctx) -> std::vector<Value> {
    Tensor x = ctx.tensor(0);
    if (ctx.opset() < 11) {
      double lo = ctx.attr_float("min", -std::numeric_limits<double>::infinity());
      double hi = ctx.attr_float("max", std::numeric_limits<double>::infinity());
      if (ctx.has_attr("min")) x = max2(x, cst(x, lo));
      if (ctx.has_attr("max")) x = min2(x, cst(x, hi));
      return {x};
    }
    for (size_t i = 1; i < 3; ++i)
      if (ctx.has(i) && ctx.tensor(i).dtype() != x.dtype())
        ctx.fail("bound of dtype " + ctx.tensor(i).dtype().name() + " for an input of " + x.dtype().name());
    for (size_t i = 1; i < 3; ++i)
      if (ctx.has(i) && ctx.tensor(i).numel() != 1)
        ctx.fail("bound of shape " + dims_str(ctx.tensor(i).shape()) + " (a scalar expected)");
    if (ctx.has(1)) x = max2(x, ctx.tensor(1).reshape({}));
    if (ctx.has(2)) x = min2(x, ctx.tensor(2).reshape({}));
    return {x};
  };

  // ---- math functions ----
  unary_math(t, "Exp", [](const Tensor& x) { return x.exp(); });
  unary_math(t, "Log", [](const Tensor& x) { return x.log(); });
  unary_math(t, "Sqrt", [](const Tensor& x) { return x.sqrt(); });
  unary_math(t, "Sin", [](const Tensor& x) { return x.sin(); });
  unary_math(t, "Cos", [](const Tensor& x) { return x.cos(); });
  unary_math(t, "Tan", [](const Tensor& x) { return x.tan(); });
  unary_math(t, "Asin", [](const Tensor& x) { return x.asin(); });
  unary_math(t, "Acos", [](const Tensor& x) { return x.acos(); });
  unary_math(t, "Atan", [](const Tensor& x) { return x.atan(); });
  unary_math(t, "Sinh", [](const Tensor& x) { return x.sinh(); });
  unary_math(t, "Cosh", [](const Tensor& x) { return x.cosh(); });
  unary_math(t, "Tanh", [](const Tensor& x) { return x.tanh(); });
  unary_math(t, "Asinh", [](const Tensor& x) { return x.asinh(); });
  unary_math(t, "Acosh", [](const Tensor& x) { return x.acosh(); });
  unary_math(t, "Atanh", [](const Tensor& x) { return x.atanh(); });
  unary_math(t, "Erf", [](const Tensor& x) { return x.erf(); });
  unary_math(t, "Sigmoid", [](const Tensor& x) { return x.sigmoid(); });
  unary_math(t, "Softplus", softplus_stable);
  unary_math(t, "Softsign", [](const Tensor& x) { return x / (x.abs() + cst(x, 1)); });
  unary_math(t, "Mish", [](const Tensor& x) { return x * softplus_stable(x).tanh(); });
  unary_math(t, "HardSwish", [](const Tensor& x) {
    return x * min2(max2(x * cst(x, 1.0 / 6) + cst(x, 0.5), cst(x, 0)), cst(x, 1));
  });

  // ---- activations with attributes ----
  t["Relu"] = [](OpContext& ctx) -> std::vector<Value> {
    const Tensor& x = ctx.tensor(0);
    return {max2(x, cst(x, 0))};
  };
  t["LeakyRelu"] = [](OpContext& ctx) -> std::vector<Value> {
    const Tensor& x = ctx.tensor(0);
    require_float(ctx, x);
    double alpha = ctx.attr_float("alpha", 0.01);
    return {x.lt(cst(x, 0)).where(x * cst(x, alpha), x)};
  };
  t["PRelu"] = [](OpContext& ctx) -> std::vector<Value> {
    auto [x, slope] = same_dtype_pair(ctx);
    // Before opset 7 a slope of shape (C) applies along axis 1 (the channels), one of size 1 to all
    if (ctx.opset() < 7) {
      if (slope.numel() == 1)
        slope = slope.reshape({});
      else if (slope.ndim() == 1 && x.ndim() >= 2 && slope.shape()[0] == x.shape()[1]) {
        Dims s(size_t(x.ndim() - 1), 1);
        s[0] = slope.shape()[0];
        slope = slope.reshape(s);
      }
    }
    Dims out = broadcast_shape(x.shape(), slope.shape());
    if (out != x.shape())
      ctx.fail("slope of shape " + dims_str(slope.shape()) + " does not broadcast to X " +
               dims_str(x.shape()));
    return {x.lt(cst(x, 0)).where(x * slope, x)};
  };
  t["Elu"] = [](OpContext& ctx) -> std::vector<Value> {
    const Tensor& x = ctx.tensor(0);
    require_float(ctx, x);
    double alpha = ctx.attr_float("alpha", 1.0);
    return {in_float(
        x, [&](const Tensor& v) { return v.lt(cst(v, 0)).where(cst(v, alpha) * (v.exp() - cst(v, 1)), v); })};
  };
  t["Selu"] = [](OpContext& ctx) -> std::vector<Value> {
    const Tensor& x = ctx.tensor(0);
    require_float(ctx, x);
    double alpha = ctx.attr_float("alpha", 1.67326319217681884765625);
    double gamma = ctx.attr_float("gamma", 1.05070102214813232421875);
    return {in_float(x, [&](const Tensor& v) {
      Tensor neg = cst(v, alpha) * v.exp() - cst(v, alpha);
      return cst(v, gamma) * v.gt(cst(v, 0)).where(v, neg);
    })};
  };
  t["Celu"] = [](OpContext& ctx) -> std::vector<Value> {
    const Tensor& x = ctx.tensor(0);
    require_float(ctx, x);
    double alpha = ctx.attr_float("alpha", 1.0);
    return {in_float(x, [&](const Tensor& v) {
      Tensor zero = cst(v, 0);
      Tensor e = cst(v, alpha) * ((v / cst(v, alpha)).exp() - cst(v, 1));
      return max2(v, zero) + min2(e, zero);
    })};
  };
  t["HardSigmoid"] = [](OpContext& ctx) -> std::vector<Value> {
    const Tensor& x = ctx.tensor(0);
    require_float(ctx, x);
    double alpha = ctx.attr_float("alpha", 0.2), beta = ctx.attr_float("beta", 0.5);
    return {min2(max2(x * cst(x, alpha) + cst(x, beta), cst(x, 0)), cst(x, 1))};
  };
  t["ThresholdedRelu"] = [](OpContext& ctx) -> std::vector<Value> {
    const Tensor& x = ctx.tensor(0);
    require_float(ctx, x);
    double alpha = ctx.attr_float("alpha", 1.0);
    return {x.gt(cst(x, alpha)).where(x, cst(x, 0))};
  };
  t["Shrink"] = [](OpContext& ctx) -> std::vector<Value> {
    const Tensor& x = ctx.tensor(0);
    double bias = ctx.attr_float("bias", 0.0), lambd = ctx.attr_float("lambd", 0.5);
    if (x.dtype().is_bool()) ctx.fail("Shrink of a bool tensor");
    Tensor zero = cst(x, 0);
    if (x.dtype().is_unsigned()) // x < -lambd never holds
      return {x.gt(cst(x, lambd)).where(x - cst(x, bias), zero)};
    return {x.lt(cst(x, -lambd)).where(x + cst(x, bias), x.gt(cst(x, lambd)).where(x - cst(x, bias), zero))};
  };

  // ---- comparisons and logic ----
  t["Equal"] = [](OpContext& ctx) -> std::vector<Value> {
    auto [a, b] = same_dtype_pair(ctx);
    return {a.eq(b)};
  };
  t["Less"] = [](OpContext& ctx) -> std::vector<Value> {
    auto [a, b] = same_dtype_pair(ctx);
    return {a.lt(b)};
  };
  t["Greater"] = [](OpContext& ctx) -> std::vector<Value> {
    auto [a, b] = same_dtype_pair(ctx);
    return {a.gt(b)};
  };
  t["LessOrEqual"] = [](OpContext& ctx) -> std::vector<Value> {
    auto [a, b] = same_dtype_pair(ctx);
    if (a.dtype().is_float()) return {a.lt(b).logical_or(a.eq(b))}; // NaN compares false
    return {a.le(b)};
  };
  t["GreaterOrEqual"] = [](OpContext& ctx) -> std::vector<Value> {
    auto [a, b] = same_dtype_pair(ctx);
    if (a.dtype().is_float()) return {a.gt(b).logical_or(a.eq(b))};
    return {a.ge(b)};
  };
  t["And"] = [](OpContext& ctx) -> std::vector<Value> {
    auto [a, b] = same_dtype_pair(ctx);
    return {a.logical_and(b)};
  };
  t["Or"] = [](OpContext& ctx) -> std::vector<Value> {
    auto [a, b] = same_dtype_pair(ctx);
    return {a.logical_or(b)};
  };
  t["Xor"] = [](OpContext& ctx) -> std::vector<Value> {
    auto [a, b] = same_dtype_pair(ctx);
    return {a.logical_xor(b)};
  };
  t["Not"] = [](OpContext& ctx) -> std::vector<Value> { return {ctx.tensor(0).logical_not()}; };
  t["BitShift"] = [](OpContext& ctx) -> std::vector<Value> {
    auto [a, b] = same_dtype_pair(ctx);
    if (!a.dtype().is_unsigned())
      ctx.fail("BitShift of " + a.dtype().name() + " (ONNX allows unsigned ints)");
    std::string dir = ctx.attr_string("direction", "");
    if (dir != "LEFT" && dir != "RIGHT") ctx.fail("direction '" + dir + "' (LEFT or RIGHT)");
    auto [x, y] = broadcast_pair(a, b);
    // a shift by the width or more gives 0 (C leaves it undefined)
    Tensor in_range = y.lt(cst(y, double(x.dtype().bits())));
    Tensor s = in_range.where(y, cst(y, 0));
    Tensor r =
        x.with(UOp::make(dir == "LEFT" ? Ops::SHL : Ops::SHR, x.dtype(), {x.uop(), s.uop()}), x.shape());
    return {in_range.where(r, cst(r, 0))};
  };
  t["IsNaN"] = [](OpContext& ctx) -> std::vector<Value> {
    const Tensor& x = ctx.tensor(0);
    require_float(ctx, x);
    return {x.ne(x)};
  };
  t["IsInf"] = [](OpContext& ctx) -> std::vector<Value> {
    const Tensor& x = ctx.tensor(0);
    require_float(ctx, x);
    bool neg = ctx.attr_int("detect_negative", 1) != 0, pos = ctx.attr_int("detect_positive", 1) != 0;
    double inf = std::numeric_limits<double>::infinity();
    Tensor r = x.const_like(0, dtypes::bool_);
    if (pos) r = r.logical_or(x.eq(cst(x, inf)));
    if (neg) r = r.logical_or(x.eq(cst(x, -inf)));
    return {r};
  };
  t["Where"] = [](OpContext& ctx) -> std::vector<Value> {
    const Tensor& c = ctx.tensor(0);
    const Tensor& a = ctx.tensor(1);
    const Tensor& b = ctx.tensor(2);
    if (a.dtype() != b.dtype())
      ctx.fail("X and Y of different dtypes (" + a.dtype().name() + " and " + b.dtype().name() + ")");
    return {c.cast(dtypes::bool_).where(a, b)};
  };

  // ---- casts ----
  t["Cast"] = [](OpContext& ctx) -> std::vector<Value> {
    DType to = dtype_from_onnx(ctx.required_int("to"), "Cast's 'to'");
    return {cast_to(ctx.tensor(0), to)};
  };
  t["CastLike"] = [](OpContext& ctx) -> std::vector<Value> {
    return {cast_to(ctx.tensor(0), ctx.tensor(1).dtype())};
  };
}

} // namespace tg::onnx
