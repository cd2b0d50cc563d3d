// Kernels written in the kernel IR, run on the CPU plugin, compared with plain C++ loops.
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

// The same with gated loads and a gated store instead of IF.
KernelBuilder vector_add_gated() {
  KernelBuilder k("vector_add_gated");
  Ref a = k.global(0, TG_DTYPE_FLOAT32), b = k.global(1, TG_DTYPE_FLOAT32), c = k.global(2, TG_DTYPE_FLOAT32);
  Ref n = k.var(0, TG_DTYPE_INT32);
  Ref i = k.add(k.mul(k.group_id(0), k.i32(kGroup)), k.local_id(0));
  Ref ok = k.cmplt(i, n);
  Ref zero = k.f32(0.0f);
  Ref sum = k.add(k.load_gated(k.index(a, i), ok, zero), k.load_gated(k.index(b, i), ok, zero));
  k.store_gated(k.index(c, i), sum, ok);
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

BOOST_AUTO_TEST_CASE(vector_add_f32_with_if_bounds_check) {
  Device device;
  auto k = vector_add_if(TG_DTYPE_FLOAT32);
  Program program(device, k);
  for (uint32_t n : {1u, 63u, 1000u, 100003u}) {
    BOOST_TEST_CONTEXT("n = " << n) {
      std::vector<float> a(n), b(n);
      for (uint32_t i = 0; i < n; ++i) {
        a[i] = float(i) * 0.5f;
        b[i] = 1.0f / float(i + 1);
      }
      Buffer ba(device, a), bb(device, b);
      // One element of guard band after c: must stay untouched.
      Buffer bc(device, uint64_t(n + 16) * sizeof(float));
      bc.upload(std::vector<float>(n + 16, -1.0f));
      program.launch({groups_for(n), 1, 1}, {kGroup, 1, 1}, {ba.arg(), bb.arg(), bc.arg()},
                     {scalar_i32(int32_t(n))});
      auto c = bc.download<float>(n + 16);
      for (uint32_t i = 0; i < n; ++i) BOOST_REQUIRE_EQUAL(c[i], a[i] + b[i]); // exact: one IEEE add
      for (uint32_t i = n; i < n + 16; ++i) BOOST_REQUIRE_EQUAL(c[i], -1.0f);
    }
  }
}

BOOST_AUTO_TEST_CASE(vector_add_f32_gated) {
  Device device;
  auto k = vector_add_gated();
  Program program(device, k);
  const uint32_t n = 4099;
  std::vector<float> a(n), b(n);
  for (uint32_t i = 0; i < n; ++i) {
    a[i] = std::sin(float(i));
    b[i] = float(i % 17);
  }
  Buffer ba(device, a), bb(device, b), bc(device, std::vector<float>(n + 8, 42.0f));
  program.launch({groups_for(n), 1, 1}, {kGroup, 1, 1}, {ba.arg(), bb.arg(), bc.arg()},
                 {scalar_i32(int32_t(n))});
  auto c = bc.download<float>(n + 8);
  for (uint32_t i = 0; i < n; ++i) BOOST_REQUIRE_EQUAL(c[i], a[i] + b[i]);
  for (uint32_t i = n; i < n + 8; ++i) BOOST_REQUIRE_EQUAL(c[i], 42.0f);
}

BOOST_AUTO_TEST_CASE(vector_add_i32_with_offsets) {
  Device device;
  auto k = vector_add_if(TG_DTYPE_INT32);
  Program program(device, k);
  const uint32_t n = 777;
  std::vector<int32_t> a(n + 4), b(n);
  for (uint32_t i = 0; i < n + 4; ++i) a[i] = int32_t(i * 7919u) - 3000000;
  for (uint32_t i = 0; i < n; ++i) b[i] = -int32_t(i) * 3;
  Buffer ba(device, a), bb(device, b), bc(device, std::vector<int32_t>(n, 0));
  // a is read from element 4 on (a 16-byte offset)
  program.launch({groups_for(n), 1, 1}, {kGroup, 1, 1}, {ba.arg(16), bb.arg(), bc.arg()},
                 {scalar_i32(int32_t(n))});
  auto c = bc.download<int32_t>(n);
  for (uint32_t i = 0; i < n; ++i) BOOST_REQUIRE_EQUAL(c[i], a[i + 4] + b[i]);
}

BOOST_AUTO_TEST_CASE(row_sum_reduction) {
  // out[r] = sum_c in[r * C + c], one work group per row, DEFINE_ACC + RANGE + ASSIGN.
  const int32_t rows = 37, cols = 1029;
  KernelBuilder k("row_sum");
  Ref in = k.global(0, TG_DTYPE_FLOAT32), out = k.global(1, TG_DTYPE_FLOAT32);
  Ref row = k.group_id(0);
  Ref acc = k.acc(k.f32(0.0f));
  Ref c = k.range(k.i32(0), k.i32(cols));
  Ref v = k.load(k.index(in, k.add(k.mul(row, k.i32(cols)), c)));
  k.assign(acc, k.add(acc, v));
  k.end_range(c);
  k.store(k.index(out, row), acc);
  Device device;
  Program program(device, k);
  std::vector<float> data(size_t(rows * cols));
  for (size_t i = 0; i < data.size(); ++i) data[i] = float(int(i % 101) - 50) * 0.25f;
  Buffer bin(device, data), bout(device, std::vector<float>(size_t(rows), 0.0f));
  program.launch({uint32_t(rows), 1, 1}, {1, 1, 1}, {bin.arg(), bout.arg()});
  auto result = bout.download<float>(size_t(rows));
  for (int32_t r = 0; r < rows; ++r) {
    float want = 0.0f;
    for (int32_t j = 0; j < cols; ++j) want += data[size_t(r * cols + j)];
    // quarter-integers summed in any order are exact in float
    BOOST_CHECK_EQUAL(result[size_t(r)], want);
  }
}

BOOST_AUTO_TEST_CASE(matmul_with_scalar_k) {
  // C[M x N] = A[M x K] @ B[K x N]; group (n, m); K is a DEFINE_VAR.
  const int32_t M = 67, K = 45, N = 33;
  KernelBuilder k("matmul");
  Ref a = k.global(0, TG_DTYPE_FLOAT32), b = k.global(1, TG_DTYPE_FLOAT32), c = k.global(2, TG_DTYPE_FLOAT32);
  Ref kk = k.var(0, TG_DTYPE_INT32);
  Ref col = k.group_id(0), row = k.group_id(1);
  Ref acc = k.acc(k.f32(0.0f));
  Ref r = k.range(k.i32(0), kk);
  Ref av = k.load(k.index(a, k.add(k.mul(row, kk), r)));
  Ref bv = k.load(k.index(b, k.add(k.mul(r, k.i32(N)), col)));
  k.assign(acc, k.alu(TG_OP_MULACC, av, bv, acc));
  k.end_range(r);
  k.store(k.index(c, k.add(k.mul(row, k.i32(N)), col)), acc);
  Device device;
  Program program(device, k);
  std::vector<float> A(size_t(M * K)), B(size_t(K * N));
  for (size_t i = 0; i < A.size(); ++i) A[i] = std::cos(float(i) * 0.37f);
  for (size_t i = 0; i < B.size(); ++i) B[i] = std::sin(float(i) * 0.11f) + 0.5f;
  Buffer ba(device, A), bb(device, B), bc(device, std::vector<float>(size_t(M * N), 0.0f));
  program.launch({uint32_t(N), uint32_t(M), 1}, {1, 1, 1}, {ba.arg(), bb.arg(), bc.arg()}, {scalar_i32(K)});
  auto C = bc.download<float>(size_t(M * N));
  for (int32_t i = 0; i < M; ++i)
    for (int32_t j = 0; j < N; ++j) {
      double want = 0;
      for (int32_t p = 0; p < K; ++p) want += double(A[size_t(i * K + p)]) * double(B[size_t(p * N + j)]);
      // float accumulation of 45 terms of magnitude <= 1.5: well within 1e-4 absolute
      BOOST_REQUIRE_SMALL(double(C[size_t(i * N + j)]) - want, 1e-4);
    }
}

BOOST_AUTO_TEST_CASE(local_ids_in_three_dimensions) {
  // out[(z * H + y) * W + x] = x * 10000 + y * 100 + z with x = gx * 4 + lx, y = gy * 2 + ly, z = gz;
  // W, H are not multiples of the local size, so there is a bounds check.
  const int32_t W = 13, H = 7, D = 3;
  KernelBuilder k("local_ids");
  Ref out = k.global(0, TG_DTYPE_INT32);
  Ref x = k.add(k.mul(k.group_id(0), k.i32(4)), k.local_id(0));
  Ref y = k.add(k.mul(k.group_id(1), k.i32(2)), k.local_id(1));
  Ref z = k.add(k.group_id(2), k.local_id(2));
  Ref inside = k.alu(TG_OP_AND, k.cmplt(x, k.i32(W)), k.cmplt(y, k.i32(H)));
  Ref value = k.add(k.add(k.mul(x, k.i32(10000)), k.mul(y, k.i32(100))), z);
  Ref idx = k.add(k.mul(k.add(k.mul(z, k.i32(H)), y), k.i32(W)), x);
  k.store_gated(k.index(out, idx), value, inside);
  Device device;
  Program program(device, k);
  Buffer bout(device, std::vector<int32_t>(size_t(W * H * D), -1));
  program.launch({4, 4, uint32_t(D)}, {4, 2, 1}, {bout.arg()});
  auto got = bout.download<int32_t>(size_t(W * H * D));
  for (int32_t zz = 0; zz < D; ++zz)
    for (int32_t yy = 0; yy < H; ++yy)
      for (int32_t xx = 0; xx < W; ++xx)
        BOOST_REQUIRE_EQUAL(got[size_t((zz * H + yy) * W + xx)], xx * 10000 + yy * 100 + zz);
}

BOOST_AUTO_TEST_CASE(vector_loads_stores_and_lanes) {
  // Each group handles 4 floats: v = load4(a + 4g); out4 = v * v + splat(1); lane sum into s[g].
  const uint32_t groups = 257;
  KernelBuilder k("vec4");
  Ref a = k.global(0, TG_DTYPE_FLOAT32), out = k.global(1, TG_DTYPE_FLOAT32),
      s = k.global(2, TG_DTYPE_FLOAT32);
  Ref base = k.mul(k.group_id(0), k.i32(4));
  Ref v = k.load(k.index(a, base), 4);
  Ref one = k.f32(1.0f);
  std::vector<Ref> ones = {one, one, one, one};
  Ref sq = k.add(k.mul(v, v), k.vectorize(ones));
  k.store(k.index(out, base), sq);
  Ref total = k.add(k.add(k.gep(sq, 0), k.gep(sq, 1)), k.add(k.gep(sq, 2), k.gep(sq, 3)));
  k.store(k.index(s, k.group_id(0)), total);
  Device device;
  Program program(device, k);
  std::vector<float> av(groups * 4);
  for (size_t i = 0; i < av.size(); ++i) av[i] = float(i % 13) - 6.0f;
  Buffer ba(device, av), bo(device, std::vector<float>(av.size(), 0.0f)),
      bs(device, std::vector<float>(groups, 0.0f));
  program.launch({groups, 1, 1}, {1, 1, 1}, {ba.arg(), bo.arg(), bs.arg()});
  auto o = bo.download<float>(av.size());
  auto sums = bs.download<float>(groups);
  for (size_t g = 0; g < groups; ++g) {
    float want = 0;
    float lanes[4];
    for (size_t l = 0; l < 4; ++l) {
      float x = av[g * 4 + l];
      lanes[l] = x * x + 1.0f;
      BOOST_REQUIRE_EQUAL(o[g * 4 + l], lanes[l]);
    }
    want = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    BOOST_REQUIRE_EQUAL(sums[g], want);
  }
}

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

BOOST_AUTO_TEST_CASE(zero_global_size_is_a_no_op_and_timing_is_reported) {
  Device device;
  auto k = vector_add_if(TG_DTYPE_FLOAT32);
  Program program(device, k);
  Buffer a(device, std::vector<float>(64, 1.0f)), b(device, std::vector<float>(64, 2.0f)),
      c(device, std::vector<float>(64, 7.0f));
  for (int axis = 0; axis < 3; ++axis) {
    std::array<uint32_t, 3> global = {1, 1, 1};
    global[size_t(axis)] = 0;
    BOOST_CHECK(
        program.try_launch(global, {kGroup, 1, 1}, {a.arg(), b.arg(), c.arg()}, {scalar_i32(64)}).ok());
  }
  auto untouched = c.download<float>(64);
  for (float v : untouched) BOOST_REQUIRE_EQUAL(v, 7.0f);
  uint64_t ns = 0;
  BOOST_CHECK(
      program.try_launch({1, 1, 1}, {kGroup, 1, 1}, {a.arg(), b.arg(), c.arg()}, {scalar_i32(64)}, &ns).ok());
  BOOST_CHECK_GT(ns, 0u);
  for (float v : c.download<float>(64)) BOOST_REQUIRE_EQUAL(v, 3.0f);
}

BOOST_AUTO_TEST_CASE(opt_levels_0_1_3_give_the_same_results) {
  for (uint32_t level : {0u, 1u, 3u}) {
    BOOST_TEST_CONTEXT("opt_level " << level) { run_vector_add_at(level); }
  }
}

BOOST_AUTO_TEST_CASE(many_programs_load_and_free) {
  Device device;
  auto k = vector_add_if(TG_DTYPE_INT32);
  auto blob = compile(k.serialize()).binary;
  for (int round = 0; round < 20; ++round) {
    Program p(device, blob);
    Buffer a(device, std::vector<int32_t>(10, round)), b(device, std::vector<int32_t>(10, 1)),
        c(device, std::vector<int32_t>(10, 0));
    p.launch({1, 1, 1}, {kGroup, 1, 1}, {a.arg(), b.arg(), c.arg()}, {scalar_i32(10)});
    BOOST_REQUIRE_EQUAL(c.download<int32_t>(10)[9], round + 1);
  }
}

BOOST_AUTO_TEST_SUITE_END()
