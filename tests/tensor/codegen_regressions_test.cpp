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

BOOST_AUTO_TEST_SUITE_END()
