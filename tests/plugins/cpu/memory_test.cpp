// CPU-specific memory behaviour; the generic rules (sizes, copies, ranges, exhaustion) are `tg conform`'s
// memory/* cases.
#include "plugin_fixture.hpp"

#include <buffer.hpp> // plugins/cpu: white-box view of the plugin's buffer

#include <algorithm>

#include <cstdint>
#include <numeric>

using namespace tgtest;

BOOST_AUTO_TEST_SUITE(cpu_memory)

BOOST_AUTO_TEST_CASE(offsets) {
  Device device;
  Buffer buf(device, 100);
  std::vector<uint8_t> zeros(100, 0);
  buf.upload(zeros);
  std::vector<uint8_t> mid = {1, 2, 3, 4, 5};
  buf.upload(mid, 40);
  auto all = buf.download<uint8_t>(100);
  for (size_t i = 0; i < 100; ++i) BOOST_CHECK_EQUAL(int(all[i]), i >= 40 && i < 45 ? int(i - 39) : 0);
  auto part = buf.download<uint8_t>(3, 41);
  BOOST_CHECK_EQUAL(int(part[0]), 2);
  BOOST_CHECK_EQUAL(int(part[2]), 4);
  // device -> device with offsets, overlapping inside one buffer
  check(api().buffer_copy(buf.get(), 42, buf.get(), 40, 5));
  auto moved = buf.download<uint8_t>(7, 40);
  std::vector<uint8_t> want = {1, 2, 1, 2, 3, 4, 5};
  BOOST_CHECK_EQUAL_COLLECTIONS(moved.begin(), moved.end(), want.begin(), want.end());
  // a copy that ends exactly at the end is fine; an empty copy at the end too
  std::vector<uint8_t> tail(10, 9);
  buf.upload(tail, 90);
  check(api().buffer_copy_to_host(buf.get(), 100, nullptr, 0));
}

BOOST_AUTO_TEST_CASE(buffers_are_aligned) {
  Device device;
  // White-box: the ABI hides the host address, so look inside the plugin's own buffer.
  for (uint64_t size : {uint64_t(0), uint64_t(1), uint64_t(33), uint64_t(4099)}) {
    for (uint64_t alignment : {uint64_t(0), uint64_t(16), uint64_t(64), uint64_t(128), uint64_t(4096)}) {
      BOOST_TEST_CONTEXT("size " << size << ", alignment " << alignment) {
        Buffer b(device, size, alignment);
        const auto& inside = static_cast<tg::cpu::Buffer&>(tg::sdk::buffer_object(b.get()));
        auto address = reinterpret_cast<uintptr_t>(inside.data());
        BOOST_CHECK(address != 0);
        BOOST_CHECK_EQUAL(address % std::max<uint64_t>(64, alignment), 0u);
        BOOST_CHECK_EQUAL(inside.size(), size);
      }
    }
  }
  tg_buffer_alloc_args bad{sizeof(bad), 16, 48, 0, 0};
  tg_buffer* buf = nullptr;
  BOOST_CHECK_EQUAL(take(api().buffer_alloc(device.get(), &bad, &buf)).code, TG_ERROR_INVALID_ARGUMENT);
}

BOOST_AUTO_TEST_SUITE_END()
