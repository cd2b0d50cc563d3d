// Kernels over just more than 2^31 elements, run for real (label `large`): the three overflow cases
// (a sum of 2^31 + 1 ones returning 0, of 2^33 ones 2^32; a 2^31 + 4096 uint8 copy crashing)
// and each index path past int32: elementwise chunks, long thin shapes (more rows than work
// groups), reduces with more outputs than work groups, and loads at offsets past 2^31. Buffers
// are 1-byte (2 GiB each) and released before the next case.
#include "kernel/runtime/devices.hpp"
#include "test_util.hpp"

using namespace tt;

namespace {

constexpr int64_t k2p31 = int64_t{1} << 31;

// Element i of a 1-D tensor, read through a one-element view (a load at offset i).
template <class T> T at(const Tensor& t, int64_t i) { return t.shrink({{i, i + 1}}).to_vector<T>().at(0); }

// Positions worth checking in n elements: both ends, and both sides of 2^31.
std::vector<int64_t> probes(int64_t n) {
  std::vector<int64_t> out{0, 1, 255, 256, k2p31 - 1, k2p31, k2p31 + 1, n - 2, n - 1};
  std::erase_if(out, [&](int64_t i) { return i < 0 || i >= n; });
  return out;
}

// Gives each case's 2 GiB back to the system (else the cases' buffers pile up to ~10 GiB): dead
// results are back in the allocator once the next realize has run, and its cache is then freed.
struct ReleaseMemory {
  ~ReleaseMemory() {
    (Tensor::from_vector<float>({1}, {1}) + 1).realize(); // a new buffer: never served from a cache
    tg::open_device("CPU").allocator->free_cache();
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(large_index, ReleaseMemory)

BOOST_AUTO_TEST_CASE(sum_of_ones_past_int32) {
  BOOST_TEST(Tensor::ones({k2p31 + 1}).sum().item<float>() == float(k2p31 + 1));
  BOOST_TEST(Tensor::ones({int64_t{1} << 33}).sum().item<float>() == float(int64_t{1} << 33));
}

BOOST_AUTO_TEST_CASE(reduce_loop_past_int32) {
  // a computed input, one output: one loop of 2^31 + 1 trips (an int32 end wrapped negative)
  const int64_t n = k2p31 + 1;
  Tensor x = Tensor::arange(0, double(n), 1, dtypes::uint8);
  BOOST_TEST(x.eq(x.const_like(7)).cast(dtypes::int64).sum().item<int64_t>() == (n - 1 - 7) / 256 + 1);
}

BOOST_AUTO_TEST_CASE(uint8_copy_past_int32) {
  const int64_t n = k2p31 + 4096;
  {
    Tensor t = Tensor::ones({n}, dtypes::uint8).contiguous().realize();
    for (int64_t i : probes(n)) BOOST_TEST_CONTEXT("element " << i) BOOST_TEST(at<uint8_t>(t, i) == 1);
  }
  // position-dependent contents: a store to the wrong place would show
  Tensor t = Tensor::arange(0, double(n), 1, dtypes::uint8).contiguous().realize();
  for (int64_t i : probes(n))
    BOOST_TEST_CONTEXT("element " << i) BOOST_TEST(int(at<uint8_t>(t, i)) == int(i % 256));
}

BOOST_AUTO_TEST_CASE(long_thin_shape_has_more_rows_than_work_groups) {
  const int64_t n = k2p31 + 8;
  Tensor t = Tensor::arange(0, double(n), 1, dtypes::uint8).reshape({n, 1}).contiguous().realize();
  Tensor flat = t.reshape({n});
  for (int64_t i : probes(n))
    BOOST_TEST_CONTEXT("element " << i) BOOST_TEST(int(at<uint8_t>(flat, i)) == int(i % 256));
}

BOOST_AUTO_TEST_CASE(reduce_with_more_outputs_than_work_groups) {
  // max over pairs: output i = max(2i, 2i + 1) mod 256 = (2i + 1) mod 256
  const int64_t n = k2p31 + 8;
  Tensor x = Tensor::arange(0, double(2 * n), 1, dtypes::uint8).reshape({n, 2});
  Tensor m = x.max({1}).realize();
  for (int64_t i : probes(n))
    BOOST_TEST_CONTEXT("output " << i) BOOST_TEST(int(at<uint8_t>(m, i)) == int((2 * i + 1) % 256));
}

BOOST_AUTO_TEST_CASE(reduce_over_a_buffer_past_int32) {
  // a loaded (not computed) input: the reduce's loads and loop run past 2^31
  const int64_t n = k2p31 + 4096;
  Tensor ones = Tensor::ones({n}, dtypes::bool_).contiguous().realize();
  BOOST_TEST(ones.cast(dtypes::int64).sum().item<int64_t>() == n);
}

// Offsets that reach a kernel as one constant (an integer index, a one-element shrink, a pad of a
// shrink, a gather with a constant index) just past 2^31 and 2^32: an int32 constant crashed
// (2^31 + 4095 became -2147479553) or read the wrapped element (2^32 + 5 read element 5).
BOOST_AUTO_TEST_CASE(constant_offsets_past_int32) {
  const int64_t n = k2p31 + 4096;
  Tensor t = Tensor::arange(0, double(n), 1, dtypes::uint8).contiguous().realize();
  for (int64_t i : {k2p31 - 1, k2p31, k2p31 + 1, k2p31 + 4095}) {
    BOOST_TEST_CONTEXT("element " << i) {
      const int want = int(i % 256);
      BOOST_TEST(t[i].cast(dtypes::int32).item<int32_t>() == want);
      BOOST_TEST(int(t.shrink({{i, i + 1}}).reshape({}).item<uint8_t>()) == want);
      if (i + 2 <= n) {
        auto pair = t.shrink({{i, i + 2}}).pad({{1, 1}}).to_vector<uint8_t>();
        BOOST_TEST(pair == (std::vector<uint8_t>{0, uint8_t(want), uint8_t((i + 1) % 256), 0}),
                   boost::test_tools::per_element());
      }
    }
  }
  Tensor where = Tensor::from_vector<int64_t>({k2p31 + 4095, 3}, {1, 2});
  auto gathered = t.reshape({1, n}).gather(1, where).to_vector<uint8_t>();
  BOOST_TEST(gathered == (std::vector<uint8_t>{255, 3}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(constant_offsets_past_uint32) {
  // zeros, then 16 sevens from 2^32 on: a wrapped offset reads a zero
  const int64_t head = int64_t{1} << 32;
  Tensor t = Tensor::cat({Tensor::zeros({head}, dtypes::uint8), Tensor::full({16}, 7, dtypes::uint8)})
                 .contiguous()
                 .realize();
  for (int64_t i : {head, head + 5, head + 15}) {
    BOOST_TEST_CONTEXT("element " << i) {
      BOOST_TEST(t[i].cast(dtypes::int32).item<int32_t>() == 7);
      BOOST_TEST(int(t.shrink({{i, i + 1}}).reshape({}).item<uint8_t>()) == 7);
    }
  }
  BOOST_TEST(int(t[head - 1].item<uint8_t>()) == 0);
  auto padded = t.shrink({{head - 1, head + 1}}).pad({{1, 1}}).to_vector<uint8_t>();
  BOOST_TEST(padded == (std::vector<uint8_t>{0, 0, 7, 0}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()
