// The CUDA plugin without a GPU: NVRTC builds every golden-corpus kernel into an sm_90 cubin (an
// ELF image inside the blob), refuses other targets; device_count says why nothing runs.
#include "../tools/conform/wgmma_kernel.hpp"
#include "plugin_fixture.hpp"
#include "render/test_kernels.hpp"

#include <tg/sdk/blob.hpp>
#include <tg/sdk/interpreter.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

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

// IR 1.2 WGMMA (tools/conform/wgmma_kernel.hpp): the plugin builds it for sm_90a only (sm_90 as
// the target; sm_80 is refused as unimplemented); on a Hopper GPU the kernel runs and matches a
// double matmul of the same 16-bit inputs (two warpgroups, three k steps, padded tile strides).
BOOST_AUTO_TEST_CASE(wgmma_builds_for_sm_90a_and_runs_on_hopper) {
  for (tg_dtype dt : {TG_DTYPE_FLOAT16, TG_DTYPE_BFLOAT16})
    for (auto [n, k, groups] : {std::array<int, 3>{64, 16, 1}, {128, 48, 2}, {256, 32, 1}}) {
      const auto w = tg::conform::wgmma_matmul_kernel(dt, n, k, groups);
      BOOST_TEST_CONTEXT(tg::sdk::dtype_name(dt) << " n " << n << " k " << k << " groups " << groups) {
        tgtest::Compiled c;
        const tgtest::Status s = tgtest::try_compile(w.ir, &c, 0, 2, "sm_90");
        BOOST_REQUIRE_MESSAGE(s.ok(), s.message + "\n" + s.log);
        const tgtest::Status old = tgtest::try_compile(w.ir, &c, 0, 2, "sm_80");
        BOOST_TEST(old.code == TG_ERROR_UNIMPLEMENTED);
        BOOST_TEST(old.message.find("sm_90a") != std::string::npos, old.message);
        int32_t count = 0;
        if (!tgtest::take(tgtest::api().device_count(&count)).ok() || count == 0) continue; // no GPU here
        tgtest::Device device;
        if (std::string(device.properties().arch) != "sm_90") {
          BOOST_TEST_MESSAGE("not a Hopper GPU: the WGMMA kernel is not run");
          continue;
        }
        std::mt19937 rng(5);
        std::vector<uint16_t> a(size_t(w.m * w.k)), b(size_t(w.k * w.n));
        std::vector<double> av, bv;
        for (auto* v : {&a, &b})
          for (auto& x : *v) {
            const double r = std::uniform_real_distribution<double>(-2, 2)(rng);
            x = dt == TG_DTYPE_FLOAT16 ? tg::sdk::float_to_half_bits(r)
                                       : tg::sdk::float_to_bfloat16_bits(float(r));
            (v == &a ? av : bv)
                .push_back(dt == TG_DTYPE_FLOAT16 ? tg::sdk::half_bits_to_double(x)
                                                  : tg::sdk::bfloat16_bits_to_double(x));
          }
        tgtest::Buffer da(device, a), db(device, b), dd(device, uint64_t(w.m * w.n) * 4);
        const tgtest::Program program(device, c.binary);
        program.launch({1, 1, 1}, {uint32_t(w.threads), 1, 1}, {dd.arg(), da.arg(), db.arg()});
        const auto got = dd.download<float>(size_t(w.m * w.n));
        double worst = 0;
        for (int i = 0; i < w.m; ++i)
          for (int j = 0; j < w.n; ++j) {
            double want = 0, scale = 0;
            for (int kk = 0; kk < w.k; ++kk) {
              want += av[size_t(i * w.k + kk)] * bv[size_t(kk * w.n + j)];
              scale += std::fabs(av[size_t(i * w.k + kk)] * bv[size_t(kk * w.n + j)]);
            }
            worst =
                std::max(worst, std::fabs(double(got[size_t(i * w.n + j)]) - want) / std::max(scale, 1.0));
          }
        BOOST_TEST(worst < 1e-4, "worst error " << worst); // a layout error is O(1)
      }
    }
}
