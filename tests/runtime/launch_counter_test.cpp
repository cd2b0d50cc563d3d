// tg::LaunchCounter: what run_schedule launched on this thread, compared with the kernel counts
// the scheduler's fusion rules give (tests/schedule/kernel_count_test.cpp has tinygrad's).
#include "kernel/engine/launch_counter.hpp"
#include "kernel/tensor/tensor.hpp"

#include <boost/test/unit_test.hpp>

#include <thread>

using namespace tg;

namespace {
Tensor input(Dims shape) {
  std::vector<float> v(size_t(dims_prod(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(int(i % 5) - 2);
  return Tensor::from_vector(v, shape).realize();
}
} // namespace

BOOST_AUTO_TEST_CASE(counts_the_kernels_of_a_realize_with_names_and_device) {
  Tensor a = input({4, 4}), b = input({4, 4});
  LaunchCounter counter;
  (a + b).relu().sum().realize();
  BOOST_TEST(counter.kernels() == 1u);
  BOOST_TEST(counter.copies() == 0u);
  BOOST_REQUIRE(counter.launches().size() == 1u);
  BOOST_TEST(counter.launches()[0].device == "CPU");
  BOOST_TEST(!counter.launches()[0].name.empty());
  BOOST_TEST(counter.total_ms() >= 0);
  a.softmax().realize(); // max, sum, divide
  BOOST_TEST(counter.kernels() == 4u);
}

BOOST_AUTO_TEST_CASE(realized_and_movement_only_tensors_launch_nothing) {
  Tensor a = input({4, 4});
  Tensor r = (a * 2).realize();
  LaunchCounter counter;
  r.realize();
  a.permute({1, 0}).reshape({16}).realize();
  BOOST_TEST(counter.kernels() == 0u);
}

BOOST_AUTO_TEST_CASE(nested_counters_each_count_while_they_live) {
  Tensor a = input({8});
  LaunchCounter outer;
  (a + 1).realize();
  {
    LaunchCounter inner;
    (a + 2).realize();
    (a + 3).realize();
    BOOST_TEST(inner.kernels() == 2u);
  }
  (a + 4).realize();
  BOOST_TEST(outer.kernels() == 4u);
  outer.reset();
  BOOST_TEST(outer.kernels() == 0u);
  (a + 5).realize();
  BOOST_TEST(outer.kernels() == 1u);
}

BOOST_AUTO_TEST_CASE(launches_on_other_threads_are_not_counted) {
  Tensor a = input({8});
  LaunchCounter counter;
  size_t other = 99;
  std::thread t([&] {
    LaunchCounter mine;
    (a * 7).realize();
    other = mine.kernels();
  });
  t.join();
  BOOST_TEST(other == 1u);
  BOOST_TEST(counter.kernels() == 0u);
}
