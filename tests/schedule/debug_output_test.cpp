// DEBUG output and NOOPT: the kernel listing at DEBUG=3 is stable (golden); NOOPT changes the
// kernel but not the result.
#include "kernel/engine/config.hpp"
#include "kernel/tensor/tensor.hpp"

#include <boost/test/unit_test.hpp>

#include <iostream>
#include <sstream>

using namespace tg;

namespace {
struct CaptureStdout {
  std::ostringstream out;
  std::streambuf* old;
  CaptureStdout() : old(std::cout.rdbuf(out.rdbuf())) {}
  ~CaptureStdout() { std::cout.rdbuf(old); }
};
struct DebugLevel {
  explicit DebugLevel(int level) { set_debug_level(level); }
  ~DebugLevel() { set_debug_level(0); }
};
} // namespace

// Golden: the linear kernel IR of c = a + b over 8 floats, as DEBUG=3 prints it before the
// plugin's rendered source. It changes only when codegen changes; update it deliberately.
BOOST_AUTO_TEST_CASE(debug3_prints_the_kernel_listing_and_plugin_source) {
  Tensor a = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6, 7, 8}, {8});
  Tensor b = Tensor::from_vector<float>({8, 7, 6, 5, 4, 3, 2, 1}, {8});
  std::string text;
  {
    DebugLevel debug(3);
    CaptureStdout capture;
    (a + b).realize();
    text = capture.out.str();
  }
  const std::string golden = "kernel E_8 (3 buffers, 0 scalars)\n"
                             "  %0 = DEFINE_GLOBAL float32*\n"
                             "  %1 = CONST int32 0\n"
                             "  %2 = CONST int32 8\n"
                             "  %3 = DEFINE_GLOBAL float32* [1, 0]\n"
                             "  %4 = DEFINE_GLOBAL float32* [2, 0]\n"
                             "  %5 = RANGE int32 %1, %2\n"
                             "    %6 = INDEX float32* %0, %5\n"
                             "    %7 = INDEX float32* %3, %5\n"
                             "    %8 = LOAD float32 %7\n"
                             "    %9 = INDEX float32* %4, %5\n"
                             "    %10 = LOAD float32 %9\n"
                             "    %11 = ADD float32 %8, %10\n"
                             "    %12 = STORE void %6, %11\n"
                             "  %13 = ENDRANGE void %5\n";
  BOOST_TEST(text.find(golden) != std::string::npos, "DEBUG=3 output was:\n" << text);
  BOOST_TEST(text.find("--- cpu source") != std::string::npos);
  BOOST_TEST(text.find("define void @tg_kernel_E_8") != std::string::npos); // the plugin's LLVM IR
  BOOST_TEST(text.find("*** CPU") != std::string::npos);                    // the DEBUG=2 line
  BOOST_TEST(text.find("realize: 1 kernel") != std::string::npos);          // the DEBUG=1 line
}

BOOST_AUTO_TEST_CASE(noopt_changes_the_kernel_not_the_result) {
  std::vector<float> v(64 * 64);
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(i % 13) - 6.0f;
  Tensor a = Tensor::from_vector(v, {64, 64});
  auto run = [&](bool noopt) {
    set_noopt(noopt);
    DebugLevel debug(4);
    CaptureStdout capture;
    Tensor r = a.matmul(a) + 1.0f;
    auto values = r.to_vector<float>();
    set_noopt(false);
    return std::make_pair(values, capture.out.str());
  };
  auto [optimized, opt_text] = run(false);
  auto [plain, plain_text] = run(true);
  BOOST_TEST(optimized == plain);
  // 16 columns, then 4 or 8 rows: the row count follows the host's vector width (AVX2 / AVX-512)
  BOOST_TEST(opt_text.find("=== lowered ([UPCAST(1,16), UPCAST(0,") != std::string::npos, // then a LOOP
             opt_text.substr(0, 2000));
  BOOST_TEST(plain_text.find("=== lowered ([] groups=4096)") != std::string::npos,
             plain_text.substr(0, 2000));
}

BOOST_AUTO_TEST_CASE(index_arithmetic_is_simplified) {
  // t+3+4 compiles to +7: a shrink by 3 then by 4 reads at offset 7 with no extra add
  Tensor a = Tensor::arange(0, 32, 1, dtypes::float32).contiguous().realize();
  Tensor t = a.shrink({{3, 32}}).shrink({{4, 29}}) + 0.0f;
  std::string text;
  {
    DebugLevel debug(3);
    CaptureStdout capture;
    auto got = t.to_vector<float>();
    BOOST_TEST(got.front() == 7.0f);
    BOOST_TEST(got.back() == 31.0f);
    text = capture.out.str();
  }
  BOOST_TEST(text.find("CONST int32 7") != std::string::npos, text);
  BOOST_TEST(text.find("CONST int32 3\n") == std::string::npos, text);
}
