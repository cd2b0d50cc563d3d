// Autograd against central finite differences in float64 (finite_diff.hpp): every differentiable
// primitive and the common composites. Each case sums its output against fixed random weights (so
// every output element's gradient is checked), then compares d(loss)/d(input) element by element.
#include "finite_diff.hpp"

using namespace nt;

namespace {

void gradcheck(const std::string& name, const Fn& f, std::vector<In> ins, uint64_t seed = 7) {
  BOOST_TEST_CONTEXT("gradcheck " << name) {
    Rng rng(seed);
    std::vector<Tensor> ts = tensors(ins);
    Tensor y = f(ts);
    BOOST_REQUIRE(y.dtype() == dtypes::float64);
    std::vector<double> w = rng.vec(numel(y.shape()), -1.5, 1.5);
    Tensor loss = (y * f64(w, y.shape())).sum();
    std::vector<Tensor> grads = loss.gradient(ts);
    for (size_t i = 0; i < ins.size(); ++i) {
      BOOST_REQUIRE(grads[i].shape() == ins[i].shape);
      std::vector<double> numeric = finite_differences(f, ins, w, i);
      check_close(host(grads[i]), numeric, kRtol, kAtol, name + ": d/d(input " + std::to_string(i) + ")");
    }
  }
}

} // namespace

BOOST_AUTO_TEST_SUITE(gradcheck_primitives)

BOOST_AUTO_TEST_CASE(arithmetic) {
  Rng r(1);
  gradcheck("add (broadcast)", [](auto& x) { return x[0] + x[1]; }, {in(r, {3, 4}), in(r, {4})});
  gradcheck("sub", [](auto& x) { return x[0] - x[1]; }, {in(r, {2, 3}), in(r, {2, 3})});
  gradcheck("mul (broadcast both)", [](auto& x) { return x[0] * x[1]; }, {in(r, {3, 1}), in(r, {1, 4})});
  gradcheck("div", [](auto& x) { return x[0] / x[1]; }, {in(r, {2, 3}), in(r, {2, 3}, 0.5, 2)});
  gradcheck("neg", [](auto& x) { return -x[0]; }, {in(r, {5})});
  gradcheck("scalar ops", [](auto& x) { return (x[0] * 3.0 - 1.5) / 2.0 + 1.0 / (x[0] + 4.0); },
            {in(r, {4})});
  gradcheck("self product", [](auto& x) { return x[0] * x[0] * x[0]; },
            {in(r, {4})}); // one input used thrice
}

BOOST_AUTO_TEST_CASE(unary) {
  Rng r(2);
  gradcheck("exp", [](auto& x) { return x[0].exp(); }, {in(r, {4})});
  gradcheck("log", [](auto& x) { return x[0].log(); }, {in(r, {4}, 0.5, 2)});
  gradcheck("sqrt", [](auto& x) { return x[0].sqrt(); }, {in(r, {4}, 0.5, 2)});
  gradcheck("sin", [](auto& x) { return x[0].sin(); }, {in(r, {5}, -3, 3)});
  gradcheck("relu", [](auto& x) { return x[0].relu(); }, {in(r, {6}, -1, 1, 0.05)});
  gradcheck("sigmoid", [](auto& x) { return x[0].sigmoid(); }, {in(r, {5}, -3, 3)});
  gradcheck("tanh", [](auto& x) { return x[0].tanh(); }, {in(r, {5}, -2, 2)});
  gradcheck("reciprocal/rsqrt", [](auto& x) { return x[0].reciprocal() + x[0].rsqrt(); },
            {in(r, {4}, 0.5, 2)});
  gradcheck("abs", [](auto& x) { return x[0].abs(); }, {in(r, {5}, -1, 1, 0.05)});
  gradcheck("pow", [](auto& x) { return x[0].pow(x[1]); }, {in(r, {4}, 0.5, 2), in(r, {4})});
}

BOOST_AUTO_TEST_CASE(reductions) {
  Rng r(3);
  gradcheck("max axis 1 (no ties)", [](auto& x) { return x[0].max({1}); }, {in(r, {3, 4})});
  gradcheck("max all", [](auto& x) { return x[0].max(); }, {in(r, {2, 3})});
  gradcheck("maximum", [](auto& x) { return x[0].maximum(x[1]); }, {in(r, {5}), in(r, {5})});
  gradcheck("min keepdim", [](auto& x) { return x[0].min({0}, true) * x[0]; }, {in(r, {3, 2})});
  gradcheck("sum axes {0,2}", [](auto& x) { return x[0].sum({0, 2}); }, {in(r, {2, 3, 2})});
  gradcheck("sum keepdim * x", [](auto& x) { return x[0].sum({1}, true) * x[0]; }, {in(r, {2, 3})});
  gradcheck("mean", [](auto& x) { return x[0].mean({1}) + x[0].mean(); }, {in(r, {3, 4})});
  gradcheck("var/std", [](auto& x) { return x[0].var({1}) + x[0].std({0}).sum(); }, {in(r, {3, 4})});
  gradcheck("log_softmax", [](auto& x) { return x[0].log_softmax(-1); }, {in(r, {3, 4}, -2, 2)});
  gradcheck("softmax axis 0", [](auto& x) { return x[0].softmax(0); }, {in(r, {3, 4}, -2, 2)});
  gradcheck("logsumexp", [](auto& x) { return x[0].logsumexp(1); }, {in(r, {2, 5}, -2, 2)});
}

BOOST_AUTO_TEST_CASE(movement) {
  Rng r(4);
  gradcheck("reshape/permute",
            [](auto& x) {
              return x[0].reshape({4, 6}).permute({1, 0}) * x[1];
            },
            {in(r, {2, 3, 4}), in(r, {6, 4})});
  gradcheck("expand", [](auto& x) { return x[0].expand({3, 4}) * x[1]; }, {in(r, {3, 1}), in(r, {3, 4})});
  gradcheck("pad", [](auto& x) { return x[0].pad({{1, 0}, {2, 1}}) * x[1]; }, {in(r, {2, 3}), in(r, {3, 6})});
  gradcheck("shrink", [](auto& x) { return x[0].shrink({{0, 1}, {1, 3}}); }, {in(r, {2, 3})});
  gradcheck("flip", [](auto& x) { return x[0].flip({0}) * x[1]; }, {in(r, {3, 2}), in(r, {3, 2})});
  gradcheck(
      "slice/cat/stack",
      [](auto& x) {
        Tensor s = x[0].slice({tg::Slice{1, std::nullopt, 1}, tg::Slice{std::nullopt, std::nullopt, 2}});
        return Tensor::cat({s, x[1]}, 0).sum({1}) +
               Tensor::stack({x[1], x[1] * 2.0}, 0).sum({0}).reshape({4});
      },
      {in(r, {3, 4}), in(r, {2, 2})});
  gradcheck("transpose/squeeze/unsqueeze",
            [](auto& x) { return x[0].transpose(0, 2).squeeze(1).unsqueeze(0) * 2.0; }, {in(r, {2, 1, 3})});
  gradcheck("repeat", [](auto& x) { return x[0].repeat({2, 3}) * x[1]; }, {in(r, {2, 2}), in(r, {4, 6})});
  gradcheck("where",
            [](auto& x) {
              Tensor c =
                  Tensor::from_vector<bool>(std::vector<bool>{true, false, true, false, false, true}, {2, 3});
              return c.where(x[0], x[1]);
            },
            {in(r, {2, 3}), in(r, {2, 3})});
  gradcheck("where broadcast",
            [](auto& x) {
              Tensor c = Tensor::from_vector<bool>(std::vector<bool>{true, false, true}, {3});
              return c.where(x[0], x[1] * 3.0);
            },
            {in(r, {2, 3}), in(r, {1})});
}

BOOST_AUTO_TEST_CASE(composites) {
  Rng r(5);
  gradcheck("matmul", [](auto& x) { return x[0].matmul(x[1]); }, {in(r, {3, 4}), in(r, {4, 2})});
  gradcheck("matmul batched broadcast", [](auto& x) { return x[0].matmul(x[1]); },
            {in(r, {2, 2, 3}), in(r, {3, 2})});
  gradcheck("matmul vec", [](auto& x) { return x[0].matmul(x[1]); }, {in(r, {3}), in(r, {3, 2})});
  gradcheck("linear", [](auto& x) { return x[0].linear(x[1], x[2]); },
            {in(r, {2, 3}), in(r, {4, 3}), in(r, {4})});
  gradcheck("conv2d padding 1 + bias", [](auto& x) { return x[0].conv2d(x[1], x[2], 1, 1); },
            {in(r, {1, 2, 4, 4}), in(r, {2, 2, 3, 3}), in(r, {2})});
  gradcheck("conv2d stride 2, groups 2, dilation 2",
            [](auto& x) { return x[0].conv2d(x[1], std::nullopt, 2, 1, 2, 2); },
            {in(r, {1, 2, 5, 5}), in(r, {2, 1, 2, 2})});
  gradcheck("max_pool2d 2x2", [](auto& x) { return x[0].max_pool2d(2); }, {in(r, {1, 2, 4, 4})});
  gradcheck("max_pool2d 3x3 stride 1 padding 1", [](auto& x) { return x[0].max_pool2d(3, 1, 1); },
            {in(r, {1, 1, 4, 4})});
  gradcheck("avg_pool2d", [](auto& x) { return x[0].avg_pool2d(2); }, {in(r, {1, 1, 4, 4})});
  gradcheck("gelu/silu/softplus", [](auto& x) { return x[0].gelu() + x[0].silu() + x[0].softplus(); },
            {in(r, {5}, -2, 2)});
  gradcheck("cumsum", [](auto& x) { return x[0].cumsum(1); }, {in(r, {2, 4})});
}

BOOST_AUTO_TEST_CASE(nn_composites) {
  Rng r(6);
  using namespace tg::nn;
  Tensor labels = i32({1, 3, 0}, {3});
  gradcheck("sparse_categorical_crossentropy",
            [&](auto& x) { return sparse_categorical_crossentropy(x[0], labels); }, {in(r, {3, 4}, -2, 2)});
  gradcheck("sparse_categorical_crossentropy smoothing + ignore",
            [&](auto& x) { return sparse_categorical_crossentropy(x[0], labels, 3, 0.2); },
            {in(r, {3, 4}, -2, 2)});
  Tensor probs = f64({0.1, 0.7, 0.2, 0.3, 0.3, 0.4}, {2, 3});
  gradcheck("cross_entropy probabilities + smoothing",
            [&](auto& x) { return cross_entropy(x[0], probs, 0.1); }, {in(r, {2, 3}, -2, 2)});
  Tensor targets = f64({1, 0, 1, 0}, {4});
  gradcheck("binary_crossentropy", [&](auto& x) { return binary_crossentropy(x[0], targets); },
            {in(r, {4}, 0.1, 0.9)});
  gradcheck("binary_crossentropy_with_logits",
            [&](auto& x) { return binary_crossentropy_with_logits(x[0], targets); },
            {in(r, {4}, -3, 3, 0.05)});
  gradcheck("mse", [](auto& x) { return mse(x[0], x[1]); }, {in(r, {2, 3}), in(r, {2, 3})});
  // BatchNorm (batch statistics) through x, weight and bias: the normalization's full gradient
  BatchNorm bn(2, 1e-5, true, false);
  gradcheck("batchnorm train (N,C,H,W)",
            [&](auto& x) {
              bn.weight = x[1]; // float64 parameters: swap the handles in
              bn.bias = x[2];
              return bn(x[0]);
            },
            {in(r, {2, 2, 2, 2}), in(r, {2}), in(r, {2})});
  gradcheck("layernorm",
            [](auto& x) {
              Tensor c = x[0] - x[0].mean({-1}, true);
              return c * ((c * c).mean({-1}, true) + 1e-5).rsqrt() * x[1];
            },
            {in(r, {2, 4}), in(r, {4})});
}

BOOST_AUTO_TEST_SUITE_END()
