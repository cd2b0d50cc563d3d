#include <boost/test/unit_test.hpp>

#include "kernel/ir/rewrite.hpp"

using namespace tg;

namespace {
UOpRef c32(std::int64_t v) { return UOp::constant(dtypes::int32, v); }
bool matches(const UPat& p, const UOpRef& u) {
  Captures caps;
  return p.match(u, caps, [] { return true; });
}
} // namespace

BOOST_AUTO_TEST_SUITE(upat)

BOOST_AUTO_TEST_CASE(features) {
  auto x = UOp::variable("x", 0, 10);
  auto y = UOp::variable("y", 0, 10);
  auto f = UOp::constant(dtypes::float32, 1.5);
  // op set
  BOOST_TEST(matches(UPat(op_set({Ops::ADD, Ops::MUL})), x + y));
  BOOST_TEST(!matches(UPat(op_set({Ops::ADD, Ops::MUL})), x - y));
  // dtype
  BOOST_TEST(matches(UPat::var().dtype(dtypes::float32), f));
  BOOST_TEST(!matches(UPat::var().dtype(dtypes::float32), x));
  // arg
  BOOST_TEST(matches(UPat::op(Ops::DEFINE_VAR).arg(VarArg{"x", 0, 10}), x));
  BOOST_TEST(!matches(UPat::op(Ops::DEFINE_VAR).arg(VarArg{"x", 0, 11}), x));
  // cvar / constant value
  BOOST_TEST(matches(UPat::cvar("c"), c32(3)));
  BOOST_TEST(matches(UPat::constant(std::int64_t{3}), c32(3)));
  BOOST_TEST(!matches(UPat::constant(std::int64_t{4}), c32(3)));
  // predicate
  auto small = UPat::var().where([](const UOpRef& u) { return u->vmax() < 5; });
  BOOST_TEST(!matches(small, x));
  BOOST_TEST(matches(small, c32(3)));
  // fixed-order sources vs any order
  auto fixed = UPat::op(Ops::SUB).src({UPat::var("a"), UPat::cvar("c")});
  BOOST_TEST(matches(fixed, x - 3));
  BOOST_TEST(!matches(fixed, 3 - x));
  auto any_order = UPat::op(Ops::ADD).src_any_order({UPat::cvar("c"), UPat::var("a")});
  BOOST_TEST(matches(any_order, x + 3));
  BOOST_TEST(matches(any_order, 3 + x));
  // a repeated name must bind the same node
  BOOST_TEST(matches(UPat::var("a") - UPat::var("a"), x - x));
  BOOST_TEST(!matches(UPat::var("a") - UPat::var("a"), x - y));
  // repeat: every source matches
  BOOST_TEST(matches(UPat(alu_ops()).src_repeat(UPat::cvar()), c32(1) + c32(2)));
  BOOST_TEST(!matches(UPat(alu_ops()).src_repeat(UPat::cvar()), x + 2));
  // prefix sources
  auto prefix = UPat::op(Ops::WHERE).src({UPat::var("c")}).allow_any_len();
  BOOST_TEST(matches(prefix, where(lt(x, y), x, y)));
  BOOST_TEST(!matches(UPat::op(Ops::WHERE).src({UPat::var("c")}), where(lt(x, y), x, y)));
}

BOOST_AUTO_TEST_CASE(captures_and_backtracking) {
  auto x = UOp::variable("x", 0, 10);
  // (a + c) where c must be a constant: tries both orders, binds the right one
  auto p = UPat::var("a") + UPat::cvar("c");
  Captures caps;
  UOpRef a, c;
  BOOST_TEST(p.match(3 + x, caps, [&] {
    a = caps["a"];
    c = caps["c"];
    return true;
  }));
  BOOST_TEST(a.get() == x.get());
  BOOST_TEST(c->arg_int() == 3);
  // the continuation can reject a binding to see the next one
  std::vector<std::string> seen;
  Captures caps2;
  (UPat::var("a") + UPat::var("b")).match(x + 3, caps2, [&] {
    seen.push_back(caps2["a"]->render());
    return false;
  });
  BOOST_TEST(seen.size() == 2u);
  BOOST_CHECK_THROW(caps2["nope"], std::out_of_range);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(pattern_matcher)

BOOST_AUTO_TEST_CASE(rule_order_first_wins) {
  auto x = UOp::variable("x", 0, 10);
  PatternMatcher pm({
      {UPat::var("a") + UPat::cvar("c"), [](const Captures& c) { return c["a"]; }, "first"},
      {UPat::var("a") + UPat::var("b"), [](const Captures& c) { return c["b"]; }, "second"},
  });
  BOOST_TEST(pm.rewrite(x + 1).get() == x.get());
  auto y = UOp::variable("y", 0, 10);
  BOOST_TEST(pm.rewrite(x + y).get() == y.get());
  BOOST_TEST(pm.rewrite(x * y) == nullptr);
  // a rule returning null lets the next one try
  PatternMatcher pm2({
      {UPat::var("a"), [](const Captures&) { return UOpRef{}; }},
      {UPat::op(Ops::MUL, "m"), [](const Captures& c) { return c["m"]->src(0); }},
  });
  BOOST_TEST(pm2.rewrite(x * y).get() == x.get());
}

BOOST_AUTO_TEST_CASE(context_is_passed) {
  int calls = 0;
  PatternMatcher pm({{UPat::op(Ops::DEFINE_VAR, "v"), [](const Captures& c) {
                        ++*static_cast<int*>(c.ctx);
                        return UOp::constant(c["v"]->dtype(), std::int64_t{7});
                      }}});
  auto x = UOp::variable("x", 0, 10);
  auto out = graph_rewrite(x + x, pm, &calls);
  BOOST_TEST(calls == 1); // shared node rewritten once
  BOOST_TEST(out->render() == "(7+7)");
}

BOOST_AUTO_TEST_CASE(fixed_point_bottom_up_and_top_down) {
  // Folding constant additions needs repeated application: ((1+2)+3)+4 -> 10
  PatternMatcher fold({{UPat::cvar("a") + UPat::cvar("b"), [](const Captures& c) {
                          return UOp::constant(dtypes::int32, c["a"]->arg_int() + c["b"]->arg_int());
                        }}});
  auto e = ((c32(1) + c32(2)) + c32(3)) + c32(4);
  BOOST_TEST(graph_rewrite(e, fold)->arg_int() == 10);
  BOOST_TEST(graph_rewrite(e, fold, nullptr, RewriteOrder::TopDown)->arg_int() == 10);
  // top-down sees the parent before its children are rewritten
  std::vector<std::string> order;
  PatternMatcher log({{UPat::op(Ops::ADD, "u"), [&](const Captures& c) {
                         order.push_back(c["u"]->render());
                         return UOpRef{};
                       }}});
  auto x = UOp::variable("x", 0, 10);
  graph_rewrite((x + 1) + 2, log, nullptr, RewriteOrder::TopDown);
  BOOST_TEST(order.front() == "((x+1)+2)");
  order.clear();
  graph_rewrite((x + 1) + 2, log);
  BOOST_TEST(order.front() == "(x+1)");
}

BOOST_AUTO_TEST_CASE(rewritten_results_are_rewritten_again) {
  // a -> b creates a node that another rule rewrites further
  auto x = UOp::variable("x", 0, 10);
  PatternMatcher pm({
      {UPat::op(Ops::SUB).src({UPat::var("a"), UPat::var("b")}),
       [](const Captures& c) { return c["a"] + c["b"] * -1; }},
      {UPat::var("a") * UPat::constant(std::int64_t{-1}), [](const Captures& c) { return -c["a"]; }},
  });
  BOOST_TEST(graph_rewrite(x - x, pm)->render() == "(x+NEG(x))");
}

BOOST_AUTO_TEST_CASE(loop_is_an_error) {
  auto x = UOp::variable("x", 0, 10);
  auto y = UOp::variable("y", 0, 10);
  // commuting forever: x+y -> y+x -> x+y
  PatternMatcher swap({{UPat::op(Ops::ADD).src({UPat::var("a"), UPat::var("b")}),
                        [](const Captures& c) { return c["b"] + c["a"]; }}});
  BOOST_CHECK_THROW(graph_rewrite(x + y, swap), RewriteLoopError);
  BOOST_CHECK_THROW(graph_rewrite(x + y, swap, nullptr, RewriteOrder::TopDown), RewriteLoopError);
  // growing forever: x -> x+0 -> (x+0)+0 ...
  PatternMatcher grow({{UPat::op(Ops::DEFINE_VAR, "v"), [](const Captures& c) { return c["v"] + 0; }}});
  BOOST_CHECK_THROW(graph_rewrite(x * 2, grow), RewriteLoopError);
  try {
    graph_rewrite(x + y, swap);
  } catch (const RewriteLoopError& e) {
    BOOST_TEST(std::string(e.what()).find("rewrite loop") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(matchers_compose) {
  PatternMatcher a({{UPat::cvar("c"), [](const Captures&) { return c32(1); }}});
  PatternMatcher b({{UPat::cvar("c"), [](const Captures&) { return c32(2); }}});
  BOOST_TEST((a + b).size() == 2u);
  BOOST_TEST((a + b).rewrite(c32(5))->arg_int() == 1);
  BOOST_TEST((b + a).rewrite(c32(5))->arg_int() == 2);
}

BOOST_AUTO_TEST_SUITE_END()
