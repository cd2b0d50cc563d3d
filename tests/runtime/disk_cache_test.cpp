// The disk cache's sealed files (program_cache.hpp): a file holds the check of the key it was
// written for, so a file renamed or swapped into another kernel's name is a miss that recompiles
// and overwrites, never another kernel's program; truncated or corrupt files are misses too.
#include "kernel/engine/config.hpp"
#include "kernel/engine/engine.hpp"
#include "kernel/runtime/devices.hpp"

#include <tg/sdk/kernel_ir.hpp>

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <unistd.h>

namespace fs = std::filesystem;
using tg::sdk::KernelBuilder;
using Ref = KernelBuilder::Ref;

namespace {

std::vector<std::byte> bytes_of(std::string_view s) {
  return std::vector<std::byte>(reinterpret_cast<const std::byte*>(s.data()),
                                reinterpret_cast<const std::byte*>(s.data()) + s.size());
}

fs::path scratch(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("tg_disk_cache_test_" + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::vector<std::byte> add_constant(float constant) {
  KernelBuilder k("add_constant");
  Ref in = k.global(0, TG_DTYPE_FLOAT32), out = k.global(1, TG_DTYPE_FLOAT32);
  Ref i = k.group_id(0);
  k.store(k.index(out, i), k.add(k.load(k.index(in, i)), k.f32(constant)));
  return k.serialize();
}

std::vector<float> run(const std::shared_ptr<tg::Device>& device, const tg::CachedProgram& cached,
                       const std::vector<float>& input) {
  tg::Buffer in = device->alloc(input.size() * 4), out = device->alloc(input.size() * 4);
  in.copy_from_host(std::as_bytes(std::span(input)));
  tg_buffer_arg args[] = {{in.raw(), 0}, {out.raw(), 0}};
  tg::LaunchDims dims;
  dims.global = {uint32_t(input.size()), 1, 1};
  cached.program.launch(dims, args);
  std::vector<float> result(input.size());
  out.copy_to_host(std::as_writable_bytes(std::span(result)));
  return result;
}

std::set<fs::path> blobs(const fs::path& dir) {
  std::set<fs::path> out;
  if (fs::exists(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".blob") out.insert(e.path());
  return out;
}

// The one .blob that `step` adds to dir.
fs::path new_blob(const fs::path& dir, const std::function<void()>& step) {
  auto before = blobs(dir);
  step();
  std::vector<fs::path> added;
  for (const auto& p : blobs(dir))
    if (!before.count(p)) added.push_back(p);
  BOOST_TEST_REQUIRE(added.size() == 1u);
  return added[0];
}

} // namespace

BOOST_AUTO_TEST_SUITE(disk_cache)

BOOST_AUTO_TEST_CASE(a_file_reads_back_only_for_its_key) {
  fs::path dir = scratch("files");
  auto key_a = bytes_of("key a"), key_b = bytes_of("key b"), payload = bytes_of("payload bytes");
  tg::write_cache_file(dir / "a", key_a, payload);
  tg::write_cache_file(dir / "b", key_b, bytes_of("other"));
  auto back = tg::read_cache_file(dir / "a", key_a);
  BOOST_TEST_REQUIRE(back.has_value());
  BOOST_TEST((*back == payload));
  BOOST_TEST(!tg::read_cache_file(dir / "a", key_b).has_value()); // another key's file
  BOOST_TEST(!tg::read_cache_file(dir / "missing", key_a).has_value());
  // an empty payload is a valid entry, distinct from a miss
  tg::write_cache_file(dir / "empty", key_a, {});
  auto empty = tg::read_cache_file(dir / "empty", key_a);
  BOOST_TEST_REQUIRE(empty.has_value());
  BOOST_TEST(empty->empty());
  // every truncation and every flipped byte is a miss
  std::vector<std::byte> whole;
  {
    std::ifstream in(dir / "a", std::ios::binary);
    std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (char c : chars) whole.push_back(std::byte(c));
  }
  auto write_raw = [&](const std::vector<std::byte>& b) {
    std::ofstream out(dir / "c", std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
  };
  for (size_t n = 0; n < whole.size(); ++n) {
    write_raw(std::vector<std::byte>(whole.begin(), whole.begin() + std::ptrdiff_t(n)));
    BOOST_TEST_CONTEXT("truncated to " << n) BOOST_TEST(!tg::read_cache_file(dir / "c", key_a).has_value());
  }
  for (size_t i = 0; i < whole.size(); ++i) {
    auto flipped = whole;
    flipped[i] ^= std::byte{0x40};
    write_raw(flipped);
    BOOST_TEST_CONTEXT("byte " << i << " flipped")
    BOOST_TEST(!tg::read_cache_file(dir / "c", key_a).has_value());
  }
  // pre-sealing files (the raw blob alone) are misses, not programs
  write_raw(payload);
  BOOST_TEST(!tg::read_cache_file(dir / "c", key_a).has_value());
}

// The report: two valid kernel files swapped in the cache directory made every later run compute
// the other kernel's result. Now each is a miss, recompiled and overwritten.
BOOST_AUTO_TEST_CASE(swapped_program_files_recompile_and_overwrite) {
  // ctest points TG_CACHE_DIR at this suite's own folder (tests/runtime/CMakeLists.txt); run by
  // hand without it, the case refuses to touch the user's cache
  const fs::path root = tg::config().cache_dir;
  BOOST_TEST_REQUIRE(tg::config().disk_cache);
  BOOST_TEST_REQUIRE(root.filename() == "disk_cache_test.cache",
                     "TG_CACHE_DIR must name a folder called disk_cache_test.cache, is " << root);
  auto device = tg::open_device("CPU").device;
  const fs::path dir = root / device->plugin().name();
  fs::remove_all(dir);
  const auto ir_one = add_constant(1.f), ir_two = add_constant(2.f);
  const std::vector<float> input{1, 2, 3};
  fs::path file_one = new_blob(dir, [&] {
    BOOST_TEST(run(device, *tg::get_program(device, ir_one, false), input) == (std::vector<float>{2, 3, 4}));
  });
  fs::path file_two = new_blob(dir, [&] {
    BOOST_TEST(run(device, *tg::get_program(device, ir_two, false), input) == (std::vector<float>{3, 4, 5}));
  });
  // both come back from disk once the memory cache forgets them
  tg::forget_programs(*device);
  BOOST_TEST(tg::get_program(device, ir_one, false)->from_disk);
  tg::forget_programs(*device);
  // swap the two files
  fs::path tmp = dir / "swap.tmp";
  fs::rename(file_one, tmp);
  fs::rename(file_two, file_one);
  fs::rename(tmp, file_two);
  const uint64_t compiles = tg::program_compile_count();
  auto one = tg::get_program(device, ir_one, false);
  BOOST_TEST(!one->from_disk);
  BOOST_TEST(run(device, *one, input) == (std::vector<float>{2, 3, 4}));
  auto two = tg::get_program(device, ir_two, false);
  BOOST_TEST(!two->from_disk);
  BOOST_TEST(run(device, *two, input) == (std::vector<float>{3, 4, 5}));
  BOOST_TEST(tg::program_compile_count() == compiles + 2);
  // the recompiled programs overwrote the swapped files: the next process reads them again
  tg::forget_programs(*device);
  auto again = tg::get_program(device, ir_one, false);
  BOOST_TEST(again->from_disk);
  BOOST_TEST(run(device, *again, input) == (std::vector<float>{2, 3, 4}));
  tg::forget_programs(*device);
  fs::remove_all(dir);
}

BOOST_AUTO_TEST_SUITE_END()
