// A realized result gives its device memory back once the last Tensor holding it dies, whatever
// was realized: a computed target, a contiguous() copy, a bare view of another buffer, or an
// intermediate the schedule stored. Each case builds and drops its tensors in one scope; the next
// realize purges dead results, and the allocator's live bytes must be back where they were.
// Inputs are computed (arange, ones): such kernels read no buffer, so the structure-keyed kernel
// cache holds their whole expression; a tensor with requires_grad makes autograd record reads.
#include "kernel/runtime/devices.hpp"
#include "test_util.hpp"

using namespace tt;

namespace {

// A realize of a new expression: the point where dead results return to the allocator.
void next_realize() { (Tensor::from_vector<float>({1}, {1}) + 1).realize(); }

// Bytes still held after `make_and_drop` ran and the next realize purged what it left behind.
template <class F> int64_t leaked_bytes(F make_and_drop) {
  tg::Allocator& alloc = *tg::open_device(tg::default_device()).allocator;
  next_realize();
  const auto before = int64_t(alloc.live_bytes());
  make_and_drop();
  next_realize();
  return int64_t(alloc.live_bytes()) - before;
}

Tensor big() { return Tensor::arange(0, 1 << 16, 1, dtypes::float32); } // 256 KiB once stored

} // namespace

BOOST_AUTO_TEST_SUITE(realized_memory)

BOOST_AUTO_TEST_CASE(dead_elementwise_target) {
  BOOST_TEST(leaked_bytes([] { BOOST_TEST((big() + 1).realize().numel() == 1 << 16); }) == 0);
}

BOOST_AUTO_TEST_CASE(dead_reduce_target) {
  BOOST_TEST(leaked_bytes([] { Tensor::ones({1000}).sum().realize(); }) == 0);
  BOOST_TEST(leaked_bytes([] { big().reshape({256, 256}).max({1}).realize(); }) == 0);
}

BOOST_AUTO_TEST_CASE(dead_view_read) {
  // reading one element through a bare view must not keep the whole buffer it views
  BOOST_TEST(leaked_bytes([] {
               Tensor t = big().contiguous().realize();
               BOOST_TEST(t.shrink({{5, 6}}).to_vector<float>().at(0) == 5.0f);
             }) == 0);
  BOOST_TEST(leaked_bytes([] {
               Tensor t = (big() * 2).realize();
               Tensor v = t.reshape({256, 256}).permute({1, 0});
               v.realize(); // already a view: nothing to compute
               BOOST_TEST(v.shrink({{1, 2}, {0, 1}}).item<float>() == 2.0f);
             }) == 0);
}

BOOST_AUTO_TEST_CASE(dead_contiguous_target) { // the case that always worked
  BOOST_TEST(leaked_bytes([] { (big() + 1).contiguous().realize(); }) == 0);
}

BOOST_AUTO_TEST_CASE(dead_stored_intermediate) {
  // the max is broadcast into the sum, so the schedule stores it: an intermediate, not a target
  BOOST_TEST(leaked_bytes([] {
               Tensor m = big().reshape({512, 128}).max({1}).reshape({512, 1}).expand({512, 128});
               (Tensor::ones({512, 128}) * m).sum().realize();
             }) == 0);
}

BOOST_AUTO_TEST_CASE(dead_read_with_live_grad_leaf) {
  // autograd records a read value whose expression reaches a live requires_grad tensor; the
  // record dies with the value instead of keeping it (and its buffer) alive
  Tensor w = Tensor::ones({1 << 16}).contiguous().realize().requires_grad_();
  BOOST_TEST(leaked_bytes([&] { (big() * w).realize(); }) == 0);
  BOOST_TEST(leaked_bytes([&] { BOOST_TEST((big() * w).sum().item<float>() > 0.0f); }) == 0);
  // and a value read while alive still differentiates
  Tensor y = (big() * w).sum();
  (void)y.item<float>();
  y.backward();
  BOOST_TEST(w.grad()->shrink({{3, 4}}).item<float>() == 3.0f);
}

BOOST_AUTO_TEST_SUITE_END()
