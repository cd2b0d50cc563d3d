// The plugin host: every load failure is a typed exception whose message names the path and the
// cause; a working plugin is usable through RAII handles; absent functions are UNIMPLEMENTED.
#include "kernel/runtime/device.hpp"

#include <boost/test/unit_test.hpp>

#include <cstring>
#include <string>

namespace fs = std::filesystem;
using namespace tg;

namespace {

fs::path fixture(const std::string& name) {
  return fs::path(TG_FIXTURE_DIR) / ("libtg_device_" + name + ".so");
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Loads a fixture expecting exception type E; returns its message.
template <class E> std::string load_error(const std::string& name) {
  try {
    Plugin::load(fixture(name));
  } catch (const E& e) {
    BOOST_TEST(e.path() == fixture(name));
    return e.what();
  }
  BOOST_FAIL("loading " << name << " did not throw the expected error type");
  return {};
}

} // namespace

BOOST_AUTO_TEST_CASE(missing_file_is_not_found) {
  std::string msg = load_error<PluginNotFoundError>("does_not_exist");
  BOOST_TEST(contains(msg, fixture("does_not_exist").string()));
  BOOST_TEST(contains(msg, "no such file"));
}

BOOST_AUTO_TEST_CASE(garbage_file_reports_dlerror) {
  std::string msg = load_error<PluginOpenError>("garbage");
  BOOST_TEST(contains(msg, "libtg_device_garbage.so"));
  // dlerror's text for a non-ELF file
  BOOST_TEST((contains(msg, "invalid ELF header") || contains(msg, "file too short")), msg);
}

BOOST_AUTO_TEST_CASE(missing_dependency_is_named) {
  std::string msg = load_error<PluginOpenError>("missingdep");
  BOOST_TEST(contains(msg, "libtg_test_dep.so"), msg);
  BOOST_TEST(contains(msg, "cannot open shared object file"), msg);
}

BOOST_AUTO_TEST_CASE(undefined_symbol_fails_at_load_not_at_call) {
  std::string msg = load_error<PluginOpenError>("undefsym");
  BOOST_TEST(contains(msg, "undefined symbol: tg_test_symbol_that_does_not_exist"), msg);
}

BOOST_AUTO_TEST_CASE(library_without_entry_symbol_is_not_a_plugin) {
  std::string msg = load_error<NotAPluginError>("notplugin");
  BOOST_TEST(contains(msg, "not a tinygrad.cpp plugin"));
  BOOST_TEST(contains(msg, "tg_plugin_query_v1"));
}

BOOST_AUTO_TEST_CASE(other_abi_major_names_both_versions_and_a_fix) {
  std::string msg = load_error<AbiVersionMismatchError>("futureabi");
  BOOST_TEST(contains(msg, "ABI v2"), msg);
  BOOST_TEST(contains(msg, "ABI v1"), msg);
  BOOST_TEST(contains(msg, "rebuild the plugin"), msg);
  try {
    Plugin::load(fixture("futureabi"));
  } catch (const AbiVersionMismatchError& e) {
    BOOST_TEST(e.plugin_major() == 2u);
  }
}

BOOST_AUTO_TEST_CASE(table_with_wrong_major_is_a_mismatch) {
  std::string msg = load_error<AbiVersionMismatchError>("tablemajor2");
  BOOST_TEST(contains(msg, "function table"), msg);
}

BOOST_AUTO_TEST_CASE(plugin_refusing_the_host) {
  std::string msg = load_error<PluginRefusedError>("refuses");
  BOOST_TEST(contains(msg, "refused this host"), msg);
}

BOOST_AUTO_TEST_CASE(malformed_tables_are_rejected) {
  BOOST_TEST(contains(load_error<InvalidPluginError>("truncated"), "too small"));
  BOOST_TEST(contains(load_error<InvalidPluginError>("noopen"), "device_open"));
}

BOOST_AUTO_TEST_CASE(unavailable_hardware_is_a_typed_device_error) {
  auto plugin = Plugin::load(fixture("unavailable"));
  BOOST_TEST(plugin->name() == "mock");
  BOOST_CHECK_THROW(plugin->device_count(), DeviceUnavailableError);
  try {
    Device::open(plugin, 0);
    BOOST_FAIL("opening a device without hardware must throw");
  } catch (const DeviceUnavailableError& e) {
    BOOST_TEST(e.code() == TG_ERROR_UNAVAILABLE);
    BOOST_TEST(contains(e.what(), "UNAVAILABLE"));
    BOOST_TEST(contains(e.what(), "libfake.so.1 missing"));
  }
}

BOOST_AUTO_TEST_CASE(working_plugin_round_trip_through_raii_handles) {
  auto plugin = Plugin::load(fixture("mock"));
  BOOST_TEST(plugin->api().abi_major == uint32_t(TG_ABI_VERSION_MAJOR));
  BOOST_TEST(plugin->device_count() == 1);
  auto device = Device::open(plugin, 0);
  BOOST_TEST(std::string(device->properties().name) == "mock device");
  BOOST_TEST(device->properties().buffer_alignment == 16u);

  const char text[] = "tinygrad.cpp";
  Buffer buffer = device->alloc(sizeof text);
  buffer.copy_from_host(std::as_bytes(std::span(text)));
  char back[sizeof text] = {};
  buffer.copy_to_host(std::as_writable_bytes(std::span(back)));
  BOOST_TEST(std::memcmp(back, text, sizeof text) == 0);

  // Out-of-range copies come back as typed INVALID_ARGUMENT errors naming the call.
  try {
    buffer.copy_from_host(std::as_bytes(std::span(text)), 4);
    BOOST_FAIL("copy beyond the buffer must throw");
  } catch (const InvalidArgumentError& e) {
    BOOST_TEST(contains(e.what(), "mock.buffer_copy_from_host failed (INVALID_ARGUMENT)"), e.what());
  }
  BOOST_CHECK_THROW(Device::open(plugin, 1), InvalidArgumentError);
}

BOOST_AUTO_TEST_CASE(functions_beyond_struct_size_are_absent) {
  auto plugin = Plugin::load(fixture("shorttable"));
  BOOST_TEST(plugin->has(&tg_plugin_api::buffer_copy_to_host));
  // The fixture stores a bogus pointer past its declared struct_size: the host must not call it.
  BOOST_TEST(!plugin->has(&tg_plugin_api::buffer_copy));
  BOOST_TEST(!plugin->has(&tg_plugin_api::compile));
  auto device = Device::open(plugin, 0);
  Buffer a = device->alloc(8), b = device->alloc(8);
  BOOST_CHECK_THROW(a.copy_from(b, 8), UnimplementedError);
  std::byte ir[4] = {};
  try {
    plugin->compile(ir);
    BOOST_FAIL("compile on a plugin without a compiler must throw");
  } catch (const UnimplementedError& e) {
    BOOST_TEST(contains(e.what(), "does not implement compile"));
  }
}

BOOST_AUTO_TEST_CASE(handles_keep_the_plugin_alive) {
  Buffer buffer = [] {
    auto plugin = Plugin::load(fixture("mock"));
    auto device = Device::open(plugin, 0);
    return device->alloc(64);
  }(); // plugin and device shared_ptrs are gone here; the buffer still holds them
  uint64_t value = 0x0123456789abcdefULL, back = 0;
  buffer.copy_from_host(std::as_bytes(std::span(&value, 1)));
  buffer.copy_to_host(std::as_writable_bytes(std::span(&back, 1)));
  BOOST_TEST(back == value);
}
