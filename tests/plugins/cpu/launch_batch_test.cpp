// ABI 1.1 launch_batch on the CPU plugin: launches run in order (the second reads what the first
// wrote), a bad launch anywhere runs nothing, and the timed batch reports its total.
#include "plugin_fixture.hpp"

using namespace tgtest;
using tg::sdk::KernelBuilder;
using Ref = KernelBuilder::Ref;

namespace {

// out[i] = x[i] + y[i], one work group per element.
KernelBuilder add_per_group_kernel() {
  KernelBuilder k("add");
  Ref out = k.global(0, TG_DTYPE_FLOAT32), x = k.global(1, TG_DTYPE_FLOAT32),
      y = k.global(2, TG_DTYPE_FLOAT32);
  Ref i = k.group_id(0);
  k.store(k.index(out, i), k.add(k.load(k.index(x, i)), k.load(k.index(y, i))));
  return k;
}

tg_launch_args launch_of(const Program& p, uint32_t n, const std::vector<tg_buffer_arg>& buffers) {
  tg_launch_args a{};
  a.struct_size = sizeof a;
  a.program = p.get();
  a.global_size[0] = n;
  a.global_size[1] = a.global_size[2] = 1;
  a.local_size[0] = a.local_size[1] = a.local_size[2] = 1;
  a.buffers = buffers.data();
  a.buffer_count = uint32_t(buffers.size());
  return a;
}

Status run_batch(const Device& device, const std::vector<const tg_launch_args*>& list, uint64_t* elapsed) {
  tg_launch_batch_args b{};
  b.struct_size = sizeof b;
  b.device = device.get();
  b.launches = list.data();
  b.launch_count = uint32_t(list.size());
  b.elapsed_ns = elapsed;
  return take(api().launch_batch(&b));
}

} // namespace

BOOST_AUTO_TEST_SUITE(cpu_launch_batch)

BOOST_AUTO_TEST_CASE(runs_in_order_and_validates_all_first) {
  BOOST_REQUIRE(api().struct_size >= offsetof(tg_plugin_api, launch_batch) + sizeof(void*));
  BOOST_REQUIRE(api().launch_batch != nullptr);
  Device device;
  auto k = add_per_group_kernel();
  Program add(device, k);
  const uint32_t n = 5;
  std::vector<float> a{1, 2, 3, 4, 5}, b{10, 20, 30, 40, 50};
  Buffer ba(device, a), bb(device, b), bc(device, std::vector<float>(n, 0)),
      bd(device, std::vector<float>(n, 0));
  std::vector<tg_buffer_arg> first{bc.arg(), ba.arg(), bb.arg()};  // c = a + b
  std::vector<tg_buffer_arg> second{bd.arg(), bc.arg(), ba.arg()}; // d = c + a: needs the first
  tg_launch_args l1 = launch_of(add, n, first), l2 = launch_of(add, n, second);

  // A bad second launch (a missing buffer): INVALID_ARGUMENT naming it, and the first never ran.
  std::vector<tg_buffer_arg> short_args{bd.arg(), bc.arg()};
  tg_launch_args bad = launch_of(add, n, short_args);
  Status s = run_batch(device, {&l1, &bad}, nullptr);
  BOOST_TEST(s.code == TG_ERROR_INVALID_ARGUMENT);
  BOOST_TEST(s.message.find("launches[1]") != std::string::npos, s.message);
  BOOST_TEST(bc.download<float>(n) == std::vector<float>(n, 0), boost::test_tools::per_element());

  uint64_t elapsed = 0;
  s = run_batch(device, {&l1, &l2}, &elapsed);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.message);
  BOOST_TEST(elapsed > 0u);
  std::vector<float> want(n);
  for (uint32_t i = 0; i < n; ++i) want[i] = a[i] + b[i] + a[i];
  BOOST_TEST(bd.download<float>(n) == want, boost::test_tools::per_element());

  // An empty batch runs nothing and succeeds; a launch's own elapsed_ns is refused.
  BOOST_TEST(run_batch(device, {}, nullptr).ok());
  uint64_t own = 0;
  l1.elapsed_ns = &own;
  BOOST_TEST(run_batch(device, {&l1}, nullptr).code == TG_ERROR_INVALID_ARGUMENT);
}

BOOST_AUTO_TEST_SUITE_END()
