// Regressions: minimal reproductions of codegen bugs the reference tests found (fixed): a kernel
// whose loads all simplify away still takes every buffer; unrolled reduce lanes never share a node.
#include "test_util.hpp"

using namespace tt;

BOOST_AUTO_TEST_SUITE(codegen_regressions)

BOOST_AUTO_TEST_CASE(folded_loads_launch) {
  Tensor x = Tensor::from_vector<int32_t>({1, 2, 3, 4}, {4});
  BOOST_TEST((x * 0).to_vector<int32_t>() == (std::vector<int32_t>{0, 0, 0, 0}),
             boost::test_tools::per_element());
  Tensor f = Tensor::from_vector<float>({1, 2}, {2, 1});
  BOOST_TEST(f.eq(f).to_vector<bool>() == (std::vector<bool>{true, true}), boost::test_tools::per_element());
  // argmax over a size-1 dim: x == max(x) is x == x
  BOOST_TEST(f.argmax(1).to_vector<int32_t>() == (std::vector<int32_t>{0, 0}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(reduce_unroll_wrong_sum) {
  for (auto [rows, n] : {std::pair<int64_t, int64_t>{2, 16}, {1, 64}, {7, 16}, {1, 8}, {1, 16}, {2, 65536}}) {
    NdArray a({rows, n});
    for (size_t i = 0; i < a.data.size(); ++i) a.data[i] = double(i % 7) - 3;
    check_close(to_tensor(a).sum({1}), ref::sum(a, {1}), kExact,
                "sum of " + ref::str(a.shape) + " over axis 1");
  }
}

// A vectorized store of an int64 result that fits int32 (argmax cast to int64, upcast by 4):
// the value kept its narrowed int32 dtype and the kernel stored int32 lanes into an int64 buffer.
BOOST_AUTO_TEST_CASE(vector_store_keeps_int64) {
  std::vector<float> v(24);
  for (size_t i = 0; i < v.size(); ++i) v[i] = float((i * 7) % 11);
  Tensor x = Tensor::from_vector(v, {2, 3, 4});
  // argmax over axis 1 of x[b, :, j], computed by hand from the values above
  BOOST_TEST(x.argmax(1, true).cast(dtypes::int64).to_vector<int64_t>() ==
                 (std::vector<int64_t>{1, 2, 1, 0, 2, 1, 0, 2}),
             boost::test_tools::per_element());
}

// A shrink from 0 of a reshaped permute is a contiguous view of fewer elements: merging it into
// the view below as a reshape failed ("reshape: size mismatch").
BOOST_AUTO_TEST_CASE(shrunk_contiguous_view_over_permute) {
  auto r = Tensor::arange(12).reshape({3, 4}).T().reshape({12}).shrink({{0, 10}}).to_vector<int32_t>();
  BOOST_TEST(r == (std::vector<int32_t>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3}), boost::test_tools::per_element());
}

// min of signed ints as -max(-x) wrapped the most negative value (-(-128) is -128 in int8):
// min(-128, 5) came out 5.
BOOST_AUTO_TEST_CASE(int_min_of_the_most_negative_value) {
  Tensor a = Tensor::from_vector<int32_t>({-128, 5, 7, -3}, {4}, dtypes::int8);
  Tensor b = Tensor::from_vector<int32_t>({5, -128, 7, 2}, {4}, dtypes::int8);
  BOOST_TEST(a.minimum(b).cast(dtypes::int32).to_vector<int32_t>() ==
                 (std::vector<int32_t>{-128, -128, 7, -3}),
             boost::test_tools::per_element());
  BOOST_TEST(a.min().cast(dtypes::int32).item<int32_t>() == -128);
  BOOST_TEST(b.argmin().item<int32_t>() == 1);
  Tensor c = Tensor::from_vector<int32_t>({1, INT32_MIN, 2}, {3});
  BOOST_TEST(c.min().item<int32_t>() == INT32_MIN);
  BOOST_TEST(c.argmin().item<int32_t>() == 1);
  Tensor flags = Tensor::from_vector<bool>({true, false, true}, {3});
  BOOST_TEST(flags.argmin().item<int32_t>() == 1);
}

BOOST_AUTO_TEST_SUITE_END()
