// CPU-specific kernel checks: transcendental accuracy against double-precision libm, and every opt
// level. The generic kernel corpus runs in `tg conform` (kernels/*), checked by the SDK interpreter.
#include "plugin_fixture.hpp"

#include <cmath>
#include <numeric>

using namespace tgtest;
using tg::sdk::KernelBuilder;
using Ref = KernelBuilder::Ref;

namespace {

constexpr uint32_t kGroup = 64;

// c[i] = a[i] + b[i] for i < n, with i = group_id * 64 + local_id and an IF bounds check.
KernelBuilder vector_add_if(tg_dtype dt) {
  KernelBuilder k("vector_add");
  Ref a = k.global(0, dt), b = k.global(1, dt), c = k.global(2, dt);
  Ref n = k.var(0, TG_DTYPE_INT32);
  Ref i = k.add(k.mul(k.group_id(0), k.i32(kGroup)), k.local_id(0));
  Ref in_bounds = k.if_(k.cmplt(i, n));
  Ref sum = k.add(k.load(k.index(a, i)), k.load(k.index(b, i)));
  k.store(k.index(c, i), sum);
  k.end_if(in_bounds);
  return k;
}

uint32_t groups_for(uint32_t n) { return (n + kGroup - 1) / kGroup; }

void run_vector_add_at(uint32_t level) {
  Device device;
  auto k = vector_add_if(TG_DTYPE_FLOAT32);
  Program program(device, k, level);
  const uint32_t n = 300;
  std::vector<float> a(n, 1.25f), b(n);
  std::iota(b.begin(), b.end(), 0.0f);
  Buffer ba(device, a), bb(device, b), bc(device, std::vector<float>(n, 0.0f));
  program.launch({groups_for(n), 1, 1}, {kGroup, 1, 1}, {ba.arg(), bb.arg(), bc.arg()},
                 {scalar_i32(int32_t(n))});
  auto c = bc.download<float>(n);
  for (uint32_t i = 0; i < n; ++i) BOOST_REQUIRE_EQUAL(c[i], a[i] + b[i]);
}

} // namespace

BOOST_AUTO_TEST_SUITE(cpu_kernels)

BOOST_AUTO_TEST_CASE(transcendental_f32_and_f64) {
  for (tg_dtype dt : {TG_DTYPE_FLOAT32, TG_DTYPE_FLOAT64}) {
    KernelBuilder k("transcendental");
    Ref in = k.global(0, dt), out = k.global(1, dt);
    Ref i = k.group_id(0);
    Ref x = k.load(k.index(in, i));
    Ref five = k.const_int(TG_DTYPE_INT32, 5);
    const tg_op ops[] = {TG_OP_SIN, TG_OP_EXP2, TG_OP_LOG2, TG_OP_SQRT, TG_OP_RECIP, TG_OP_TRUNC, TG_OP_NEG};
    for (int j = 0; j < 7; ++j) k.store(k.index(out, k.add(k.mul(i, k.i32(7)), k.i32(j))), k.alu(ops[j], x));
    (void)five;
    Device device;
    Program program(device, k);
    const std::vector<double> xs = {0.5, 1.0, 2.75, 10.0, 100.25, 0.001, 3.14159};
    const uint32_t n = uint32_t(xs.size());
    std::vector<double> got(n * 7);
    if (dt == TG_DTYPE_FLOAT32) {
      std::vector<float> xf(xs.begin(), xs.end());
      std::vector<float> xin;
      for (double v : xs) xin.push_back(float(v));
      Buffer bi(device, xin), bo(device, std::vector<float>(n * 7, 0.0f));
      program.launch({n, 1, 1}, {1, 1, 1}, {bi.arg(), bo.arg()});
      auto o = bo.download<float>(n * 7);
      for (size_t j = 0; j < o.size(); ++j) got[j] = double(o[j]);
    } else {
      Buffer bi(device, xs), bo(device, std::vector<double>(n * 7, 0.0));
      program.launch({n, 1, 1}, {1, 1, 1}, {bi.arg(), bo.arg()});
      got = bo.download<double>(n * 7);
    }
    const double tol = dt == TG_DTYPE_FLOAT32 ? 1e-6 : 1e-14; // relative
    for (uint32_t e = 0; e < n; ++e) {
      double v = dt == TG_DTYPE_FLOAT32 ? double(float(xs[e])) : xs[e];
      double want[7] = {std::sin(v), std::exp2(v), std::log2(v), std::sqrt(v), 1.0 / v, std::trunc(v), -v};
      for (int j = 0; j < 7; ++j)
        BOOST_CHECK_MESSAGE(std::abs(got[e * 7 + size_t(j)] - want[j]) <=
                                tol * std::max(1.0, std::abs(want[j])),
                            "dtype " << dt << " op " << j << " x=" << v << ": got " << got[e * 7 + size_t(j)]
                                     << ", want " << want[j]);
    }
  }
}

// EXP2 of float32 is a polynomial in the kernel (llvm_renderer.cpp, exp2_polynomial), scalar and
// in vectors: within 2 ulp of exp2 in double rounded to float over [-160, 140] (normal, denormal,
// zero and infinite results), exact at integers, and exp2(-inf) = 0, exp2(inf) = inf, NaN stays NaN.
BOOST_AUTO_TEST_CASE(exp2_f32_within_two_ulp) {
  std::vector<float> xs = {-INFINITY, INFINITY, NAN,    0.0f,    -0.0f,  1e-10f, -149.0f, -149.5f, -150.0f,
                           -126.0f,   -125.99f, 127.0f, 127.99f, 128.0f, 128.5f, -1.0f,   3.0f};
  for (double v = -160.0; v < 140.0; v += 0.00731) xs.push_back(float(v));
  while (xs.size() % 16 != 0) xs.push_back(0.5f);
  const uint32_t n = uint32_t(xs.size());
  Device device;
  for (uint16_t lanes : {uint16_t(1), uint16_t(8), uint16_t(16)}) {
    BOOST_TEST_CONTEXT(lanes << " lanes") {
      KernelBuilder k("exp2_lanes");
      Ref in = k.global(0, TG_DTYPE_FLOAT32), out = k.global(1, TG_DTYPE_FLOAT32);
      Ref i = k.mul(k.group_id(0), k.i32(lanes));
      k.store(k.index(out, i), k.alu(TG_OP_EXP2, k.load(k.index(in, i), lanes)));
      Program program(device, k);
      Buffer bi(device, xs), bo(device, std::vector<float>(n, -1.0f));
      program.launch({n / lanes, 1, 1}, {1, 1, 1}, {bi.arg(), bo.arg()});
      const auto got = bo.download<float>(n);
      int worst = 0;
      for (uint32_t e = 0; e < n; ++e) {
        const float want = float(std::exp2(double(xs[e])));
        if (std::isnan(want)) {
          BOOST_CHECK_MESSAGE(std::isnan(got[e]), "x=" << xs[e] << ": got " << got[e]);
          continue;
        }
        if (std::isinf(want) || want == 0.0f || xs[e] == std::trunc(xs[e])) {
          BOOST_CHECK_MESSAGE(got[e] == want, "x=" << xs[e] << ": got " << got[e] << ", want " << want);
          continue;
        }
        const float ulp = std::nextafter(want, INFINITY) - want;
        const int ulps = int(std::lround(std::abs(double(got[e]) - double(want)) / double(ulp)));
        worst = std::max(worst, ulps);
        BOOST_CHECK_MESSAGE(ulps <= 2, "x=" << xs[e] << ": got " << got[e] << ", want " << want << " ("
                                            << ulps << " ulp)");
      }
      BOOST_TEST_MESSAGE(lanes << " lanes: worst " << worst << " ulp over " << n << " values");
    }
  }
}

BOOST_AUTO_TEST_CASE(opt_levels_0_1_3_give_the_same_results) {
  for (uint32_t level : {0u, 1u, 3u}) {
    BOOST_TEST_CONTEXT("opt_level " << level) { run_vector_add_at(level); }
  }
}

BOOST_AUTO_TEST_SUITE_END()
