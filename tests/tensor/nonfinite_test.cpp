// NaN and inf where IEEE puts them, as PyTorch does: ops built from masks select with where
// instead of multiplying by 0/1 (inf * 0 is NaN), float max/min reductions propagate NaN, argmax
// and argmin name the first NaN, logsumexp of an infinite row is that infinity. Expected values
// are hand-computed (and match torch 2.x on the same inputs).
#include "test_util.hpp"

#include "kernel/tensor/nn.hpp"

#include <limits>

using namespace tt;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Element-wise equality where NaN equals NaN and infinities must match exactly.
void check_same(const std::vector<float>& got, const std::vector<float>& want) {
  BOOST_TEST_REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i)
    BOOST_TEST_CONTEXT("element " << i << ": got " << got[i] << ", want " << want[i]) {
      if (std::isnan(want[i]))
        BOOST_TEST(std::isnan(got[i]));
      else
        BOOST_TEST(got[i] == want[i]);
    }
}

Tensor vec(std::vector<float> v) {
  const int64_t n = int64_t(v.size());
  return Tensor::from_vector<float>(std::move(v), {n});
}

} // namespace

BOOST_AUTO_TEST_SUITE(nonfinite)

BOOST_AUTO_TEST_CASE(cumsum_keeps_inf_and_nan_in_place) {
  check_same(vec({1, 1, 1, kInf}).cumsum().to_vector<float>(), {1, 2, 3, kInf});
  check_same(vec({1, kNaN, 1}).cumsum().to_vector<float>(), {1, kNaN, kNaN});
  check_same(vec({kInf, -kInf, 1}).cumsum().to_vector<float>(), {kInf, kNaN, kNaN});
  check_same(vec({-kInf, 2, 3}).cumsum().to_vector<float>(), {-kInf, -kInf, -kInf});
  // along an inner axis of a 2-D tensor
  Tensor m = Tensor::from_vector<float>({1, 2, kInf, 4, 5, 6}, {2, 3});
  check_same(m.cumsum(1).to_vector<float>(), {1, 3, kInf, 4, 9, 15});
  check_same(m.cumsum(0).to_vector<float>(), {1, 2, kInf, 5, 7, kInf});
}

BOOST_AUTO_TEST_CASE(gather_ignores_unselected_inf_and_nan) {
  Tensor x = Tensor::from_vector<float>({1, kInf, 3, kNaN, 5, 6}, {2, 3});
  Tensor idx = Tensor::from_vector<int32_t>({0, 2, 2, 1}, {2, 2});
  check_same(x.gather(1, idx).to_vector<float>(), {1, 3, 6, 5});
  Tensor pick_inf = Tensor::from_vector<int32_t>({1, 0}, {2, 1});
  check_same(x.gather(1, pick_inf).to_vector<float>(), {kInf, kNaN});
}

BOOST_AUTO_TEST_CASE(max_and_min_propagate_nan) {
  check_same({vec({1, kNaN, 3}).max().item<float>()}, {kNaN});
  check_same({vec({1, kNaN, 3}).min().item<float>()}, {kNaN});
  check_same({vec({kNaN, 1, 3}).max().item<float>()}, {kNaN});
  check_same({vec({1, 3, kNaN}).max().item<float>()}, {kNaN});
  check_same({vec({-kInf, 1, kInf}).max().item<float>()}, {kInf});
  Tensor m = Tensor::from_vector<float>({1, kNaN, 3, 4, 5, -kInf}, {2, 3});
  check_same(m.max({1}).to_vector<float>(), {kNaN, 5});
  check_same(m.min({1}).to_vector<float>(), {kNaN, -kInf});
  check_same(m.max({0}).to_vector<float>(), {4, kNaN, 3});
  // a long reduction (the split path: partial maxes, then their max) with one NaN at the end
  std::vector<float> big(65536, 1.f);
  big.back() = kNaN;
  check_same({vec(big).max().item<float>()}, {kNaN});
  big.back() = kInf;
  check_same({vec(big).max().item<float>()}, {kInf});
}

BOOST_AUTO_TEST_CASE(argmax_argmin_name_the_first_nan) {
  BOOST_TEST(vec({1, kNaN, 3}).argmax().item<int32_t>() == 1);
  BOOST_TEST(vec({1, kNaN, 3, kNaN}).argmin().item<int32_t>() == 1);
  BOOST_TEST(vec({kNaN, kNaN}).argmax().item<int32_t>() == 0);
  BOOST_TEST(vec({3, 1, 3}).argmax().item<int32_t>() == 0); // ties: the first, unchanged
  BOOST_TEST(vec({-kInf, -kInf}).argmax().item<int32_t>() == 0);
  BOOST_TEST(vec({1, kInf, kInf}).argmax().item<int32_t>() == 1);
  BOOST_TEST(vec({1, -kInf, 0}).argmin().item<int32_t>() == 1);
  Tensor m = Tensor::from_vector<float>({1, 2, kNaN, 4, 5, 6, 9, kNaN, 0}, {3, 3});
  auto rows = m.argmax(1).to_vector<int32_t>();
  BOOST_TEST(rows == (std::vector<int32_t>{2, 2, 1}), boost::test_tools::per_element());
  auto cols = m.argmin(0).to_vector<int32_t>();
  BOOST_TEST(cols == (std::vector<int32_t>{0, 2, 0}), boost::test_tools::per_element());
  std::vector<float> big(65536, 1.f);
  big[40000] = kNaN;
  BOOST_TEST(vec(big).argmax().item<int32_t>() == 40000);
}

BOOST_AUTO_TEST_CASE(max_pool_windows_keep_nan_and_inf) {
  Tensor x =
      Tensor::from_vector<float>({1, kNaN, 3, 4, 5, 6, 7, 8, kInf, 1, 2, 3, -kInf, 0, 1, 2}, {1, 1, 4, 4});
  check_same(x.max_pool2d(2).to_vector<float>(), {kNaN, 8, kInf, 3});
  // padded windows: the pad value (-inf) never wins over a NaN or a finite value
  check_same(x.max_pool2d(3, 3, 1).to_vector<float>(), {kNaN, 8, kInf, 3});
}

BOOST_AUTO_TEST_CASE(pad_keeps_inf_inside_and_fills_outside) {
  check_same(vec({kInf, kNaN}).pad({{1, 1}}).to_vector<float>(), {0, kInf, kNaN, 0});
  check_same(vec({kInf}).pad({{1, 0}}, -1).to_vector<float>(), {-1, kInf});
  check_same((vec({2, 3}) * kInf).pad({{1, 1}}).to_vector<float>(), {0, kInf, kInf, 0});
}

BOOST_AUTO_TEST_CASE(logsumexp_of_infinite_rows) {
  Tensor m = Tensor::from_vector<float>({kInf, 1, -kInf, -kInf, 0, 0}, {3, 2});
  check_same(m.logsumexp(1).to_vector<float>(), {kInf, -kInf, float(std::log(2.0))});
}

BOOST_AUTO_TEST_CASE(cross_entropy_ignores_unselected_minus_inf) {
  // log_softmax of [0, -inf] is [0, -inf]: the loss of class 0 is 0, not NaN
  Tensor logits = Tensor::from_vector<float>({0, -kInf, 0, 0}, {2, 2});
  Tensor labels = Tensor::from_vector<int32_t>({0, 1}, {2});
  const float loss = tg::nn::sparse_categorical_crossentropy(logits, labels).item<float>();
  BOOST_TEST(loss == float(std::log(2.0) / 2), boost::test_tools::tolerance(1e-6f));
  // an ignored row with an infinite loss adds nothing
  Tensor ignored = Tensor::from_vector<int32_t>({1, 1}, {2});
  const float only_second =
      tg::nn::sparse_categorical_crossentropy(logits, ignored, /*ignore_index=*/-100).item<float>();
  BOOST_TEST(std::isinf(only_second));
  Tensor ignore_first = Tensor::from_vector<int32_t>({-100, 1}, {2});
  Tensor bad = Tensor::from_vector<float>({kNaN, -kInf, 0, 0}, {2, 2});
  const float masked = tg::nn::sparse_categorical_crossentropy(bad, ignore_first, -100).item<float>();
  BOOST_TEST(masked == float(std::log(2.0)), boost::test_tools::tolerance(1e-6f));
}

BOOST_AUTO_TEST_SUITE_END()
