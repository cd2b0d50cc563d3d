// Discovery: search order, file naming, shadowing, and failures listed rather than fatal.
#include "kernel/runtime/plugin_registry.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdlib>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace tg;

namespace {
const PluginEntry* find(const std::vector<PluginEntry>& entries, const std::string& name) {
  auto it =
      std::find_if(entries.begin(), entries.end(), [&](const PluginEntry& e) { return e.name == name; });
  return it == entries.end() ? nullptr : &*it;
}
} // namespace

BOOST_AUTO_TEST_CASE(plugin_names_come_from_file_names) {
  BOOST_TEST(plugin_name_from_path("/x/libtg_device_cpu.so") == "cpu");
  BOOST_TEST(plugin_name_from_path("libtg_device_my_npu.so") == "my_npu");
  BOOST_TEST(plugin_name_from_path("/x/libtg_device_.so") == "");
  BOOST_TEST(plugin_name_from_path("/x/libtg.so") == "");
  BOOST_TEST(plugin_name_from_path("/x/libtg_device_cpu.so.1") == "");
}

BOOST_AUTO_TEST_CASE(scanning_the_fixture_directory_reports_each_failure) {
  auto entries = discover_plugins({{TG_FIXTURE_DIR, PluginOrigin::env}});
  BOOST_TEST(entries.size() >= 12u);
  const PluginEntry* mock = find(entries, "mock");
  BOOST_REQUIRE(mock);
  BOOST_TEST(mock->plugin != nullptr);
  BOOST_TEST(!mock->error);

  auto expect_failure = [&](const std::string& name, auto tag) {
    using E = decltype(tag);
    const PluginEntry* entry = find(entries, name);
    BOOST_REQUIRE_MESSAGE(entry, name << " not discovered");
    BOOST_TEST(entry->plugin == nullptr);
    BOOST_REQUIRE(entry->error);
    BOOST_TEST(entry->error_message.find(entry->path.string()) != std::string::npos);
    BOOST_CHECK_THROW(std::rethrow_exception(entry->error), E);
  };
  expect_failure("garbage", PluginOpenError(fs::path(), ""));
  expect_failure("missingdep", PluginOpenError(fs::path(), ""));
  expect_failure("notplugin", NotAPluginError(fs::path(), ""));
  expect_failure("futureabi", AbiVersionMismatchError(fs::path(), "", 2));
  expect_failure("refuses", PluginRefusedError(fs::path(), ""));
  expect_failure("truncated", InvalidPluginError(fs::path(), ""));
  // Loading succeeds for "unavailable": its missing hardware shows up at device_count.
  const PluginEntry* unavailable = find(entries, "unavailable");
  BOOST_REQUIRE(unavailable);
  BOOST_TEST(unavailable->plugin != nullptr);
}

BOOST_AUTO_TEST_CASE(first_plugin_of_a_name_wins_and_later_ones_are_shadowed) {
  fs::path tmp = fs::temp_directory_path() / ("tg_shadow_test_" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  fs::copy_file(fs::path(TG_FIXTURE_DIR) / "libtg_device_unavailable.so", tmp / "libtg_device_mock.so",
                fs::copy_options::overwrite_existing);
  auto entries = discover_plugins({{tmp, PluginOrigin::env}, {TG_FIXTURE_DIR, PluginOrigin::installed}});
  const PluginEntry* first = find(entries, "mock");
  BOOST_REQUIRE(first);
  BOOST_TEST(first->path == tmp / "libtg_device_mock.so");
  BOOST_TEST(first->shadowed_by.empty());
  auto shadowed = std::count_if(entries.begin(), entries.end(), [](const PluginEntry& e) {
    return e.name == "mock" && !e.shadowed_by.empty();
  });
  BOOST_TEST(shadowed == 1);
  fs::remove_all(tmp);
}

BOOST_AUTO_TEST_CASE(named_files_on_the_search_path_are_loaded_or_reported_missing) {
  fs::path missing = fs::path(TG_FIXTURE_DIR) / "libtg_device_nowhere.so";
  auto entries = discover_plugins(
      {{fs::path(TG_FIXTURE_DIR) / "libtg_device_mock.so", PluginOrigin::env}, {missing, PluginOrigin::env}});
  BOOST_REQUIRE(entries.size() == 2u);
  BOOST_TEST(entries[0].plugin != nullptr);
  BOOST_CHECK_THROW(std::rethrow_exception(entries[1].error), PluginNotFoundError);
}

BOOST_AUTO_TEST_CASE(registry_reads_tg_plugin_path_and_explains_unknown_names) {
  ::setenv("TG_PLUGIN_PATH", TG_FIXTURE_DIR, 1);
  auto& registry = PluginRegistry::instance();
  registry.rescan();
  auto search = plugin_search_path();
  BOOST_REQUIRE(!search.empty());
  BOOST_TEST(search.front().path == fs::path(TG_FIXTURE_DIR));
  BOOST_TEST(int(search.front().origin) == int(PluginOrigin::env));
  BOOST_TEST(registry.get("mock")->name() == "mock");
  BOOST_CHECK_THROW(registry.get("notplugin"), NotAPluginError);
  try {
    registry.get("nosuchdevice");
    BOOST_FAIL("unknown plugin name must throw");
  } catch (const UnknownPluginError& e) {
    std::string msg = e.what();
    BOOST_TEST(msg.find("libtg_device_nosuchdevice.so") != std::string::npos);
    BOOST_TEST(msg.find(TG_FIXTURE_DIR) != std::string::npos);
    BOOST_TEST(msg.find("mock") != std::string::npos); // lists what it did find
  }
}
