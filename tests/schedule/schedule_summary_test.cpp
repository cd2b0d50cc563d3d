// tg::summarize: one line per kernel of a schedule, checked against what the fusion rules give.
#include "kernel/schedule/schedule_summary.hpp"
#include "kernel/tensor/tensor.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>

using namespace tg;

namespace {
Tensor summary_input(Dims shape) {
  std::vector<float> v(size_t(dims_prod(shape)), 1.0f);
  return Tensor::from_vector(v, shape).realize();
}
} // namespace

BOOST_AUTO_TEST_CASE(summary_of_nothing_to_run) {
  Tensor a = summary_input({4, 4});
  BOOST_TEST(summarize(a.permute({1, 0}).schedule()) == "no kernels\n");
}

BOOST_AUTO_TEST_CASE(summary_names_shape_inputs_elementwise_and_reduce) {
  Tensor a = summary_input({4, 4}), b = summary_input({4, 4});
  auto items = (a * b).sum({1}).schedule();
  BOOST_REQUIRE(items.size() == 1u);
  std::string line = summarize(items[0]);
  BOOST_TEST(line.starts_with("(4,) float on CPU, reads 2 buffers"), line);
  BOOST_TEST(line.find("elementwise MUL") != std::string::npos, line);
  BOOST_TEST(line.find("reduce SUM over axes (1)") != std::string::npos, line);
  BOOST_TEST(line.find('\n') == std::string::npos);
}

BOOST_AUTO_TEST_CASE(summary_lists_every_kernel_in_order) {
  auto items = summary_input({4, 4}).softmax().schedule();
  std::string text = summarize(items);
  BOOST_TEST(text.starts_with(
                 "3 kernels:\n  kernel 0: (4, 1) float on CPU, reads 1 buffer; reduce MAX over axes (1)"),
             text);
  BOOST_TEST(text.find("  kernel 1: ") != std::string::npos);
  BOOST_TEST(text.find("  kernel 2: (4, 4) float") != std::string::npos, text);
  BOOST_TEST(std::count(text.begin(), text.end(), '\n') == 4);
}
