// ai.onnx.preview.training: one optimizer step each of Adagrad, Adam and Momentum, elementwise over
// any number of (X, G, state...) groups. R (learning rate) and T (update count) are scalars; the
// conditions on T stay on the device (where), nothing is read back. Gradient differentiates the
// lazy graph that computed y (Tensor::gradient).
#include "kernel/onnx/ops.hpp"

namespace tg::onnx {
namespace {

// Inputs R, T, then `groups` blocks of n tensors each (X1..Xn, G1..Gn, ...): n.
int64_t group_count(const OpContext& ctx, int64_t groups) {
  int64_t rest = int64_t(ctx.num_inputs()) - 2;
  if (rest < groups || rest % groups != 0)
    ctx.fail("expects R, T and " + std::to_string(groups) + " equal groups of tensors, got " +
             std::to_string(ctx.num_inputs()) + " inputs");
  int64_t n = rest / groups;
  if (int64_t(ctx.num_outputs()) > n * (groups - 1))
    ctx.fail("has " + std::to_string(ctx.num_outputs()) + " outputs for " + std::to_string(n) + " tensors");
  return n;
}

// R and T as scalars of X's dtype.
std::pair<Tensor, Tensor> rate_and_count(const OpContext& ctx, DType dt) {
  Tensor R = ctx.tensor(0), T = ctx.tensor(1);
  if (R.numel() != 1 || T.numel() != 1) ctx.fail("R and T must be scalars");
  return {R.reshape({}).cast(dt), T.reshape({}).cast(dt)};
}

std::vector<Value> adagrad(OpContext& ctx) {
  int64_t n = group_count(ctx, 3);
  double decay = ctx.attr_float("decay_factor", 0), eps = ctx.attr_float("epsilon", 1e-6);
  double norm = ctx.attr_float("norm_coefficient", 0);
  std::vector<Value> xs, hs;
  for (int64_t k = 0; k < n; ++k) {
    const Tensor& X = ctx.tensor(size_t(2 + k));
    const Tensor& G = ctx.tensor(size_t(2 + n + k));
    const Tensor& H = ctx.tensor(size_t(2 + 2 * n + k));
    auto [R, T] = rate_and_count(ctx, X.dtype());
    Tensor r = R / (T * decay + 1.0);
    Tensor g = X * norm + G;
    Tensor h_new = H + g * g;
    xs.push_back(X - r * g / (h_new.sqrt() + eps));
    hs.push_back(h_new);
  }
  xs.insert(xs.end(), hs.begin(), hs.end());
  return xs;
}

std::vector<Value> adam(OpContext& ctx) {
  int64_t n = group_count(ctx, 4);
  double alpha = ctx.attr_float("alpha", 0.9), beta = ctx.attr_float("beta", 0.999);
  double eps = ctx.attr_float("epsilon", 1e-6), norm = ctx.attr_float("norm_coefficient", 0);
  double norm_post = ctx.attr_float("norm_coefficient_post", 0);
  std::vector<Value> xs, vs, hs;
  for (int64_t k = 0; k < n; ++k) {
    const Tensor& X = ctx.tensor(size_t(2 + k));
    const Tensor& G = ctx.tensor(size_t(2 + n + k));
    const Tensor& V = ctx.tensor(size_t(2 + 2 * n + k));
    const Tensor& H = ctx.tensor(size_t(2 + 3 * n + k));
    auto [R, T] = rate_and_count(ctx, X.dtype());
    Tensor g = X * norm + G;
    Tensor v_new = V * alpha + g * (1 - alpha);
    Tensor h_new = H * beta + g * g * (1 - beta);
    Tensor h_sqrt = h_new.sqrt() + eps;
    Tensor a_t = Tensor::scalar(alpha, X.dtype(), X.device()).pow(T);
    Tensor b_t = Tensor::scalar(beta, X.dtype(), X.device()).pow(T);
    Tensor started = T.gt(T.zeros_like());
    Tensor r_adj = started.where(R * (1.0 - b_t).sqrt() / started.where(1.0 - a_t, R.ones_like()), R);
    Tensor x_new = X - r_adj * v_new / h_sqrt;
    xs.push_back(x_new * (1 - norm_post));
    vs.push_back(v_new);
    hs.push_back(h_new);
  }
  xs.insert(xs.end(), vs.begin(), vs.end());
  xs.insert(xs.end(), hs.begin(), hs.end());
  return xs;
}

std::vector<Value> momentum(OpContext& ctx) {
  int64_t n = group_count(ctx, 3);
  if (!ctx.has_attr("alpha") || !ctx.has_attr("beta") || !ctx.has_attr("mode") ||
      !ctx.has_attr("norm_coefficient"))
    ctx.fail("needs the attributes alpha, beta, mode and norm_coefficient");
  double alpha = ctx.attr_float("alpha", 0), beta = ctx.attr_float("beta", 0);
  double norm = ctx.attr_float("norm_coefficient", 0);
  std::string mode = ctx.attr_string("mode", "standard");
  if (mode != "standard" && mode != "nesterov")
    ctx.fail("mode must be standard or nesterov, got '" + mode + "'");
  std::vector<Value> xs, vs;
  for (int64_t k = 0; k < n; ++k) {
    const Tensor& X = ctx.tensor(size_t(2 + k));
    const Tensor& G = ctx.tensor(size_t(2 + n + k));
    const Tensor& V = ctx.tensor(size_t(2 + 2 * n + k));
    auto [R, T] = rate_and_count(ctx, X.dtype());
    Tensor g = X * norm + G;
    Tensor beta_adj = T.gt(T.zeros_like()).where(T.const_like(beta), T.ones_like());
    Tensor v_new = V * alpha + beta_adj * g;
    xs.push_back(mode == "nesterov" ? X - R * (g + v_new * alpha) : X - R * v_new);
    vs.push_back(v_new);
  }
  xs.insert(xs.end(), vs.begin(), vs.end());
  return xs;
}

// Gradient(xs, zs, y): dy/dx for each name in xs, y's graph as this run built it. The inputs (the
// values of xs then zs) must be the values those names have: evaluating y's graph at other values
// is not supported. A y of more than one element is summed (a seed of ones).
std::vector<Value> gradient(OpContext& ctx) {
  auto xs = ctx.attr_strings("xs");
  auto zs = ctx.attr_strings("zs");
  std::string y_name = ctx.attr_string("y", "");
  if (xs.empty() || y_name.empty()) ctx.fail("needs the attributes xs and y");
  if (ctx.num_inputs() != xs.size() + zs.size())
    ctx.fail("has " + std::to_string(ctx.num_inputs()) + " inputs for " +
             std::to_string(xs.size() + zs.size()) + " names in xs and zs");
  if (ctx.num_outputs() > xs.size())
    ctx.fail("has " + std::to_string(ctx.num_outputs()) + " outputs for " + std::to_string(xs.size()) +
             " xs");
  std::optional<Value> y = ctx.lookup(y_name);
  if (!y || !y->is_tensor()) ctx.unsupported("y '" + y_name + "' is not a tensor computed before this node");
  std::vector<Tensor> targets;
  for (size_t i = 0; i < xs.size() + zs.size(); ++i) {
    const std::string& name = i < xs.size() ? xs[i] : zs[i - xs.size()];
    const Tensor& in = ctx.tensor(i);
    std::optional<Value> named = ctx.lookup(name);
    if (!named || !named->is_tensor()) ctx.fail("'" + name + "' names no tensor computed before this node");
    const Tensor& t = named->tensor();
    if (!in.is(t) && in.uop() != t.uop())
      ctx.unsupported("input " + std::to_string(i) + " is not the value of '" + name +
                      "' (evaluating y at other values is not supported)");
    if (i < xs.size()) {
      if (!t.dtype().is_float())
        ctx.fail("'" + name + "' of dtype " + t.dtype().name() + " is not differentiable");
      targets.push_back(t);
    }
  }
  const Tensor& yt = y->tensor();
  std::optional<Tensor> seed;
  if (yt.numel() != 1) seed = yt.ones_like();
  std::vector<Tensor> grads = yt.gradient(targets, seed);
  std::vector<Value> out;
  for (size_t i = 0; i < grads.size(); ++i) out.emplace_back(grads[i].cast(targets[i].dtype()));
  return out;
}

} // namespace

void register_training_ops(OpTable& table) {
  table["ai.onnx.preview.training:Gradient"] = gradient;
  table["ai.onnx.preview.training:Adagrad"] = adagrad;
  table["ai.onnx.preview.training:Adam"] = adam;
  table["ai.onnx.preview.training:Momentum"] = momentum;
}

} // namespace tg::onnx
