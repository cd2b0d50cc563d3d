// The golden corpus: generated kernels are valid and complete, the stored copy reads back exactly
// what was written, and a damaged stored copy is refused with the file named.
#include "tools/conform/corpus.hpp"

#include <tg/sdk/kernel_ir.hpp>

#include <boost/test/unit_test.hpp>

#include <fstream>
#include <set>
#include <unistd.h>

namespace fs = std::filesystem;
using tg::conform::CorpusKernel;

namespace {

fs::path temp_dir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("tg_corpus_test_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

bool has_vectors(const CorpusKernel& k) {
  for (const auto& ins : tg::sdk::parse_kernel_ir(k.ir).instructions)
    if (ins.vcount > 1) return true;
  return false;
}

const CorpusKernel& find(const std::vector<CorpusKernel>& ks, const std::string& name) {
  for (const auto& k : ks)
    if (k.name == name) return k;
  BOOST_FAIL("no corpus kernel " << name);
  throw std::logic_error("unreachable");
}

} // namespace

BOOST_AUTO_TEST_CASE(generated_kernels_are_valid_and_cover_the_required_list) {
  auto ks = tg::conform::golden_corpus(tg::conform::reference_properties());
  std::set<std::string> names;
  uint64_t dtypes = 0;
  for (const auto& k : ks) {
    BOOST_TEST_CONTEXT(k.name) {
      BOOST_TEST(names.insert(k.name).second);
      auto ir = tg::sdk::parse_kernel_ir(k.ir); // throws if malformed
      BOOST_TEST(ir.buffer_count == k.buffers.size());
      BOOST_TEST(ir.scalar_count == k.scalars.size());
      for (uint32_t i = 0; i < ir.buffer_count; ++i) BOOST_TEST(ir.buffer_dtypes[i] == k.buffers[i].dtype);
      dtypes |= k.dtype_mask;
    }
  }
  for (tg_dtype d = TG_DTYPE_BOOL; d < TG_DTYPE_COUNT; ++d)
    BOOST_TEST((dtypes & TG_DTYPE_BIT(d)) != 0, "dtype " << tg::sdk::dtype_name(d) << " is in the corpus");
  for (const char* name : {"matmul", "conv2d_0", "pad_gated", "sum_axis1", "broadcast_add", "many_buffers",
                           "scalars_gated_store", "local_reduce", "grid_3d", "empty_grid"})
    (void)find(ks, name);
  BOOST_TEST(find(ks, "local_reduce").features == (TG_FEATURE_LOCAL_MEMORY | TG_FEATURE_BARRIER));
  BOOST_TEST(find(ks, "many_buffers").buffers.size() == 13u);
  BOOST_TEST(find(ks, "empty_grid").global[0] == 0u);
}

BOOST_AUTO_TEST_CASE(vector_code_follows_the_device_vector_width) {
  auto props = tg::conform::reference_properties();
  props.features &= ~TG_FEATURE_LOCAL_MEMORY; // CPU-style choices: wide upcasts, which become vectors
  props.local_memory_bytes = 0;
  auto with = tg::conform::golden_corpus(props);
  BOOST_TEST(has_vectors(find(with, "matmul")));
  props.vector_bytes = 0;
  for (const auto& k : tg::conform::golden_corpus(props)) BOOST_TEST(!has_vectors(k), k.name);
}

BOOST_AUTO_TEST_CASE(stored_copy_round_trips) {
  auto ks = tg::conform::golden_corpus(tg::conform::reference_properties());
  fs::path dir = temp_dir("round_trip");
  tg::conform::write_corpus(dir, ks);
  auto back = tg::conform::read_corpus(dir);
  BOOST_TEST_REQUIRE(back.size() == ks.size());
  for (size_t i = 0; i < ks.size(); ++i) {
    BOOST_TEST_CONTEXT(ks[i].name) {
      BOOST_TEST(back[i].name == ks[i].name);
      BOOST_TEST(back[i].origin == ks[i].origin);
      BOOST_TEST((back[i].ir == ks[i].ir));
      BOOST_TEST((back[i].global == ks[i].global));
      BOOST_TEST((back[i].local == ks[i].local));
      BOOST_TEST_REQUIRE(back[i].scalars.size() == ks[i].scalars.size());
      for (size_t s = 0; s < ks[i].scalars.size(); ++s)
        BOOST_TEST(back[i].scalars[s].value.u == ks[i].scalars[s].value.u); // bit-exact, whatever the type
    }
  }
  fs::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(checked_in_corpus_is_readable) {
  auto ks = tg::conform::read_corpus(fs::path(TG_SOURCE_DIR) / "tests/data/corpus");
  BOOST_TEST(ks.size() >= 40u);
}

BOOST_AUTO_TEST_CASE(damaged_stored_copy_is_refused_with_the_file_named) {
  auto ks = tg::conform::golden_corpus(tg::conform::reference_properties());
  fs::path dir = temp_dir("damaged");
  tg::conform::write_corpus(dir, {ks[0]});
  { // an IR file cut short
    fs::resize_file(dir / (ks[0].name + ".tgir"), 10);
    try {
      tg::conform::read_corpus(dir);
      BOOST_FAIL("a truncated IR file was accepted");
    } catch (const std::runtime_error& e) {
      BOOST_TEST(std::string(e.what()).find(ks[0].name) != std::string::npos, e.what());
    }
  }
  { // a manifest that is not JSON
    std::ofstream(dir / "manifest.json") << "[{\"name\": ";
    try {
      tg::conform::read_corpus(dir);
      BOOST_FAIL("a broken manifest was accepted");
    } catch (const std::runtime_error& e) {
      BOOST_TEST(std::string(e.what()).find("manifest.json") != std::string::npos, e.what());
    }
  }
  fs::remove_all(dir);
}
