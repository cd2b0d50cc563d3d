// CUDA C: every kernel is rendered and compiled to PTX for sm_75 by NVRTC (no GPU or driver is
// needed). Without the CUDA toolkit at configure time the suite is still registered and skips.
#include "render_test_util.hpp"

#include <tg/sdk/render/render.hpp>

#include <boost/test/unit_test.hpp>

#ifdef TG_HAVE_NVRTC
#include <nvrtc.h>
#endif

namespace {

BOOST_AUTO_TEST_CASE(every_kernel_compiles_to_ptx_with_nvrtc) {
#ifndef TG_HAVE_NVRTC
  tgtest::skip_suite("the CUDA toolkit (NVRTC) was not found when this build was configured");
#else
  const std::string include = std::string("--include-path=") + TG_CUDA_INCLUDE_DIR;
  int compiled = 0;
  for (const auto& k : tgtest::render_test_kernels()) {
    BOOST_TEST_CONTEXT("kernel " << k.name) {
      auto src = tg::sdk::render::render(tg::sdk::render::Dialect::cuda, tgtest::parse(k));
      nvrtcProgram prog = nullptr;
      BOOST_REQUIRE(nvrtcCreateProgram(&prog, src.text.c_str(), (k.name + ".cu").c_str(), 0, nullptr,
                                       nullptr) == NVRTC_SUCCESS);
      const char* opts[] = {"--gpu-architecture=compute_75", include.c_str()};
      nvrtcResult rc = nvrtcCompileProgram(prog, 2, opts);
      size_t log_size = 0;
      nvrtcGetProgramLogSize(prog, &log_size);
      std::string log(log_size, '\0');
      nvrtcGetProgramLog(prog, log.data());
      size_t ptx_size = 0;
      if (rc == NVRTC_SUCCESS) nvrtcGetPTXSize(prog, &ptx_size);
      std::string ptx(ptx_size, '\0');
      if (rc == NVRTC_SUCCESS) nvrtcGetPTX(prog, ptx.data());
      nvrtcDestroyProgram(&prog);
      BOOST_CHECK_MESSAGE(rc == NVRTC_SUCCESS,
                          std::string(nvrtcGetErrorString(rc)) + "\n" + log + "\n" + src.text);
      BOOST_CHECK_MESSAGE(ptx.find(".entry " + src.entry) != std::string::npos,
                          "no entry " + src.entry + " in PTX");
      ++compiled;
    }
  }
  BOOST_TEST_MESSAGE("CUDA C: " << compiled << " kernels compiled to PTX");
  BOOST_TEST(compiled > 40);
#endif
}

} // namespace
