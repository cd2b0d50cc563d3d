#include "kernel/ir/symbolic.hpp"

#include "kernel/ir/alu.hpp"

#include <array>

namespace tg {
namespace {

__extension__ typedef __int128 i128;

bool int_scalar(const UOpRef& u) { return u->dtype().is_int() && u->dtype().count == 1 && !u->dtype().ptr; }
bool signed_int(const UOpRef& u) { return int_scalar(u) && !u->dtype().is_unsigned(); }
// Range analysis is trusted for ints and bool, except uint64 whose top half int64 cannot hold.
bool bounded(const UOpRef& u) {
  DType d = u->dtype();
  return (d.is_int() || d.is_bool()) && d.count == 1 && !d.ptr && d.scalar != Scalar::UInt64;
}
i128 cval(const UOpRef& u) { return const_as_int(u->const_value()); }
bool fits(DType dt, i128 v) { return v >= dt.int_min() && v <= dt.int_max(); }
UOpRef cnst(const UOpRef& like, i128 v) { return UOp::constant(like->dtype(), static_cast<std::int64_t>(v)); }
i128 floordiv(i128 a, i128 b) {
  i128 q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
i128 floormod(i128 a, i128 b) { return a - floordiv(a, b) * b; }
i128 gcd(i128 a, i128 b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b != 0) {
    i128 t = a % b;
    a = b;
    b = t;
  }
  return a;
}

UPat var(const char* n) { return UPat::var(n); }
UPat cvar(const char* n) { return UPat::cvar(n); }
UPat zero() { return UPat::constant(std::int64_t{0}); }
UPat one() { return UPat::constant(std::int64_t{1}); }

// ---- sums as terms: x = sum(coef_i * base_i) + constant ----
struct Term {
  UOpRef base;
  i128 coef;
};
struct Sum {
  std::vector<Term> terms;
  i128 constant = 0;
  std::size_t const_leaves = 0;
};
constexpr std::size_t kMaxTerms = 64; // bounds the work per node on long sum chains

// The ADD tree under x as terms, left to right; false past kMaxTerms leaves. A stack, not
// recursion: an ADD chain may be as deep as the kernel. kMaxTerms ADDs mean more than kMaxTerms
// leaves, so the walk stops there, and the stack (one entry more per ADD) fits a fixed array.
bool flatten(const UOpRef& x, Sum& s) {
  std::array<const UOpRef*, kMaxTerms + 1> stack;
  std::size_t top = 0, adds = 0;
  stack[top++] = &x;
  while (top > 0) {
    const UOpRef& u = *stack[--top];
    if (u->op() == Ops::ADD) {
      if (++adds >= kMaxTerms) return false;
      stack[top++] = &u->src(1);
      stack[top++] = &u->src(0);
      continue;
    }
    if (s.terms.size() + s.const_leaves >= kMaxTerms) return false;
    if (u->is_const()) {
      s.constant += cval(u);
      ++s.const_leaves;
    } else if (u->op() == Ops::MUL && u->src(1)->is_const()) {
      s.terms.push_back({u->src(0), cval(u->src(1))});
    } else {
      s.terms.push_back({u, 1});
    }
  }
  return true;
}

UOpRef build_sum(const UOpRef& like, const std::vector<Term>& terms, i128 constant) {
  UOpRef out;
  for (const auto& t : terms) {
    if (t.coef == 0) continue;
    UOpRef v = t.coef == 1 ? t.base : t.base * cnst(like, t.coef);
    out = out ? out + v : v;
  }
  if (!out) return cnst(like, constant);
  return constant == 0 ? out : out + cnst(like, constant);
}

// Combine like terms and constants of a signed-int sum; null when it is already combined.
UOpRef combine_terms(const UOpRef& x) {
  Sum s;
  if (!flatten(x, s)) return nullptr;
  std::vector<Term> merged;
  for (const auto& t : s.terms) {
    bool found = false;
    for (auto& m : merged)
      if (m.base.get() == t.base.get()) {
        m.coef += t.coef;
        found = true;
        break;
      }
    if (!found) merged.push_back(t);
  }
  std::size_t kept = 0;
  for (const auto& m : merged) kept += m.coef != 0;
  bool const_moved = s.const_leaves == 1 && !x->src(1)->is_const();
  if (kept == s.terms.size() && s.const_leaves <= 1 && !const_moved) return nullptr;
  return build_sum(x, merged, s.constant);
}

// Interval of a sum's remainder part sum((coef mod c) * base) + (constant mod c).
bool remainder_bounds(const Sum& s, i128 c, i128& lo, i128& hi) {
  lo = hi = floormod(s.constant, c);
  for (const auto& t : s.terms) {
    if (!bounded(t.base)) return false;
    i128 r = floormod(t.coef, c);
    i128 a = r * t.base->vmin(), b = r * t.base->vmax();
    lo += std::min(a, b);
    hi += std::max(a, b);
  }
  return true;
}

// x = c*Q + R with R >= 0: x // c = Q + R // c and x % c = R % c. A multiple of c in an index (a
// batch or channel offset) leaves the division, so what stays divided is the small part.
UOpRef split_multiples(const UOpRef& x, const Sum& s, i128 c, bool is_mod) {
  i128 lo, hi;
  if (!remainder_bounds(s, c, lo, hi) || lo < 0) return nullptr;
  std::vector<Term> q, r;
  bool has_quotient = floordiv(s.constant, c) != 0;
  for (const auto& t : s.terms) {
    q.push_back({t.base, floordiv(t.coef, c)});
    r.push_back({t.base, floormod(t.coef, c)});
    if (q.back().coef != 0 && r.back().coef != 0) return nullptr; // a term in both parts: not simpler
    has_quotient = has_quotient || q.back().coef != 0;
  }
  if (!has_quotient) return nullptr;
  UOpRef rest = build_sum(x, r, floormod(s.constant, c));
  if (is_mod) return rest % cnst(x, c);
  return build_sum(x, q, floordiv(s.constant, c)) + idiv(rest, cnst(x, c));
}

// x = f*D + N with f dividing c and 0 <= N < f: x // c = D // (c/f) and x % c = (D % (c/f))*f + N.
// (20*y + x) // 40 with 0 <= x < 20 is y // 2: a pooled index of a 2x2 window.
UOpRef factor_divisor(const UOpRef& x, const Sum& s, i128 c, bool is_mod) {
  // Bounds of the terms not divisible by f, plus the constant's remainder.
  auto small_part_fits = [&](i128 f) {
    i128 lo = floormod(s.constant, f), hi = lo;
    bool divisible = false, small = false;
    for (const auto& t : s.terms) {
      if (t.coef % f == 0) {
        divisible = true;
        continue;
      }
      if (!bounded(t.base)) return false;
      small = true;
      i128 a = t.coef * t.base->vmin(), b = t.coef * t.base->vmax();
      lo += std::min(a, b);
      hi += std::max(a, b);
    }
    return divisible && small && lo >= 0 && hi < f;
  };
  i128 best = 0;
  for (const auto& t : s.terms) {
    i128 f = t.coef < 0 ? -t.coef : t.coef;
    if (f > best && f > 1 && f < c && c % f == 0 && small_part_fits(f)) best = f;
  }
  if (best == 0) return nullptr;
  std::vector<Term> high, low;
  for (const auto& t : s.terms) {
    if (t.coef % best == 0)
      high.push_back({t.base, t.coef / best});
    else
      low.push_back(t);
  }
  UOpRef d = build_sum(x, high, floordiv(s.constant, best));
  if (!is_mod) return idiv(d, cnst(x, c / best));
  return (d % cnst(x, c / best)) * cnst(x, best) + build_sum(x, low, floormod(s.constant, best));
}

// x // c and x % c for x >= 0, c > 0: split x = c*Q + R; when R // c is the same k everywhere,
// x // c = Q + k and x % c = R - k*c. Also divides out a common factor g of c and every term.
UOpRef fold_divmod(const UOpRef& x, const UOpRef& cu, bool is_mod) {
  if (!bounded(x) || x->vmin() < 0) return nullptr;
  i128 c = cval(cu);
  if (c <= 0) return nullptr;
  Sum s;
  if (!flatten(x, s)) return nullptr;
  i128 g = c;
  for (const auto& t : s.terms) g = gcd(g, t.coef);
  g = gcd(g, s.constant);
  i128 lo, hi;
  if (remainder_bounds(s, c, lo, hi) && floordiv(lo, c) == floordiv(hi, c)) {
    i128 k = floordiv(lo, c);
    std::vector<Term> q, r;
    for (const auto& t : s.terms) {
      q.push_back({t.base, floordiv(t.coef, c)});
      r.push_back({t.base, floormod(t.coef, c)});
    }
    if (is_mod) return build_sum(x, r, floormod(s.constant, c) - k * c);
    return build_sum(x, q, floordiv(s.constant, c) + k);
  }
  if (g > 1 && !s.terms.empty()) {
    std::vector<Term> reduced;
    for (const auto& t : s.terms) reduced.push_back({t.base, t.coef / g});
    UOpRef y = build_sum(x, reduced, s.constant / g);
    if (is_mod) return (y % cnst(x, c / g)) * cnst(x, g);
    return idiv(y, cnst(x, c / g));
  }
  if (UOpRef split = split_multiples(x, s, c, is_mod)) return split;
  return factor_divisor(x, s, c, is_mod);
}

UOpRef fold_alu_consts(const UOpRef& u) {
  std::vector<ConstValue> vals;
  for (const auto& s : u->src()) {
    if (!s->is_const()) return nullptr;
    vals.push_back(s->const_value());
  }
  DType in = u->op() == Ops::WHERE ? u->src(1)->dtype() : u->src(0)->dtype();
  auto r = exec_alu(u->op(), u->dtype(), in, vals);
  if (!r) return nullptr;
  return UOp::constant(u->dtype(), r->value);
}

std::vector<Rule> simple_rules() {
  std::vector<Rule> r;
  // constant folding: every ALU op, CAST and BITCAST of constants
  r.push_back({UPat(alu_ops() | op_set({Ops::CAST, Ops::BITCAST}), "u").src_repeat(UPat::cvar()),
               [](const Captures& c) { return fold_alu_consts(c["u"]); }, "fold constants"});
  // a value range of one point is that constant
  r.push_back(
      {UPat(alu_ops(), "u").where([](const UOpRef& u) { return bounded(u) && u->vmin() == u->vmax(); }),
       [](const Captures& c) { return cnst(c["u"], c["u"]->vmin()); }, "range is a point"});
  // identities valid for every dtype
  r.push_back({var("x") + zero(), [](const Captures& c) { return c["x"]; }, "x+0"});
  r.push_back({var("x") - zero(), [](const Captures& c) { return c["x"]; }, "x-0"});
  r.push_back({var("x") * one(), [](const Captures& c) { return c["x"]; }, "x*1"});
  r.push_back({alu(Ops::FDIV, {var("x"), one()}), [](const Captures& c) { return c["x"]; }, "x/1"});
  r.push_back({where(var(""), var("x"), var("x")), [](const Captures& c) { return c["x"]; }, "where(c,x,x)"});
  r.push_back({where(cvar("c"), var("a"), var("b")),
               [](const Captures& c) { return cval(c["c"]) ? c["a"] : c["b"]; }, "where(const,a,b)"});
  r.push_back({UPat::op(Ops::CAST, "u").src({var("x")}),
               [](const Captures& c) { return c["x"]->dtype() == c["u"]->dtype() ? c["x"] : nullptr; },
               "cast to same"});
  // a float widened and narrowed back is itself: every float16 and bfloat16 is a float32, every
  // float32 a float64 (an autocast operand read from a bfloat16 buffer through a float32 gradient
  // becomes a plain load, which a matrix unit's staged copy moves without registers)
  r.push_back({UPat::op(Ops::CAST, "u").src({UPat::op(Ops::CAST, "m").src({var("x")})}),
               [](const Captures& c) -> UOpRef {
                 const DType x = c["x"]->dtype(), m = c["m"]->dtype();
                 if (c["u"]->dtype() != x || x.count != m.count || !x.is_float() || !m.is_float())
                   return nullptr;
                 const bool half = x.scalar == Scalar::Float16 || x.scalar == Scalar::BFloat16;
                 const bool holds = (half && (m.scalar == Scalar::Float32 || m.scalar == Scalar::Float64)) ||
                                    (x.scalar == Scalar::Float32 && m.scalar == Scalar::Float64);
                 return holds ? c["x"] : nullptr;
               },
               "cast round trip"});
  // identities valid for ints (and bool): floats have NaN/inf and signed zeros
  auto I = [](UPat p) { return p.where([](const UOpRef& u) { return bounded(u) || int_scalar(u); }); };
  r.push_back({I(var("x") * zero().named("z")), [](const Captures& c) { return c["z"]; }, "x*0"});
  r.push_back({I(var("x") - var("x")), [](const Captures& c) { return cnst(c["x"], 0); }, "x-x"});
  r.push_back({idiv(var("x"), one()), [](const Captures& c) { return c["x"]; }, "x//1"});
  r.push_back({var("x") % one(), [](const Captures& c) { return cnst(c["x"], 0); }, "x%1"});
  r.push_back({maximum(var("x"), var("x")), [](const Captures& c) { return c["x"]; }, "max(x,x)"});
  r.push_back({alu(Ops::AND, {var("x"), var("x")}), [](const Captures& c) { return c["x"]; }, "x&x"});
  r.push_back({alu(Ops::OR, {var("x"), var("x")}), [](const Captures& c) { return c["x"]; }, "x|x"});
  r.push_back(
      {alu(Ops::XOR, {var("x"), var("x")}), [](const Captures& c) { return cnst(c["x"], 0); }, "x^x"});
  r.push_back(
      {I(lt(var("x"), var("x")).named("u")), [](const Captures& c) { return cnst(c["u"], 0); }, "x<x"});
  // not for floats: NaN != NaN is true (x != x is how NaN is detected)
  r.push_back({I(ne(var("x"), var("x")).named("u")),
               [](const Captures& c) { return c["x"]->dtype().is_float() ? nullptr : cnst(c["u"], 0); },
               "x!=x"});
  // boolean and/or with a constant
  auto B = [](UPat p) { return p.dtype(dtypes::bool_); };
  r.push_back({alu(Ops::AND, {B(var("x")), B(cvar("c"))}),
               [](const Captures& c) { return cval(c["c"]) ? c["x"] : c["c"]; }, "x&const"});
  r.push_back({alu(Ops::OR, {B(var("x")), B(cvar("c"))}),
               [](const Captures& c) { return cval(c["c"]) ? c["c"] : c["x"]; }, "x|const"});
  r.push_back({ne(B(var("x")), UPat::constant(false)), [](const Captures& c) { return c["x"]; }, "x!=false"});
  return r;
}

std::vector<Rule> index_rules() {
  std::vector<Rule> r;
  auto S = [](UPat p) { return p.where(signed_int); };
  // canonical forms for signed ints: constants on the right, subtraction and negation as *-1
  r.push_back({S(UPat::op(Ops::ADD, "u").src({cvar("c"), var("x")})),
               [](const Captures& c) { return c["x"]->is_const() ? nullptr : c["x"] + c["c"]; }, "c+x"});
  r.push_back({S(UPat::op(Ops::MUL, "u").src({cvar("c"), var("x")})),
               [](const Captures& c) { return c["x"]->is_const() ? nullptr : c["x"] * c["c"]; }, "c*x"});
  r.push_back(
      {S(var("x") - var("y")), [](const Captures& c) { return c["x"] + c["y"] * cnst(c["y"], -1); }, "x-y"});
  r.push_back({S(UPat::op(Ops::NEG).src({var("x")})),
               [](const Captures& c) { return c["x"] * cnst(c["x"], -1); }, "-x"});
  // combining constants and like terms
  r.push_back({S(UPat::op(Ops::MUL).src({UPat::op(Ops::MUL).src({var("x"), cvar("c1")}), cvar("c2")})),
               [](const Captures& c) { return c["x"] * (c["c1"] * c["c2"]); }, "(x*c1)*c2"});
  r.push_back({S(UPat::op(Ops::MUL).src({UPat::op(Ops::ADD).src({var("x"), var("y")}), cvar("c")})),
               [](const Captures& c) { return c["x"] * c["c"] + c["y"] * c["c"]; }, "(x+y)*c"});
  r.push_back(
      {S(UPat::op(Ops::ADD, "u")), [](const Captures& c) { return combine_terms(c["u"]); }, "combine terms"});
  r.push_back({S(UPat::op(Ops::ADD).src_any_order(
                   {UPat::op(Ops::MUL).src({idiv(var("x"), cvar("c")), cvar("c")}), var("x") % cvar("c")})),
               [](const Captures& c) { return c["x"]; }, "(x//c)*c + x%c"});
  // division and modulo by constants
  r.push_back({S(idiv(var("x"), cvar("c"))),
               [](const Captures& c) {
                 i128 d = cval(c["c"]);
                 if (d >= 0 || !fits(c["x"]->dtype(), -d)) return UOpRef{};
                 return idiv(c["x"], cnst(c["x"], -d)) * cnst(c["x"], -1);
               },
               "x//-c"});
  r.push_back({S(var("x") % cvar("c")),
               [](const Captures& c) {
                 i128 d = cval(c["c"]);
                 if (d >= 0 || !fits(c["x"]->dtype(), -d)) return UOpRef{};
                 return c["x"] % cnst(c["x"], -d);
               },
               "x%-c"});
  r.push_back({S(idiv(idiv(var("x"), cvar("c1")), cvar("c2"))),
               [](const Captures& c) {
                 i128 a = cval(c["c1"]), b = cval(c["c2"]);
                 if (a <= 0 || b <= 0 || !fits(c["x"]->dtype(), a * b)) return UOpRef{};
                 return idiv(c["x"], cnst(c["x"], a * b));
               },
               "(x//c1)//c2"});
  r.push_back({S((var("x") % cvar("c1")) % cvar("c2")),
               [](const Captures& c) {
                 i128 a = cval(c["c1"]), b = cval(c["c2"]);
                 if (a <= 0 || b <= 0 || a % b != 0) return UOpRef{};
                 return c["x"] % c["c2"];
               },
               "(x%c1)%c2"});
  r.push_back({S((var("x") % cvar("c")).named("u")),
               [](const Captures& c) {
                 const UOpRef& x = c["x"];
                 i128 d = cval(c["c"]);
                 // |x| < c: the remainder is x itself (for either sign of x)
                 if (d > 0 && x->vmin() > -d && x->vmax() < d && bounded(x)) return x;
                 return fold_divmod(x, c["c"], true);
               },
               "x%c"});
  r.push_back({S(idiv(var("x"), cvar("c"))),
               [](const Captures& c) { return fold_divmod(c["x"], c["c"], false); }, "x//c"});
  // comparisons against constants
  r.push_back({lt(S(var("x")) + cvar("c1"), cvar("c2")),
               [](const Captures& c) {
                 i128 v = cval(c["c2"]) - cval(c["c1"]);
                 if (!fits(c["x"]->dtype(), v)) return UOpRef{};
                 return lt(c["x"], cnst(c["x"], v));
               },
               "x+c1<c2"});
  r.push_back({lt(S(var("x")) * cvar("c1"), cvar("c2")),
               [](const Captures& c) {
                 i128 m = cval(c["c1"]);
                 if (m <= 0) return UOpRef{};
                 return lt(c["x"], cnst(c["x"], -floordiv(-cval(c["c2"]), m))); // x*m < k <=> x < ceil(k/m)
               },
               "x*c1<c2"});
  r.push_back({lt(idiv(S(var("x")), cvar("c1")), cvar("c2")),
               [](const Captures& c) {
                 i128 d = cval(c["c1"]), k = cval(c["c2"]);
                 if (d <= 0 || c["x"]->vmin() < 0 || !fits(c["x"]->dtype(), k * d)) return UOpRef{};
                 return lt(c["x"], cnst(c["x"], k * d)); // floor(x/d) < k <=> x < k*d
               },
               "x//c1<c2"});
  // max by ranges
  r.push_back({maximum(var("x"), var("y")),
               [](const Captures& c) {
                 const UOpRef &x = c["x"], &y = c["y"];
                 if (!bounded(x)) return UOpRef{};
                 if (x->vmin() >= y->vmax()) return x;
                 if (y->vmin() >= x->vmax()) return y;
                 return UOpRef{};
               },
               "max by range"});
  return r;
}

} // namespace

const PatternMatcher& symbolic_simple() {
  static const PatternMatcher pm(simple_rules());
  return pm;
}

const PatternMatcher& symbolic() {
  static const PatternMatcher pm = [] {
    auto rules = simple_rules();
    auto more = index_rules();
    rules.insert(rules.end(), more.begin(), more.end());
    return PatternMatcher(std::move(rules));
  }();
  return pm;
}

UOpRef simplify(const UOpRef& u) { return graph_rewrite(u, symbolic()); }

UOpRef index_const(std::int64_t v) { return UOp::constant(dtypes::index, v); }

} // namespace tg
