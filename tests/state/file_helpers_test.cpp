// tg::sdk byte and file helpers (sdk/include/tg/sdk/bytes.hpp): the one FNV-1a hash shared by the
// program cache and the CPU plugin's blob checksum, the file reader and the destination check.
#include "test_util.hpp"

#include <tg/sdk/bytes.hpp>

#include <sys/stat.h>

using namespace st;
namespace sdk = tg::sdk;

namespace {
std::span<const std::byte> text(std::string_view s) { return std::as_bytes(std::span(s.data(), s.size())); }
} // namespace

BOOST_AUTO_TEST_SUITE(file_helpers)

BOOST_AUTO_TEST_CASE(fnv1a64_reference_values) {
  // Published FNV-1a 64 test vectors.
  BOOST_CHECK_EQUAL(sdk::fnv1a64({}), 0xcbf29ce484222325ull);
  BOOST_CHECK_EQUAL(sdk::fnv1a64(text("a")), 0xaf63dc4c8601ec8cull);
  BOOST_CHECK_EQUAL(sdk::fnv1a64(text("foobar")), 0x85944171f73967e8ull);
  BOOST_CHECK_EQUAL(sdk::hex64(0xaf63dc4c8601ec8cull), "af63dc4c8601ec8c");
  BOOST_CHECK_EQUAL(sdk::hex64(1), "0000000000000001");
}

BOOST_AUTO_TEST_CASE(read_file_whole_prefix_and_refusals) {
  TempDir dir;
  write_file(dir / "f", {std::byte{1}, std::byte{2}, std::byte{3}});
  BOOST_CHECK(sdk::read_file(dir / "f") ==
              (std::vector<std::byte>{std::byte{1}, std::byte{2}, std::byte{3}}));
  BOOST_CHECK(sdk::read_file(dir / "f", 2) == (std::vector<std::byte>{std::byte{1}, std::byte{2}}));
  auto throws = [](const fs::path& p, const std::string& frag) {
    try {
      sdk::read_file(p);
      BOOST_ERROR("no exception for " << p);
    } catch (const sdk::FileError& e) {
      BOOST_CHECK_MESSAGE(std::string(e.what()).find(frag) != std::string::npos, e.what());
    }
  };
  throws(dir / "missing", "cannot be opened");
  throws(dir.path, "is a directory");
  throws("/dev/zero", "is a device"); // would never end
  BOOST_REQUIRE_EQUAL(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  throws(dir / "fifo", "is a FIFO"); // would block
}

BOOST_AUTO_TEST_CASE(check_writable_before_a_long_job) {
  TempDir dir;
  BOOST_CHECK_NO_THROW(sdk::check_writable(dir / "out.json"));
  BOOST_CHECK(fs::is_empty(dir.path)); // the probe file is gone
  auto throws = [](const fs::path& p, const std::string& frag) {
    try {
      sdk::check_writable(p);
      BOOST_ERROR("no exception for " << p);
    } catch (const sdk::FileError& e) {
      BOOST_CHECK_MESSAGE(std::string(e.what()).find(frag) != std::string::npos, e.what());
    }
  };
  throws(dir / "nope" / "out.json", "does not exist");
  throws(dir.path, "is a directory");
  write_file(dir / "file", {});
  throws(dir / "file" / "out.json", "is not a directory");
}

BOOST_AUTO_TEST_CASE(write_file_durably_replaces) {
  TempDir dir;
  std::vector<std::byte> a{std::byte{1}}, b{std::byte{2}, std::byte{3}};
  std::vector<std::span<const std::byte>> parts{a, b};
  sdk::write_file_durably(dir / "x", parts);
  BOOST_CHECK(read_file(dir / "x") == (std::vector<std::byte>{std::byte{1}, std::byte{2}, std::byte{3}}));
  parts = {b};
  sdk::write_file_durably(dir / "x", parts);
  BOOST_CHECK(read_file(dir / "x") == b);
  BOOST_CHECK_EQUAL(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()), 1);
  BOOST_CHECK_THROW(sdk::write_file_durably(dir / "nope" / "x", parts), sdk::FileError);
}

BOOST_AUTO_TEST_SUITE_END()
