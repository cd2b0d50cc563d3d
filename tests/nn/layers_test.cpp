// nn layers against naive loops (Linear, Conv2d, LayerNorm, RMSNorm, Embedding, BatchNorm train
// and eval, Dropout), initialization bounds, losses against hand-computed values, module naming,
// train/eval, state_dict round trips and every load_state_dict error.
#include "nn_util.hpp"

#include "kernel/schedule/schedule.hpp"

#include <algorithm>
#include <numeric>

using namespace nt;
namespace nn = tg::nn;

namespace {

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::fabs(x));
  return m;
}

// log_softmax of one row, on the host.
std::vector<double> log_softmax_row(const std::vector<double>& row) {
  double m = *std::max_element(row.begin(), row.end()), s = 0;
  for (double x : row) s += std::exp(x - m);
  std::vector<double> out;
  for (double x : row) out.push_back(x - m - std::log(s));
  return out;
}

} // namespace

BOOST_AUTO_TEST_SUITE(layers)

BOOST_AUTO_TEST_CASE(linear) {
  Tensor::manual_seed(11);
  nn::Linear l(3, 2);
  BOOST_TEST((l.weight.shape() == Dims{2, 3}));
  BOOST_REQUIRE(l.bias);
  BOOST_TEST((l.bias->shape() == Dims{2}));
  BOOST_TEST(l.weight.requires_grad());
  BOOST_TEST(l.bias->requires_grad());
  BOOST_TEST(realized(l.weight));
  BOOST_TEST(realized(*l.bias));
  std::vector<double> w = host(l.weight), b = host(*l.bias);
  double bound = 1 / std::sqrt(3.0);
  BOOST_TEST(max_abs(w) <= bound);
  BOOST_TEST(max_abs(b) <= bound);
  Rng rng(1);
  std::vector<double> x = rng.vec(12);
  std::vector<double> want(8);
  for (int n = 0; n < 4; ++n)
    for (int o = 0; o < 2; ++o) {
      double s = b[size_t(o)];
      for (int i = 0; i < 3; ++i) s += x[size_t(n * 3 + i)] * w[size_t(o * 3 + i)];
      want[size_t(n * 2 + o)] = s;
    }
  check_close(l(f32(x, {4, 3})), want, 1e-5, 1e-6, "Linear forward");
  nn::Linear nobias(3, 2, false);
  BOOST_TEST(!nobias.bias);
  BOOST_TEST(nobias.named_parameters().size() == 1u);
  check_throws<tg::TensorError>([&] { l(f32(rng.vec(4), {2, 2})); }, {"(2, 2)", "3"}, "Linear bad input");
}

BOOST_AUTO_TEST_CASE(init_bounds) {
  Tensor::manual_seed(12);
  auto stats = [](const std::vector<double>& v) {
    double mean = std::accumulate(v.begin(), v.end(), 0.0) / double(v.size()), sq = 0;
    for (double x : v) sq += (x - mean) * (x - mean);
    return std::pair{mean, std::sqrt(sq / double(v.size()))};
  };
  // Linear(16, 256): uniform(-1/4, 1/4): std = bound / sqrt(3)
  nn::Linear l(16, 256);
  std::vector<double> w = host(l.weight);
  auto [mean, sd] = stats(w);
  BOOST_TEST(max_abs(w) <= 0.25);
  BOOST_TEST(max_abs(w) > 0.245);
  BOOST_TEST(std::fabs(mean) < 0.01);
  BOOST_TEST(std::fabs(sd - 0.25 / std::sqrt(3.0)) < 0.005);
  // kaiming_uniform default a = 0.01: bound sqrt(3) sqrt(2 / 1.0001) / sqrt(fan_in)
  Tensor k = nn::kaiming_uniform({64, 8, 2}, 0.01);
  BOOST_TEST(realized(k));
  double kb = std::sqrt(3.0) * std::sqrt(2.0 / 1.0001) / 4.0;
  std::vector<double> kv = host(k);
  BOOST_TEST(max_abs(kv) <= kb);
  BOOST_TEST(max_abs(kv) > 0.97 * kb);
  Tensor g = nn::glorot_uniform({20, 30});
  double gb = std::sqrt(6.0 / 50.0);
  std::vector<double> gv = host(g);
  BOOST_TEST(max_abs(gv) <= gb * (1 + 1e-6));
  BOOST_TEST(max_abs(gv) > 0.97 * gb);
  BOOST_TEST(std::fabs(stats(gv).second - gb / std::sqrt(3.0)) < 0.01);
  // Conv2d: fan_in = Cin/groups * k * k for weight and bias
  nn::Conv2d c(4, 6, 3, 1, 0, 1, 2);
  BOOST_TEST((c.weight.shape() == Dims{6, 2, 3, 3}));
  BOOST_TEST(max_abs(host(c.weight)) <= 1 / std::sqrt(18.0));
  BOOST_TEST(max_abs(host(*c.bias)) <= 1 / std::sqrt(18.0));
  BOOST_TEST(c.weight.requires_grad());
  // Embedding: glorot
  nn::Embedding e(10, 6);
  BOOST_TEST(max_abs(host(e.weight)) <= std::sqrt(6.0 / 16.0));
}

BOOST_AUTO_TEST_CASE(conv2d) {
  Tensor::manual_seed(13);
  const int64_t N = 2, C = 4, H = 5, W = 5, O = 6, K = 3, S = 2, P = 1, D = 1, G = 2;
  nn::Conv2d conv(C, O, K, S, P, D, G);
  std::vector<double> w = host(conv.weight), b = host(*conv.bias);
  Rng rng(2);
  std::vector<double> x = rng.vec(size_t(N * C * H * W));
  const int64_t OH = (H + 2 * P - D * (K - 1) - 1) / S + 1, OW = OH, cpg = C / G, opg = O / G;
  std::vector<double> want(size_t(N * O * OH * OW));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t i = 0; i < OH; ++i)
        for (int64_t j = 0; j < OW; ++j) {
          double s = b[size_t(o)];
          int64_t g = o / opg;
          for (int64_t c = 0; c < cpg; ++c)
            for (int64_t kh = 0; kh < K; ++kh)
              for (int64_t kw = 0; kw < K; ++kw) {
                int64_t y = i * S + kh * D - P, xx = j * S + kw * D - P;
                if (y < 0 || y >= H || xx < 0 || xx >= W) continue;
                s += x[size_t(((n * C + g * cpg + c) * H + y) * W + xx)] *
                     w[size_t(((o * cpg + c) * K + kh) * K + kw)];
              }
          want[size_t(((n * O + o) * OH + i) * OW + j)] = s;
        }
  Tensor out = conv(f32(x, {N, C, H, W}));
  BOOST_TEST((out.shape() == Dims{N, O, OH, OW}));
  check_close(out, want, 1e-5, 1e-5, "Conv2d forward");
}

BOOST_AUTO_TEST_CASE(layernorm_rmsnorm) {
  Rng rng(3);
  // LayerNorm over the trailing (3, 4) of (2, 3, 4), affine parameters loaded from a state dict
  nn::LayerNorm ln(Dims{3, 4});
  BOOST_TEST((ln.weight->shape() == Dims{3, 4}));
  std::vector<double> gamma = rng.vec(12, 0.5, 1.5), beta = rng.vec(12);
  ln.load_state_dict({{"weight", f32(gamma, {3, 4})}, {"bias", f32(beta, {3, 4})}});
  std::vector<double> x = rng.vec(24, -2, 2), want(24);
  for (int n = 0; n < 2; ++n) {
    double mean = 0, var = 0;
    for (int i = 0; i < 12; ++i) mean += x[size_t(n * 12 + i)] / 12;
    for (int i = 0; i < 12; ++i) var += std::pow(x[size_t(n * 12 + i)] - mean, 2) / 12;
    for (int i = 0; i < 12; ++i)
      want[size_t(n * 12 + i)] =
          (x[size_t(n * 12 + i)] - mean) / std::sqrt(var + 1e-5) * gamma[size_t(i)] + beta[size_t(i)];
  }
  check_close(ln(f32(x, {2, 3, 4})), want, 1e-5, 1e-5, "LayerNorm (3, 4)");
  // no affine, 1-D shape
  nn::LayerNorm plain(4, 1e-5, false);
  BOOST_TEST(plain.named_parameters().empty());
  std::vector<double> want1(24);
  for (int r = 0; r < 6; ++r) {
    double mean = 0, var = 0;
    for (int i = 0; i < 4; ++i) mean += x[size_t(r * 4 + i)] / 4;
    for (int i = 0; i < 4; ++i) var += std::pow(x[size_t(r * 4 + i)] - mean, 2) / 4;
    for (int i = 0; i < 4; ++i)
      want1[size_t(r * 4 + i)] = (x[size_t(r * 4 + i)] - mean) / std::sqrt(var + 1e-5);
  }
  check_close(plain(f32(x, {2, 3, 4})), want1, 1e-5, 1e-5, "LayerNorm 4, no affine");
  check_throws<tg::TensorError>(
      [&] {
        ln(f32(x, {2, 4, 3}));
      },
      {"(2, 4, 3)", "(3, 4)"}, "LayerNorm bad shape");

  nn::RMSNorm rms(4);
  std::vector<double> scale = rng.vec(4, 0.5, 1.5);
  rms.weight.assign(f32(scale, {4}));
  std::vector<double> want2(24);
  for (int r = 0; r < 6; ++r) {
    double ms = 0;
    for (int i = 0; i < 4; ++i) ms += x[size_t(r * 4 + i)] * x[size_t(r * 4 + i)] / 4;
    for (int i = 0; i < 4; ++i)
      want2[size_t(r * 4 + i)] = x[size_t(r * 4 + i)] / std::sqrt(ms + 1e-6) * scale[size_t(i)];
  }
  check_close(rms(f32(x, {2, 3, 4})), want2, 1e-5, 1e-5, "RMSNorm");
}

BOOST_AUTO_TEST_CASE(embedding) {
  nn::Embedding e(5, 3);
  std::vector<double> table(15);
  std::iota(table.begin(), table.end(), 1.0);
  e.weight.assign(f32(table, {5, 3}));
  std::vector<int32_t> idx = {4, 0, 2, 2, 1, 3};
  Tensor out = e(i32(idx, {2, 3}));
  BOOST_TEST((out.shape() == Dims{2, 3, 3}));
  std::vector<double> want;
  for (int32_t i : idx)
    for (int d = 0; d < 3; ++d) want.push_back(table[size_t(i * 3 + d)]);
  check_close(out, want, 0, 0, "Embedding rows");
  // int64 indices, 1-D; an index outside the table gives a zero row
  Tensor out64 = e(Tensor::from_vector<int64_t>(std::vector<int64_t>{1, 7}, {2}));
  check_close(out64, {4, 5, 6, 0, 0, 0}, 0, 0, "Embedding int64 + out of range");
  // the gradient of the weight counts how often each row was picked
  e.weight.zero_grad();
  e(i32(idx, {2, 3})).sum().backward();
  BOOST_REQUIRE(e.weight.grad());
  check_close(*e.weight.grad(), {1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1}, 0, 0, "Embedding weight grad");
  check_throws<tg::TensorError>(
      [&] {
        e(f32({1, 2}, {2}));
      },
      {"integers", "float"}, "Embedding float indices");
}

BOOST_AUTO_TEST_CASE(batchnorm) {
  Rng rng(4);
  const double eps = 1e-5;
  // (N, C) = (4, 3), momentum 0.1, custom affine parameters
  nn::BatchNorm bn(3);
  BOOST_TEST(bn.training());
  std::vector<double> gamma = {0.5, 1.5, -1.0}, beta = {0.1, -0.2, 0.3};
  bn.weight->assign(f32(gamma, {3}));
  bn.bias->assign(f32(beta, {3}));
  std::vector<double> rm = {0, 0, 0}, rv = {1, 1, 1};
  auto step = [&](const std::vector<double>& x, int64_t n, int64_t c, int64_t hw, double momentum,
                  nn::BatchNorm& m, const std::string& what) {
    std::vector<double> mean(size_t(c), 0), var(size_t(c), 0), want(x.size());
    auto at = [&](int64_t i, int64_t ch, int64_t s) { return size_t((i * c + ch) * hw + s); };
    double cnt = double(n * hw);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t s = 0; s < hw; ++s) mean[size_t(ch)] += x[at(i, ch, s)] / cnt;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t s = 0; s < hw; ++s)
          var[size_t(ch)] += std::pow(x[at(i, ch, s)] - mean[size_t(ch)], 2) / cnt;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t s = 0; s < hw; ++s)
          want[at(i, ch, s)] =
              (x[at(i, ch, s)] - mean[size_t(ch)]) / std::sqrt(var[size_t(ch)] + eps) * gamma[size_t(ch)] +
              beta[size_t(ch)];
    Dims shape = hw == 1 ? Dims{n, c} : Dims{n, c, 2, hw / 2};
    check_close(m(f32(x, shape)), want, 1e-5, 1e-5, what + " output (batch statistics)");
    if (!m.running_mean) return;
    for (int64_t ch = 0; ch < c; ++ch) {
      rm[size_t(ch)] = (1 - momentum) * rm[size_t(ch)] + momentum * mean[size_t(ch)];
      rv[size_t(ch)] =
          (1 - momentum) * rv[size_t(ch)] + momentum * var[size_t(ch)] * cnt / (cnt - 1); // unbiased
    }
    check_close(*m.running_mean, rm, 1e-6, 1e-7, what + " running_mean");
    check_close(*m.running_var, rv, 1e-6, 1e-7, what + " running_var");
  };
  std::vector<double> x1 = rng.vec(12, -2, 2), x2 = rng.vec(12, 0, 3);
  step(x1, 4, 3, 1, 0.1, bn, "BatchNorm (4, 3) step 1");
  check_close(*bn.num_batches_tracked, {1}, 0, 0, "num_batches_tracked after 1 step");
  step(x2, 4, 3, 1, 0.1, bn, "BatchNorm (4, 3) step 2");
  check_close(*bn.num_batches_tracked, {2}, 0, 0, "num_batches_tracked after 2 steps");
  BOOST_TEST(bn.num_batches_tracked->dtype() == dtypes::int64);
  // eval: the running statistics, nothing updated
  bn.eval();
  std::vector<double> x3 = rng.vec(6), want(6);
  for (int i = 0; i < 2; ++i)
    for (int c = 0; c < 3; ++c)
      want[size_t(i * 3 + c)] =
          (x3[size_t(i * 3 + c)] - rm[size_t(c)]) / std::sqrt(rv[size_t(c)] + eps) * gamma[size_t(c)] +
          beta[size_t(c)];
  check_close(bn(f32(x3, {2, 3})), want, 1e-5, 1e-5, "BatchNorm eval");
  check_close(*bn.running_mean, rm, 1e-6, 1e-7, "running_mean unchanged in eval");
  check_close(*bn.num_batches_tracked, {2}, 0, 0, "num_batches_tracked unchanged in eval");

  // (N, C, H, W) = (2, 3, 2, 2), momentum 0.3
  nn::BatchNorm bn4(3, eps, true, true, 0.3);
  bn4.weight->assign(f32(gamma, {3}));
  bn4.bias->assign(f32(beta, {3}));
  rm = {0, 0, 0};
  rv = {1, 1, 1};
  step(rng.vec(24, -1, 2), 2, 3, 4, 0.3, bn4, "BatchNorm (2, 3, 2, 2)");
  // without running statistics: batch statistics in eval too, no buffers
  nn::BatchNorm nostats(3, eps, false, false);
  BOOST_TEST(nostats.state_dict().empty());
  nostats.eval();
  gamma = {1, 1, 1};
  beta = {0, 0, 0};
  step(x1, 4, 3, 1, 0.0, nostats, "BatchNorm without stats, eval");
  check_throws<tg::TensorError>([&] { bn(f32(x1, {3, 4})); }, {"(3, 4)", "3"}, "BatchNorm channel mismatch");
}

BOOST_AUTO_TEST_CASE(dropout) {
  Tensor::manual_seed(14);
  Tensor x = Tensor::ones({100, 100});
  nn::Dropout none(0.0);
  BOOST_TEST(none(x).is(x));
  nn::Dropout d(0.5);
  BOOST_TEST(d.training());
  std::vector<double> a = host(d(x)), b = host(d(x));
  size_t zeros = 0;
  bool only_0_or_2 = true;
  for (double v : a) {
    zeros += v == 0;
    only_0_or_2 &= v == 0 || v == 2;
  }
  BOOST_TEST(only_0_or_2);
  double frac = double(zeros) / double(a.size());
  BOOST_TEST(std::fabs(frac - 0.5) < 0.03, "dropped fraction " << frac);
  double mean = std::accumulate(a.begin(), a.end(), 0.0) / double(a.size());
  BOOST_TEST(std::fabs(mean - 1.0) < 0.06, "mean " << mean);
  BOOST_TEST((a != b), "two calls draw different masks");
  d.eval();
  BOOST_TEST(d(x).is(x));
  nn::Dropout all(1.0);
  check_close(all(x.reshape({10000}).shrink({{0, 5}})), {0, 0, 0, 0, 0}, 0, 0, "Dropout p = 1");
  check_throws<tg::TensorError>([] { nn::Dropout bad(1.5); }, {"1.5"}, "Dropout bad p");
}

BOOST_AUTO_TEST_CASE(losses) {
  const std::vector<double> logits = {1.0, 2.0, 0.5, -1.0, 0.0, 0.3, 2.5, 1.0, -0.5, 0.2, 0.1, 3.0};
  const std::vector<int32_t> labels = {1, 3, 0};
  std::vector<std::vector<double>> lp;
  for (int n = 0; n < 3; ++n)
    lp.push_back(log_softmax_row(std::vector<double>(logits.begin() + n * 4, logits.begin() + n * 4 + 4)));
  auto per = [&](int n, double ls) {
    double mean_c = 0;
    for (double v : lp[size_t(n)]) mean_c += -v / 4;
    return (1 - ls) * -lp[size_t(n)][size_t(labels[size_t(n)])] + ls * mean_c;
  };
  Tensor L = f32(logits, {3, 4});
  Tensor Y = i32(labels, {3});
  double plain = (per(0, 0) + per(1, 0) + per(2, 0)) / 3;
  check_close(nn::sparse_categorical_crossentropy(L, Y), {plain}, 1e-6, 0, "sparse CE");
  double smooth = (per(0, 0.1) + per(1, 0.1) + per(2, 0.1)) / 3;
  check_close(nn::sparse_categorical_crossentropy(L, Y, -1, 0.1), {smooth}, 1e-6, 0,
              "sparse CE label smoothing 0.1");
  // ignore_index = 3: example 1 is left out of the sum and of the count
  double ignored = (per(0, 0.1) + per(2, 0.1)) / 2;
  check_close(nn::sparse_categorical_crossentropy(L, Y, 3, 0.1), {ignored}, 1e-6, 0,
              "sparse CE ignore_index 3");
  std::vector<int32_t> with_neg = {1, -1, 0};
  check_close(nn::sparse_categorical_crossentropy(L, i32(with_neg, {3})), {(per(0, 0) + per(2, 0)) / 2}, 1e-6,
              0, "sparse CE default ignore_index -1");
  check_close(nn::sparse_categorical_crossentropy(
                  L.reshape({3, 1, 4}), Tensor::from_vector<int64_t>(std::vector<int64_t>{1, 3, 0}, {3, 1})),
              {plain}, 1e-6, 0, "sparse CE 3-D logits, int64 labels");
  // cross_entropy: indices (same as sparse), probabilities, smoothing, classes on dim 1
  check_close(nn::cross_entropy(L, Y), {plain}, 1e-6, 0, "cross_entropy indices");
  check_close(nn::cross_entropy(L, Y, 0.1), {smooth}, 1e-6, 0, "cross_entropy indices + smoothing");
  const std::vector<double> probs = {0.1, 0.6, 0.2, 0.1, 0.0, 0.0, 0.5, 0.5, 0.25, 0.25, 0.25, 0.25};
  double pe = 0, pes = 0;
  for (int n = 0; n < 3; ++n)
    for (int c = 0; c < 4; ++c) {
      pe += -probs[size_t(n * 4 + c)] * lp[size_t(n)][size_t(c)] / 3;
      pes += -(0.8 * probs[size_t(n * 4 + c)] + 0.2 / 4) * lp[size_t(n)][size_t(c)] / 3;
    }
  check_close(nn::cross_entropy(L, f32(probs, {3, 4})), {pe}, 1e-6, 0, "cross_entropy probabilities");
  check_close(nn::cross_entropy(L, f32(probs, {3, 4}), 0.2), {pes}, 1e-6, 0,
              "cross_entropy probabilities + smoothing");
  // (N, C, d) = (3, 4, 1): classes on dim 1
  check_close(nn::cross_entropy(L.reshape({3, 4, 1}), Y.reshape({3, 1})), {plain}, 1e-6, 0,
              "cross_entropy (N, C, d)");
  // binary cross entropy; log clamped at -100 as torch
  const std::vector<double> p = {0.9, 0.2, 0.6, 0.01}, y = {1, 0, 0, 1};
  double bce = 0;
  for (size_t i = 0; i < 4; ++i) bce += -(y[i] * std::log(p[i]) + (1 - y[i]) * std::log(1 - p[i])) / 4;
  check_close(nn::binary_crossentropy(f32(p, {4}), f32(y, {4})), {bce}, 1e-5, 0, "binary_crossentropy");
  check_close(nn::binary_crossentropy(f32({0, 1}, {2}), f32({1, 0}, {2})), {100}, 1e-6, 0,
              "binary_crossentropy clamp");
  const std::vector<double> z = {-2, 0.5, 3, 100, -100}, zy = {0, 1, 1, 0, 1};
  double bcel = 0;
  for (size_t i = 0; i < 5; ++i)
    bcel += (std::max(z[i], 0.0) - z[i] * zy[i] + std::log1p(std::exp(-std::fabs(z[i])))) / 5;
  check_close(nn::binary_crossentropy_with_logits(f32(z, {5}), f32(zy, {5})), {bcel}, 1e-5, 0,
              "binary_crossentropy_with_logits (finite at |x| = 100)");
  check_close(nn::mse(f32({1, 2, 3}, {3}), f32({1.5, 2, 1}, {3})), {(0.25 + 0 + 4) / 3}, 1e-6, 0, "mse");
  // shape errors name the shapes
  check_throws<tg::TensorError>(
      [&] {
        nn::sparse_categorical_crossentropy(L, i32({1, 2}, {2}));
      },
      {"(3, 4)", "(2,)"}, "sparse CE label shape");
  check_throws<tg::TensorError>(
      [&] {
        nn::sparse_categorical_crossentropy(L, f32({1, 2, 3}, {3}));
      },
      {"integer"}, "sparse CE float labels");
  check_throws<tg::TensorError>(
      [&] {
        nn::cross_entropy(L, f32(probs, {4, 3}));
      },
      {"(4, 3)", "(3, 4)"}, "CE prob shape");
  check_throws<tg::TensorError>(
      [&] {
        nn::cross_entropy(L, i32({1, 2, 3, 0}, {4}));
      },
      {"(3, 4)", "(4,)"}, "CE index shape");
  check_throws<tg::TensorError>(
      [&] {
        nn::binary_crossentropy(f32(p, {4}), f32(p, {2, 2}));
      },
      {"(4,)", "(2, 2)"}, "BCE shape");
  check_throws<tg::TensorError>(
      [&] {
        nn::binary_crossentropy_with_logits(f32(p, {4}), f32(p, {2, 2}));
      },
      {"(4,)", "(2, 2)"}, "BCE logits shape");
  check_throws<tg::TensorError>(
      [&] {
        nn::mse(f32(p, {4}), f32(y, {2, 2}));
      },
      {"(4,)", "(2, 2)"}, "mse shape");
  check_throws<tg::TensorError>([&] { nn::sparse_categorical_crossentropy(L, Y, -1, 1.5); },
                                {"label_smoothing"}, "smoothing range");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(modules)

namespace {
struct Net : nn::Module {
  std::vector<nn::Linear> layers;
  nn::BatchNorm bn{4};
  nn::Dropout drop{0.5};
  Net() {
    layers.emplace_back(3, 4);
    layers.emplace_back(4, 2);
  }
  void members(nn::MemberVisitor& v) override {
    v.modules("layers", layers);
    v.module("bn", bn);
    v.module("drop", drop);
  }
  Tensor forward(const Tensor& x) override { return layers[1](drop(bn(layers[0](x)).relu())); }
};
} // namespace

BOOST_AUTO_TEST_CASE(names_and_modes) {
  Net net;
  std::vector<std::string> names;
  for (auto& [n, t] : net.named_parameters()) names.push_back(n);
  BOOST_TEST((names == std::vector<std::string>{"layers.0.weight", "layers.0.bias", "layers.1.weight",
                                                "layers.1.bias", "bn.weight", "bn.bias"}));
  BOOST_TEST(net.parameters().size() == 6u);
  BOOST_TEST(net.parameters()[2].is(net.layers[1].weight));
  std::vector<std::string> buf;
  for (auto& [n, t] : net.named_buffers()) buf.push_back(n);
  BOOST_TEST(
      (buf == std::vector<std::string>{"bn.running_mean", "bn.running_var", "bn.num_batches_tracked"}));
  std::vector<std::string> keys;
  for (auto& [n, t] : net.state_dict()) keys.push_back(n);
  BOOST_TEST(keys.size() == 9u);
  // train/eval reach every child
  BOOST_TEST(net.training());
  net.eval();
  BOOST_TEST(!net.training());
  BOOST_TEST(!net.bn.training());
  BOOST_TEST(!net.drop.training());
  BOOST_TEST(!net.layers[1].training());
  net.train();
  BOOST_TEST(net.drop.training());
  // a copy shares the parameters (reference semantics) and names them the same
  Net copy = net;
  BOOST_TEST(copy.named_parameters()[0].second.is(net.layers[0].weight));
  // Sequential: "0", "1", ... with function layers taking an index but no parameters
  nn::Sequential seq;
  seq.add(nn::Linear(2, 3)).add([](const Tensor& x) { return x.relu(); }).add(nn::Linear(3, 1));
  names.clear();
  for (auto& [n, t] : seq.named_parameters()) names.push_back(n);
  BOOST_TEST((names == std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
  BOOST_TEST((seq(Tensor::ones({5, 2})).shape() == Dims{5, 1}));
  // a tensor reachable under two names is one parameter
  struct Shared : nn::Module {
    nn::Linear a{2, 2};
    nn::Linear b = a; // shares a's tensors
    void members(nn::MemberVisitor& v) override {
      v.module("a", a);
      v.module("b", b);
    }
  } shared;
  BOOST_TEST(shared.named_parameters().size() == 2u);
  BOOST_TEST(shared.state_dict().size() == 4u);
  // the default forward refuses
  nn::Module bare;
  BOOST_CHECK_THROW(bare(Tensor::ones({1})), tg::Error);
}

BOOST_AUTO_TEST_CASE(state_dict_round_trip) {
  Tensor::manual_seed(21);
  Net a, b;
  Rng rng(5);
  Tensor x = f32(rng.vec(15), {5, 3});
  a(x).realize(); // one training step's running statistics
  a.eval();
  b.eval();
  auto sd = a.state_dict();
  check_close(sd.at("bn.num_batches_tracked"), {1}, 0, 0, "a tracked one batch");
  b.load_state_dict(sd);
  for (auto& [name, t] : b.state_dict()) check_close(t, host(sd.at(name)), 0, 0, "loaded " + name);
  check_close(b(x), host(a(x)), 0, 0, "same output after load");
  BOOST_TEST(!b.layers[0].weight.is(a.layers[0].weight));
  BOOST_TEST(b.layers[0].weight.requires_grad());
  BOOST_TEST(realized(b.layers[0].weight));
  // later changes to a do not reach b
  std::vector<double> before = host(b.layers[0].weight);
  a.layers[0].weight.assign(a.layers[0].weight * 2.0);
  check_close(b.layers[0].weight, before, 0, 0, "b independent of a");
}

BOOST_AUTO_TEST_CASE(load_state_dict_errors) {
  Net net;
  auto good = net.state_dict();
  std::vector<double> w0 = host(net.layers[0].weight);
  auto expect_error = [&](std::map<std::string, Tensor> sd, std::vector<std::string> parts,
                          const std::string& what) {
    check_throws<nn::StateDictError>([&] { net.load_state_dict(sd); }, parts, what);
  };
  auto with_w0 = [&](std::map<std::string, Tensor> sd) {
    sd.erase("layers.0.weight");
    sd.emplace("layers.0.weight", Tensor::zeros({4, 3}));
    return sd;
  };
  auto missing = with_w0(good);
  missing.erase("layers.1.bias");
  missing.erase("bn.running_var");
  expect_error(missing, {"missing", "layers.1.bias (2,)", "bn.running_var (4,)"}, "missing keys");
  auto extra = with_w0(good);
  extra.emplace("extra.weight", Tensor::zeros({2, 2}));
  expect_error(extra, {"unexpected", "extra.weight (2, 2)"}, "unexpected key");
  auto shaped = good;
  shaped.erase("layers.0.weight");
  shaped.emplace("layers.0.weight", Tensor::zeros({3, 4}));
  expect_error(shaped, {"shape", "layers.0.weight", "expected (4, 3), got (3, 4)"}, "mis-shaped");
  auto typed = with_w0(good);
  typed.erase("bn.running_mean");
  typed.emplace("bn.running_mean", Tensor::zeros({4}, dtypes::float64));
  expect_error(typed, {"dtype", "bn.running_mean", dtypes::float32.name(), dtypes::float64.name()},
               "mis-typed");
  // several problems are reported together; nothing was loaded by any failed call
  auto many = missing;
  many.emplace("extra.weight", Tensor::zeros({2, 2}));
  expect_error(many, {"missing", "unexpected", "layers.1.bias", "extra.weight"}, "several");
  check_close(net.layers[0].weight, w0, 0, 0, "unchanged after errors");
  static_assert(std::is_base_of_v<tg::Error, nn::StateDictError>);
  // non-strict: missing and unexpected keys are ignored, the rest is loaded
  net.load_state_dict(extra, false);
  check_close(net.layers[0].weight, std::vector<double>(12, 0.0), 0, 0, "non-strict load");
  net.load_state_dict(missing, false);
  // shape errors are errors even when not strict
  check_throws<nn::StateDictError>([&] { net.load_state_dict(shaped, false); }, {"layers.0.weight"},
                                   "non-strict shape");
}

BOOST_AUTO_TEST_SUITE_END()

// Regression: a random tensor (threefry: 20 rounds that each reuse x0 and x1) fused into a reduce
// kernel must not take exponential time in the codegen stride probe (as a walk of the value graph
// as a tree would).
BOOST_AUTO_TEST_CASE(rand_fused_into_matmul) {
  Tensor r = Tensor::rand({5, 4});
  double got = r.matmul(Tensor::ones({4, 2})).sum().item<double>();
  std::vector<double> rv = host(r);
  check_close({got}, {2 * std::accumulate(rv.begin(), rv.end(), 0.0)}, 1e-5, 1e-5, "sum of rand @ ones");
}
