// GLSL: every kernel is rendered, compiled to SPIR-V for Vulkan 1.1 by shaderc (the static
// shaderc_combined; Debian's libshaderc.so is broken) and validated by SPIRV-Tools.
#include "render_test_util.hpp"

#include <tg/sdk/render/render.hpp>

#include <boost/test/unit_test.hpp>

#include <shaderc/shaderc.hpp>
#include <spirv-tools/libspirv.hpp>

namespace {

BOOST_AUTO_TEST_CASE(every_kernel_compiles_to_valid_spirv) {
  shaderc::Compiler compiler;
  shaderc::CompileOptions options;
  options.SetTargetEnvironment(shaderc_target_env_vulkan, shaderc_env_version_vulkan_1_1);
  spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_1);
  std::string messages;
  tools.SetMessageConsumer([&](spv_message_level_t, const char*, const spv_position_t& pos, const char* m) {
    messages += "word " + std::to_string(pos.index) + ": " + m + "\n";
  });
  int compiled = 0, refused = 0;
  for (const auto& k : tgtest::render_test_kernels()) {
    BOOST_TEST_CONTEXT("kernel " << k.name) {
      tg::sdk::KernelIR ir = tgtest::parse(k);
      tg::sdk::render::Options ro;
      ro.glsl_local_size = k.local;
      tg::sdk::render::Source src;
      try {
        src = tg::sdk::render::render(tg::sdk::render::Dialect::glsl, ir, ro);
      } catch (const tg::sdk::PluginError& e) { // nothing is refused today; a refusal must name its dtype
        BOOST_CHECK_MESSAGE(std::string(e.what()).find("float64") != std::string::npos, e.what());
        ++refused;
        continue;
      }
      auto result =
          compiler.CompileGlslToSpv(src.text, shaderc_compute_shader, (k.name + ".comp").c_str(), options);
      BOOST_CHECK_MESSAGE(result.GetCompilationStatus() == shaderc_compilation_status_success,
                          result.GetErrorMessage() + "\n" + src.text);
      if (result.GetCompilationStatus() != shaderc_compilation_status_success) continue;
      std::vector<uint32_t> spirv(result.cbegin(), result.cend());
      messages.clear();
      BOOST_CHECK_MESSAGE(tools.Validate(spirv), "spirv-val:\n" + messages + "\n" + src.text);
      ++compiled;
    }
  }
  BOOST_TEST_MESSAGE("GLSL: " << compiled << " kernels compiled and validated, " << refused << " refused");
  BOOST_TEST(compiled > 40);
}

} // namespace
