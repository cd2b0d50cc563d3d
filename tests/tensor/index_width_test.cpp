// Index arithmetic past 2^31 elements (kernel/codegen/index_width.cpp): kernels over more
// elements than int32 can count compute their addresses, loops and grids in int64 and give the
// right answers; ordinary kernels keep int32 index math; shapes whose element or byte count
// overflows int64 are refused. The large cases use 1-byte dtypes (2 GiB buffers), freed at once.
#include "kernel/codegen/linearize.hpp"
#include "kernel/codegen/lower.hpp"
#include "kernel/ir/errors.hpp"
#include "kernel/schedule/shapes.hpp"
#include "test_util.hpp"

#include <tg/sdk/kernel_ir.hpp>

using namespace tt;

namespace {

constexpr int64_t k2p31 = int64_t{1} << 31;

// The dtypes of the index operands (INDEX's index, RANGE counters, SPECIAL) in a kernel's IR.
std::vector<tg_dtype> index_dtypes(const tg::LoweredKernel& k) {
  tg::LinearKernel linear = tg::linearize(k.sink, k.name);
  tg::sdk::KernelIR ir = tg::sdk::parse_kernel_ir(linear.ir);
  std::vector<tg_dtype> out;
  for (const auto& ins : ir.instructions) {
    if (ins.op == TG_OP_INDEX) out.push_back(ir.instructions[ins.src[1]].dtype);
    if (ins.op == TG_OP_RANGE || ins.op == TG_OP_SPECIAL) out.push_back(ins.dtype);
  }
  return out;
}

std::vector<tg_dtype> index_dtypes_of(const Tensor& t) {
  auto items = t.schedule();
  BOOST_REQUIRE(!items.empty());
  std::vector<tg_dtype> out;
  for (const auto& item : items) {
    if (item.ast->src(0)->op() != tg::Ops::STORE) continue;
    auto d = index_dtypes(tg::lower_kernel(item, tg::LowerOptions{}));
    out.insert(out.end(), d.begin(), d.end());
  }
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
    auto dts = index_dtypes_of(t);
    BOOST_TEST_CONTEXT(name) {
      BOOST_TEST(!dts.empty());
      for (tg_dtype d : dts) BOOST_TEST(d == TG_DTYPE_INT32);
    }
  }
}

BOOST_AUTO_TEST_CASE(kernels_past_int32_index_in_int64) {
  // lowered only (nothing runs): the store's address must be 64-bit, the loop counters need not
  Tensor t = Tensor::arange(0, double(k2p31 + 16), 1, dtypes::uint8);
  auto dts = index_dtypes_of(t.contiguous());
  BOOST_TEST(std::count(dts.begin(), dts.end(), TG_DTYPE_INT64) >= 1);
  for (tg_dtype d : dts) BOOST_TEST((d == TG_DTYPE_INT32 || d == TG_DTYPE_INT64));
}

BOOST_AUTO_TEST_CASE(arange_counts_past_int32) {
  // the iota's own counter: int32 would wrap at 2^31 (lazy: only three elements are computed)
  Tensor t = Tensor::arange(0, double(k2p31 + 16), 1, dtypes::int64).shrink({{k2p31 - 1, k2p31 + 2}});
  BOOST_TEST(t.to_vector<int64_t>() == (std::vector<int64_t>{k2p31 - 1, k2p31, k2p31 + 1}),
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
