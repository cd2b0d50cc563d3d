// Zero-copy exchange with other libraries on the CPU device (ABI 1.3 buffer_address and
// buffer_import): a realized tensor's memory read through its address, a tensor computed over
// memory the test owns, writes on either side seen by the other, the owner's release run once when
// the tensor's buffer dies, and nullopt from a plugin built against the 1.2 header.
#include "kernel/runtime/devices.hpp"
#include "kernel/runtime/plugin_lifetime.hpp"
#include "kernel/tensor/external.hpp"

#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

using tg::Tensor;
namespace dtypes = tg::dtypes;

namespace {

// A realize of a new expression: the point where dead results give their buffers back.
void next_realize() { (Tensor::from_vector<float>({1}, {1}) + 1).realize(); }

std::vector<float> read_floats(const tg::MemoryView& view) {
  const auto* p = reinterpret_cast<const float*>(uintptr_t(view.address));
  int64_t n = 1;
  for (auto d : view.shape) n *= d;
  return {p, p + n};
}

// 64-byte aligned host memory (the CPU device's buffer_alignment), freed by the deleter.
struct Aligned {
  explicit Aligned(size_t floats)
      : data(static_cast<float*>(std::aligned_alloc(64, (floats * sizeof(float) + 63) / 64 * 64))) {}
  ~Aligned() { std::free(data); }
  Aligned(const Aligned&) = delete;
  Aligned& operator=(const Aligned&) = delete;
  uint64_t address() const { return reinterpret_cast<uintptr_t>(data); }
  float* data;
};

} // namespace

BOOST_AUTO_TEST_SUITE(external_memory)

BOOST_AUTO_TEST_CASE(memory_view_reads_a_computed_tensor_through_its_address) {
  Tensor t = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}, {}, "CPU") * 2 + 1;
  auto view = tg::memory_view(t);
  BOOST_REQUIRE(view.has_value());
  BOOST_TEST(view->host);
  BOOST_TEST(view->device == "CPU");
  BOOST_TEST(view->plugin == "cpu");
  BOOST_TEST(view->device_index == 0);
  BOOST_TEST(view->dtype == dtypes::float32);
  BOOST_TEST(view->shape == (tg::Dims{2, 3}), boost::test_tools::per_element());
  BOOST_TEST(view->address % 64 == 0u);
  BOOST_TEST(read_floats(*view) == (std::vector<float>{3, 5, 7, 9, 11, 13}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(memory_view_of_a_strided_view_is_a_contiguous_copy) {
  Tensor t = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}, {}, "CPU");
  auto view = tg::memory_view(t.permute({1, 0}));
  BOOST_REQUIRE(view.has_value());
  BOOST_TEST(view->shape == (tg::Dims{3, 2}), boost::test_tools::per_element());
  BOOST_TEST(read_floats(*view) == (std::vector<float>{1, 4, 2, 5, 3, 6}), boost::test_tools::per_element());
  auto part = tg::memory_view(t.shrink({{1, 2}, {0, 3}}));
  BOOST_REQUIRE(part.has_value());
  BOOST_TEST(read_floats(*part) == (std::vector<float>{4, 5, 6}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_memory_view_shares_the_tensors_memory_and_outlives_it) {
  std::optional<tg::MemoryView> view;
  {
    Tensor t = Tensor::from_vector<int32_t>({10, 20, 30, 40}, {4}, {}, "CPU");
    view = tg::memory_view(t);
    BOOST_REQUIRE(view.has_value());
    BOOST_TEST(view->dtype == dtypes::int32);
    reinterpret_cast<int32_t*>(uintptr_t(view->address))[1] = -5; // no copy: the tensor sees it
    BOOST_TEST(t.to_vector<int32_t>() == (std::vector<int32_t>{10, -5, 30, 40}),
               boost::test_tools::per_element());
  }
  next_realize();
  // The owner keeps the memory: it is neither freed nor handed to another tensor.
  (Tensor::from_vector<int32_t>({1, 1, 1, 1}, {4}, {}, "CPU") + 1).realize();
  const auto* p = reinterpret_cast<const int32_t*>(uintptr_t(view->address));
  BOOST_TEST(std::vector<int32_t>(p, p + 4) == (std::vector<int32_t>{10, -5, 30, 40}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_zero_element_tensor_has_no_memory_view) {
  BOOST_TEST(!tg::memory_view(Tensor::from_vector(std::vector<float>{}, {0, 3}, {}, "CPU")).has_value());
}

BOOST_AUTO_TEST_CASE(a_tensor_over_foreign_memory_computes_without_a_copy) {
  Aligned memory(6);
  for (int i = 0; i < 6; ++i) memory.data[i] = float(i);
  int released = 0;
  {
    auto x = tg::tensor_from_memory(memory.address(), {2, 3}, dtypes::float32, "CPU", [&] { ++released; });
    BOOST_REQUIRE(x.has_value());
    BOOST_TEST(x->shape() == (tg::Dims{2, 3}), boost::test_tools::per_element());
    BOOST_TEST(x->device() == "CPU");
    BOOST_TEST((*x * 2).to_vector<float>() == (std::vector<float>{0, 2, 4, 6, 8, 10}),
               boost::test_tools::per_element());
    // Its memory is the caller's: the address comes back, and writes there show in the tensor.
    auto view = tg::memory_view(*x);
    BOOST_REQUIRE(view.has_value());
    BOOST_TEST(view->address == memory.address());
    memory.data[0] = 100;
    BOOST_TEST((*x + 1).to_vector<float>() == (std::vector<float>{101, 2, 3, 4, 5, 6}),
               boost::test_tools::per_element());
    BOOST_TEST(x->sum().item<float>() == 115.0f);
    view.reset();
    BOOST_TEST(released == 0);
  }
  next_realize();
  BOOST_TEST(released == 1);
  next_realize();
  BOOST_TEST(released == 1);
}

BOOST_AUTO_TEST_CASE(a_misaligned_address_gives_nullopt_and_keeps_the_release) {
  Aligned memory(32);
  bool released = false;
  auto x =
      tg::tensor_from_memory(memory.address() + 4, {4}, dtypes::float32, "CPU", [&] { released = true; });
  BOOST_TEST(!x.has_value());
  BOOST_TEST(!released);
  BOOST_CHECK_THROW(tg::tensor_from_memory(0, {4}, dtypes::float32, "CPU", {}), tg::TensorError);
  BOOST_CHECK_THROW(tg::tensor_from_memory(memory.address(), {-1}, dtypes::float32, "CPU", {}),
                    tg::TensorError);
}

BOOST_AUTO_TEST_CASE(an_empty_tensor_over_foreign_memory) {
  bool released = false;
  {
    auto x = tg::tensor_from_memory(0, {0, 4}, dtypes::float32, "CPU", [&] { released = true; });
    BOOST_REQUIRE(x.has_value());
    BOOST_TEST(x->numel() == 0);
    BOOST_TEST((*x + 1).to_vector<float>().empty());
  }
  next_realize();
  BOOST_TEST(released);
}

// The owner's release runs outside the device's call lock: here it frees another buffer of the same
// device, which would wait forever for that lock if it ran inside buffer_free.
BOOST_AUTO_TEST_CASE(a_release_may_free_buffers_of_the_same_device) {
  auto device = tg::open_device("CPU").device;
  BOOST_REQUIRE(device->can_import());
  Aligned memory(16);
  auto other = std::make_shared<tg::Buffer>(device->alloc(64));
  bool released = false;
  {
    tg::Buffer imported = device->import(memory.address(), 64, [&, other]() mutable {
      other.reset();
      released = true;
    });
    BOOST_TEST(imported.address().value_or(0) == memory.address());
    other.reset(); // the release holds the last reference now
  }
  BOOST_TEST(released);
}

// A device whose plugin lacks the 1.3 entries (built against the frozen 1.2 header): nullopt from
// both, release never run; the caller copies instead.
BOOST_AUTO_TEST_CASE(a_plugin_without_the_entries_gives_nullopt) {
  const std::string name = tg::load_plugin(TG_COMPAT_V1_2_PLUGIN);
  const std::string device = tg::parse_device_name(name).canonical();
  {
    Tensor t = Tensor::from_vector<float>({1, 2, 3, 4}, {4}, {}, device);
    BOOST_TEST(!tg::memory_view(t).has_value());
    Aligned memory(16);
    bool released = false;
    BOOST_TEST(!tg::tensor_from_memory(memory.address(), {4}, dtypes::float32, device, [&] {
                  released = true;
                }).has_value());
    BOOST_TEST(!released);
  }
  tg::unload_plugin(name);
}

BOOST_AUTO_TEST_SUITE_END()
