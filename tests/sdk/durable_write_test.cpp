// sdk::write_file_durably, the save behind safe_save and tg train --save: a replaced file keeps
// its mode, a symbolic link is written through and stays a link, and temporaries that killed
// saves of the same file left behind are removed (those of a live process and of other files
// stay).
#include <boost/test/unit_test.hpp>

#include <tg/sdk/bytes.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("tg_durable_write_test_" + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void save(const fs::path& p, const std::string& text) {
  std::span<const std::byte> part = std::as_bytes(std::span(text));
  tg::sdk::write_file_durably(p, std::span(&part, 1));
}

std::string contents(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

unsigned mode_of(const fs::path& p) {
  struct stat st {};
  BOOST_TEST_REQUIRE(::stat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

void touch(const fs::path& p) { std::ofstream(p) << "partial"; }

} // namespace

BOOST_AUTO_TEST_SUITE(durable_write)

BOOST_AUTO_TEST_CASE(a_replaced_file_keeps_its_mode) {
  fs::path dir = scratch("mode");
  for (unsigned mode : {0600u, 0640u, 0604u}) {
    fs::path f = dir / ("m" + std::to_string(mode));
    save(f, "first");
    BOOST_TEST_REQUIRE(::chmod(f.c_str(), mode) == 0);
    save(f, "second");
    BOOST_TEST(contents(f) == "second");
    BOOST_TEST(mode_of(f) == mode);
  }
  // a new file gets 0666 less the umask
  const mode_t mask = ::umask(022);
  ::umask(mask);
  save(dir / "new", "x");
  BOOST_TEST(mode_of(dir / "new") == (0666u & ~unsigned(mask)));
  fs::remove_all(dir.parent_path());
}

BOOST_AUTO_TEST_CASE(a_symbolic_link_is_written_through) {
  fs::path dir = scratch("links");
  fs::create_directories(dir / "real");
  save(dir / "real" / "ckpt", "old");
  BOOST_TEST_REQUIRE(::chmod((dir / "real" / "ckpt").c_str(), 0600) == 0);
  fs::create_symlink("real/ckpt", dir / "relative");   // relative to the link's folder
  fs::create_symlink(dir / "relative", dir / "chain"); // a link to a link
  save(dir / "chain", "new");
  BOOST_TEST(fs::is_symlink(fs::symlink_status(dir / "chain")));
  BOOST_TEST(fs::is_symlink(fs::symlink_status(dir / "relative")));
  BOOST_TEST(contents(dir / "real" / "ckpt") == "new");
  BOOST_TEST(mode_of(dir / "real" / "ckpt") == 0600u);
  // a dangling link gets its target created
  fs::create_symlink("real/fresh", dir / "dangling");
  save(dir / "dangling", "made");
  BOOST_TEST(fs::is_symlink(fs::symlink_status(dir / "dangling")));
  BOOST_TEST(contents(dir / "real" / "fresh") == "made");
  // a loop of links is refused with a message, and nothing is written
  fs::create_symlink("loop_b", dir / "loop_a");
  fs::create_symlink("loop_a", dir / "loop_b");
  BOOST_CHECK_EXCEPTION(save(dir / "loop_a", "x"), tg::sdk::FileError, [](const tg::sdk::FileError& e) {
    return std::string(e.what()).find("symbolic links") != std::string::npos;
  });
  fs::remove_all(dir.parent_path());
}

BOOST_AUTO_TEST_CASE(stale_temporaries_of_the_same_file_are_removed) {
  fs::path dir = scratch("stale");
  const std::string gone_pid = "2147483646"; // above any pid_max: no such process
  touch(dir / ("ckpt.tmp." + gone_pid + ".0"));
  touch(dir / ("ckpt.tmp." + gone_pid + ".17"));
  const fs::path live = dir / ("ckpt.tmp." + std::to_string(::getpid()) + ".999"); // a save in flight
  touch(live);
  touch(dir / ("other.tmp." + gone_pid + ".0")); // another file's
  touch(dir / "ckpt.tmp.notes");                 // not a temporary's name
  save(dir / "ckpt", "data");
  BOOST_TEST(contents(dir / "ckpt") == "data");
  BOOST_TEST(!fs::exists(dir / ("ckpt.tmp." + gone_pid + ".0")));
  BOOST_TEST(!fs::exists(dir / ("ckpt.tmp." + gone_pid + ".17")));
  BOOST_TEST(fs::exists(live));
  BOOST_TEST(fs::exists(dir / ("other.tmp." + gone_pid + ".0")));
  BOOST_TEST(fs::exists(dir / "ckpt.tmp.notes"));
  fs::remove_all(dir.parent_path());
}

BOOST_AUTO_TEST_SUITE_END()
