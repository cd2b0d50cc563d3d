// The plugin contract as the host keeps it: calls on one device never overlap (the host
// serializes them), calls on two devices may; plugin strings are bounded whether or not they end;
// answers the ABI forbids are typed errors; compile_cache_key grows its buffer and retries.
#include "kernel/runtime/device.hpp"

#include <boost/test/unit_test.hpp>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;
using namespace tg;

namespace {

std::shared_ptr<Plugin> load_fixture(const std::string& name) {
  return Plugin::load(fs::path(TG_FIXTURE_DIR) / ("libtg_device_" + name + ".so"));
}

// The counting fixture's counters, read through its device attributes.
long counter(const Device& device, const std::string& key) {
  for (const auto& [k, v] : device.attributes())
    if (k == key) return std::stol(v);
  BOOST_FAIL("the counting fixture reports no attribute " << key);
  return -1;
}

std::span<const std::byte> blob(const char* text) {
  return std::as_bytes(std::span(text, std::strlen(text)));
}

} // namespace

BOOST_AUTO_TEST_SUITE(plugin_contract)

BOOST_AUTO_TEST_CASE(host_serializes_calls_on_one_device) {
  auto device = Device::open(load_fixture("counting"), 0);
  Program program = device->load(blob("work"));
  constexpr int threads = 8, rounds = 10;
  std::vector<std::thread> workers;
  std::vector<int> bumps(threads, -1);
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      unsigned char value = 0;
      for (int r = 0; r < rounds; ++r) {
        Buffer a = device->alloc(16), b = device->alloc(16);
        a.copy_from_host(std::as_bytes(std::span(&value, 1)));
        b.copy_from(a, 1);
        tg_buffer_arg arg{b.raw(), 0};
        program.launch({}, std::span(&arg, 1)); // the fixture adds 1 to the first byte
        device->synchronize();
        b.copy_to_host(std::as_writable_bytes(std::span(&value, 1)));
      } // a and b are freed here, also calls on the device
      bumps[size_t(t)] = value;
    });
  for (auto& w : workers) w.join();
  // Nine calls per round and thread (2 allocs, 3 copies, launch, synchronize, 2 frees), all alone.
  BOOST_TEST(counter(*device, "max_in_flight") == 1);
  for (int b : bumps) BOOST_TEST(b == rounds); // every launch saw its own buffer
  BOOST_TEST(counter(*device, "calls") >= long(threads * rounds * 9));
}

BOOST_AUTO_TEST_CASE(calls_on_two_devices_may_overlap) {
  auto plugin = load_fixture("counting");
  auto d0 = Device::open(plugin, 0), d1 = Device::open(plugin, 1);
  // Each launch waits (up to 5 s) until a call on the other device is in flight too.
  Program p0 = d0->load(blob("rendezvous")), p1 = d1->load(blob("rendezvous"));
  std::thread other([&] { p1.launch({}, {}); });
  p0.launch({}, {});
  other.join();
  BOOST_TEST(counter(*d0, "max_in_flight_all_devices") == 2); // a global lock would make this 1
  BOOST_TEST(counter(*d0, "max_in_flight") == 1);
  BOOST_TEST(counter(*d1, "max_in_flight") == 1);
}

BOOST_AUTO_TEST_CASE(cache_key_starts_at_256_bytes_and_retries_with_the_reported_length) {
  auto plugin = load_fixture("counting");
  auto device = Device::open(plugin, 0);
  long calls_before = counter(*device, "cache_key_calls");
  std::string key = plugin->cache_key();
  BOOST_TEST(key.size() == 300u);
  BOOST_TEST(key == "mock-key:" + std::string(291, 'k'));
  BOOST_TEST(counter(*device, "cache_key_first_buffer") == long(kInitialCacheKeyBuffer));
  BOOST_TEST(kInitialCacheKeyBuffer == 256u);                          // docs/abi.md 3.4 promises this size
  BOOST_TEST(counter(*device, "cache_key_calls") - calls_before == 2); // too small once, then fits
}

BOOST_AUTO_TEST_CASE(strings_without_nul_are_bounded) {
  auto plugin = load_fixture("nonul");
  BOOST_TEST(plugin->name() == std::string(kMaxPluginNameLength, 'P'));
  BOOST_TEST(plugin->version().size() == kMaxPluginNameLength);
  BOOST_TEST(plugin->build_info() == std::string(kMaxPluginTextLength, 'T'));

  auto device = Device::open(plugin, 0);
  const auto& p = device->properties();
  BOOST_TEST(std::string(p.name) == std::string(TG_NAME_MAX - 1, 'N'));
  BOOST_TEST(std::string(p.vendor) == std::string(TG_NAME_MAX - 1, 'V'));
  BOOST_TEST(std::string(p.arch) == std::string(TG_NAME_MAX - 1, 'A'));
  BOOST_TEST(p.struct_size == sizeof(tg_device_properties));

  auto attributes = device->attributes();
  BOOST_REQUIRE(attributes.size() == 1u);
  BOOST_TEST(attributes[0].first.size() == kMaxPluginTextLength);
  BOOST_TEST(attributes[0].second.size() == kMaxPluginTextLength);

  // The fixture fills the key buffer without a NUL and claims 100 bytes more than it holds.
  BOOST_TEST(plugin->cache_key() == std::string(kInitialCacheKeyBuffer, 'K'));

  Buffer buffer = device->alloc(4);
  std::byte data[8] = {};
  try {
    buffer.copy_from_host(data); // 8 bytes into 4: the fixture's error has no NUL anywhere
    BOOST_FAIL("an out-of-range copy must throw");
  } catch (const InvalidArgumentError& e) {
    BOOST_TEST(e.log() == std::string(kMaxPluginLogLength, 'L'));
    std::string what = e.what();
    std::string prefix = plugin->name() + ".buffer_copy_from_host failed (INVALID_ARGUMENT): ";
    BOOST_TEST(what == prefix + std::string(kMaxPluginTextLength, 'T') + "\n" + e.log());
  }
}

BOOST_AUTO_TEST_CASE(negative_device_count_is_a_contract_error_naming_the_plugin) {
  auto plugin = load_fixture("lies");
  try {
    plugin->device_count();
    BOOST_FAIL("a negative device count must throw");
  } catch (const PluginContractError& e) {
    std::string what = e.what();
    BOOST_TEST(e.code() == TG_ERROR_INTERNAL);
    BOOST_TEST(what.find("mock (") == 0u, what);
    BOOST_TEST(what.find("libtg_device_lies.so") != std::string::npos, what);
    BOOST_TEST(what.find("device_count reported -3 devices") != std::string::npos, what);
  }
  BOOST_CHECK_THROW(Device::open(plugin, 0), PluginContractError);
}

BOOST_AUTO_TEST_CASE(absurd_cache_key_length_is_a_contract_error) {
  auto plugin = load_fixture("lies");
  try {
    plugin->cache_key();
    BOOST_FAIL("a cache key of SIZE_MAX bytes must throw");
  } catch (const PluginContractError& e) {
    std::string what = e.what();
    BOOST_TEST(what.find("compile_cache_key reported a 18446744073709551615-byte key") != std::string::npos,
               what);
  }
}

BOOST_AUTO_TEST_CASE(buffer_copy_between_two_devices_is_refused) {
  auto plugin = load_fixture("counting");
  auto d0 = Device::open(plugin, 0), d1 = Device::open(plugin, 1);
  Buffer a = d0->alloc(8), b = d1->alloc(8);
  try {
    a.copy_from(b, 8);
    BOOST_FAIL("a copy across devices must throw");
  } catch (const InvalidArgumentError& e) {
    BOOST_TEST(std::string(e.what()).find("source buffer is on another device") != std::string::npos);
  }
}

BOOST_AUTO_TEST_SUITE_END()
