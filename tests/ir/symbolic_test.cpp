#include <boost/test/unit_test.hpp>

#include <random>

#include "kernel/ir/evaluate.hpp"
#include "kernel/ir/symbolic.hpp"

using namespace tg;

namespace {
std::string simp(const UOpRef& u) { return simplify(u)->render(); }
} // namespace

BOOST_AUTO_TEST_SUITE(symbolic_rules)

BOOST_AUTO_TEST_CASE(identities) {
  auto x = UOp::variable("x", 0, 10);
  auto c = lt(x, UOp::variable("y", 0, 10));
  BOOST_TEST(simplify(x + 0).get() == x.get());
  BOOST_TEST(simplify(x * 1).get() == x.get());
  BOOST_TEST(simp(x * 0) == "0");
  BOOST_TEST(simp(x - x) == "0");
  BOOST_TEST(simplify(x / 1).get() == x.get());
  BOOST_TEST(simp(x % 1) == "0");
  BOOST_TEST(simplify(where(c, x, x)).get() == x.get());
  BOOST_TEST(simplify(maximum(x, x)).get() == x.get());
  auto f = UOp::variable("f", 0, 1, dtypes::float32);
  BOOST_TEST(simplify(f + 0.0).get() == f.get());
  BOOST_TEST(simp(f * 0.0) == "(f*0.0)"); // NaN * 0 is NaN: not folded for floats
  BOOST_TEST(simp(ne(x, x)) == "False");
  BOOST_TEST(simplify(ne(f, f))->op() == tg::Ops::CMPNE); // NaN != NaN: the NaN test stays
  // widened and narrowed back: the value itself; narrowed and widened back rounds, so it stays
  auto h = UOp::variable("h", 0, 1, dtypes::bfloat16);
  BOOST_TEST(simplify(cast(cast(h, dtypes::float32), dtypes::bfloat16)).get() == h.get());
  BOOST_TEST(simplify(cast(cast(f, dtypes::float64), dtypes::float32)).get() == f.get());
  BOOST_TEST(simplify(cast(cast(f, dtypes::bfloat16), dtypes::float32))->op() == tg::Ops::CAST);
  BOOST_TEST(simplify(cast(cast(h, dtypes::float16), dtypes::bfloat16))->op() == tg::Ops::CAST);
}

BOOST_AUTO_TEST_CASE(constant_folding_every_dtype) {
  BOOST_TEST(simp(UOp::constant(dtypes::int8, std::int64_t{127}) + 1) == "-128");
  BOOST_TEST(simp(UOp::constant(dtypes::uint8, std::int64_t{3}) - 5) == "254");
  BOOST_TEST(simp(UOp::constant(dtypes::float32, 1.5) + 2.0) == "3.5");
  BOOST_TEST(simp(UOp::constant(dtypes::float16, 1.0) / 3.0) == "0.333251953125");
  BOOST_TEST(simp(UOp::constant(dtypes::int32, std::int64_t{-7}) / 2) == "-3");
  BOOST_TEST(simp(UOp::constant(dtypes::int32, std::int64_t{-7}) % 2) == "-1");
  BOOST_TEST(simp(cast(UOp::constant(dtypes::float32, -2.5), dtypes::int32)) == "-2");
  BOOST_TEST(simp(lt(UOp::constant(dtypes::float64, 1.0), UOp::constant(dtypes::float64, 2.0))) == "True");
  BOOST_TEST(simp(alu(Ops::SQRT, {UOp::constant(dtypes::float64, 16.0)})) == "4.0");
  // division by a zero constant is left alone (undefined in C)
  BOOST_TEST(simp(UOp::constant(dtypes::int32, std::int64_t{1}) / 0) == "(1//0)");
}

BOOST_AUTO_TEST_CASE(combining_constants_and_terms) {
  auto x = UOp::variable("x", 0, 10);
  auto y = UOp::variable("y", 0, 10);
  BOOST_TEST(simp((x + 3) + 4) == "(x+7)");
  BOOST_TEST(simp((3 + x) + 4) == "(x+7)");
  BOOST_TEST(simp(x * 2 + x * 3) == "(x*5)");
  BOOST_TEST(simp(x + y - x) == "y");
  BOOST_TEST(simp((x * 3) * 4) == "(x*12)");
  BOOST_TEST(simp((x + 2) * 3) == "((x*3)+6)");
}

BOOST_AUTO_TEST_CASE(div_mod_folding) {
  auto x = UOp::variable("x", 0, 10);
  auto y = UOp::variable("y", 0, 3);
  BOOST_TEST(simp((x * 4 + y) / 4) == "x");
  BOOST_TEST(simp((x * 4 + y) % 4) == "y");
  BOOST_TEST(simp(y % 4) == "y");
  BOOST_TEST(simp(y / 4) == "0");
  BOOST_TEST(simp((x * 8 + 4) / 4) == "((x*2)+1)");
  BOOST_TEST(simp((x * 6 + y * 2) / 4) == "(((x*3)+y)//2)");
  BOOST_TEST(simp((x / 2) / 3) == "(x//6)");
  BOOST_TEST(simp((x % 8) % 4) == "(x%4)");
  BOOST_TEST(simp((x / 4) * 4 + x % 4) == "x");
  auto r = UOp::range(16, 0);
  BOOST_TEST(simp((r / 4) * 4 + r % 4) == "r0");
}

// The index of a 2x2 pooled value read per element of a (N, C, 20, 20) tensor: multiples of the
// divisor leave the division, and a row offset divisible by a factor of it leaves the rest.
BOOST_AUTO_TEST_CASE(div_mod_of_pooled_indices) {
  auto n = UOp::variable("n", 0, 511), ch = UOp::variable("c", 0, 31);
  auto y = UOp::range(20, 0), x = UOp::range(20, 1);
  auto idx = n * 12800 + ch * 400 + y * 20 + x;
  BOOST_TEST(simp((idx / 40) % 10) == "(r0//2)");
  BOOST_TEST(simp((idx / 2) % 10) == "(r1//2)");
  BOOST_TEST(simp(idx / 40) == "(((n*320)+(c*10))+(r0//2))");
  BOOST_TEST(simp((y * 20 + x) % 40) == "(((r0%2)*20)+r1)");
  // not applicable: the small part can reach the factor, or may be negative
  auto z = UOp::variable("z", -1, 5);
  BOOST_TEST(simp((y * 20 + x * 2) / 40) == "(((r0*10)+r1)//20)");
  BOOST_TEST(simp((y * 20 + z) / 40) == "(((r0*20)+z)//40)");
}

BOOST_AUTO_TEST_CASE(comparison_folding) {
  auto x = UOp::variable("x", 0, 10);
  BOOST_TEST(simp(lt(x, 11)) == "True");
  BOOST_TEST(simp(lt(x, 0)) == "False");
  BOOST_TEST(simp(lt(x + 3, 5)) == "(x<2)");
  BOOST_TEST(simp(lt(x * 4, 10)) == "(x<3)");
  BOOST_TEST(simp(lt(x / 4, 2)) == "(x<8)");
  BOOST_TEST(simp(ne(x, 20)) == "True");
  BOOST_TEST(simp(maximum(x, UOp::constant(dtypes::int32, std::int64_t{-1}))) == "x");
}

BOOST_AUTO_TEST_CASE(symbolic_variable_bounds) {
  auto n = UOp::variable("n", 1, 32);
  auto i = UOp::variable("i", 0, 31);
  BOOST_TEST(simplify(n * 4 + 0)->vmax() == 128);
  BOOST_TEST(simp(lt(i, n * 0 + 32)) == "True");
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------- fuzzer ----------------
namespace {

struct Fuzzer {
  std::mt19937_64 rng;
  std::vector<UOpRef> vars;
  DType dt;
  Fuzzer(std::uint64_t seed, DType d) : rng(seed), dt(d) {
    vars = {UOp::variable("a", 0, 9, d), UOp::variable("b", -5, 5, d), UOp::variable("c", 0, 63, d),
            UOp::variable("d", 1, 4, d)};
  }
  std::int64_t pick(std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  }
  UOpRef k(std::int64_t v) { return UOp::constant(dt, v); }
  std::int64_t nonzero(std::int64_t lo, std::int64_t hi) {
    std::int64_t v = 0;
    while (v == 0) v = pick(lo, hi);
    return v;
  }
  UOpRef expr(int depth) {
    if (depth == 0 || pick(0, 9) < 2) {
      if (pick(0, 9) < 7) return vars[static_cast<std::size_t>(pick(0, 3))];
      return k(pick(-8, 16));
    }
    switch (pick(0, 11)) {
    case 0:
    case 1:
      return expr(depth - 1) + expr(depth - 1);
    case 2:
      return expr(depth - 1) - expr(depth - 1);
    case 3:
      return expr(depth - 1) * k(pick(-4, 8));
    case 4:
      return expr(depth - 1) * expr(depth - 1);
    case 5:
      return expr(depth - 1) / k(nonzero(-9, 9));
    case 6:
      return expr(depth - 1) % k(nonzero(-9, 9));
    case 7:
      return maximum(expr(depth - 1), expr(depth - 1));
    case 8:
      return -expr(depth - 1);
    case 9:
      return where(lt(expr(depth - 1), expr(depth - 1)), expr(depth - 1), expr(depth - 1));
    case 10: { // index-style: (x*k + y) // k and % k, the shapes lowering produces
      std::int64_t m = pick(1, 8);
      auto inner = expr(depth - 1) * k(m) + expr(depth - 1);
      return pick(0, 1) ? inner / k(m) : inner % k(m);
    }
    default:
      return where(ne(expr(depth - 1), k(pick(0, 3))), expr(depth - 1), k(pick(-2, 2)));
    }
  }
  Bindings sample() {
    Bindings b;
    b.set("a", pick(0, 9)).set("b", pick(-5, 5)).set("c", pick(0, 63)).set("d", pick(1, 4));
    return b;
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(symbolic_fuzz)

BOOST_AUTO_TEST_CASE(random_expressions_keep_their_value) {
  std::size_t checked = 0, skipped = 0, shrunk = 0;
  for (DType dt : {dtypes::int32, dtypes::int64}) {
    Fuzzer fz(dt == dtypes::int32 ? 1234 : 98765, dt);
    for (int n = 0; n < 3000; ++n) {
      UOpRef e = fz.expr(static_cast<int>(fz.pick(1, 5)));
      if (fz.pick(0, 4) == 0) e = lt(e, fz.k(fz.pick(-10, 30)));
      UOpRef s = simplify(e);
      shrunk += toposort(s).size() < toposort(e).size();
      Evaluator before(e), after(s);
      for (int t = 0; t < 8; ++t) {
        Bindings b = fz.sample();
        bool overflow = false;
        ConstValue want;
        try {
          want = before.run(b, &overflow);
        } catch (const EvalError&) {
          ++skipped; // division by zero inside an expression: no defined value to keep
          continue;
        }
        if (overflow) {
          ++skipped; // the rules assume index arithmetic does not overflow
          continue;
        }
        ConstValue got = after.run(b);
        if (const_as_int(got) != const_as_int(want)) {
          BOOST_ERROR("simplify changed the value of " << e->render() << " -> " << s->render() << ": "
                                                       << const_as_int(want) << " vs " << const_as_int(got));
          return;
        }
        ++checked;
      }
    }
  }
  BOOST_TEST_MESSAGE("symbolic fuzz: " << checked << " checks, " << skipped << " skipped, " << shrunk
                                       << " expressions shrunk");
  BOOST_TEST(checked > 40000u);
  BOOST_TEST(shrunk > 500u);
}

BOOST_AUTO_TEST_SUITE_END()
