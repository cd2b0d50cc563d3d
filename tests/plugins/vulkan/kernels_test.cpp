// Launches conform cannot see: work-group sizes through specialization constants (LOCAL_ID with
// local size 4x1x1, local memory and a barrier), scalars in push constants, float64 exp2/log2/sin
// (GLSL has none: the glsl dialect's series) against libm, and timestamps.
#include "vulkan_fixture.hpp"

#include <cmath>
#include <limits>
#include <vector>

using namespace tgtest;
using tg::sdk::KernelBuilder;
using Ref = KernelBuilder::Ref;

BOOST_AUTO_TEST_CASE(local_size_4_comes_from_specialization_constants) {
  // out[g * 4 + l] = g * 100 + l: every (group, local id) pair written once.
  KernelBuilder k("local_ids");
  Ref out = k.global(0, TG_DTYPE_INT32);
  Ref g = k.group_id(0), l = k.local_id(0);
  k.store(k.index(out, k.add(k.mul(g, k.i32(4)), l)), k.add(k.mul(g, k.i32(100)), l));
  Device device;
  Program program(device, k);
  Buffer b(device, std::vector<int32_t>(12, -1));
  program.launch({3, 1, 1}, {4, 1, 1}, {b.arg()});
  const std::vector<int32_t> expected{0, 1, 2, 3, 100, 101, 102, 103, 200, 201, 202, 203};
  BOOST_TEST(b.download<int32_t>(12) == expected, boost::test_tools::per_element());
  // The same program with another local size: a second pipeline, the same shader.
  Buffer half(device, std::vector<int32_t>(12, -1));
  program.launch({3, 1, 1}, {2, 1, 1}, {half.arg()});
  const std::vector<int32_t> expected_half{0, 1, -1, -1, 100, 101, -1, -1, 200, 201, -1, -1};
  BOOST_TEST(half.download<int32_t>(12) == expected_half, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(local_memory_and_a_barrier_reverse_each_group) {
  // shared[l] = in[g*4 + l]; barrier; out[g*4 + l] = shared[3 - l]
  KernelBuilder k("reverse4");
  Ref in = k.global(0, TG_DTYPE_FLOAT32), out = k.global(1, TG_DTYPE_FLOAT32);
  Ref shared = k.local(4, TG_DTYPE_FLOAT32);
  Ref g = k.group_id(0), l = k.local_id(0);
  Ref at = k.add(k.mul(g, k.i32(4)), l);
  k.store(k.index(shared, l), k.load(k.index(in, at)));
  k.barrier();
  k.store(k.index(out, at), k.load(k.index(shared, k.add(k.i32(3), k.alu(TG_OP_NEG, l)))));
  Device device;
  Program program(device, k);
  Buffer bin(device, std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}), bout(device, std::vector<float>(8, 0));
  program.launch({2, 1, 1}, {4, 1, 1}, {bin.arg(), bout.arg()});
  BOOST_TEST(bout.download<float>(8) == (std::vector<float>{4, 3, 2, 1, 8, 7, 6, 5}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(scalars_travel_in_push_constants) {
  // out[0] = a + b (int32), out64[0] = c * 2 (float64), out[1] = d (int8 widened)
  KernelBuilder k("scalars");
  Ref out = k.global(0, TG_DTYPE_INT32), out64 = k.global(1, TG_DTYPE_FLOAT64);
  Ref a = k.var(0, TG_DTYPE_INT32), b = k.var(1, TG_DTYPE_INT32), c = k.var(2, TG_DTYPE_FLOAT64);
  Ref d = k.var(3, TG_DTYPE_INT8);
  k.store(k.index(out, k.i32(0)), k.add(a, b));
  k.store(k.index(out64, k.i32(0)), k.mul(c, k.const_float(TG_DTYPE_FLOAT64, 2.0)));
  k.store(k.index(out, k.i32(1)), k.cast(d, TG_DTYPE_INT32));
  Device device;
  Program program(device, k);
  Buffer bo(device, std::vector<int32_t>(2, 0)), bo64(device, std::vector<double>(1, 0));
  tg_scalar_arg cs{}, ds{};
  cs.dtype = TG_DTYPE_FLOAT64;
  cs.value.f = 1.0 / 3.0;
  ds.dtype = TG_DTYPE_INT8;
  ds.value.i = -7;
  program.launch({1, 1, 1}, {1, 1, 1}, {bo.arg(), bo64.arg()}, {scalar_i32(40), scalar_i32(2), cs, ds});
  BOOST_TEST(bo.download<int32_t>(2) == (std::vector<int32_t>{42, -7}), boost::test_tools::per_element());
  BOOST_TEST(bo64.download<double>(1)[0] == 2.0 / 3.0);
}

BOOST_AUTO_TEST_CASE(float64_exp2_log2_sin_match_libm) {
  KernelBuilder k("f64_math");
  Ref in = k.global(0, TG_DTYPE_FLOAT64), out = k.global(1, TG_DTYPE_FLOAT64);
  Ref i = k.group_id(0);
  Ref x = k.load(k.index(in, i));
  const tg_op ops[] = {TG_OP_EXP2, TG_OP_LOG2, TG_OP_SIN};
  for (int j = 0; j < 3; ++j) k.store(k.index(out, k.add(k.mul(i, k.i32(3)), k.i32(j))), k.alu(ops[j], x));
  const std::vector<double> xs{0.0, 1.0, 0.5, 3.75, -2.25, 10.1, 100.3, 1e-3, 1e5, -700.5, 1000.0, 2.0 / 3.0};
  Device device;
  Program program(device, k);
  Buffer bin(device, xs), bout(device, std::vector<double>(xs.size() * 3, 0));
  program.launch({uint32_t(xs.size()), 1, 1}, {1, 1, 1}, {bin.arg(), bout.arg()});
  auto got = bout.download<double>(xs.size() * 3);
  for (size_t n = 0; n < xs.size(); ++n) {
    const double v = xs[n];
    const double inf = std::numeric_limits<double>::infinity(),
                 nan = std::numeric_limits<double>::quiet_NaN();
    const double want[3] = {std::exp2(v), v > 0 ? std::log2(v) : (v == 0 ? -inf : nan), std::sin(v)};
    for (int j = 0; j < 3; ++j) {
      const double g = got[n * 3 + size_t(j)], w = want[j];
      BOOST_TEST_CONTEXT("op " << j << " of x = " << v << ": got " << g << ", libm " << w) {
        if (std::isnan(w))
          BOOST_TEST(std::isnan(g));
        else if (std::isinf(w))
          BOOST_TEST(g == w);
        else
          BOOST_TEST(std::fabs(g - w) <= 4e-16 * std::max(1.0, std::fabs(w)));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(a_timed_launch_reports_a_nonzero_time) {
  KernelBuilder k("busy");
  Ref out = k.global(0, TG_DTYPE_FLOAT32);
  Ref i = k.add(k.mul(k.group_id(0), k.i32(64)), k.local_id(0));
  Ref acc = k.acc(k.f32(0));
  Ref r = k.range(k.i32(0), k.i32(256));
  k.assign(acc, k.add(acc, k.alu(TG_OP_SIN, k.cast(r, TG_DTYPE_FLOAT32))));
  k.end_range(r);
  k.store(k.index(out, i), acc);
  Device device;
  Program program(device, k);
  Buffer b(device, std::vector<float>(64 * 64, 0));
  uint64_t ns = 0;
  Status s = program.try_launch({64, 1, 1}, {64, 1, 1}, {b.arg()}, {}, &ns);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.message);
  BOOST_TEST(ns > 0u);
  BOOST_TEST_MESSAGE("64x64 threads x 256 sin: " << ns << " ns");
  const float expected = [] {
    float a = 0;
    for (int j = 0; j < 256; ++j) a += std::sin(float(j));
    return a;
  }();
  BOOST_TEST(std::fabs(b.download<float>(1)[0] - expected) < 1e-3f);
}

BOOST_AUTO_TEST_CASE(float32_specials_follow_ieee) {
  KernelBuilder k("f32_specials");
  Ref in = k.global(0, TG_DTYPE_FLOAT32), out = k.global(1, TG_DTYPE_FLOAT32);
  Ref i = k.group_id(0);
  Ref x = k.load(k.index(in, i));
  const tg_op ops[] = {TG_OP_EXP2, TG_OP_LOG2, TG_OP_SQRT, TG_OP_RECIP};
  for (int j = 0; j < 4; ++j) k.store(k.index(out, k.add(k.mul(i, k.i32(4)), k.i32(j))), k.alu(ops[j], x));
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> xs{0.0f, inf, -inf, 200.0f, -200.0f, 1.0f};
  Device device;
  Program program(device, k);
  Buffer bin(device, xs), bout(device, std::vector<float>(xs.size() * 4, 0));
  program.launch({uint32_t(xs.size()), 1, 1}, {1, 1, 1}, {bin.arg(), bout.arg()});
  auto got = bout.download<float>(xs.size() * 4);
  for (size_t n = 0; n < xs.size(); ++n)
    BOOST_TEST_MESSAGE("x=" << xs[n] << " exp2 " << got[n * 4] << " log2 " << got[n * 4 + 1] << " sqrt "
                            << got[n * 4 + 2] << " recip " << got[n * 4 + 3]);
}

BOOST_AUTO_TEST_CASE(exp2_of_a_product_with_log2_keeps_infinities) {
  // pow(x, -2) as the tensor layer writes it: exp2(-2 * log2(|x|)); at x = 0 that is +inf.
  KernelBuilder k("pow_minus_2");
  Ref in = k.global(0, TG_DTYPE_FLOAT32), out = k.global(1, TG_DTYPE_FLOAT32);
  Ref i = k.group_id(0);
  Ref x = k.load(k.index(in, i));
  Ref ax = k.alu(TG_OP_MAX, x, k.alu(TG_OP_NEG, x));
  k.store(k.index(out, i), k.alu(TG_OP_EXP2, k.mul(k.f32(-2.0f), k.alu(TG_OP_LOG2, ax))));
  Device device;
  Program program(device, k);
  Buffer bin(device, std::vector<float>{0.0f, 2.0f, -0.5f}), bout(device, std::vector<float>(3, 0));
  program.launch({3, 1, 1}, {1, 1, 1}, {bin.arg(), bout.arg()});
  const float inf = std::numeric_limits<float>::infinity();
  BOOST_TEST(bout.download<float>(3) == (std::vector<float>{inf, 0.25f, 4.0f}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(division_by_zero_gives_infinities_and_nan) {
  // out[i] = in[i] / zero[i] (from memory), and out[3 + i] = in[i] / 0 (a literal). Mesa 22.3's
  // lavapipe miscompiles the literal case (an infinite constant after folding: stores vanish or
  // hold garbage), so only the first half is asserted; the second is printed (docs/vulkan.md).
  KernelBuilder k("div_zero");
  Ref in = k.global(0, TG_DTYPE_FLOAT32), zero = k.global(1, TG_DTYPE_FLOAT32),
      out = k.global(2, TG_DTYPE_FLOAT32);
  Ref i = k.group_id(0);
  Ref x = k.load(k.index(in, i));
  k.store(k.index(out, i), k.alu(TG_OP_FDIV, x, k.load(k.index(zero, i))));
  k.store(k.index(out, k.add(i, k.i32(3))), k.alu(TG_OP_FDIV, x, k.f32(0.0f)));
  Device device;
  Program program(device, k);
  Buffer bin(device, std::vector<float>{1.0f, -1.0f, 0.0f}), bz(device, std::vector<float>(3, 0.0f)),
      bout(device, std::vector<float>(6, 7.0f));
  program.launch({3, 1, 1}, {1, 1, 1}, {bin.arg(), bz.arg(), bout.arg()});
  auto got = bout.download<float>(6);
  const float inf = std::numeric_limits<float>::infinity();
  BOOST_TEST(got[0] == inf);
  BOOST_TEST(got[1] == -inf);
  BOOST_TEST(std::isnan(got[2]));
  BOOST_TEST_MESSAGE("{1, -1, 0} / literal 0: " << got[3] << ", " << got[4] << ", " << got[5]
                                                << " (IEEE: inf, -inf, nan)");
}
