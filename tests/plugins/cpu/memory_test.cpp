#include "plugin_fixture.hpp"

#include <buffer.hpp> // plugins/cpu: white-box view of the plugin's buffer

#include <algorithm>

#include <cstdint>
#include <numeric>

using namespace tgtest;

namespace {

std::vector<uint8_t> pattern(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  uint32_t x = seed;
  for (auto& b : v) {
    x = x * 1664525u + 1013904223u;
    b = uint8_t(x >> 24);
  }
  return v;
}

// Host -> device, device -> device, device -> host, and compare.
void round_trip(const Device& device, size_t n) {
  auto data = pattern(n, uint32_t(n) + 1);
  Buffer a(device, n), b(device, n);
  BOOST_CHECK_EQUAL(reinterpret_cast<uintptr_t>(a.get()) != 0, true);
  a.upload(data);
  check(api().buffer_copy(b.get(), 0, a.get(), 0, n), "buffer_copy");
  auto back = b.download<uint8_t>(n);
  BOOST_REQUIRE_EQUAL(back.size(), n);
  BOOST_CHECK(n == 0 || std::memcmp(back.data(), data.data(), n) == 0);
}

} // namespace

BOOST_AUTO_TEST_SUITE(cpu_memory)

BOOST_AUTO_TEST_CASE(round_trips_small_and_odd_sizes) {
  Device device;
  for (size_t n : {size_t(0), size_t(1), size_t(7), size_t(64), size_t(4099)}) {
    BOOST_TEST_CONTEXT("size " << n) { round_trip(device, n); }
  }
}

BOOST_AUTO_TEST_CASE(round_trip_256_mib) {
  Device device;
  round_trip(device, size_t(256) << 20);
}

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

BOOST_AUTO_TEST_CASE(out_of_range_copies_are_invalid) {
  Device device;
  Buffer a(device, 100), b(device, 50);
  std::vector<uint8_t> host(200, 1);
  Status s = take(api().buffer_copy_from_host(a.get(), 90, host.data(), 11));
  BOOST_CHECK_EQUAL(s.code, TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK(s.message.find("90") != std::string::npos);
  BOOST_CHECK(s.message.find("100") != std::string::npos);
  BOOST_CHECK(s.message.find("buffer_copy_from_host") != std::string::npos);
  BOOST_CHECK_EQUAL(take(api().buffer_copy_to_host(a.get(), 101, host.data(), 0)).code,
                    TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK_EQUAL(take(api().buffer_copy_to_host(a.get(), 0, host.data(), 101)).code,
                    TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK_EQUAL(take(api().buffer_copy_to_host(a.get(), UINT64_MAX, host.data(), 2)).code,
                    TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK_EQUAL(take(api().buffer_copy_from_host(a.get(), 1, host.data(), UINT64_MAX)).code,
                    TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK_EQUAL(take(api().buffer_copy(b.get(), 0, a.get(), 0, 51)).code, TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK_EQUAL(take(api().buffer_copy(a.get(), 0, b.get(), 10, 41)).code, TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK_EQUAL(take(api().buffer_copy_from_host(a.get(), 0, nullptr, 4)).code,
                    TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK_EQUAL(take(api().buffer_copy_from_host(nullptr, 0, host.data(), 4)).code,
                    TG_ERROR_INVALID_ARGUMENT);
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

BOOST_AUTO_TEST_CASE(huge_allocation_is_resource_exhausted_then_recovers) {
  Device device;
  tg_buffer_alloc_args args{sizeof(args), uint64_t(1) << 60, 0, 0, 0};
  tg_buffer* buf = nullptr;
  Status s = take(api().buffer_alloc(device.get(), &args, &buf));
  BOOST_CHECK_EQUAL(s.code, TG_ERROR_RESOURCE_EXHAUSTED);
  BOOST_CHECK(buf == nullptr);
  args.size = device.properties().memory_bytes + 1;
  BOOST_CHECK_EQUAL(take(api().buffer_alloc(device.get(), &args, &buf)).code, TG_ERROR_RESOURCE_EXHAUSTED);
  round_trip(device, 4096);
}

BOOST_AUTO_TEST_SUITE_END()
