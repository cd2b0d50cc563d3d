// Index arithmetic past 2^31 elements (kernel/codegen/index_width.cpp): kernels over more
// elements than int32 can count compute their addresses, loops and grids in int64 and give the
// right answers; ordinary kernels keep int32 index math; shapes whose element or byte count
// overflows int64 are refused. The large cases use 1-byte dtypes (2 GiB buffers), freed at once.
#include "kernel/codegen/linearize.hpp"
#include "kernel/codegen/lower.hpp"
#include "kernel/engine/engine.hpp"
#include "kernel/ir/errors.hpp"
#include "kernel/runtime/device.hpp"
#include "kernel/runtime/devices.hpp"
#include "kernel/schedule/shapes.hpp"
#include "test_util.hpp"

#include <tg/sdk/kernel_ir.hpp>

#include <algorithm>
#include <span>

using namespace tt;

namespace {

constexpr int64_t k2p31 = int64_t{1} << 31;

struct IndexUse {
  std::vector<tg_dtype> index; // INDEX's index, RANGE counters, SPECIAL
  int int64_values = 0;        // instructions of dtype int64 (any)
};

IndexUse index_use(const tg::LoweredKernel& k, IndexUse into) {
  tg::LinearKernel linear = tg::linearize(k.sink, k.name);
  tg::sdk::KernelIR ir = tg::sdk::parse_kernel_ir(linear.ir);
  for (const auto& ins : ir.instructions) {
    if (ins.op == TG_OP_INDEX) into.index.push_back(ir.instructions[ins.src[1]].dtype);
    if (ins.op == TG_OP_RANGE || ins.op == TG_OP_SPECIAL) into.index.push_back(ins.dtype);
    into.int64_values += ins.dtype == TG_DTYPE_INT64;
  }
  return into;
}

// Every compute kernel of t, lowered for a device with 32-byte vectors (so lanes bundle too).
IndexUse index_use_of(const Tensor& t) {
  auto items = t.schedule();
  BOOST_REQUIRE(!items.empty());
  tg::LowerOptions options;
  options.vector_bytes = 32;
  IndexUse out;
  for (const auto& item : items)
    if (item.ast->src(0)->op() == tg::Ops::STORE) out = index_use(tg::lower_kernel(item, options), out);
  return out;
}

} // namespace

BOOST_AUTO_TEST_SUITE(index_width)

BOOST_AUTO_TEST_CASE(ordinary_kernels_index_in_int32) {
  // elementwise, broadcast, reduce, matmul (vector lanes), padded and flipped views
  Tensor a = Tensor::ones({64, 48}), b = Tensor::ones({48, 32});
  const std::vector<std::pair<std::string, Tensor>> kernels{
      {"add", (a + 1).contiguous()},
      {"sum", a.sum({1})},
      {"matmul", a.matmul(b)},
      {"pad", a.pad({{1, 2}, {0, 3}}).contiguous()},
      {"flip", a.flip({0}).contiguous()},
      {"arange", Tensor::arange(0, 1000, 1, dtypes::int32).reshape({10, 100}).sum({0})},
  };
  for (const auto& [name, t] : kernels) {
    IndexUse use = index_use_of(t);
    BOOST_TEST_CONTEXT(name) {
      BOOST_TEST(!use.index.empty());
      for (tg_dtype d : use.index) BOOST_TEST(d == TG_DTYPE_INT32);
      BOOST_TEST(use.int64_values == 0); // not even a detour through int64 and back
    }
  }
}

BOOST_AUTO_TEST_CASE(kernels_past_int32_index_in_int64) {
  // lowered only (nothing runs): the store's address must be 64-bit, the loop counters need not
  Tensor t = Tensor::arange(0, double(k2p31 + 16), 1, dtypes::uint8);
  IndexUse use = index_use_of(t.contiguous());
  BOOST_TEST(std::count(use.index.begin(), use.index.end(), TG_DTYPE_INT64) >= 1);
  for (tg_dtype d : use.index) BOOST_TEST((d == TG_DTYPE_INT32 || d == TG_DTYPE_INT64));
}

BOOST_AUTO_TEST_CASE(grids_past_the_work_group_limit_loop_in_each_group) {
  // Lowered for a device allowing 5 work groups and run on the CPU: 37 rows of one element
  // (work groups take chunks of the flat index) and 37 reduce outputs (each of the 5 work
  // groups loops over 8 tiles; the last one's 3 surplus steps redo the final tile).
  tg::LowerOptions options;
  options.max_groups = 5;
  options.optimize = false;
  const Tensor cases[] = {
      Tensor::arange(0, 37, 1, dtypes::int32).reshape({37, 1}).contiguous(), // want i
      Tensor::arange(0, 74, 1, dtypes::int32).reshape({37, 2}).sum({1}),     // want 2i + 2i + 1
  };
  for (size_t c = 0; c < 2; ++c) {
    auto items = cases[c].schedule();
    BOOST_REQUIRE_EQUAL(items.size(), 1u);
    BOOST_REQUIRE_EQUAL(items[0].buffers.size(), 1u); // the output only: the input is computed
    tg::LoweredKernel k = tg::lower_kernel(items[0], options);
    BOOST_TEST_CONTEXT(k.name << " " << k.opts) {
      BOOST_TEST(k.global[0] <= 5u);
      tg::LinearKernel linear = tg::linearize(k.sink, k.name);
      tg::OpenDevice dev = tg::open_device(tg::default_device());
      auto program = tg::get_program(dev.device, linear.ir, false, k.compile_level);
      std::vector<int32_t> got(37, -1);
      tg::Buffer out = dev.device->alloc(got.size() * sizeof(int32_t));
      out.copy_from_host(std::as_bytes(std::span(got)));
      const tg_buffer_arg args[] = {{out.raw(), 0}};
      program->program.launch(tg::LaunchDims{k.global, k.local}, args);
      out.copy_to_host(std::as_writable_bytes(std::span(got)));
      for (int32_t i = 0; i < 37; ++i) BOOST_TEST(got[size_t(i)] == (c == 0 ? i : 4 * i + 1));
    }
  }
}

BOOST_AUTO_TEST_CASE(int64_data_next_to_narrowed_indices) {
  // the iota's index narrows to int32, the int64 values it meets stay int64
  const int64_t big = int64_t{1} << 40;
  Tensor x = Tensor::from_vector<int64_t>({big, -big, 5, big + 7}, {4});
  Tensor y = x + Tensor::arange(0, 4, 1, dtypes::int64) * Tensor::full({4}, double(big), dtypes::int64);
  BOOST_TEST(y.to_vector<int64_t>() == (std::vector<int64_t>{big, 0, 5 + 2 * big, 4 * big + 7}),
             boost::test_tools::per_element());
  Tensor s = (x.reshape({2, 2}) * Tensor::arange(0, 4, 1, dtypes::int64).reshape({2, 2})).sum({1});
  BOOST_TEST(s.to_vector<int64_t>() == (std::vector<int64_t>{-big, 10 + 3 * big + 21}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(arange_counts_past_int32) {
  // the iota's own counter: int32 would wrap at 2^31 (lazy: only three elements are computed)
  Tensor t = Tensor::arange(0, double(k2p31 + 16), 1, dtypes::int64).shrink({{k2p31 - 1, k2p31 + 2}});
  BOOST_TEST(t.to_vector<int64_t>() == (std::vector<int64_t>{k2p31 - 1, k2p31, k2p31 + 1}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(reduce_invariant)

BOOST_AUTO_TEST_CASE(sum_of_a_broadcast_value_is_a_product) {
  // 2^25 + 1 additions of 1.0f stop at 2^24; the loop-invariant sum is c * n (n odd, so the
  // reduce is not split into partial sums, which would hide it)
  const int64_t n = (int64_t{1} << 25) + 1;
  BOOST_TEST(Tensor::ones({n}).sum().item<float>() == float(n));
  Tensor x = Tensor::from_vector<float>({1, 3}, {2, 1});
  BOOST_TEST(x.expand({2, n}).sum({1}).to_vector<float>() == (std::vector<float>{float(n), float(3 * n)}),
             boost::test_tools::per_element());
  BOOST_TEST(x.expand({2, n}).max({1}).to_vector<float>() == (std::vector<float>{1, 3}),
             boost::test_tools::per_element());
  // an int sum wraps as n additions would: n * 200 mod 2^32 as int32
  Tensor c = Tensor::full({n}, 200, dtypes::int32);
  BOOST_TEST(c.sum().item<int32_t>() == int32_t(uint32_t(uint64_t(n) * 200u)));
}

BOOST_AUTO_TEST_CASE(empty_reduce_is_the_identity) {
  Tensor x = Tensor::from_vector<float>({NAN, INFINITY}, {2, 1});
  BOOST_TEST(x.expand({2, 4}).shrink({{0, 2}, {0, 0}}).sum({1}).to_vector<float>() ==
                 (std::vector<float>{0, 0}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(shape_overflow)

BOOST_AUTO_TEST_CASE(element_count_past_int64_is_refused) {
  auto says_int64 = [](const tg::Error& e) {
    return std::string(e.what()).find("int64") != std::string::npos;
  };
  BOOST_CHECK_EXCEPTION(Tensor::ones({int64_t{1} << 62, 8}), tg::Error, says_int64);
  BOOST_CHECK_EXCEPTION(Tensor::ones({int64_t{1} << 32, int64_t{1} << 32}).sum(), tg::Error, says_int64);
  BOOST_CHECK_EXCEPTION(tg::dims_prod({int64_t{1} << 32, int64_t{1} << 32}), tg::ShapeError, says_int64);
}

BOOST_AUTO_TEST_CASE(byte_count_past_int64_is_refused) {
  // 2^62 float32 elements fit int64, their 2^64 bytes do not
  BOOST_CHECK_EXCEPTION(Tensor::ones({int64_t{1} << 60, 4}), tg::Error, [](const tg::Error& e) {
    return std::string(e.what()).find("bytes") != std::string::npos;
  });
}

BOOST_AUTO_TEST_CASE(empty_shapes_with_huge_dims_are_fine) {
  Tensor t = Tensor::ones({0, int64_t{1} << 62, 8});
  BOOST_TEST(t.numel() == 0);
  BOOST_TEST(tg::dims_prod({int64_t{1} << 62, 8, 0}) == 0);
}

BOOST_AUTO_TEST_SUITE_END()
