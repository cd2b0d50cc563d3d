// The CUDA plugin without a GPU: NVRTC builds every golden-corpus kernel into an sm_90 cubin (an
// ELF image inside the blob), refuses other targets; device_count says why nothing runs.
#include "plugin_fixture.hpp"
#include "render/test_kernels.hpp"

#include <tg/sdk/blob.hpp>

#include <cstdlib>
#include <cstring>

namespace {

std::span<const std::byte> code_of(const tg::sdk::Blob& blob) { // after "entry\0"
  const auto* nul = static_cast<const std::byte*>(std::memchr(blob.payload.data(), 0, blob.payload.size()));
  BOOST_REQUIRE(nul != nullptr);
  return std::span(blob.payload).subspan(size_t(nul - blob.payload.data()) + 1);
}

BOOST_AUTO_TEST_CASE(corpus_compiles_to_sm90_cubin) {
  int compiled = 0;
  for (const auto& k : tgtest::render_test_kernels()) {
    BOOST_TEST_CONTEXT("kernel " << k.name) {
      tgtest::Compiled c;
      tgtest::Status s = tgtest::try_compile(k.ir, &c, 0, 2, "sm_90");
      BOOST_REQUIRE_MESSAGE(s.ok(), s.message + "\n" + s.log);
      tg::sdk::Blob blob = tg::sdk::open_blob(c.binary, "cuda", "sm_90");
      auto code = code_of(blob);
      BOOST_REQUIRE(code.size() > 4);
      BOOST_TEST(std::memcmp(code.data(),
                             "\x7f"
                             "ELF",
                             4) == 0);
      ++compiled;
    }
  }
  BOOST_TEST(compiled > 40);
}

BOOST_AUTO_TEST_CASE(bad_targets_are_refused) {
  const auto kernels = tgtest::render_test_kernels();
  const auto& k = kernels.front();
  tgtest::Compiled c;
  BOOST_TEST(tgtest::try_compile(k.ir, &c, 0, 2, "sm_50").code == TG_ERROR_INVALID_ARGUMENT);
  BOOST_TEST(tgtest::try_compile(k.ir, &c, 0, 2, "gfx90a").code == TG_ERROR_INVALID_ARGUMENT);
}

BOOST_AUTO_TEST_CASE(device_count_says_what_is_missing) {
  int32_t count = 0;
  tgtest::Status s = tgtest::take(tgtest::api().device_count(&count));
  if (s.ok()) return; // a GPU machine
  BOOST_TEST(s.code == TG_ERROR_UNAVAILABLE);
  BOOST_TEST_MESSAGE(s.message);
  BOOST_TEST((s.message.find("no NVIDIA driver") != std::string::npos ||
              s.message.find("driver present but") != std::string::npos));
  // ctest names the driver it loads (TG_CUDA_DRIVER) and the reason that driver must produce
  if (const char* expect = std::getenv("TG_TEST_CUDA_UNAVAILABLE"))
    BOOST_TEST(s.message.find(expect) != std::string::npos,
               "'" << s.message << "' should say '" << expect << "'");
}

} // namespace
