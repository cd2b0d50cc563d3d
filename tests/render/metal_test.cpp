// Metal: nothing on our machines compiles the Metal Shading Language, so every kernel's rendering
// is compared exactly with a reviewed golden file, tests/data/render/metal/<kernel>.metal.
// TG_UPDATE_GOLDEN=1 rewrites the files (review the diff before committing).
#include "render_test_util.hpp"

#include <tg/sdk/render/render.hpp>

#include <boost/test/unit_test.hpp>

namespace {

BOOST_AUTO_TEST_CASE(every_kernel_matches_its_golden_text) {
  const std::filesystem::path dir = TG_SOURCE_DIR "/tests/data/render/metal";
  const bool update =
      std::getenv("TG_UPDATE_GOLDEN") != nullptr && std::string(std::getenv("TG_UPDATE_GOLDEN")) == "1";
  int compared = 0;
  for (const auto& k : tgtest::render_test_kernels()) {
    BOOST_TEST_CONTEXT("kernel " << k.name) {
      std::string text;
      try {
        text = tg::sdk::render::render(tg::sdk::render::Dialect::metal, tgtest::parse(k)).text;
      } catch (const tg::sdk::PluginError& e) {
        text = std::string("// refused: ") + e.what() + "\n"; // the refusal is golden too
      }
      auto path = dir / (k.name + ".metal");
      if (update) {
        std::filesystem::create_directories(dir);
        tgtest::write_text(path, text);
      }
      BOOST_REQUIRE_MESSAGE(std::filesystem::exists(path),
                            path.string() + " is missing (TG_UPDATE_GOLDEN=1 writes it)");
      std::string want = tgtest::read_text(path);
      BOOST_CHECK_MESSAGE(want == text, path.string() + " differs; rendered now:\n" + text);
      ++compared;
    }
  }
  BOOST_TEST(compared > 40);
}

} // namespace
