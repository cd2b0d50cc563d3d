// The TC opt on matrix units the device declares (ABI 1.4, IR 1.3 MMA): the core lowers a matmul
// from the unit's description alone, for NVIDIA's mma.sync layout, a small unit over 4 work items
// on a CPU-style device, a swizzled (XOR) layout and an int8 unit. Each kernel runs in the SDK's
// interpreter, which executes MMA from the same description, against a double or integer matmul.
// Then ABI 1.5's local-memory units in the SDK: atoms (atom_error, atom_offset), the warpgroup
// shapes as units (wgmma_unit) against the IR 1.2 WGMMA byte layout, and check_mma on the local form.
#include "tests/codegen/tc_check.hpp"

#include <tg/sdk/matrix_unit.hpp>
#include <tg/sdk/wmma.hpp>

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

// ---- ABI 1.5: atoms, the warpgroup shapes as local-memory units, check_mma on the local form ----

namespace {

using sdk::MatrixElement;
using sdk::MatrixOperand;
using sdk::MatrixStrides;

std::string atom_why(std::initializer_list<MatrixElement> bits) {
  return sdk::atom_error(sdk::matrix_atom(bits));
}

const int64_t kFlagSets[] = {0, sdk::kWgmmaBNMajor, sdk::kWgmmaSwizzle128,
                             sdk::kWgmmaBNMajor | sdk::kWgmmaSwizzle128};

// Tiles of the unit's A (m x k) and B (k x n), atoms stacked along rows first.
MatrixStrides rows_first(const tg_matrix_unit& u) {
  MatrixStrides s;
  for (MatrixOperand op : {MatrixOperand::a, MatrixOperand::b}) {
    const tg_matrix_atom& atom = sdk::matrix_atom(u, op);
    const int64_t size = int64_t(1) << atom.offset_bits;
    const int rows = sdk::matrix_extent(u, op).row, down = std::max(1, rows / sdk::atom_extent(atom).row);
    (op == MatrixOperand::a ? s.a_row : s.b_row) = size;
    (op == MatrixOperand::a ? s.a_col : s.b_col) = size * down;
  }
  return s;
}

} // namespace

BOOST_AUTO_TEST_SUITE(matrix_atoms)

BOOST_AUTO_TEST_CASE(malformed_atoms_are_refused_with_the_reason) {
  BOOST_TEST(atom_why({{0, 1}, {1, 0}, {1, 2}}) == ""); // 2 x 4, row bit 0 swizzles column bit 1
  std::string why = atom_why({{1, 1}, {1, 1}});         // elements 1 and 2 both hold (1, 1)
  BOOST_TEST(why.find("hold position (1, 1) twice (the map is not a bijection)") != std::string::npos, why);
  tg_matrix_atom past = sdk::matrix_atom({{0, 1}, {1, 0}});
  past.row[5] = 2;
  why = sdk::atom_error(past);
  BOOST_TEST(why.find("offset bit 5 has an entry but the atom holds 4 elements") != std::string::npos, why);
  why = atom_why({{0, 1}, {0, 2}, {0, 3}}); // columns 0..3 from 8 elements
  BOOST_TEST(why.find("do not span a 1x4 rectangle") != std::string::npos, why);
  why = atom_why({{0, 1}, {0, 4}}); // columns up to 5: not a power of two
  BOOST_TEST(why.find("do not span a 1x6 rectangle") != std::string::npos, why);
  tg_matrix_atom big{};
  big.offset_bits = 17;
  why = sdk::atom_error(big);
  BOOST_TEST(why.find("offset_bits 17 is above 16") != std::string::npos, why);
}

BOOST_AUTO_TEST_CASE(atom_offset_inverts_atom_element) {
  std::vector<tg_matrix_atom> atoms{sdk::matrix_atom({{0, 1}, {1, 0}, {1, 2}}),
                                    sdk::matrix_atom({{0, 1}, {0, 2}, {0, 4}, {1, 2}, {2, 4}}),
                                    sdk::matrix_atom({{1, 1}, {0, 1}})};
  for (int64_t flags : kFlagSets) {
    const tg_matrix_unit u = sdk::wgmma_unit(64, TG_DTYPE_FLOAT16, flags);
    atoms.push_back(u.a_atom);
    atoms.push_back(u.b_atom);
  }
  for (size_t i = 0; i < atoms.size(); ++i) {
    const tg_matrix_atom& atom = atoms[i];
    BOOST_REQUIRE_MESSAGE(sdk::atom_error(atom).empty(), "atom " << i << ": " << sdk::atom_error(atom));
    const MatrixElement ext = sdk::atom_extent(atom);
    BOOST_TEST(int64_t(ext.row) * ext.col == int64_t(1) << atom.offset_bits, "atom " << i);
    int bad = 0;
    for (uint32_t o = 0; o < (1u << atom.offset_bits); ++o)
      bad += sdk::atom_offset(atom, sdk::atom_element(atom, o)) != o;
    for (int r = 0; r < ext.row; ++r)
      for (int c = 0; c < ext.col; ++c)
        bad += !(sdk::atom_element(atom, sdk::atom_offset(atom, {r, c})) == MatrixElement{r, c});
    BOOST_TEST(bad == 0, "atom " << i);
  }
}

// wgmma_unit's atoms at rows-first strides, read through matrix_local_index (elements of 2
// bytes), land on the bytes the IR 1.2 WGMMA layout (wgmma_address) names for the same strides,
// from starts at atoms and, swizzled K-major, at k-steps inside an atom's rows.
BOOST_AUTO_TEST_CASE(warpgroup_units_reproduce_the_legacy_wgmma_byte_addresses) {
  for (int n : {64, 128, 256})
    for (int64_t flags : kFlagSets) {
      const bool sw = (flags & sdk::kWgmmaSwizzle128) != 0, bn = (flags & sdk::kWgmmaBNMajor) != 0;
      for (tg_dtype input : {TG_DTYPE_FLOAT16, TG_DTYPE_BFLOAT16}) {
        const tg_matrix_unit u = sdk::wgmma_unit(n, input, flags);
        BOOST_TEST(sdk::matrix_unit_error(u) == "", sdk::matrix_unit_name(u));
        BOOST_TEST(sdk::wgmma_unit_flags(u) == flags, sdk::matrix_unit_name(u));
        BOOST_TEST((u.a_dtype == input && u.b_dtype == input && u.c_dtype == TG_DTYPE_FLOAT32));
        // the flags come from the layout, not the name
        tg_matrix_unit renamed = u;
        std::strcpy(renamed.name, "my.unit");
        BOOST_TEST(sdk::wgmma_unit_flags(renamed) == flags);
        tg_matrix_unit other = u;
        std::swap(other.b_atom.row[0], other.b_atom.col[0]);
        BOOST_TEST(sdk::wgmma_unit_flags(other) == -1);
      }
      const tg_matrix_unit u = sdk::wgmma_unit(n, TG_DTYPE_FLOAT16, flags);
      BOOST_TEST_CONTEXT(sdk::matrix_unit_name(u)) {
        const MatrixStrides s = rows_first(u);
        // the legacy encoding: bytes, and a swizzled K-major operand's k stride is its 16-byte chunks
        const sdk::WgmmaStrides w{sw ? 16 : 2 * s.a_col, 2 * s.a_row, sw && !bn ? 16 : 2 * s.b_row,
                                  2 * s.b_col};
        BOOST_TEST(sdk::wgmma_strides(flags, s) == sdk::wgmma_pack(w));
        if (!sw) BOOST_TEST((s.a_row == 64 && s.a_col == 512));
        if (sw) BOOST_TEST((s.a_row == 512 && s.a_col == 4096));
        if (sw && bn) BOOST_TEST((s.b_row == 512 && s.b_col == 1024));
        const int64_t arg0 = sdk::wgmma_code(n) | flags;
        const std::vector<uint64_t> a_starts =
            sw ? std::vector<uint64_t>{0, 32, 64, 96, 2048 + 32} : std::vector<uint64_t>{0, 128, 4096};
        const std::vector<uint64_t> b_starts = !sw  ? std::vector<uint64_t>{0, 256, 8192}
                                               : bn ? std::vector<uint64_t>{0, 1024, 8192}
                                                    : std::vector<uint64_t>{0, 32, 96, 4096 + 64};
        for (int operand = 0; operand < 2; ++operand)
          for (uint64_t start : operand == 0 ? a_starts : b_starts) {
            BOOST_REQUIRE(sdk::wgmma_swizzle_start_error(arg0, operand, start).empty());
            const MatrixOperand op = operand == 0 ? MatrixOperand::a : MatrixOperand::b;
            int bad = 0;
            std::string first;
            for (int row = 0; row < (operand == 0 ? 64 : n); ++row) // m for A, n for B
              for (int kk = 0; kk < 16; ++kk) {
                const uint64_t legacy = sdk::wgmma_address(arg0, w, operand, start, row, kk);
                const uint64_t element = operand == 0 ? sdk::matrix_local_index(u, op, s, start / 2, row, kk)
                                                      : sdk::matrix_local_index(u, op, s, start / 2, kk, row);
                if (2 * element == legacy) continue;
                if (bad++ == 0)
                  first = std::to_string(row) + ", k " + std::to_string(kk) + ": byte " +
                          std::to_string(2 * element) + ", legacy " + std::to_string(legacy);
              }
            BOOST_TEST(bad == 0, "AB"[operand] << " from byte " << start << ": " << bad
                                               << " differ, first row " << first);
          }
        int c_bad = 0; // C is WGMMA's per-item lanes
        for (int t = 0; t < 128; ++t)
          for (int i = 0; i < n / 2; ++i)
            c_bad +=
                !(sdk::matrix_element(u.c, uint32_t(t), uint32_t(i)) == sdk::wgmma_c_element(arg0, t, i));
        BOOST_TEST(c_bad == 0);
      }
    }
}

// check_mma on the local form: the operands must be INDEXes into local memory of the unit's
// dtypes, and a stride along an axis the tile spans several atoms of a nonzero multiple of the atom.
BOOST_AUTO_TEST_CASE(check_mma_refuses_what_a_local_unit_cannot_read) {
  const std::vector<tg_matrix_unit> units{sdk::wgmma_unit(64, TG_DTYPE_FLOAT16, 0)}; // 8 x 8 atoms of 64
  const MatrixStrides good{64, 512, 64, 128};
  auto check = [&](tg_dtype local_dtype, const MatrixStrides& s, bool registers) -> std::string {
    sdk::KernelBuilder k("local_mma");
    const auto la = k.local(8192, local_dtype), lb = k.local(8192, local_dtype);
    const std::vector<sdk::KernelBuilder::Ref> zeros(32, k.f32(0));
    const auto c = k.vectorize(zeros);
    const auto d =
        registers ? k.mma(k.const_float(TG_DTYPE_FLOAT16, 1), k.const_float(TG_DTYPE_FLOAT16, 1), c, 0)
                  : k.mma(k.index(la, k.i32(0)), k.index(lb, k.i32(0)), c, 0, sdk::matrix_strides_pack(s));
    k.store(k.index(la, k.i32(0)), k.cast(k.gep(d, 0), local_dtype));
    try {
      sdk::check_mma(sdk::parse_kernel_ir(k.serialize()), units);
    } catch (const sdk::IRError& e) {
      return e.what();
    }
    return "";
  };
  BOOST_TEST(check(TG_DTYPE_FLOAT16, good, false) == "");
  std::string why = check(TG_DTYPE_FLOAT16, good, true);
  BOOST_TEST(why.find("(wgmma.m64n64k16.f16) reads A and B from local memory (INDEXes), not from values") !=
                 std::string::npos,
             why);
  why = check(TG_DTYPE_FLOAT32, good, false);
  BOOST_TEST(why.find("reads A as float16 from local memory") != std::string::npos, why);
  why = check(TG_DTYPE_FLOAT16, MatrixStrides{32, 512, 64, 128}, false);
  BOOST_TEST(why.find("atom stride 0 is 32 elements, not a nonzero multiple of the atom (64)") !=
                 std::string::npos,
             why);
  why = check(TG_DTYPE_FLOAT16, MatrixStrides{64, 512, 64, 100}, false);
  BOOST_TEST(why.find("atom stride 3 is 100 elements") != std::string::npos, why);
  why = check(TG_DTYPE_FLOAT16, MatrixStrides{64, 0, 64, 128}, false); // k = 16 spans 2 atoms of 8
  BOOST_TEST(why.find("atom stride 1 is 0 elements") != std::string::npos, why);
}

BOOST_AUTO_TEST_SUITE_END()
