// The TC opt on matrix units the device declares (ABI 1.4, IR 1.3 MMA): the core lowers a matmul
// from the unit's description alone, for NVIDIA's mma.sync layout, a small unit over 4 work items
// on a CPU-style device, a swizzled (XOR) layout and an int8 unit. Each kernel runs in the SDK's
// interpreter, which executes MMA from the same description, against a double or integer matmul.
#include "tests/codegen/tc_check.hpp"

#include <tg/sdk/matrix_unit.hpp>

#include <cstring>
#include <random>

using namespace tg;
using namespace tg::tc_check;

namespace {

// The sm_90-like device of tc_check, declaring mma.sync m16n8k16 for float16 and bfloat16 as MMA.
LowerOptions gpu_declaring() {
  LowerOptions o = gpu(false);
  o.matrix_units = {{sdk::wmma_m16n8k16_unit(TG_DTYPE_FLOAT16), 0, false},
                    {sdk::wmma_m16n8k16_unit(TG_DTYPE_BFLOAT16), 1, false}};
  return o;
}

std::vector<tg_matrix_unit> units_of(const LowerOptions& o) {
  std::vector<tg_matrix_unit> out;
  for (const auto& c : o.matrix_units) out.push_back(c.unit);
  return out;
}

// A CPU-style device (no local memory: work items of a group run one after another).
LowerOptions cpu_style(std::vector<tg_matrix_unit> units) {
  LowerOptions o;
  o.compute_units = 4;
  o.max_local_size = {1024, 1024, 1024};
  o.max_local_threads = 1024;
  for (size_t i = 0; i < units.size(); ++i) o.matrix_units.push_back({units[i], int64_t(i), false});
  return o;
}

// 4x4x4 over 4 items, float32: item t holds row t of A and of C/D, every item all of B.
tg_matrix_unit row_unit() {
  return sdk::matrix_unit("test.m4n4k4.f32", 4, 4, 4, 2, TG_DTYPE_FLOAT32, TG_DTYPE_FLOAT32, TG_DTYPE_FLOAT32,
                          sdk::matrix_layout({{1, 0}, {2, 0}}, {{0, 1}, {0, 2}}),
                          sdk::matrix_layout({{0, 0}, {0, 0}}, {{1, 0}, {2, 0}, {0, 1}, {0, 2}}),
                          sdk::matrix_layout({{1, 0}, {2, 0}}, {{0, 1}, {0, 2}}));
}

// 8x8x8 over 8 items with XOR swizzles: element e of item t is A(t, e ^ t) and D(t, e ^ t), B is
// replicated with its rows XORed by element bits 3-5.
tg_matrix_unit swizzled_unit() {
  return sdk::matrix_unit("test.xor8", 8, 8, 8, 3, TG_DTYPE_FLOAT32, TG_DTYPE_FLOAT32, TG_DTYPE_FLOAT32,
                          sdk::matrix_layout({{1, 1}, {2, 2}, {4, 4}}, {{0, 1}, {0, 2}, {0, 4}}),
                          sdk::matrix_layout({}, {{1, 0}, {2, 0}, {4, 0}, {1, 1}, {2, 2}, {4, 4}}),
                          sdk::matrix_layout({{1, 1}, {2, 2}, {4, 4}}, {{0, 1}, {0, 2}, {0, 4}}));
}

// int8 x int8 + int32, 4x4x4 over 4 items (the row layout).
tg_matrix_unit int8_unit() {
  tg_matrix_unit u = row_unit();
  u = sdk::matrix_unit("test.m4n4k4.i8", 4, 4, 4, 2, TG_DTYPE_INT8, TG_DTYPE_INT8, TG_DTYPE_INT32, u.a, u.b,
                       u.c);
  return u;
}

// A matmul of small integers in `dt` (exact in every dtype used here); the int8 one is summed in
// int32 (operands cast, as tensor code writes it).
struct IntMatmul {
  ScheduleItem item;
  int64_t m, k, n;
  DType in, out;
};

IntMatmul exact_matmul(int64_t m, int64_t k, int64_t n, DType in) {
  Tensor a = input({m, k}, in), b = input({k, n}, in);
  const DType out = in.is_float() ? in : dtypes::int32;
  Tensor c = in.is_float() ? a.matmul(b) : a.cast(out).matmul(b.cast(out));
  for (auto& item : c.schedule())
    if (item.ast->src(0)->op() == Ops::STORE) return {std::move(item), m, k, n, in, out};
  throw std::logic_error("no compute kernel");
}

// Runs it on values -3..3 and returns how many outputs differ from the exact product.
int64_t wrong_outputs(const IntMatmul& mm, const LoweredKernel& k, const std::vector<std::byte>& ir,
                      std::span<const tg_matrix_unit> units) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> value(-3, 3);
  const size_t isz = size_t(mm.in.itemsize()), osz = size_t(mm.out.itemsize());
  std::vector<int> av(size_t(mm.m * mm.k)), bv(size_t(mm.k * mm.n));
  for (int& v : av) v = value(rng);
  for (int& v : bv) v = value(rng);
  auto fill = [&](const std::vector<int>& vals) {
    std::vector<std::byte> bytes(vals.size() * isz);
    for (size_t i = 0; i < vals.size(); ++i) {
      if (mm.in == dtypes::float32) {
        const float f = float(vals[i]);
        std::memcpy(bytes.data() + i * isz, &f, 4);
      } else {
        const auto c = int8_t(vals[i]);
        std::memcpy(bytes.data() + i * isz, &c, 1);
      }
    }
    return bytes;
  };
  std::vector<std::byte> out(size_t(mm.m * mm.n) * osz), a = fill(av), b = fill(bv);
  std::vector<std::span<std::byte>> spans{out, a, b};
  sdk::interpret(sdk::parse_kernel_ir(ir), k.global, k.local, spans, {}, units);
  int64_t wrong = 0;
  for (int64_t i = 0; i < mm.m; ++i)
    for (int64_t j = 0; j < mm.n; ++j) {
      int64_t want = 0;
      for (int64_t kk = 0; kk < mm.k; ++kk) want += av[size_t(i * mm.k + kk)] * bv[size_t(kk * mm.n + j)];
      int64_t got = 0;
      if (mm.out == dtypes::float32) {
        float f;
        std::memcpy(&f, out.data() + size_t(i * mm.n + j) * 4, 4);
        got = int64_t(f);
      } else {
        int32_t v;
        std::memcpy(&v, out.data() + size_t(i * mm.n + j) * 4, 4);
        got = v;
      }
      wrong += got != want;
    }
  return wrong;
}

bool has_mma(const std::vector<std::byte>& ir) { return sdk::uses_mma(sdk::parse_kernel_ir(ir)); }

} // namespace

BOOST_AUTO_TEST_CASE(declared_mma_sync_units_lower_to_mma_and_match_a_double_matmul) {
  for (DType dt : {dtypes::float16, dtypes::bfloat16}) {
    const Matmul mm = matmul(64, 48, 32, dt);
    const KernelInfo info = analyze_kernel(mm.item);
    BOOST_REQUIRE(info.matmul.has_value());
    const LowerOptions base = gpu_declaring();
    const std::vector<tg_matrix_unit> units = units_of(base);
    std::vector<std::optional<std::vector<Opt>>> lists{
        std::vector<Opt>{{OptOp::TC, info.matmul->k, tc(dt)}},
        std::vector<Opt>{{OptOp::TC, info.matmul->k, tc(dt)}, {OptOp::STAGE, info.matmul->k, 3}},
        std::nullopt}; // the heuristic's choice
    for (const auto& list : lists) {
      LowerOptions o = base;
      o.opts = list;
      const Lowered l = lower(mm, o);
      BOOST_TEST_CONTEXT(dt.name() << " " << l.kernel.opts) {
        BOOST_TEST(has_mma(l.ir));
        BOOST_TEST(!has_wmma(l.ir));
        BOOST_TEST(ir_minor(l.ir) == TG_IR_VERSION_MINOR_MMA);
        BOOST_TEST(l.kernel.local[0] == 32u);
        BOOST_TEST(l.kernel.opts.find("TC(2," + std::to_string(tc(dt)) + ")") != std::string::npos);
        BOOST_TEST(run_error(mm, l, units) < (dt == dtypes::float16 ? 2e-3 : 1e-2));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(the_same_description_gives_the_same_kernel_as_wmma) {
  // The description of m16n8k16 lowers to the index math the WMMA path had: the two programs
  // differ only in the op (WMMA with its shape vs MMA with the unit index).
  const Matmul mm = matmul(128, 128, 128, dtypes::float16);
  const Lowered old_path = lower(mm, gpu(true)), new_path = lower(mm, gpu_declaring());
  BOOST_TEST(old_path.kernel.opts == new_path.kernel.opts);
  sdk::KernelIR a = sdk::parse_kernel_ir(old_path.ir), b = sdk::parse_kernel_ir(new_path.ir);
  BOOST_REQUIRE(a.instructions.size() == b.instructions.size());
  for (size_t i = 0; i < a.instructions.size(); ++i) {
    sdk::Instruction x = a.instructions[i], y = b.instructions[i];
    if (x.op == TG_OP_WMMA) {
      BOOST_TEST(y.op == TG_OP_MMA);
      BOOST_TEST(y.arg0 == 0);
      continue;
    }
    BOOST_TEST((x.op == y.op && x.dtype == y.dtype && x.vcount == y.vcount && x.arg0 == y.arg0 &&
                x.arg1 == y.arg1 && x.src == y.src),
               "instruction " << i);
  }
}

BOOST_AUTO_TEST_CASE(a_small_unit_on_a_cpu_style_device_is_the_heuristics_choice) {
  const LowerOptions o = cpu_style({row_unit()});
  for (auto [m, k, n] : {std::array<int64_t, 3>{16, 12, 8}, {12, 20, 4}, {4, 4, 4}}) {
    const IntMatmul mm = exact_matmul(m, k, n, dtypes::float32);
    const LoweredKernel lk = lower_kernel(mm.item, o);
    const LinearKernel lin = linearize(lk.sink, lk.name);
    BOOST_TEST_CONTEXT(m << "x" << k << "x" << n << " " << lk.opts) {
      BOOST_TEST(lk.opts.find("TC(2,0)") != std::string::npos);
      BOOST_TEST(lk.local[0] == 4u);
      BOOST_TEST(has_mma(lin.ir));
      const std::vector<tg_matrix_unit> units{row_unit()};
      BOOST_TEST(wrong_outputs(mm, lk, lin.ir, units) == 0);
    }
  }
  // a shape the unit does not divide: the heuristic's plain list, no MMA, right values
  const IntMatmul odd = exact_matmul(6, 5, 3, dtypes::float32);
  const LoweredKernel lk = lower_kernel(odd.item, o);
  const LinearKernel lin = linearize(lk.sink, lk.name);
  BOOST_TEST(!has_mma(lin.ir));
  BOOST_TEST(wrong_outputs(odd, lk, lin.ir, {}) == 0);
}

BOOST_AUTO_TEST_CASE(a_swizzled_layout_lowers_through_xor_index_math) {
  const tg_matrix_unit u = swizzled_unit();
  BOOST_REQUIRE(sdk::matrix_unit_error(u).empty());
  const LowerOptions o = cpu_style({u});
  const IntMatmul mm = exact_matmul(16, 24, 8, dtypes::float32);
  const LoweredKernel lk = lower_kernel(mm.item, o);
  const LinearKernel lin = linearize(lk.sink, lk.name);
  BOOST_TEST(lk.opts.find("TC(2,0)") != std::string::npos, lk.opts);
  BOOST_TEST(has_mma(lin.ir));
  const sdk::KernelIR ir = sdk::parse_kernel_ir(lin.ir);
  BOOST_TEST(std::any_of(ir.instructions.begin(), ir.instructions.end(),
                         [](const sdk::Instruction& i) { return i.op == TG_OP_XOR; }));
  const std::vector<tg_matrix_unit> units{u};
  BOOST_TEST(wrong_outputs(mm, lk, lin.ir, units) == 0);
}

BOOST_AUTO_TEST_CASE(an_int8_unit_takes_an_int8_matmul_summed_in_int32_and_nothing_else) {
  const LowerOptions o = cpu_style({row_unit(), int8_unit()});
  const IntMatmul mm = exact_matmul(8, 16, 12, dtypes::int8);
  const KernelInfo info = analyze_kernel(mm.item);
  BOOST_REQUIRE(info.matmul.has_value());
  BOOST_TEST(info.matmul->a == TG_DTYPE_INT8);
  BOOST_TEST(!info.matmul->float_sum);
  BOOST_TEST((fitting_units(info, o) == std::vector<int>{1}));
  const LoweredKernel lk = lower_kernel(mm.item, o);
  const LinearKernel lin = linearize(lk.sink, lk.name);
  BOOST_TEST(lk.opts.find("TC(2,1)") != std::string::npos, lk.opts);
  const std::vector<tg_matrix_unit> units{row_unit(), int8_unit()};
  BOOST_TEST(wrong_outputs(mm, lk, lin.ir, units) == 0);
  // the float unit on the int8 matmul is refused with the reason
  LowerOptions wrong = o;
  wrong.opts = std::vector<Opt>{{OptOp::TC, info.matmul->k, 0}};
  BOOST_CHECK_EXCEPTION(lower_kernel(mm.item, wrong), OptError, [](const OptError& e) {
    return std::string(e.what()).find("\"test.m4n4k4.f32\"") != std::string::npos &&
           std::string(e.what()).find("does not take this matmul's operands (int8, int8, an integer sum)") !=
               std::string::npos;
  });
}
