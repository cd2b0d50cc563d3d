#include "kernel/codegen/online_softmax.hpp"

#include "kernel/ir/symbolic.hpp"

#include <limits>
#include <optional>
#include <unordered_set>

namespace tg {

namespace {

bool const_range(const UOpRef& r) {
  return r->op() == Ops::RANGE && r->src(0)->is_const() && r->src(1)->is_const();
}

// One loop over one RANGE of constant bounds: REDUCE(op, value, range).
bool one_loop(const UOpRef& r, Ops op) {
  const auto* a = r->arg_if<ReduceArg>();
  return r->op() == Ops::REDUCE && a && a->op == op && r->src().size() == 2 && const_range(r->src(1)) &&
         r->dtype().is_float() && r->dtype().count == 1;
}

void mul_factors(const UOpRef& u, std::vector<UOpRef>& out) {
  if (u->op() == Ops::MUL && u->dtype().count == 1) {
    mul_factors(u->src(0), out);
    mul_factors(u->src(1), out);
  } else {
    out.push_back(u);
  }
}

UOpRef product(const std::vector<UOpRef>& fs) {
  UOpRef p = fs.at(0);
  for (size_t i = 1; i < fs.size(); ++i) p = UOp::make(Ops::MUL, p->dtype(), {p, fs[i]});
  return p;
}

// exp2((x - h) * c) with c > 0 constant and the max in h only.
struct Shift {
  UOpRef h, c;
};
std::optional<Shift> shift_of(const UOpRef& e, const UOp* max) {
  if (e->op() != Ops::EXP2 || e->src(0)->op() != Ops::MUL) return std::nullopt;
  const UOpRef& arg = e->src(0);
  for (int i = 0; i < 2; ++i) {
    const UOpRef &d = arg->src(size_t(i)), &c = arg->src(size_t(1 - i));
    if (!c->is_const() || !c->dtype().is_float() || !(std::get<double>(c->const_value()) > 0)) continue;
    UOpRef x, h;
    if (d->op() == Ops::SUB) {
      x = d->src(0);
      h = d->src(1);
    } else if (d->op() == Ops::ADD) {
      for (int j = 0; j < 2 && !h; ++j)
        if (d->src(size_t(j))->op() == Ops::NEG) {
          h = d->src(size_t(j))->src(0);
          x = d->src(size_t(1 - j));
        }
    }
    if (h && depends_on(h, max) && !depends_on(x, max)) return Shift{h, c};
  }
  return std::nullopt;
}

// The first step b (not depending on `loop`) from which cond is false, or null: cond of the forms
// loop < b, !(b' < loop) (b = b' + 1), an AND with such a conjunct, `cond ? true : false`.
UOpRef end_of(const UOpRef& cond, const UOpRef& loop) {
  const UOpRef c = cond;
  auto free = [&](const UOpRef& b) { return !depends_on(b, loop.get()); };
  // the loop's counter, or its value cast to an integer type that holds every step (an iota's
  // int32), whose bound then returns in the loop's type
  auto is_loop = [&](const UOpRef& x) {
    if (x == loop) return true;
    return x->op() == Ops::CAST && x->src(0) == loop && x->dtype().is_int() && x->dtype().count == 1 &&
           loop->src(1)->is_const() && const_as_int(loop->src(1)->const_value()) <= x->dtype().int_max();
  };
  auto in_loop_type = [&](const UOpRef& b) {
    return b->dtype() == loop->dtype() ? b : UOp::make(Ops::CAST, loop->dtype(), {b});
  };
  if (c->op() == Ops::WHERE && c->src(1)->is_const() && c->src(2)->is_const() &&
      c->src(1)->const_value() == ConstValue{true} && c->src(2)->const_value() == ConstValue{false})
    return end_of(c->src(0), loop);
  if (c->op() == Ops::CMPLT && is_loop(c->src(0)) && free(c->src(1))) return in_loop_type(c->src(1));
  // !(b' < loop): CMPNE(CMPLT(b', loop), true) or CMPEQ(CMPLT(b', loop), false)
  if ((c->op() == Ops::CMPNE || c->op() == Ops::CMPEQ) && c->src(1)->is_const()) {
    const bool negates = c->src(1)->const_value() == ConstValue{c->op() == Ops::CMPNE};
    const UOpRef& lt = c->src(0);
    if (negates && lt->op() == Ops::CMPLT && is_loop(lt->src(1)) && free(lt->src(0))) {
      const UOpRef b = in_loop_type(lt->src(0));
      return UOp::make(Ops::ADD, loop->dtype(), {b, UOp::constant(loop->dtype(), int64_t{1})});
    }
  }
  if (c->op() == Ops::AND)
    for (const auto& s : c->src())
      if (UOpRef b = end_of(s, loop)) return b;
  return nullptr;
}

} // namespace

// The max with its loop stopped where its value becomes -inf for good, or max itself.
UOpRef OnlineSoftmax::shortened(const UOpRef& max) {
  const UOpRef& loop = max->src(1);
  if (auto it = loops_.find(loop.get()); it != loops_.end())
    return it->second ? substitute(max, {{loop.get(), it->second}}) : max;
  const UOpRef& t = max->src(0);
  UOpRef end;
  if (t->op() == Ops::WHERE && t->src(2)->is_const() && t->dtype().is_float() &&
      std::get<double>(t->src(2)->const_value()) == -std::numeric_limits<double>::infinity() &&
      loop->src(0)->is_const() && const_as_int(loop->src(0)->const_value()) == 0)
    if (UOpRef b = end_of(simplify(t->src(0)), loop); b && b->dtype() == loop->dtype()) {
      const UOpRef& n = loop->src(1);
      end = UOp::make(Ops::WHERE, loop->dtype(), {UOp::make(Ops::CMPLT, dtypes::bool_, {b, n}), b, n});
    }
  UOpRef replacement = end ? UOp::range(end, next_range_id_++, loop->dtype()) : nullptr;
  loops_.emplace(loop.get(), replacement);
  return replacement ? substitute(max, {{loop.get(), replacement}}) : max;
}

UOpRef OnlineSoftmax::operator()(const UOpRef& value) { return rewrite(value); }

UOpRef OnlineSoftmax::rewrite(const UOpRef& u) {
  if (auto it = done_.find(u.get()); it != done_.end()) return it->second;
  UOpRef out;
  if (u->op() == Ops::REDUCE) out = online(u);
  if (!out) {
    std::vector<UOpRef> src;
    bool changed = false;
    for (const auto& s : u->src()) {
      src.push_back(rewrite(s));
      changed |= src.back() != s;
    }
    out = changed ? replace_src(u, std::move(src)) : u;
  }
  done_.emplace(u.get(), out);
  return out;
}

UOpRef OnlineSoftmax::online(const UOpRef& sum) {
  if (!one_loop(sum, Ops::ADD)) return nullptr;
  const UOpRef& loop = sum->src(1);
  UOpRef max;
  for (const auto& n : toposort(sum->src(0)))
    if (one_loop(n, Ops::MAX) && n->src(1) != loop && // the max in any float dtype (bfloat16 scores)
        n->src(1)->src(0) == loop->src(0) && n->src(1)->src(1) == loop->src(1)) {
      if (max && max != n) return nullptr; // two maxima: not a softmax
      max = n;
    }
  if (!max) return nullptr;
  std::vector<UOpRef> factors, inside, outside;
  mul_factors(sum->src(0), factors);
  for (const auto& f : factors) (depends_on(f, loop.get()) ? inside : outside).push_back(f);
  if (inside.empty()) return nullptr;
  UOpRef term = product(inside);
  // the max only inside exponentials of one shift; no other reduce over it in the term (a
  // softmax gradient's row sum: its final value is not known inside the merged loop)
  std::optional<Shift> shift;
  std::vector<std::pair<const UOp*, UOpRef>> exps;
  for (const auto& n : toposort(term)) {
    if (n->op() == Ops::REDUCE && n != max && depends_on(n, max.get())) return nullptr;
    if (n->op() != Ops::EXP2 || !depends_on(n, max.get())) continue;
    auto s = shift_of(n, max.get());
    if (!s || (shift && (s->h != shift->h || s->c != shift->c))) return nullptr;
    shift = s;
    exps.emplace_back(n.get(), UOp::constant(n->dtype(), 1.0));
  }
  if (!shift || depends_on(substitute(term, exps), max.get())) return nullptr;

  const UOpRef& max_loop = max->src(1);
  const UOpRef& t = max->src(0);
  term = substitute(term, {{loop.get(), max_loop}});
  // reduces nested in the term that repeat one nested in the max's value: the same one
  std::vector<std::pair<const UOp*, UOpRef>> same;
  std::vector<UOpRef> in_max;
  for (const auto& n : toposort(t))
    if (n->op() == Ops::REDUCE && n->src().size() == 2 && const_range(n->src(1))) in_max.push_back(n);
  for (const auto& n : toposort(term)) {
    if (n->op() != Ops::REDUCE || n->src().size() != 2 || !const_range(n->src(1))) continue;
    for (const auto& r : in_max)
      if (r != n && r->src(1)->src(1) == n->src(1)->src(1) && r->src(1)->src(0) == n->src(1)->src(0) &&
          substitute(n, {{n->src(1).get(), r->src(1)}}) == r) {
        same.emplace_back(n.get(), r);
        break;
      }
  }
  if (!same.empty()) term = substitute(term, same);

  const DType dt = max->dtype();
  const UOpRef before = UOp::make(Ops::RUNNING, dt, {max, max_loop}, int64_t{0});
  const UOpRef after = UOp::make(Ops::RUNNING, dt, {max, max_loop, t}, int64_t{1});
  const UOpRef neg_inf = UOp::constant(dt, -std::numeric_limits<double>::infinity());
  const UOpRef zero = UOp::constant(sum->dtype(), 0.0);
  auto is_neg_inf = [&](const UOpRef& x) { return UOp::make(Ops::CMPEQ, dtypes::bool_, {x, neg_inf}); };
  // a step while every key so far is -inf adds nothing: the final exp(-inf - h) is 0
  term =
      UOp::make(Ops::WHERE, sum->dtype(), {is_neg_inf(after), zero, substitute(term, {{max.get(), after}})});
  const UOpRef h_before = substitute(shift->h, {{max.get(), before}});
  const UOpRef h_after = substitute(shift->h, {{max.get(), after}});
  const DType hd = shift->h->dtype(); // the shift's dtype (float under bfloat16 scores), then the sum's
  UOpRef scale = UOp::make(
      Ops::EXP2, hd, {UOp::make(Ops::MUL, hd, {UOp::make(Ops::SUB, hd, {h_before, h_after}), shift->c})});
  if (hd != sum->dtype()) scale = UOp::make(Ops::CAST, sum->dtype(), {scale});
  scale = UOp::make(Ops::WHERE, sum->dtype(), {is_neg_inf(before), zero, scale});
  UOpRef out = UOp::make(Ops::REDUCE, sum->dtype(), {term, scale, max_loop}, ReduceArg{Ops::MULACC, {}});
  // the loop, the max and its RUNNINGs end early; only where the max and the sum share a dtype: with
  // a bfloat16 max the shortened loop reaches the linearizer as two loop nests (not yet found why)
  if (max->dtype() == sum->dtype())
    if (const UOpRef short_max = shortened(max); short_max != max)
      out = substitute(out, {{max_loop.get(), short_max->src(1)}});
  for (const auto& f : outside) out = UOp::make(Ops::MUL, out->dtype(), {out, rewrite(f)});
  return out;
}

} // namespace tg
