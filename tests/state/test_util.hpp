// Helpers for the state tests: temporary directories, byte building, typed reads of tensor bytes.
#pragma once

#include <boost/test/unit_test.hpp>

#include "kernel/tensor/tensor.hpp"

#include <atomic>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace st {

namespace fs = std::filesystem;

// A fresh directory under the system temp dir, removed with its contents at scope exit.
struct TempDir {
  fs::path path;
  TempDir() {
    static std::atomic<int> counter{0};
    path = fs::temp_directory_path() /
           ("tg_state_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  fs::path operator/(const std::string& name) const { return path / name; }
};

inline void write_file(const fs::path& p, const std::vector<std::byte>& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}
inline std::vector<std::byte> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<char> c((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(c.size());
  if (!c.empty()) std::memcpy(out.data(), c.data(), c.size());
  return out;
}

template <class T> std::vector<std::byte> bytes_of(const std::vector<T>& v) {
  std::vector<std::byte> out(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());
  return out;
}
template <class T> std::vector<T> values_of(const std::vector<std::byte>& b) {
  BOOST_REQUIRE_EQUAL(b.size() % sizeof(T), 0u);
  std::vector<T> out(b.size() / sizeof(T));
  if (!b.empty()) std::memcpy(out.data(), b.data(), b.size());
  return out;
}
template <class T> std::vector<T> values_of(const tg::Tensor& t) { return values_of<T>(t.to_bytes()); }

// Runs `f`, requires it to throw E whose message contains every fragment.
template <class E, class F> void require_throws(F&& f, std::initializer_list<std::string> fragments) {
  try {
    f();
  } catch (const E& e) {
    std::string msg = e.what();
    for (const auto& frag : fragments)
      BOOST_CHECK_MESSAGE(msg.find(frag) != std::string::npos,
                          "message \"" << msg << "\" lacks \"" << frag << "\"");
    return;
  } catch (const std::exception& e) {
    BOOST_ERROR("wrong exception type: " << e.what());
    return;
  }
  BOOST_ERROR("no exception; expected one containing \"" << *fragments.begin() << "\"");
}

} // namespace st
