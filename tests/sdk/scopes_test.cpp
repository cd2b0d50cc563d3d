// Scope analysis: a value is marked exactly when an instruction outside the RANGE/IF that defines
// it uses it; values valid everywhere are never marked. parse_kernel_ir refuses such uses today
// (docs/abi.md, "scopes"), so the marked cases are built in memory, unvalidated; a valid program
// has no marks.
#include <tg/sdk/scopes.hpp>

#include <boost/test/unit_test.hpp>

using tg::sdk::KernelBuilder;

BOOST_AUTO_TEST_SUITE(sdk_scopes)

BOOST_AUTO_TEST_CASE(values_used_after_their_scope_closes_are_marked) {
  KernelBuilder k("scopes");
  auto out = k.global(0, TG_DTYPE_INT32);
  auto zero = k.i32(0);
  auto acc = k.acc(zero);
  auto r = k.range(zero, k.i32(4));
  auto inside = k.add(r, k.i32(1)); // used after ENDRANGE: marked
  auto local_only = k.mul(r, r);    // used only inside: not marked
  auto c = k.i32(7);                // a CONST inside the loop: never marked
  auto sum = k.add(local_only, c);
  auto assigned = k.assign(acc, k.add(acc, sum));
  k.end_range(r);
  auto cond = k.cmplt(inside, k.i32(3));
  auto iff = k.if_(cond);
  auto in_if = k.add(inside, c); // used inside its IF only
  k.store(k.index(out, zero), in_if);
  k.end_if(iff);
  k.store(k.index(out, k.i32(1)), k.add(assigned, c));
  auto nested = k.range(zero, k.i32(2));
  auto r2 = k.range(zero, k.i32(2));
  auto deep = k.add(r2, nested); // used in the outer range after the inner closes: marked
  k.end_range(r2);
  k.store(k.index(out, nested), deep);
  k.end_range(nested);

  auto marked = tg::sdk::values_used_outside_scope(k.ir());
  BOOST_REQUIRE_EQUAL(marked.size(), k.ir().instructions.size());
  BOOST_CHECK_EQUAL(marked[inside], 1);
  BOOST_CHECK_EQUAL(marked[deep], 1);
  // The loop counters are read only inside their loops.
  for (auto i : {zero, acc, r, local_only, c, sum, assigned, cond, in_if, out, nested, r2}) {
    BOOST_TEST_CONTEXT("instruction " << i) { BOOST_CHECK_EQUAL(marked[i], 0); }
  }
}

BOOST_AUTO_TEST_CASE(a_valid_program_has_no_marks) {
  KernelBuilder k("valid");
  auto out = k.global(0, TG_DTYPE_FLOAT32);
  auto acc = k.acc(k.f32(0));
  auto r = k.range(k.i32(0), k.i32(8));
  auto twice = k.add(k.cast(r, TG_DTYPE_FLOAT32), k.f32(1));
  k.assign(acc, k.add(acc, twice));
  k.end_range(r);
  k.store(k.index(out, k.group_id(0)), acc);
  k.serialize();
  for (char mark : tg::sdk::values_used_outside_scope(k.ir())) BOOST_CHECK_EQUAL(mark, 0);
}

BOOST_AUTO_TEST_SUITE_END()
