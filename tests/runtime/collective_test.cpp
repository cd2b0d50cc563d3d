// The collectives of kernel/runtime/collective.hpp on the CPU plugin's logical devices
// CPU:0..CPU:3, against hand-computed results: every dtype (half and bfloat16 by their bit
// patterns), in-place all-reduce sum and max, all-gather, broadcast, copies between devices at
// offsets, and the argument checks.
#include "kernel/runtime/collective.hpp"
#include "kernel/runtime/devices.hpp"
#include "kernel/runtime/errors.hpp"

#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace tg;
using namespace tg::dtypes;

constexpr int kDevices = 4;

std::shared_ptr<Device> cpu(int i) { return open_device("CPU:" + std::to_string(i)).device; }

template <class T> Buffer upload(int device, const std::vector<T>& values, uint64_t extra_bytes = 0) {
  Buffer b = cpu(device)->alloc(values.size() * sizeof(T) + extra_bytes);
  std::vector<std::byte> bytes(b.size());
  std::memcpy(bytes.data(), values.data(), values.size() * sizeof(T));
  b.copy_from_host(bytes);
  return b;
}

template <class T> std::vector<T> download(const Buffer& b, size_t count, uint64_t offset = 0) {
  std::vector<T> out(count);
  b.copy_to_host({reinterpret_cast<std::byte*>(out.data()), count * sizeof(T)}, offset);
  return out;
}

std::vector<GroupBuffer> group(std::vector<Buffer>& buffers, uint64_t offset = 0) {
  std::vector<GroupBuffer> g;
  for (Buffer& b : buffers) g.push_back({&b, offset});
  return g;
}

// Every device i holds {i+1, i+1}; the sum is 10 and the max 4 in every dtype.
template <class T> void sum_and_max_of_one_to_four(DType dtype, std::vector<T> one_to_four, T ten) {
  for (CollectiveReduce op : {CollectiveReduce::sum, CollectiveReduce::max}) {
    std::vector<Buffer> buffers;
    for (int i = 0; i < kDevices; ++i)
      buffers.push_back(upload<T>(i, {one_to_four[size_t(i)], one_to_four[size_t(i)]}));
    all_reduce(group(buffers), dtype, 2, op);
    T want = op == CollectiveReduce::sum ? ten : one_to_four[3];
    for (int i = 0; i < kDevices; ++i)
      for (T got : download<T>(buffers[size_t(i)], 2))
        BOOST_TEST(got == want, dtype.name()
                                    << (op == CollectiveReduce::sum ? " sum" : " max") << " on CPU:" << i);
  }
}

} // namespace

BOOST_AUTO_TEST_CASE(the_cpu_plugin_has_four_logical_devices_by_default) {
  BOOST_TEST(cpu(0)->plugin().device_count() >= kDevices);
  BOOST_TEST(cpu(3)->index() == 3);
  BOOST_TEST(cpu(1) != cpu(2));
}

BOOST_AUTO_TEST_CASE(all_reduce_sum_and_max_in_every_dtype) {
  sum_and_max_of_one_to_four<int8_t>(int8, {1, 2, 3, 4}, 10);
  sum_and_max_of_one_to_four<uint8_t>(uint8, {1, 2, 3, 4}, 10);
  sum_and_max_of_one_to_four<int16_t>(int16, {1, 2, 3, 4}, 10);
  sum_and_max_of_one_to_four<uint16_t>(uint16, {1, 2, 3, 4}, 10);
  sum_and_max_of_one_to_four<int32_t>(int32, {1, 2, 3, 4}, 10);
  sum_and_max_of_one_to_four<uint32_t>(uint32, {1, 2, 3, 4}, 10);
  sum_and_max_of_one_to_four<int64_t>(int64, {1, 2, 3, 4}, 10);
  sum_and_max_of_one_to_four<uint64_t>(uint64, {1, 2, 3, 4}, 10);
  sum_and_max_of_one_to_four<float>(float32, {1, 2, 3, 4}, 10);
  sum_and_max_of_one_to_four<double>(float64, {1, 2, 3, 4}, 10);
  // IEEE half 1, 2, 3, 4 and 10; bfloat16 the same (the top half of the float32 bits).
  sum_and_max_of_one_to_four<uint16_t>(float16, {0x3C00, 0x4000, 0x4200, 0x4400}, 0x4900);
  sum_and_max_of_one_to_four<uint16_t>(bfloat16, {0x3F80, 0x4000, 0x4040, 0x4080}, 0x4120);
}

BOOST_AUTO_TEST_CASE(all_reduce_of_mixed_values_wraps_integers_and_ors_bools) {
  std::vector<Buffer> f, i8, b;
  for (int i = 0; i < kDevices; ++i) {
    f.push_back(upload<float>(i, {float(i + 1), 10.0f * float(i + 1), -float(i), 0.5f}));
    i8.push_back(upload<int8_t>(i, {100, int8_t(-100 + i)}));
    b.push_back(upload<uint8_t>(i, {uint8_t(i == 2), 0}));
  }
  all_reduce(group(f), float32, 4, CollectiveReduce::sum);
  all_reduce(group(i8), int8, 2, CollectiveReduce::sum);
  all_reduce(group(b), bool_, 2, CollectiveReduce::sum);
  for (int i = 0; i < kDevices; ++i) {
    BOOST_TEST(download<float>(f[size_t(i)], 4) == (std::vector<float>{10, 100, -6, 2}),
               boost::test_tools::per_element());
    // 400 = 144 mod 256 -> -112; -400 + 6 = -394 = 118 mod 256.
    BOOST_TEST(download<int8_t>(i8[size_t(i)], 2) == (std::vector<int8_t>{-112, 118}),
               boost::test_tools::per_element());
    BOOST_TEST(download<uint8_t>(b[size_t(i)], 2) == (std::vector<uint8_t>{1, 0}),
               boost::test_tools::per_element());
  }
}

BOOST_AUTO_TEST_CASE(all_reduce_of_a_group_of_three_at_an_offset_leaves_the_rest) {
  std::vector<Buffer> buffers;
  for (int i = 0; i < 3; ++i) buffers.push_back(upload<int32_t>(i + 1, {-1, i, 10 * i, -1}));
  all_reduce(group(buffers, 4), int32, 2, CollectiveReduce::max);
  for (Buffer& b : buffers)
    BOOST_TEST(download<int32_t>(b, 4) == (std::vector<int32_t>{-1, 2, 20, -1}),
               boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(all_gather_concatenates_in_group_order) {
  std::vector<Buffer> inputs, outputs;
  for (int i = 0; i < kDevices; ++i) {
    inputs.push_back(upload<int64_t>(i, {int64_t(i) << 40, -int64_t(i)}));
    outputs.push_back(upload<int64_t>(i, std::vector<int64_t>(2 * kDevices + 1, 7)));
  }
  all_gather(group(inputs), group(outputs, 8), int64, 2);
  std::vector<int64_t> want{7, 0, 0, int64_t(1) << 40, -1, int64_t(2) << 40, -2, int64_t(3) << 40, -3};
  for (Buffer& out : outputs)
    BOOST_TEST(download<int64_t>(out, want.size()) == want, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(broadcast_copies_the_roots_buffer_to_the_others) {
  std::vector<Buffer> buffers;
  for (int i = 0; i < kDevices; ++i)
    buffers.push_back(upload<uint16_t>(i, {uint16_t(i), uint16_t(100 + i), 9}));
  broadcast(group(buffers), 2, uint16, 2);
  for (Buffer& b : buffers)
    BOOST_TEST(download<uint16_t>(b, 3) == (std::vector<uint16_t>{2, 102, 9}),
               boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(copy_between_devices_at_offsets) {
  Buffer src = upload<double>(0, {1.5, 2.5, 3.5});
  Buffer dst = upload<double>(3, {0, 0, 0, 0});
  copy_between_devices({&dst, 8}, {&src, 8}, 16);
  BOOST_TEST(download<double>(dst, 4) == (std::vector<double>{0, 2.5, 3.5, 0}),
             boost::test_tools::per_element());
  Buffer same = upload<double>(3, {9, 9});
  copy_between_devices({&same, 0}, {&dst, 8}, 16); // one device: the plugin's own copy
  BOOST_TEST(download<double>(same, 2) == (std::vector<double>{2.5, 3.5}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(bad_groups_are_invalid_arguments_and_change_nothing) {
  std::vector<Buffer> buffers;
  for (int i = 0; i < 2; ++i) buffers.push_back(upload<float>(i, {1, 2}));
  buffers.push_back(upload<float>(1, {5, 6})); // a second buffer on CPU:1
  auto g = group(buffers);
  BOOST_CHECK_THROW(all_reduce(g, float32, 2, CollectiveReduce::sum), InvalidArgumentError);
  std::vector<GroupBuffer> two(g.begin(), g.begin() + 2);
  BOOST_CHECK_THROW(all_reduce(two, float32, 3, CollectiveReduce::sum), InvalidArgumentError); // past the end
  BOOST_CHECK_THROW(all_reduce({}, float32, 1, CollectiveReduce::sum), InvalidArgumentError);
  BOOST_CHECK_THROW(all_reduce(two, float32.ptr_to(), 1, CollectiveReduce::sum), InvalidArgumentError);
  BOOST_CHECK_THROW(broadcast(two, 2, float32, 1), InvalidArgumentError);
  BOOST_CHECK_THROW(all_gather(two, two, float32, 2), InvalidArgumentError); // outputs too small
  BOOST_CHECK_THROW(copy_between_devices({&buffers[0], 4}, {&buffers[1], 0}, 8), InvalidArgumentError);
  for (size_t i = 0; i < 2; ++i)
    BOOST_TEST(download<float>(buffers[i], 2) == (std::vector<float>{1, 2}),
               boost::test_tools::per_element());
}
