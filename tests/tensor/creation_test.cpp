// Creation (zeros/ones/full/arange/linspace/eye/_like) against plain loops, and the random
// generators: range, moments, reproducibility under manual_seed, fresh numbers per call.
#include "test_util.hpp"

using namespace tt;
using ref::Dims;

BOOST_AUTO_TEST_SUITE(creation)

BOOST_AUTO_TEST_CASE(constants) {
  check_close(Tensor::zeros({2, 3}), NdArray({2, 3}, 0.0), kExact, "zeros");
  check_close(Tensor::ones({4}), NdArray({4}, 1.0), kExact, "ones");
  check_close(Tensor::full({3, 1, 2}, -2.5), NdArray({3, 1, 2}, -2.5), kExact, "full");
  check_close(Tensor::full({}, 7), NdArray({}, 7.0), kExact, "full 0-d");
  check_close(Tensor::full({2, 0}, 7), NdArray({2, 0}), kExact, "full size 0");
  for (DType dt : {dtypes::int8, dtypes::int32, dtypes::int64, dtypes::uint8, dtypes::bool_, dtypes::float16,
                   dtypes::float64}) {
    Tensor t = Tensor::full({2, 2}, 3, dt);
    BOOST_TEST(t.dtype() == dt);
    check_close(t, NdArray({2, 2}, dt.is_bool() ? 1.0 : 3.0), kExact, "full " + dt.name());
    BOOST_TEST(Tensor::zeros({3}, dt).dtype() == dt);
    check_close(Tensor::ones({3}, dt), NdArray({3}, 1.0), kExact, "ones " + dt.name());
  }
  // full truncates a fractional value for int dtypes
  check_close(Tensor::full({2}, -2.75, dtypes::int32), NdArray({2}, -2.0), kExact, "full int from fraction");
  // _like keeps shape and dtype
  Tensor base = Tensor::from_vector<int16_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  for (const Tensor& t : {base.zeros_like(), base.ones_like(), base.full_like(9)}) {
    BOOST_TEST(t.shape() == base.shape());
    BOOST_TEST(t.dtype() == dtypes::int16);
  }
  check_close(base.full_like(9), NdArray({2, 3}, 9.0), kExact, "full_like");
  check_close(base.zeros_like(), NdArray({2, 3}, 0.0), kExact, "zeros_like");
  check_close(base.ones_like(), NdArray({2, 3}, 1.0), kExact, "ones_like");
  check_close(Tensor::scalar(4.5, dtypes::float64), NdArray({}, 4.5), kExact, "scalar");
}

// full makes its nodes directly (no tensors in between): they must be the very nodes of
// scalar -> reshape(ones) -> expand(shape), so scheduling and the schedule cache see no change.
BOOST_AUTO_TEST_CASE(full_is_the_reshape_expand_chain_of_its_scalar) {
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{4}, {2, 3}, {1, 1}, {3, 0}, {}, {2, 1, 5}}) {
    for (DType dt : {dtypes::float32, dtypes::int32, dtypes::bool_}) {
      Tensor chain = Tensor::scalar(1.5, dt);
      if (!shape.empty()) chain = chain.reshape(std::vector<int64_t>(shape.size(), 1)).expand(shape);
      Tensor direct = Tensor::full(shape, 1.5, dt);
      BOOST_TEST(direct.uop().get() == chain.uop().get(), "full " << shape.size() << "-d " << dt.name());
      BOOST_TEST(direct.shape() == shape);
      BOOST_TEST(direct.dtype() == dt);
    }
  }
  check_error<tg::TensorError>([] { (void)Tensor::full({2, -1}, 1.0); }, {"negative dimension", "(2, -1)"});
}

BOOST_AUTO_TEST_CASE(arange_linspace_eye) {
  auto arange_ref = [](double start, double stop, double step) {
    std::vector<double> v;
    int64_t n = int64_t(std::max(0.0, std::ceil((stop - start) / step)));
    for (int64_t i = 0; i < n; ++i) v.push_back(start + double(i) * step);
    return NdArray({int64_t(v.size())}, v);
  };
  struct Case {
    double start, stop, step;
  };
  for (auto [a, b, s] : {Case{0, 10, 1}, Case{2, 11, 3}, Case{5, -5, -2}, Case{-3, 3, 1}, Case{0, 1, 0.125},
                         Case{1.5, -1, -0.5}, Case{0, 0, 1}, Case{3, 1, 1}}) {
    Tensor t = Tensor::arange(a, b, s);
    bool integral = a == std::floor(a) && b == std::floor(b) && s == std::floor(s);
    std::string c = "arange(" + std::to_string(a) + ", " + std::to_string(b) + ", " + std::to_string(s) + ")";
    BOOST_TEST(t.dtype() == (integral ? dtypes::int32 : dtypes::float32), c);
    check_close(t, arange_ref(a, b, s), kExact, c);
  }
  check_close(Tensor::arange(5), arange_ref(0, 5, 1), kExact, "arange(5)");
  check_close(Tensor::arange(0, 4, 1, dtypes::float64), arange_ref(0, 4, 1), kExact, "arange float64");
  BOOST_TEST(Tensor::arange(0, 4, 1, dtypes::int64).dtype() == dtypes::int64);

  auto linspace_ref = [](double a, double b, int64_t n) {
    NdArray r({n});
    for (int64_t i = 0; i < n; ++i) r.data[size_t(i)] = n == 1 ? a : a + (b - a) * double(i) / double(n - 1);
    return r;
  };
  for (auto [a, b, n] : {std::tuple{0.0, 1.0, int64_t(5)},
                         {-2.0, 2.0, int64_t(9)},
                         {3.0, -1.0, int64_t(4)},
                         {1.0, 5.0, int64_t(1)},
                         {0.0, 1.0, int64_t(0)}})
    check_close(Tensor::linspace(a, b, n), linspace_ref(a, b, n), kArith32,
                "linspace(" + std::to_string(a) + ", " + std::to_string(b) + ", " + std::to_string(n) + ")");
  BOOST_TEST(Tensor::linspace(0, 10, 3, dtypes::int32).to_vector<int32_t>() ==
                 (std::vector<int32_t>{0, 5, 10}),
             boost::test_tools::per_element());

  auto eye_ref = [](int64_t n, int64_t m) {
    NdArray r({n, m});
    for (int64_t i = 0; i < std::min(n, m); ++i) r.at({i, i}) = 1;
    return r;
  };
  check_close(Tensor::eye(4), eye_ref(4, 4), kExact, "eye(4)");
  check_close(Tensor::eye(2, 5), eye_ref(2, 5), kExact, "eye(2, 5)");
  check_close(Tensor::eye(5, 3, dtypes::int32), eye_ref(5, 3), kExact, "eye(5, 3) int");
  check_close(Tensor::eye(1), eye_ref(1, 1), kExact, "eye(1)");
  check_close(Tensor::eye(0), eye_ref(0, 0), kExact, "eye(0)");
  BOOST_TEST(Tensor::eye(3, {}, dtypes::bool_).dtype() == dtypes::bool_);
}

// ---- random ----

namespace {
struct Moments {
  double mean, var, min, max;
};
Moments moments(const std::vector<double>& v) {
  double s = 0, mn = INFINITY, mx = -INFINITY;
  for (double x : v) {
    s += x;
    mn = std::min(mn, x);
    mx = std::max(mx, x);
  }
  double m = s / double(v.size()), q = 0;
  for (double x : v) q += (x - m) * (x - m);
  return {m, q / double(v.size()), mn, mx};
}
} // namespace

BOOST_AUTO_TEST_CASE(rand_uniform_in_unit_interval) {
  Tensor::manual_seed(1);
  Tensor r = Tensor::rand({100000});
  BOOST_TEST(r.dtype() == dtypes::float32);
  NdArray v = to_array(r);
  Moments m = moments(v.data);
  BOOST_TEST(m.min >= 0.0);
  BOOST_TEST(m.max < 1.0);
  // mean 1/2 and variance 1/12; with 1e5 samples the standard error of the mean is ~1e-3
  BOOST_TEST(std::fabs(m.mean - 0.5) < 0.01);
  BOOST_TEST(std::fabs(m.var - 1.0 / 12) < 0.005);
  // roughly uniform: each tenth of [0, 1) holds ~10%
  std::vector<int> hist(10, 0);
  for (double x : v.data) ++hist[size_t(x * 10)];
  for (int h : hist) BOOST_TEST(std::abs(h - 10000) < 600);
  // shapes and dtypes
  BOOST_TEST(Tensor::rand({2, 3, 4}).shape() == (Dims{2, 3, 4}));
  BOOST_TEST(Tensor::rand({0, 3}).numel() == 0);
  NdArray h = to_array(Tensor::rand({1000}, dtypes::float16));
  for (double x : h.data) BOOST_TEST((x >= 0 && x <= 1));
  NdArray u = to_array(Tensor::uniform({10000}, -3, 5));
  Moments mu = moments(u.data);
  BOOST_TEST(mu.min >= -3.0);
  BOOST_TEST(mu.max < 5.0);
  BOOST_TEST(std::fabs(mu.mean - 1) < 0.1);
}

BOOST_AUTO_TEST_CASE(manual_seed_reproducible) {
  Tensor::manual_seed(1234);
  std::vector<float> a1 = Tensor::rand({64}).to_vector<float>();
  std::vector<float> a2 = Tensor::rand({64}).to_vector<float>();
  Tensor::manual_seed(1234);
  std::vector<float> b1 = Tensor::rand({64}).to_vector<float>();
  std::vector<float> b2 = Tensor::rand({64}).to_vector<float>();
  BOOST_TEST(a1 == b1, boost::test_tools::per_element()); // same seed, same numbers
  BOOST_TEST(a2 == b2, boost::test_tools::per_element());
  BOOST_TEST((a1 != a2)); // consecutive calls draw fresh numbers
  Tensor::manual_seed(4321);
  std::vector<float> c1 = Tensor::rand({64}).to_vector<float>();
  BOOST_TEST((c1 != a1)); // another seed, other numbers
  // no two equal values in one draw (a counter-based generator never repeats a counter)
  std::vector<float> s = a1;
  std::sort(s.begin(), s.end());
  BOOST_TEST((std::adjacent_find(s.begin(), s.end()) == s.end()));
  // an odd count (the generator produces pairs) and a later tensor of the same shape
  Tensor::manual_seed(9);
  std::vector<float> o1 = Tensor::rand({3, 3}).to_vector<float>();
  Tensor::manual_seed(9);
  std::vector<float> o2 = Tensor::rand({3, 3}).to_vector<float>();
  BOOST_TEST(o1 == o2, boost::test_tools::per_element());
  // randn and randint reproduce too
  Tensor::manual_seed(5);
  auto n1 = Tensor::randn({32}).to_vector<float>();
  auto i1 = Tensor::randint({32}, 0, 100).to_vector<int32_t>();
  Tensor::manual_seed(5);
  auto n2 = Tensor::randn({32}).to_vector<float>();
  auto i2 = Tensor::randint({32}, 0, 100).to_vector<int32_t>();
  BOOST_TEST(n1 == n2, boost::test_tools::per_element());
  BOOST_TEST(i1 == i2, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(randn_standard_normal) {
  Tensor::manual_seed(2);
  NdArray v = to_array(Tensor::randn({100000}));
  Moments m = moments(v.data);
  BOOST_TEST(std::fabs(m.mean) < 0.02);
  BOOST_TEST(std::fabs(std::sqrt(m.var) - 1) < 0.02);
  for (double x : v.data) BOOST_REQUIRE(std::isfinite(x));
  // ~68.3% within one sigma, ~95.4% within two
  double in1 = 0, in2 = 0;
  for (double x : v.data) {
    in1 += std::fabs(x) < 1;
    in2 += std::fabs(x) < 2;
  }
  BOOST_TEST(std::fabs(in1 / 1e5 - 0.6827) < 0.01);
  BOOST_TEST(std::fabs(in2 / 1e5 - 0.9545) < 0.01);
  BOOST_TEST(Tensor::randn({2, 2}, dtypes::float64).dtype() == dtypes::float64);
}

BOOST_AUTO_TEST_CASE(randint_in_range) {
  Tensor::manual_seed(3);
  for (auto [lo, hi] : {std::pair<int64_t, int64_t>{0, 10}, {-5, 5}, {100, 101}, {-1000, 1000}}) {
    Tensor t = Tensor::randint({20000}, lo, hi);
    BOOST_TEST(t.dtype() == dtypes::int32);
    NdArray v = to_array(t);
    Moments m = moments(v.data);
    std::string c = "randint [" + std::to_string(lo) + ", " + std::to_string(hi) + ")";
    BOOST_TEST(m.min >= double(lo), c);
    BOOST_TEST(m.max < double(hi), c);
    if (hi - lo <= 10) {
      BOOST_TEST(m.min == double(lo), c); // every value shows up
      BOOST_TEST(m.max == double(hi - 1), c);
    }
    BOOST_TEST(std::fabs(m.mean - double(lo + hi - 1) / 2) < 0.05 * double(hi - lo) + 0.01, c);
  }
  BOOST_TEST(Tensor::randint({4}, 0, 3, dtypes::int64).dtype() == dtypes::int64);
  BOOST_TEST(Tensor::randint({4}, 0, 3, dtypes::uint8).dtype() == dtypes::uint8);
}

BOOST_AUTO_TEST_SUITE_END()
