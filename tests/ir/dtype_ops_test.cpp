#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>
#include <set>

#include "kernel/ir/alu.hpp"
#include "kernel/ir/dtype.hpp"
#include "kernel/ir/errors.hpp"
#include "kernel/ir/ops.hpp"

using namespace tg;

BOOST_AUTO_TEST_SUITE(dtype)

BOOST_AUTO_TEST_CASE(sizes_names_bounds) {
  BOOST_TEST(dtypes::bool_.itemsize() == 1);
  BOOST_TEST(dtypes::int16.itemsize() == 2);
  BOOST_TEST(dtypes::bfloat16.itemsize() == 2);
  BOOST_TEST(dtypes::float64.itemsize() == 8);
  BOOST_TEST(dtypes::int32.name() == "int");
  BOOST_TEST(dtypes::float16.name() == "half");
  BOOST_TEST(dtypes::float32.vec(4).name() == "float.vec(4)");
  BOOST_TEST(dtypes::float32.ptr_to().name() == "float*");
  BOOST_TEST(dtypes::int32.repr() == "dtypes.int");
  BOOST_TEST(dtypes::int8.int_min() == -128);
  BOOST_TEST(dtypes::int8.int_max() == 127);
  BOOST_TEST(dtypes::uint16.int_max() == 65535);
  BOOST_TEST(dtypes::uint64.max_value() == 18446744073709551615.0);
  BOOST_TEST(dtypes::float32.is_float());
  BOOST_TEST(dtypes::uint8.is_unsigned());
  BOOST_TEST(!dtypes::bool_.is_int());
}

BOOST_AUTO_TEST_CASE(promotion_lattice) {
  auto lub = least_upper_dtype;
  BOOST_TEST(lub(dtypes::int8, dtypes::uint8) == dtypes::int16);
  BOOST_TEST(lub(dtypes::bool_, dtypes::int32) == dtypes::int32);
  BOOST_TEST(lub(dtypes::int32, dtypes::uint32) == dtypes::int64);
  BOOST_TEST(lub(dtypes::int64, dtypes::uint64) == dtypes::float16);
  BOOST_TEST(lub(dtypes::float16, dtypes::bfloat16) == dtypes::float32);
  BOOST_TEST(lub(dtypes::int32, dtypes::float16) == dtypes::float16);
  BOOST_TEST(lub(dtypes::float32, dtypes::float64) == dtypes::float64);
  BOOST_TEST(lub(dtypes::uint8, dtypes::uint16) == dtypes::uint16);
  // Python-like weak scalars: int tensor * 2.5 is float, half tensor * 2.5 stays half.
  BOOST_TEST(promote_with_weak(dtypes::int32, WeakScalar::Float) == dtypes::float32);
  BOOST_TEST(promote_with_weak(dtypes::int8, WeakScalar::Int) == dtypes::int8);
  BOOST_TEST(promote_with_weak(dtypes::float16, WeakScalar::Float) == dtypes::float16);
  BOOST_TEST(promote_with_weak(dtypes::bool_, WeakScalar::Int) == dtypes::int32);
  BOOST_TEST(promote_with_weak(dtypes::float16, WeakScalar::Int) == dtypes::float16);
}

BOOST_AUTO_TEST_CASE(abi_round_trip) {
  for (tg_dtype c = 0; c < TG_DTYPE_COUNT; ++c) BOOST_TEST(to_abi(dtype_from_abi(c)) == c);
  BOOST_TEST(to_abi(dtypes::float32) == TG_DTYPE_FLOAT32);
  BOOST_TEST(to_abi(dtypes::uint16) == TG_DTYPE_UINT16);
  BOOST_CHECK_THROW(dtype_from_abi(99), DTypeError);
  BOOST_TEST((dtype_from_name("half") == dtypes::float16));
}

BOOST_AUTO_TEST_CASE(half_rounding) {
  BOOST_TEST(round_to_half(1.0 + 1.0 / 4096) == 1.0); // below half an ulp
  BOOST_TEST(round_to_half(65520.0) == std::numeric_limits<double>::infinity());
  BOOST_TEST(round_to_half(65504.0) == 65504.0);
  BOOST_TEST(half_to_bits(1.0) == 0x3c00);
  BOOST_TEST(half_to_bits(-2.0) == 0xc000);
  BOOST_TEST(half_from_bits(0x0001) == std::ldexp(1.0, -24));
  for (std::uint32_t b = 0; b < 0x7c00; b += 7)
    BOOST_TEST(half_to_bits(half_from_bits(static_cast<std::uint16_t>(b))) == b);
  BOOST_TEST(round_to_bfloat16(1.0 + 1.0 / 256) == 1.0);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(ops)

BOOST_AUTO_TEST_CASE(table_derives_everything) {
  BOOST_TEST(op_name(Ops::ADD) == "ADD");
  BOOST_TEST((op_category(Ops::WHERE) == OpCategory::Ternary));
  BOOST_TEST((op_category(Ops::RESHAPE) == OpCategory::Movement));
  BOOST_TEST(is_commutative(Ops::MUL));
  BOOST_TEST(!is_commutative(Ops::SUB));
  BOOST_TEST(is_comparison(Ops::CMPLT));
  BOOST_TEST(op_info(Ops::WHERE).arity == 3);
  BOOST_TEST((to_abi(Ops::ADD) == std::optional<tg_op>(TG_OP_ADD)));
  BOOST_TEST(!to_abi(Ops::RESHAPE).has_value());
  BOOST_TEST((op_from_abi(TG_OP_IDIV) == std::optional<Ops>(Ops::IDIV)));
  BOOST_TEST((op_from_name("Ops.SQRT") == std::optional<Ops>(Ops::SQRT)));
  // every ABI code is used by exactly one op
  std::set<tg_op> seen;
  for (const auto& info : kOpTable)
    if (info.abi != kNoAbiOp) BOOST_TEST(seen.insert(info.abi).second);
  BOOST_TEST(category_name(OpCategory::Reduce) == "reduce");
}

BOOST_AUTO_TEST_CASE(c_semantics_folding) {
  auto run = [](Ops op, DType dt, ConstValue a, ConstValue b) {
    std::vector<ConstValue> v{a, b};
    auto r = exec_alu(op, is_comparison(op) ? dtypes::bool_ : dt, dt, v);
    BOOST_REQUIRE(r.has_value());
    return r->value;
  };
  using I = std::int64_t;
  BOOST_TEST(std::get<I>(run(Ops::IDIV, dtypes::int32, I{-7}, I{2})) == -3);
  BOOST_TEST(std::get<I>(run(Ops::MOD, dtypes::int32, I{-7}, I{2})) == -1);
  BOOST_TEST(std::get<I>(run(Ops::MOD, dtypes::int32, I{7}, I{-2})) == 1);
  BOOST_TEST(std::get<I>(run(Ops::ADD, dtypes::uint8, I{250}, I{10})) == 4);
  BOOST_TEST(std::get<I>(run(Ops::ADD, dtypes::int8, I{127}, I{1})) == -128);
  BOOST_TEST(std::get<I>(run(Ops::SUB, dtypes::uint32, I{0}, I{1})) == 4294967295);
  BOOST_TEST(std::get<bool>(run(Ops::CMPLT, dtypes::uint32, I{4294967295}, I{1})) == false);
  BOOST_TEST(std::get<bool>(run(Ops::CMPLT, dtypes::uint64, I{-1}, I{1})) == false); // 2^64-1 < 1
  BOOST_TEST(std::get<I>(run(Ops::SHR, dtypes::int32, I{-8}, I{1})) == -4);
  BOOST_TEST(std::get<double>(run(Ops::ADD, dtypes::float16, 2048.0, 1.0)) == 2048.0); // half has 11 bits
  BOOST_TEST(std::get<double>(run(Ops::ADD, dtypes::float32, 16777216.0, 1.0)) == 16777216.0);
  BOOST_TEST(std::isnan(std::get<double>(run(Ops::FDIV, dtypes::float32, 0.0, 0.0))));
  std::vector<ConstValue> z{I{1}, I{0}};
  BOOST_TEST(!exec_alu(Ops::IDIV, dtypes::int32, dtypes::int32, z).has_value());
  std::vector<ConstValue> f{-2.7};
  BOOST_TEST(std::get<I>(exec_alu(Ops::CAST, dtypes::int32, dtypes::float32, f)->value) == -2);
  std::vector<ConstValue> one{1.0};
  BOOST_TEST(std::get<I>(exec_alu(Ops::BITCAST, dtypes::int32, dtypes::float32, one)->value) == 0x3f800000);
}

BOOST_AUTO_TEST_SUITE_END()
