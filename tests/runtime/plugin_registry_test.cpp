// Discovery: search order, file naming, shadowing, and failures listed rather than fatal.
#include "kernel/runtime/plugin_registry.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdlib>
#include <optional>
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

namespace {
// Sets an environment variable for one scope, restoring the old value.
struct ScopedEnv {
  std::string name;
  std::optional<std::string> old;
  ScopedEnv(std::string n, const char* value) : name(std::move(n)) {
    if (const char* v = std::getenv(name.c_str())) old = v;
    value ? ::setenv(name.c_str(), value, 1) : ::unsetenv(name.c_str());
  }
  ~ScopedEnv() { old ? ::setenv(name.c_str(), old->c_str(), 1) : ::unsetenv(name.c_str()); }
};
} // namespace

BOOST_AUTO_TEST_CASE(search_order_is_env_then_user_dir_then_beside_libtg) {
  ScopedEnv path("TG_PLUGIN_PATH", "/a:/b");
  ScopedEnv xdg("XDG_DATA_HOME", "/xdg");
  auto search = plugin_search_path();
  BOOST_REQUIRE_EQUAL(search.size(), 4u);
  BOOST_TEST(search[0].path == fs::path("/a"));
  BOOST_TEST(search[1].path == fs::path("/b"));
  BOOST_TEST(search[2].path == fs::path("/xdg/tinygrad.cpp/plugins"));
  BOOST_TEST(int(search[2].origin) == int(PluginOrigin::user));
  BOOST_TEST(int(search[3].origin) == int(PluginOrigin::installed));
  // The build tree has the installed layout: <build>/lib/libtg.so + lib/tinygrad.cpp/plugins.
  BOOST_TEST(search[3].path == installed_plugin_dir());
  BOOST_TEST(installed_plugin_dir().string().ends_with("lib/tinygrad.cpp/plugins"), installed_plugin_dir());
  BOOST_TEST(fs::exists(installed_plugin_dir().parent_path().parent_path() / "libtg.so"));
}

BOOST_AUTO_TEST_CASE(user_dir_defaults_to_home_local_share) {
  ScopedEnv xdg("XDG_DATA_HOME", nullptr);
  ScopedEnv home("HOME", "/home/someone");
  BOOST_TEST(user_plugin_dir() == fs::path("/home/someone/.local/share/tinygrad.cpp/plugins"));
  ScopedEnv relative("XDG_DATA_HOME", "relative/dir"); // not absolute: ignored, as XDG says
  BOOST_TEST(user_plugin_dir() == fs::path("/home/someone/.local/share/tinygrad.cpp/plugins"));
}

BOOST_AUTO_TEST_CASE(a_plugin_in_the_user_dir_is_found_and_says_so) {
  fs::path xdg = fs::temp_directory_path() / ("tg_xdg_test_" + std::to_string(::getpid()));
  fs::create_directories(xdg / "tinygrad.cpp/plugins");
  fs::copy_file(fs::path(TG_FIXTURE_DIR) / "libtg_device_mock.so",
                xdg / "tinygrad.cpp/plugins/libtg_device_usermock.so", fs::copy_options::overwrite_existing);
  {
    ScopedEnv path("TG_PLUGIN_PATH", nullptr);
    ScopedEnv data("XDG_DATA_HOME", xdg.c_str());
    auto& registry = PluginRegistry::instance();
    registry.rescan();
    auto entries = registry.entries();
    const PluginEntry* user = find(entries, "usermock");
    BOOST_REQUIRE(user);
    BOOST_TEST(int(user->origin) == int(PluginOrigin::user));
    BOOST_TEST(user->path == xdg / "tinygrad.cpp/plugins/libtg_device_usermock.so");
    BOOST_TEST(registry.get("usermock")->name() == "mock");
  }
  PluginRegistry::instance().rescan();
  fs::remove_all(xdg);
}

BOOST_AUTO_TEST_CASE(shadowed_duplicates_keep_their_path_and_origin) {
  fs::path tmp = fs::temp_directory_path() / ("tg_dup_test_" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  fs::copy_file(fs::path(TG_FIXTURE_DIR) / "libtg_device_mock.so", tmp / "libtg_device_mock.so",
                fs::copy_options::overwrite_existing);
  auto entries = discover_plugins({{TG_FIXTURE_DIR, PluginOrigin::user}, {tmp, PluginOrigin::installed}});
  auto later = std::find_if(entries.begin(), entries.end(),
                            [](const PluginEntry& e) { return e.name == "mock" && !e.shadowed_by.empty(); });
  BOOST_REQUIRE(later != entries.end());
  BOOST_TEST(later->path == tmp / "libtg_device_mock.so");
  BOOST_TEST(int(later->origin) == int(PluginOrigin::installed));
  BOOST_TEST(later->shadowed_by == fs::path(TG_FIXTURE_DIR) / "libtg_device_mock.so");
  BOOST_TEST(later->plugin == nullptr); // a shadowed plugin is never loaded
  fs::remove_all(tmp);
}
