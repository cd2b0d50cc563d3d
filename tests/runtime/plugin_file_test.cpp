// What the host refuses before running a plugin's code, or as soon as the plugin answers: files
// that are not whole ELF shared objects for this machine (a truncated file would crash dlopen),
// names that cannot be folder or device names, absurd device counts; and plugins that nobody asked
// for are not opened at all.
#include "kernel/runtime/plugin_file.hpp"
#include "kernel/runtime/plugin_lifetime.hpp"
#include "kernel/runtime/plugin_registry.hpp"

#include <boost/test/unit_test.hpp>

#include <elf.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <optional>

namespace fs = std::filesystem;
using namespace tg;

namespace {

fs::path fixture_file(const std::string& name) {
  return fs::path(TG_FIXTURE_DIR) / ("libtg_device_" + name + ".so");
}

// A scratch directory for one test, removed at the end.
struct ScratchDir {
  fs::path path;
  explicit ScratchDir(const std::string& tag)
      : path(fs::temp_directory_path() / ("tg_" + tag + "_" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// A copy of the mock plugin at dir/file with `bytes` written at `offset`.
fs::path patched_mock(const fs::path& dir, const std::string& file, size_t offset, const std::string& bytes) {
  fs::path out = dir / file;
  fs::copy_file(fixture_file("mock"), out, fs::copy_options::overwrite_existing);
  std::fstream f(out, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(std::streamoff(offset));
  f.write(bytes.data(), std::streamsize(bytes.size()));
  return out;
}

// Plugin::load(path)'s PluginFileError message; fails the test if it loads or throws another type.
std::string file_error(const fs::path& path) {
  try {
    Plugin::load(path);
  } catch (const PluginFileError& e) {
    BOOST_TEST(e.path() == path);
    return e.what();
  }
  BOOST_FAIL("loading " << path << " did not throw PluginFileError");
  return {};
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Sets TG_PLUGIN_PATH for one scope and rescans the registry; the old value and a rescan after.
struct PluginPathOverride {
  std::optional<std::string> old;
  explicit PluginPathOverride(const std::string& value) {
    if (const char* v = std::getenv("TG_PLUGIN_PATH")) old = v;
    ::setenv("TG_PLUGIN_PATH", value.c_str(), 1);
    PluginRegistry::instance().rescan();
  }
  ~PluginPathOverride() {
    old ? ::setenv("TG_PLUGIN_PATH", old->c_str(), 1) : ::unsetenv("TG_PLUGIN_PATH");
    PluginRegistry::instance().rescan();
  }
};

} // namespace

BOOST_AUTO_TEST_CASE(truncated_plugin_files_are_refused_before_dlopen) {
  ScratchDir dir("truncated");
  const uint64_t size = fs::file_size(fixture_file("mock"));
  // 4 KiB: the segments lie past the end (dlopen would die with SIGBUS); size - 1: only the
  // section header table is cut; 100 bytes: the program headers are cut.
  for (uint64_t keep : {uint64_t(4096), size - 1, uint64_t(100)}) {
    fs::path cut = dir.path / ("libtg_device_cut" + std::to_string(keep) + ".so");
    fs::copy_file(fixture_file("mock"), cut, fs::copy_options::overwrite_existing);
    fs::resize_file(cut, keep);
    std::string msg = file_error(cut);
    BOOST_TEST(has(msg, cut.string()), msg);
    BOOST_TEST(has(msg, "beyond the end of the file (" + std::to_string(keep) + " bytes"), msg);
  }
  // The build's own truncated copy, found by a scan: a load failure on its entry, not a crash.
  auto entries = discover_plugins({{fixture_file("cut"), PluginOrigin::env}});
  BOOST_REQUIRE_EQUAL(entries.size(), 1u);
  BOOST_TEST(entries[0].plugin == nullptr);
  BOOST_CHECK_THROW(std::rethrow_exception(entries[0].error), PluginFileError);
}

BOOST_AUTO_TEST_CASE(short_foreign_and_non_elf_files_are_refused_with_the_reason) {
  ScratchDir dir("foreign");
  std::ofstream(dir.path / "libtg_device_tiny.so") << "\x7f"
                                                      "EL";
  BOOST_TEST(has(file_error(dir.path / "libtg_device_tiny.so"), "file too short"));
  BOOST_TEST(has(file_error(fixture_file("garbage")), "invalid ELF header"));
  BOOST_TEST(
      has(file_error(patched_mock(dir.path, "libtg_device_c32.so", EI_CLASS, std::string(1, ELFCLASS32))),
          "wrong ELF class: a 32-bit file, this host is 64-bit"));
  Elf64_Ehdr header{};
  std::ifstream(fixture_file("mock"), std::ios::binary).read(reinterpret_cast<char*>(&header), sizeof header);
  const uint16_t other_machine = header.e_machine == EM_X86_64 ? EM_AARCH64 : EM_X86_64;
  BOOST_TEST(has(file_error(patched_mock(dir.path, "libtg_device_other.so", offsetof(Elf64_Ehdr, e_machine),
                                         std::string(reinterpret_cast<const char*>(&other_machine), 2))),
                 "built for another machine"));
  const uint16_t executable = ET_EXEC;
  BOOST_TEST(has(file_error(patched_mock(dir.path, "libtg_device_exe.so", offsetof(Elf64_Ehdr, e_type),
                                         std::string(reinterpret_cast<const char*>(&executable), 2))),
                 "not a shared object"));
  fs::create_directories(dir.path / "a_directory");
  BOOST_CHECK_THROW(check_plugin_file(dir.path / "a_directory"), PluginFileError);
  BOOST_CHECK_NO_THROW(check_plugin_file(fixture_file("mock")));
}

BOOST_AUTO_TEST_CASE(plugin_names_are_checked_once_at_load) {
  BOOST_TEST(is_valid_plugin_name("cpu"));
  BOOST_TEST(is_valid_plugin_name("My_NPU2"));
  BOOST_TEST(!is_valid_plugin_name(""));
  BOOST_TEST(!is_valid_plugin_name("../../x"));
  BOOST_TEST(!is_valid_plugin_name("a-b"));
  BOOST_TEST(!is_valid_plugin_name("a:1"));
  BOOST_TEST(is_valid_plugin_name(std::string(kMaxValidPluginName, 'a')));
  BOOST_TEST(!is_valid_plugin_name(std::string(kMaxValidPluginName + 1, 'a')));
  try {
    Plugin::load(fixture_file("badname"));
    BOOST_FAIL("a plugin named ../../x must not load");
  } catch (const InvalidPluginError& e) {
    BOOST_TEST(has(e.what(), "'../../x' is not a valid plugin name"), e.what());
    BOOST_TEST(has(e.what(), fixture_file("badname").string()), e.what());
  }
  // The name from the file name becomes device names: the same rule, for a scan and for load_plugin.
  ScratchDir dir("names");
  fs::copy_file(fixture_file("mock"), dir.path / "libtg_device_a-b.so");
  auto entries = discover_plugins({{dir.path, PluginOrigin::env}});
  BOOST_REQUIRE_EQUAL(entries.size(), 1u);
  BOOST_CHECK_THROW(std::rethrow_exception(entries[0].error), InvalidPluginError);
  BOOST_TEST(has(entries[0].error_message, "'a-b' is not a valid plugin name"), entries[0].error_message);
  BOOST_CHECK_THROW(load_plugin(dir.path / "libtg_device_a-b.so"), InvalidPluginError);
}

BOOST_AUTO_TEST_CASE(device_counts_outside_the_bound_are_refused) {
  auto huge = Plugin::load(fixture_file("huge"));
  try {
    huge->device_count();
    BOOST_FAIL("2^31-1 devices must be refused");
  } catch (const PluginContractError& e) {
    BOOST_TEST(has(e.what(), "device_count reported 2147483647 devices; a plugin reports 0 to " +
                                 std::to_string(kMaxDeviceCount)),
               e.what());
  }
  BOOST_CHECK_THROW(Plugin::load(fixture_file("minusone"))->device_count(), PluginContractError);
  BOOST_TEST(device_count_problem(0).empty());
  BOOST_TEST(device_count_problem(kMaxDeviceCount).empty());
  BOOST_TEST(!device_count_problem(kMaxDeviceCount + 1).empty());
  BOOST_TEST(!device_count_problem(-1).empty());
}

BOOST_AUTO_TEST_CASE(only_the_plugin_asked_for_is_opened) {
  // TG_FIXTURE_BAD_DIR holds a plugin whose constructor crashes and one whose device_count hangs:
  // opening either would end or stop this test. Asking for "mock" must open only mock.
  PluginPathOverride path(std::string(TG_FIXTURE_BAD_DIR) + ":" + TG_FIXTURE_DIR);
  auto& registry = PluginRegistry::instance();
  auto mock = registry.get("mock");
  BOOST_TEST(mock->name() == "mock");
  BOOST_TEST(mock->device_count() == 1);
  BOOST_CHECK_THROW(registry.get("nosuchdevice"), UnknownPluginError);
}
