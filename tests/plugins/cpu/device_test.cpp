#include "plugin_fixture.hpp"

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <map>

using namespace tgtest;

// The CPU device's own values; the generic property, struct_size and open rules are `tg conform`'s
// loader/* and device/* cases.
BOOST_AUTO_TEST_SUITE(cpu_device)

BOOST_AUTO_TEST_CASE(query_rejects_bad_hosts) {
  tg_plugin_query_fn query = query_fn();
  BOOST_REQUIRE(query != nullptr);
  BOOST_CHECK(query(nullptr) == nullptr);
  tg_host_info wrong_major{sizeof(tg_host_info), TG_ABI_VERSION_MAJOR + 1, 0, "future host"};
  BOOST_CHECK(query(&wrong_major) == nullptr);
  tg_host_info tiny{sizeof(size_t), TG_ABI_VERSION_MAJOR, 0, "tiny"};
  BOOST_CHECK(query(&tiny) == nullptr);
  tg_host_info good{sizeof(tg_host_info), TG_ABI_VERSION_MAJOR, TG_ABI_VERSION_MINOR, "tests"};
  const tg_plugin_api* table = query(&good);
  BOOST_REQUIRE(table != nullptr);
  BOOST_CHECK_EQUAL(table->struct_size, sizeof(tg_plugin_api));
  BOOST_CHECK_EQUAL(table->abi_major, uint32_t(TG_ABI_VERSION_MAJOR));
  BOOST_CHECK_EQUAL(std::string(table->plugin_name), "cpu");
}

BOOST_AUTO_TEST_CASE(logical_devices_with_sane_properties) {
  int32_t count = -1;
  check(api().device_count(&count));
  const char* env = std::getenv("TG_CPU_DEVICES"); // CPU:0 .. CPU:N-1, N = 4 unless set
  BOOST_CHECK_EQUAL(count, env != nullptr && *env != '\0' ? std::atoi(env) : 4);
  Device device;
  tg_device_properties p = device.properties();
  BOOST_CHECK_EQUAL(p.struct_size, sizeof(tg_device_properties));
  BOOST_CHECK(std::string(p.name).find("threads") != std::string::npos);
  BOOST_CHECK(std::strlen(p.vendor) > 0);
  BOOST_CHECK(std::strlen(p.arch) > 0);
  BOOST_CHECK_GT(p.memory_bytes, uint64_t(1) << 28);
  BOOST_CHECK_EQUAL(p.buffer_alignment, 64u);
  BOOST_CHECK_GE(p.max_local_threads, 256u);
  BOOST_CHECK_GE(p.compute_units, 1u);
  BOOST_CHECK_EQUAL(p.local_memory_bytes, 0u);
  for (tg_dtype d = TG_DTYPE_BOOL; d < TG_DTYPE_COUNT; ++d) BOOST_CHECK(p.dtype_mask & TG_DTYPE_BIT(d));
  BOOST_CHECK(p.features & TG_FEATURE_TIMING);
  BOOST_CHECK(p.features & TG_FEATURE_HOST_MEMORY);
  BOOST_CHECK(!(p.features & TG_FEATURE_BARRIER));
  BOOST_CHECK(!(p.features & TG_FEATURE_LOCAL_MEMORY));
  BOOST_CHECK(!(p.features & TG_FEATURE_ASYNC));
  check(api().synchronize(device.get()));
}

BOOST_AUTO_TEST_CASE(attributes) {
  Device device;
  int32_t count = 0;
  check(api().device_attribute_count(device.get(), &count));
  std::map<std::string, std::string> attrs;
  for (int32_t i = 0; i < count; ++i) {
    const char* key = nullptr;
    const char* value = nullptr;
    check(api().device_attribute(device.get(), i, &key, &value));
    attrs[key] = value;
  }
  BOOST_CHECK_EQUAL(attrs["llvm_version"].substr(0, 3), "14.");
  BOOST_CHECK(attrs["target_triple"].find("x86_64") != std::string::npos);
  BOOST_CHECK_EQUAL(attrs["cpu_name"], std::string(device.properties().arch));
  BOOST_CHECK(!attrs["cpu_features"].empty());
  const char* key = nullptr;
  const char* value = nullptr;
  BOOST_CHECK_EQUAL(take(api().device_attribute(device.get(), count, &key, &value)).code, TG_ERROR_NOT_FOUND);
  BOOST_CHECK_EQUAL(take(api().device_attribute(device.get(), -1, &key, &value)).code, TG_ERROR_NOT_FOUND);
}

BOOST_AUTO_TEST_SUITE_END()

// The bad count names the variable (device_count fails; nothing else reads it).
BOOST_AUTO_TEST_CASE(a_bad_device_count_names_the_variable) {
  const char* old = std::getenv("TG_CPU_DEVICES");
  std::string saved = old != nullptr ? old : "";
  setenv("TG_CPU_DEVICES", "0", 1);
  int32_t count = -1;
  Status s = take(api().device_count(&count));
  if (old != nullptr)
    setenv("TG_CPU_DEVICES", saved.c_str(), 1);
  else
    unsetenv("TG_CPU_DEVICES");
  BOOST_CHECK_EQUAL(s.code, TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK(s.message.find("TG_CPU_DEVICES") != std::string::npos);
}
