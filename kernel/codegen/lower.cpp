#include "kernel/codegen/lower.hpp"

#include "kernel/codegen/index_width.hpp"
#include "kernel/codegen/lowerer.hpp"
#include "kernel/codegen/online_softmax.hpp"
#include "kernel/codegen/vectorize.hpp"
#include "kernel/ir/evaluate.hpp"
#include "kernel/ir/node_table.hpp"
#include "kernel/ir/symbolic.hpp"
#include "kernel/schedule/buffer.hpp"
#include "kernel/shape/shapetracker.hpp"

#include <tg/sdk/matrix_unit.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace tg {

namespace lower_detail {

namespace {

// The work-group id as an index: the ABI's SPECIAL is int32 (so groups <= INT32_MAX).
UOpRef group_id(int64_t groups) {
  UOpRef id = UOp::make(Ops::SPECIAL, dtypes::int32, {UOp::constant(dtypes::int32, groups)},
                        std::vector<int64_t>{TG_SPECIAL_GROUP_ID, 0});
  return cast(id, kIndex);
}

Shape to_shape(const Dims& d) { return Shape(d.begin(), d.end()); }

// The view of movement op m's result, given the view st of its source.
ShapeTracker apply_movement(const ShapeTracker& st, const UOpRef& m) {
  switch (m->op()) {
  case Ops::RESHAPE:
    return st.reshape(to_shape(*m->arg_if<std::vector<int64_t>>()));
  case Ops::EXPAND:
    return st.expand(to_shape(*m->arg_if<std::vector<int64_t>>()));
  case Ops::PERMUTE: {
    const auto& a = *m->arg_if<std::vector<int64_t>>();
    return st.permute(std::vector<size_t>(a.begin(), a.end()));
  }
  case Ops::PAD:
  case Ops::SHRINK: {
    std::vector<std::pair<SInt, SInt>> pairs;
    for (auto [a, b] : MovementArg::pairs(m)) pairs.emplace_back(a, b);
    return m->op() == Ops::PAD ? st.pad(pairs) : st.shrink(pairs);
  }
  case Ops::FLIP: {
    std::vector<bool> axes;
    for (auto f : *m->arg_if<std::vector<int64_t>>()) axes.push_back(f != 0);
    return st.flip(axes);
  }
  default:
    throw UOpError("apply_movement: not a movement op: " + std::string(op_name(m->op())));
  }
}

// Ops with f(0, ..., 0) == 0: a PAD above them needs no explicit where().
bool pad_safe_op(Ops op) {
  switch (op) {
  case Ops::ADD:
  case Ops::SUB:
  case Ops::MUL:
  case Ops::NEG:
  case Ops::MAX:
  case Ops::CAST:
  case Ops::MULACC:
  case Ops::SQRT:
  case Ops::SIN:
  case Ops::TRUNC:
  case Ops::AND:
  case Ops::OR:
  case Ops::XOR:
  case Ops::SHL:
  case Ops::SHR:
    return true;
  default:
    return false;
  }
}

// Whether u is 0 wherever its inputs read 0 (a pad's zeros stay zeros). Walked with a stack and
// each node once: a deep or widely shared expression must not recurse.
bool pad_safe(const UOpRef& u) {
  std::vector<const UOp*> stack{u.get()};
  std::unordered_set<const UOp*> seen{u.get()};
  while (!stack.empty()) {
    const UOp* n = stack.back();
    stack.pop_back();
    if (n->op() == Ops::BUFFER) continue;
    if (n->op() == Ops::CONST) {
      if (!std::visit([](auto x) { return x == decltype(x){}; }, n->const_value())) return false;
      continue;
    }
    if (!is_movement(n->op()) && !pad_safe_op(n->op())) return false;
    const size_t count = is_movement(n->op()) ? 1 : n->src().size();
    for (size_t i = 0; i < count; ++i)
      if (seen.insert(n->src(i).get()).second) stack.push_back(n->src(i).get());
  }
  return true;
}

// The reduce over `ranges` of a value that none of them changes (a sum of ones), without the
// loop: c * trips for a sum (float32 adding 1 stops counting at 2^24), c for a max; nullptr when
// v varies, for a product, or for an empty loop.
UOpRef reduce_invariant(Ops op, const UOpRef& v, const std::vector<UOpRef>& ranges) {
  if (v->dtype().count != 1 || (op == Ops::MUL && !v->dtype().is_bool())) return nullptr;
  for (const auto& n : toposort(v))
    if (n->op() == Ops::RANGE && std::find(ranges.begin(), ranges.end(), n) != ranges.end()) return nullptr;
  if (op != Ops::ADD || v->dtype().is_bool()) return v; // max, or bool or/and
  int64_t trips = 1;
  for (const auto& r : ranges) trips *= r->src(1)->arg_int(); // <= the input's numel
  if (trips == 0) return nullptr; // an empty loop reads nothing and gives the identity
  // an int sum wraps like the loop would: c * trips in v's dtype equals trips additions of c
  return v * (v->dtype().is_float() ? const_like(v, double(trips)) : const_like(v, trips));
}

// The operands of an equality: CMPEQ(a, b), or CMPNE(CMPNE(a, b), true) (Tensor::eq's form).
std::optional<std::pair<UOpRef, UOpRef>> equality(const UOpRef& c) {
  if (c->op() == Ops::CMPEQ) return std::pair{c->src(0), c->src(1)};
  if (c->op() == Ops::CMPNE && is_true(c->src(1)) && c->src(0)->op() == Ops::CMPNE)
    return std::pair{c->src(0)->src(0), c->src(0)->src(1)};
  return std::nullopt;
}

// `c ? x : 0` (WHERE with a zero) or `cast(c) * x` with c a bool: (c, x), else nothing. A cast
// of either (a bfloat16 product summed in float32) is (c, cast(x)).
std::optional<std::pair<UOpRef, UOpRef>> selection(const UOpRef& v) {
  if (v->dtype().count != 1) return std::nullopt;
  if (v->op() == Ops::CAST && v->dtype().is_float() && v->src(0)->dtype().is_float()) {
    auto inner = selection(v->src(0));
    if (!inner) return std::nullopt;
    return std::pair{inner->first, cast(inner->second, v->dtype())};
  }
  if (v->op() == Ops::WHERE && v->src(2)->op() == Ops::CONST &&
      std::visit([](auto c) { return c == decltype(c){}; }, v->src(2)->const_value()))
    return std::pair{v->src(0), v->src(1)};
  if (v->op() == Ops::MUL)
    for (int i = 0; i < 2; ++i) {
      const UOpRef& s = v->src(size_t(i));
      if (s->op() == Ops::CAST && s->src(0)->dtype().is_bool())
        return std::pair{s->src(0), v->src(size_t(1 - i))};
    }
  return std::nullopt;
}

// A one-hot sum: the sum over range r (of n steps) of `e == r ? x(r) : 0`, or of
// `cast(e == r) * x(r)`, with e not depending on r (Embedding, gather, one_hot(...) @ w), is
// x(e) where 0 <= e < n and 0 elsewhere: one load where the loop read n. Returns the folded value
// and r, or nothing when v is not of that form. (Where x(r) is inf or NaN for an r other than e,
// the product form would have been NaN; the fold gives x(e), as an index would.)
std::optional<std::pair<UOpRef, UOpRef>> fold_one_hot(const UOpRef& v, const std::vector<UOpRef>& ranges) {
  auto sel = selection(v);
  if (!sel) return std::nullopt;
  const auto& [cond, x] = *sel;
  auto eq = equality(cond);
  if (!eq) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    UOpRef r = side == 0 ? eq->second : eq->first, e = side == 0 ? eq->first : eq->second;
    if (r->op() == Ops::CAST && r->dtype().is_int()) { // an iota in the tensor's integer dtype
      const int bits = 8 * r->dtype().itemsize() - (r->dtype().is_unsigned() ? 0 : 1);
      r = r->src(0);
      if (r->op() != Ops::RANGE || (bits < 63 && r->src(1)->arg_int() > (int64_t{1} << bits))) continue;
    }
    if (r->op() != Ops::RANGE || std::find(ranges.begin(), ranges.end(), r) == ranges.end()) continue;
    if (!e->dtype().is_int() || e->dtype().count != 1 || depends_on(e, r.get())) continue;
    const int64_t n = r->src(1)->arg_int();
    UOpRef at = e->dtype() == kIndex ? e : cast(e, kIndex);
    UOpRef inside = lt(idx_const(-1), at) & lt(at, idx_const(n));
    // out-of-range indices select nothing and read element 0, never memory outside x
    UOpRef folded = substitute(x, r.get(), where(inside, at, idx_const(0)));
    return std::pair{where(inside, folded, const_like(folded, int64_t{0})), r};
  }
  return std::nullopt;
}

// A summed `c ? x : 0` (or `cast(c) * x`) whose c is an equality that no fold removed: a
// selection true on few steps (an embedding's gradient, one_hot(i)^T @ g, picks the steps whose
// index is this output's row). x's loads that move with the loop become gated by c, so a step c
// rejects reads no memory (the kernel was bound by reading all of x for every output). Where x
// is inf or NaN on a rejected step the product form gave NaN; this gives 0, as a scatter would.
std::optional<UOpRef> gate_selected_loads(const UOpRef& v, const std::vector<UOpRef>& loops) {
  auto sel = selection(v);
  if (!sel || !equality(sel->first) || !v->dtype().is_float()) return std::nullopt;
  const auto& [cond, x] = *sel;
  bool gated = false;
  NodeMap done;
  for (const auto& n : toposort(x)) {
    UOpRef m = with_mapped_sources(n, done);
    if (n->op() == Ops::LOAD &&
        std::any_of(loops.begin(), loops.end(), [&](const UOpRef& r) { return depends_on(n, r.get()); })) {
      UOpRef gate = m->src().size() == 3 ? m->src(1) & cond : cond;
      UOpRef zero = m->src().size() == 3 ? m->src(2) : const_like(m, int64_t{0});
      m = UOp::make(Ops::LOAD, m->dtype(), {m->src(0), gate, zero});
      gated = true;
    }
    done.emplace(n.get(), m);
  }
  if (!gated) return std::nullopt;
  UOpRef out = *done.find(x.get());
  return where(cond, out, const_like(out, int64_t{0}));
}

// Contiguous strides of a shape.
Dims strides_of(const Dims& shape) {
  Dims st(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) st[d - 1] = st[d] * shape[d];
  return st;
}

} // namespace

// Per-dim indices of `flat` in a contiguous `shape`.
std::vector<UOpRef> unflatten(const UOpRef& flat, const Dims& shape) {
  Dims st = strides_of(shape);
  std::vector<UOpRef> out;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) {
      out.push_back(idx_const(0));
      continue;
    }
    UOpRef v = st[d] == 1 ? flat : idiv(flat, idx_const(st[d]));
    if (d > 0) v = v % idx_const(shape[d]);
    out.push_back(v);
  }
  return out;
}

namespace {

UOpRef flatten(const std::vector<UOpRef>& idx, const Dims& shape) {
  Dims st = strides_of(shape);
  UOpRef flat = idx_const(0);
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1) flat = flat + idx[d] * idx_const(st[d]);
  return flat;
}

// max(a, b) that is NaN when either is (PyTorch's max): the ABI leaves MAX of a NaN unspecified,
// so floats take b where a < b or b is NaN, else a. The linearizer's accumulators do the same.
UOpRef maximum_propagating_nan(const UOpRef& a, const UOpRef& b) {
  if (!a->dtype().is_float()) return maximum(a, b);
  return where(lt(a, b) | ne(b, b), b, a);
}

// The identity of a reduce: what a padded step adds.
UOpRef reduce_identity(Ops op, DType dt) {
  if (dt.is_bool()) return UOp::constant(dt, op == Ops::MUL);
  if (op == Ops::MAX)
    return UOp::constant(dt, dt.is_float() ? ConstValue{-std::numeric_limits<double>::infinity()}
                                           : ConstValue{dt.int_min()});
  const int64_t one = op == Ops::MUL;
  return UOp::constant(dt, dt.is_float() ? ConstValue{double(one)} : ConstValue{one});
}

} // namespace

// The tracker of a node of shape `start` seen from the base, through `ops` applied bottom-up.
ShapeTracker Lowerer::tracker(const Dims& start, const std::vector<UOpRef>& ops) const {
  ShapeTracker st = ShapeTracker::from_shape(to_shape(start));
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) st = apply_movement(st, *it);
  return st;
}

UOpRef Lowerer::range_for(const UOp* reduce_node, size_t axis, int64_t size, const UOp* within) {
  auto key = std::make_tuple(reduce_node, axis, within);
  if (auto it = ranges_.find(key); it != ranges_.end()) return it->second;
  UOpRef r = UOp::range(size, next_range_id_++, kIndex);
  ranges_.emplace(key, r);
  reduce_ranges_.insert(r.get());
  return r;
}

UOpRef Lowerer::load(const UOpRef& buffer, const Frame& f) {
  ShapeTracker st = tracker({buffer_arg(buffer).size()}, f.mops);
  auto [index, valid] = st.to_index(f.idx);
  const UOpRef& global = globals_.at(size_t(global_index_.at(buffer.get())));
  UOpRef ptr = UOp::make(Ops::INDEX, global->dtype(), {global, index});
  if (is_true(valid)) return UOp::make(Ops::LOAD, buffer->dtype(), {ptr});
  UOpRef zero =
      UOp::constant(buffer->dtype(), buffer->dtype().is_float() ? ConstValue{0.0} : ConstValue{int64_t{0}});
  if (buffer->dtype().is_bool()) zero = UOp::constant(buffer->dtype(), false);
  // An index inside the buffer wherever it is evaluated (a per-channel parameter under a padded
  // view) needs no gate to stay in bounds: load it always and select. Lanes then share one load.
  if (index->vmin() >= 0 && index->vmax() < int64_t(buffer_arg(buffer).size()))
    return where(valid, UOp::make(Ops::LOAD, buffer->dtype(), {ptr}), zero);
  return UOp::make(Ops::LOAD, buffer->dtype(), {ptr, valid, zero});
}

UOpRef Lowerer::value(const UOpRef& u, const Frame& f) {
  std::vector<const void*> key{u.get()};
  for (const auto& i : f.idx) key.push_back(i.get());
  key.push_back(nullptr);
  for (const auto& m : f.mops) key.push_back(m.get());
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  // the key holds raw pointers: keep its index nodes alive so no address is ever reused
  keep_alive_.insert(keep_alive_.end(), f.idx.begin(), f.idx.end());

  UOpRef out;
  switch (u->op()) {
  case Ops::BUFFER:
    out = load(u, f);
    break;
  case Ops::RANGE: { // iota: the element's index along its one dim
    auto [index, valid] = tracker({u->src(1)->arg_int()}, f.mops).to_index(f.idx);
    out = is_true(valid) ? index : where(valid, index, idx_const(0));
    if (out->dtype() != u->dtype()) out = cast(out, u->dtype()); // the tensor's dtype, not the index's
    break;
  }
  case Ops::CONST:
  case Ops::DEFINE_VAR:
    out = u;
    break;
  case Ops::REDUCE_AXIS:
    out = reduce(u, f);
    break;
  case Ops::CONTIGUOUS:
  case Ops::NOOP: // carries a custom gradient; the value is its source's
  case Ops::DETACH:
    out = value(u->src(0), f);
    break;
  case Ops::RESHAPE:
  case Ops::PERMUTE:
  case Ops::EXPAND:
  case Ops::SHRINK:
  case Ops::FLIP:
  case Ops::PAD: {
    Frame below = f;
    below.mops.push_back(u);
    out = value(u->src(0), below);
    if (u->op() == Ops::PAD && !pad_safe(u->src(0))) {
      std::vector<UOpRef> ops = f.mops;
      ops.push_back(u);
      auto [index, valid] = tracker(shapes_(u->src(0)), ops).to_index(f.idx);
      (void)index;
      if (!is_true(valid)) out = where(valid, out, const_like(out, int64_t{0}));
    }
    break;
  }
  default: {
    if (!is_alu(u->op()) && u->op() != Ops::CAST && u->op() != Ops::BITCAST)
      throw UOpError("codegen: cannot lower " + std::string(op_name(u->op())) + " inside a kernel");
    std::vector<UOpRef> src;
    for (const auto& s : u->src()) src.push_back(value(s, f));
    out = UOp::make(u->op(), u->dtype(), std::move(src), u->arg());
    (reduce_depth_ ? alu_inside_ : alu_outside_) += 1;
    break;
  }
  }
  memo_.emplace(std::move(key), out);
  return out;
}

// The lane digit of each upcast (or unrolled) part: the first one applied varies fastest.
std::vector<int64_t> lane_digits(const std::vector<LanePart>& parts, int64_t lane) {
  std::vector<int64_t> digits;
  for (const auto& p : parts) {
    digits.push_back(lane % p.size);
    lane /= p.size;
  }
  return digits;
}

UOpRef Lowerer::output_index(size_t d, const std::vector<UOpRef>& rest_idx, int64_t lane, UOpRef& valid) {
  const AxisPlan& ax = plan_[d];
  const auto digits = lane_digits(upcasts_, lane);
  UOpRef raw;
  for (const Part& p : ax.parts) {
    if (!p.rest && p.op == OptOp::LOOP) {
      UOpRef start = raw ? raw * idx_const(p.size) : idx_const(0);
      // One loop for every lane: UPCAST parts of this axis are inside the loop (applied before it),
      // so a step covers `inner` adjacent outputs and the axis holds size / inner steps.
      UOpRef& rng = loops_[d];
      if (!rng) {
        int64_t inner = 1;
        for (auto q = ax.parts.end() - 1; &*q != &p; --q) inner *= q->size;
        const int64_t steps = ax.size / inner;
        UOpRef end = ax.ragged ? -maximum(start - idx_const(steps), idx_const(-p.size)) : idx_const(p.size);
        rng = UOp::range(end, next_range_id_++, kIndex);
      }
      raw = raw ? start + rng : rng;
      continue;
    }
    UOpRef pi = p.rest                  ? rest_idx[d]
                : p.op == OptOp::UPCAST ? idx_const(digits.at(size_t(p.lane_id)))
                : p.op == OptOp::TC     ? tc_index(d)
                                        : local_ids_.at(size_t(p.local_axis));
    raw = raw ? raw * idx_const(p.size) + pi : pi;
  }
  if (ax.padded > ax.size) { // padded outputs are computed at the last real index, not stored
    valid = valid & lt(raw, idx_const(ax.size));
    raw = min_index(raw, ax.size - 1);
  }
  return raw;
}

std::vector<UOpRef> Lowerer::reduce_input_index(const UOpRef& r, const Frame& f,
                                                const std::vector<UOpRef>& idx, UOpRef* valid) {
  const Dims& out_shape = shapes_(r);
  std::vector<UOpRef> in_idx = idx;
  if (!f.mops.empty() || f.base != out_shape) {
    auto [flat, v] = tracker(out_shape, f.mops).to_index(idx);
    in_idx = unflatten(flat, out_shape);
    if (valid) *valid = v;
  }
  for (auto a : r->arg_if<ReduceArg>()->axes) in_idx[size_t(a)] = idx_const(0);
  return in_idx;
}

UOpRef Lowerer::reduce(const UOpRef& r, const Frame& f) {
  const Dims& in_shape = shapes_(r->src(0));
  UOpRef valid = UOp::constant(dtypes::bool_, true);
  const auto& axes = r->arg_if<ReduceArg>()->axes;
  Ops op = r->arg_if<ReduceArg>()->op;
  // Reduces over the same space as the first one follow its plan; others run plain loops.
  const bool planned =
      r == first_reduce_ || (!nested_.count(r.get()) && in_shape == shapes_(first_reduce_->src(0)) &&
                             axes == first_reduce_->arg_if<ReduceArg>()->axes);
  if (tc_ && r == first_reduce_) return tc_reduce(r, f);
  if (!staged_.empty() && r == first_reduce_) return staged_reduce(r, f);
  std::vector<UOpRef> in_idx = reduce_input_index(r, f, f.idx, &valid), ranges;
  int64_t count = 1, iters = 1;
  bool padded = false;
  // A reduce evaluated inside another's loop (a fused softmax's scores, per key) runs its own
  // loop in each loop that evaluates it: one RANGE per enclosing reduce loop.
  const UOp* within = nullptr;
  if (nested_.count(r.get()))
    for (const auto& i : in_idx) // the index the reduce's input sees: a broadcast max sees no key
      for (const auto& n : toposort(i))
        if (n->op() == Ops::RANGE && n->src(1)->is_const() && reduce_ranges_.count(n.get()) &&
            (!within || n->arg_int() > within->arg_int()))
          within = n.get();
  // A nested reduce over one axis (a fused softmax's scores: q . k per key) runs in vector lanes
  // of that axis, its partial sums in vector accumulators (vector_partials), not as one scalar
  // chain per key.
  int64_t split = 1;
  if (within && axes.size() == 1 && r->dtype().count == 1 && op == Ops::ADD) {
    const int64_t n = in_shape[size_t(axes[0])],
                  w = options_.vector_bytes / std::max(1, r->dtype().itemsize());
    if (w >= 4 && n > w && n % w == 0) split = w;
  }
  for (auto a : axes) {
    const int64_t n = in_shape[size_t(a)];
    count *= n;
    in_idx[size_t(a)] = idx_const(0);
    if (n == 1 || planned) continue;
    UOpRef rng = range_for(r.get(), size_t(a), n / split, within);
    ranges.push_back(rng);
    in_idx[size_t(a)] = rng;
    iters *= n / split;
  }
  std::vector<UOpRef> rest_range(reduce_dims_.size());
  const size_t ndim = out_shape_.size();
  if (planned)
    for (size_t j = 0; j < reduce_dims_.size(); ++j) {
      const AxisPlan& ax = plan_[ndim + j];
      padded |= ax.padded > ax.size;
      if (ax.rest() == 1) continue; // fully split: no loop
      rest_range[j] = range_for(r.get(), size_t(reduce_dims_[j]), ax.rest());
      ranges.push_back(rest_range[j]);
      iters *= ax.rest();
    }
  reduce_size_ = std::max(reduce_size_, count);
  reduce_iters_ = std::max(reduce_iters_, iters);
  int64_t unroll_lanes = split;
  if (planned)
    for (const auto& u : unrolls_) unroll_lanes *= u.size;
  std::vector<UOpRef> partials;
  for (int64_t lane = 0; lane < unroll_lanes; ++lane) {
    std::vector<UOpRef> idx = in_idx;
    if (split > 1) idx[size_t(axes[0])] = idx[size_t(axes[0])] * idx_const(split) + idx_const(lane);
    UOpRef in_range = UOp::constant(dtypes::bool_, true);
    if (planned) {
      for (size_t j = 0; j < reduce_dims_.size(); ++j) {
        const AxisPlan& ax = plan_[ndim + j];
        UOpRef raw = reduce_index(j, rest_range[j], lane);
        if (ax.padded > ax.size) { // padded steps read the last element and add the identity
          in_range = in_range & lt(raw, idx_const(ax.size));
          raw = min_index(raw, ax.size - 1);
        }
        idx[size_t(reduce_dims_[j])] = raw;
      }
    }
    ++reduce_depth_;
    UOpRef v = value(r->src(0), Frame{idx, in_shape, {}});
    --reduce_depth_;
    if (!is_true(in_range)) v = where(in_range, v, reduce_identity(op, v->dtype()));
    std::vector<UOpRef> loops = ranges;
    if (op == Ops::ADD && !padded)
      while (auto one_hot = fold_one_hot(v, loops)) {
        v = one_hot->first;
        loops.erase(std::find(loops.begin(), loops.end(), one_hot->second));
      }
    if (loops.empty()) {
      partials.push_back(v);
      continue;
    }
    if (op == Ops::ADD)
      if (auto g = gate_selected_loads(v, loops)) v = *g;
    if (UOpRef folded = padded ? nullptr : reduce_invariant(op, v, loops)) {
      partials.push_back(folded);
      continue;
    }
    std::vector<UOpRef> src{v};
    src.insert(src.end(), loops.begin(), loops.end());
    partials.push_back(UOp::make(Ops::REDUCE, v->dtype(), std::move(src), ReduceArg{op, {}}));
    ++alu_inside_; // the accumulate (a MULACC counts as multiply + add, as tinygrad counts)
  }
  if ((planned || split > 1) && partials.size() >= 4) partials = vector_partials(std::move(partials));
  UOpRef result = partials[0];
  for (size_t k = 1; k < partials.size(); ++k) {
    const UOpRef& p = partials[k];
    // an unrolled float product joins the sum as one MULACC: a fused multiply-add on a CPU, which
    // its LLVM renderer gets only that way (a 3x3 depthwise convolution's 9 products per output)
    if (op == Ops::ADD && p->op() == Ops::MUL && p->dtype().is_float() && p->dtype() == result->dtype())
      result = UOp::make(Ops::MULACC, result->dtype(), {p->src(0), p->src(1), result});
    else
      result = op == Ops::MAX ? maximum_propagating_nan(result, p) : op == Ops::MUL ? result * p : result + p;
  }
  if (planned && group_axis_ >= 0) result = group_stage(op, result);
  if (!is_true(valid)) result = where(valid, result, const_like(result, int64_t{0}));
  return result;
}

// UNROLL's partial sums of a contiguous reduce, scalar accumulators per lane, become vector
// accumulators of up to two vector registers (then summed across lanes once): LLVM's SLP
// vectorizer leaves 20 scalar chains of load/add/compare scalar, and a per-channel BatchNorm sum
// then runs at ~3 GB/s. Lanes whose loads would be gathers stay scalar, and so do a GROUP's
// (its local-memory stage combines scalar partials).
std::vector<UOpRef> Lowerer::vector_partials(std::vector<UOpRef> partials) const {
  const auto n = int64_t(partials.size());
  const int64_t width = options_.vector_bytes / std::max(1, partials[0]->dtype().itemsize());
  int64_t v = 0;
  for (int64_t w = std::min<int64_t>(16, 2 * width); w >= 4 && v == 0; w /= 2)
    if (n % w == 0) v = w;
  if (v == 0 || partials[0]->dtype().count != 1 || group_axis_ >= 0) return partials;
  for (const auto& p : partials)
    if (p->op() != Ops::REDUCE) return partials;
  LaneVectorizer vectorizer(options_.lane_gates);
  std::vector<UOpRef> out;
  for (int64_t c = 0; c < n; c += v) {
    UOpRef vec = vectorizer.bundle({partials.begin() + c, partials.begin() + c + v});
    if (vec->op() != Ops::REDUCE) return partials;
    for (const auto& u : toposort(vec)) // a VECTORIZE of distinct loads is a gather
      if (u->op() == Ops::VECTORIZE && u->src(0)->op() == Ops::LOAD &&
          std::any_of(u->src().begin(), u->src().end(), [&](const UOpRef& l) { return l != u->src(0); }))
        return partials;
    for (int64_t k = 0; k < v; ++k) out.push_back(UOp::make(Ops::GEP, vec->dtype().base(), {vec}, Arg{k}));
  }
  return out;
}

// The index along reduce axis j (before padding is clamped) of unrolled lane `lane`.
UOpRef Lowerer::reduce_index(size_t j, const UOpRef& rest_range, int64_t lane) {
  const size_t axis = out_shape_.size() + j;
  const auto digits = lane_digits(unrolls_, lane);
  UOpRef raw;
  for (const Part& p : plan_[axis].parts) {
    UOpRef pi = p.rest                  ? (rest_range ? rest_range : idx_const(0))
                : p.op == OptOp::UNROLL ? idx_const(digits.at(size_t(p.lane_id)))
                : p.op == OptOp::TC     ? tc_index(axis)
                : p.op == OptOp::STAGE  ? stage_ranges_.at(axis)
                                        : local_ids_.at(size_t(p.local_axis));
    raw = raw ? raw * idx_const(p.size) + pi : pi;
  }
  return raw;
}

// The threads of a GROUP each hold a partial: each writes it to local memory, and after a barrier
// every thread combines the group's partials (the store is left to thread 0).
UOpRef Lowerer::group_stage(Ops op, const UOpRef& partial) {
  if (next_slot_ >= group_slots_) throw UOpError("codegen: more grouped reduces than local-memory slots");
  const int64_t slot = next_slot_++;
  UOpRef others = idx_const(0); // the other local axes (LOCAL outputs), flattened
  int64_t threads = 1;
  for (int k = 0; k < local_axes_; ++k) {
    if (k == group_axis_) continue;
    others = others * idx_const(local_[size_t(k)]) + local_ids_[size_t(k)];
    threads *= local_[size_t(k)];
  }
  const auto G = int64_t(local_[size_t(group_axis_)]);
  UOpRef base = (idx_const(slot * threads) + others) * idx_const(G);
  UOpRef own =
      UOp::make(Ops::INDEX, local_buf_->dtype(), {local_buf_, base + local_ids_[size_t(group_axis_)]});
  UOpRef barrier =
      UOp::make(Ops::BARRIER, dtypes::void_, {UOp::make(Ops::STORE, dtypes::void_, {own, partial})});
  UOpRef g = UOp::range(G, next_range_id_++, kIndex);
  // the barrier is a source of the read's INDEX: it orders the read after every thread's write
  UOpRef read = UOp::make(Ops::LOAD, partial->dtype(),
                          {UOp::make(Ops::INDEX, local_buf_->dtype(), {local_buf_, base + g, barrier})});
  UOpRef total = UOp::make(Ops::REDUCE, partial->dtype(), {read, g}, ReduceArg{op, {}});
  // a work group looping over tiles writes the slot again: first every thread must have read it
  if (tile_loop_) trailing_barriers_.push_back(UOp::make(Ops::BARRIER, dtypes::void_, {total}));
  return total;
}
namespace {

std::string join_dims(const std::string& prefix, const Dims& d) {
  std::string s = prefix;
  for (auto x : d) s += "_" + std::to_string(x);
  return s;
}

} // namespace

LoweredKernel Lowerer::run() {
  LoweredKernel k;
  const int64_t max_groups = std::clamp<int64_t>(options_.max_groups, 1, INT32_MAX); // SPECIAL is int32
  IndexNarrower narrow;
  const KernelInfo info = analyze();
  const UOpRef& value_root = value_root_;
  // the kernel's axes (analyze); its row-major flat index is the item's, which the store uses
  const Dims& S = out_shape_;
  const size_t ndim = S.size();
  const bool has_reduce = first_reduce_ != nullptr;
  k.applied = options_.opts       ? *options_.opts
              : options_.optimize ? heuristic_opts(info, options_)
                                  : std::vector<Opt>{};
  for (const Opt& o : k.applied) apply(o, info);
  for (int a = 0; a < local_axes_; ++a)
    local_ids_.push_back(cast(UOp::make(Ops::SPECIAL, dtypes::int32,
                                        {UOp::constant(dtypes::int32, int64_t(local_[size_t(a)]))},
                                        std::vector<int64_t>{TG_SPECIAL_LOCAL_ID, a}),
                              kIndex));
  if (!staged_.empty()) plan_stage();
  int64_t total_lanes = 1, threads = 1, loop_steps = 1;
  for (const auto& u : upcasts_) total_lanes *= u.size;
  for (auto l : local_) threads *= l;
  for (size_t d = 0; d < ndim; ++d)
    for (const Part& p : plan_[d].parts)
      if (!p.rest && p.op == OptOp::LOOP) loop_steps *= p.size;
  if (group_axis_ >= 0) {
    const DType dt = first_reduce_->dtype();
    group_slots_ = total_lanes;
    const int64_t count = threads * total_lanes;
    const uint64_t bytes = uint64_t(count) * uint64_t(dt.itemsize());
    if (bytes > options_.local_memory_bytes)
      throw OptError("optimizations " + to_string(k.applied) + " need " + std::to_string(bytes) +
                     " bytes of local memory; the device has " + std::to_string(options_.local_memory_bytes));
    local_buf_ = UOp::make(Ops::DEFINE_LOCAL, dt.ptr_to(true), {}, count);
  }

  // The grid: one work group per tile (the rest of every output axis). More tiles than the device
  // has work groups: each work group loops over `per` tiles; the last group's surplus steps are
  // clamped to the final tile, which it recomputes and stores again with the same value (one work
  // group runs in order, so this is no race).
  Dims tiles;
  for (size_t d = 0; d < ndim; ++d) tiles.push_back(plan_[d].rest());
  const int64_t tile_count = dims_prod(tiles);
  const int64_t per = (tile_count + max_groups - 1) / max_groups;
  const int64_t groups = (tile_count + per - 1) / per;
  tile_loop_ = per > 1;
  UOpRef tile_flat = group_id(groups);
  if (per > 1) {
    UOpRef step = tile_flat * idx_const(per) + UOp::range(per, next_range_id_++, kIndex);
    tile_flat = min_index(step, tile_count - 1);
  }
  const std::vector<UOpRef> rest_idx = unflatten(tile_flat, tiles);
  rest_idx_ = rest_idx;

  // Vector lanes: the leading upcast, when some input is contiguous along it, in vectors of up to
  // two whole registers (16 floats on AVX2 are two 8-wide registers; LLVM splits them). A wider
  // upcast is several vectors: the largest multiple of 4 that divides it and fits.
  int64_t vector_lanes = 1;
  bool gated = group_axis_ >= 0;
  for (size_t d = 0; d < ndim; ++d) gated |= plan_[d].padded > plan_[d].size;
  const int64_t width = options_.vector_bytes / std::max(1, value_root->dtype().itemsize());
  // (not under STAGE: its lanes read local memory at strided offsets, and threads interleave the
  // outputs). A device with lane_gates also loads lanes 2 elements apart as one vector.
  auto vector_axis = [&](const AxisInfo& lead) {
    return lead.contiguous || (options_.lane_gates && lead.every_second);
  };
  if (!upcasts_.empty() && !gated && !tc_ && staged_.empty() && width >= 2 &&
      vector_axis(info.axes[upcasts_.front().axis]))
    for (int64_t v = std::min(upcasts_.front().size, 2 * width); v >= 4; --v)
      if ((v % 4 == 0 || v == upcasts_.front().size) && upcasts_.front().size % v == 0) {
        vector_lanes = v;
        break;
      }

  std::vector<UOpRef> stores;
  std::vector<std::vector<UOpRef>> tile_ptrs; // per vector of lanes, stored together at the end
  std::vector<UOpRef> tile_values;
  const UOpRef& out = globals_[0];
  LaneVectorizer vectorizer(options_.lane_gates);
  OnlineSoftmax online(next_range_id_); // one per kernel: the lanes share the rewritten max and sums
  const int64_t tc_lanes =
      !tc_ ? 1 : int64_t(sdk::matrix_lanes(options_.matrix_units.at(size_t(tc_unit_)).unit.c));
  for (int64_t lane = 0; lane < total_lanes * tc_lanes; lane += vector_lanes) {
    std::vector<UOpRef> values, ptrs;
    for (int64_t v = 0; v < vector_lanes; ++v) {
      UOpRef valid = UOp::constant(dtypes::bool_, true);
      std::vector<UOpRef> idx;
      cur_lane_ = (lane + v) / tc_lanes;
      tc_digit_ = int((lane + v) % tc_lanes);
      for (size_t d = 0; d < ndim; ++d) idx.push_back(output_index(d, rest_idx, cur_lane_, valid));
      UOpRef v_out = value(value_root, Frame{idx, S, root_mops_});
      if (info.nested_reduces) v_out = online(v_out);
      UOpRef flat = flatten(idx, S);
      if (!store_perm_.empty()) { // the value's row-major index, stored at the item's
        const std::vector<UOpRef> at = unflatten(flat, shapes_(value_root));
        std::vector<UOpRef> item_idx;
        for (int64_t d : store_perm_) item_idx.push_back(at[size_t(d)]);
        flat = flatten(item_idx, item_.shape);
      }
      UOpRef ptr = UOp::make(Ops::INDEX, out->dtype(), {out, flat});
      if (group_axis_ >= 0) valid = valid & eq(local_ids_[size_t(group_axis_)], idx_const(0));
      if (vector_lanes == 1) {
        stores.push_back(is_true(valid) ? UOp::make(Ops::STORE, dtypes::void_, {ptr, v_out})
                                        : UOp::make(Ops::STORE, dtypes::void_, {ptr, v_out, valid}));
        continue;
      }
      // lanes in their final index width, so the vectors bundled from them are too; a stored
      // value keeps the buffer's dtype (an int64 result that fits int32 is still stored as int64)
      UOpRef narrowed = narrow(v_out);
      values.push_back(
          narrowed->dtype() == v_out->dtype() ? narrowed : UOp::make(Ops::CAST, v_out->dtype(), {narrowed}));
      ptrs.push_back(narrow(ptr));
    }
    if (vector_lanes > 1) {
      tile_values.push_back(vectorizer.bundle(values));
      tile_ptrs.push_back(std::move(ptrs));
    }
  }
  for (auto& st : vectorizer.store_tile(tile_ptrs, tile_values)) stores.push_back(st);

  k.global = {uint32_t(groups), 1, 1};
  k.local = local_;
  k.compile_level = has_reduce ? 3 : 2;
  k.name = has_reduce ? join_dims("r", S) + "_" + std::to_string(reduce_size_) : join_dims("E", S);
  k.opts = to_string(k.applied) + " groups=" + std::to_string(groups) +
           (threads > 1 ? " local=" + std::to_string(local_[0]) + "x" + std::to_string(local_[1]) + "x" +
                              std::to_string(local_[2])
                        : std::string()) +
           (vector_lanes > 1 ? " vector=" + std::to_string(vector_lanes) : std::string()) +
           (per > 1 ? " tiles/group=" + std::to_string(per) : std::string());
  if (k.global[0] > options_.max_groups)
    throw UOpError("codegen: " + std::to_string(k.global[0]) + " work groups exceed the device limit " +
                   std::to_string(options_.max_groups));
  // every buffer is an argument even if simplification removed all its loads (x * 0)
  std::vector<UOpRef> sink_src = leading_values_;
  sink_src.insert(sink_src.end(), stores.begin(), stores.end());
  sink_src.insert(sink_src.end(), globals_.begin(), globals_.end());
  sink_src.insert(sink_src.end(), trailing_barriers_.begin(), trailing_barriers_.end());
  k.sink = narrow(simplify(UOp::sink(sink_src)));
  // ALU nodes were counted once per emitted lane: per work item and loop step.
  k.ops = tile_count * threads * loop_steps * (alu_outside_ + alu_inside_ * reduce_iters_);
  for (const auto& b : item_.buffers) k.bytes += buffer_arg(b).size() * b->dtype().itemsize();
  return k;
}
} // namespace lower_detail

using lower_detail::Lowerer;

LowerOptions lower_options(const tg_device_properties& props, bool optimize) {
  LowerOptions o;
  o.optimize = optimize;
  o.compute_units = std::max(1u, props.compute_units);
  o.max_groups = props.max_global_size[0] ? props.max_global_size[0] : 0x7fffffffu;
  o.vector_bytes = props.vector_bytes;
  o.buffer_alignment = props.buffer_alignment;
  for (size_t i = 0; i < 3; ++i) o.max_local_size[i] = std::max(1u, props.max_local_size[i]);
  o.max_local_threads = std::max(1u, props.max_local_threads);
  o.local_memory_bytes = (props.features & TG_FEATURE_LOCAL_MEMORY) ? props.local_memory_bytes : 0;
  o.subgroup_size = std::max(1u, props.subgroup_size);
  return o;
}

KernelInfo analyze_kernel(const ScheduleItem& item) {
  if (item.ast->src(0)->op() != Ops::STORE) throw UOpError("analyze_kernel: not a compute kernel");
  return Lowerer(item, LowerOptions{}).analyze();
}

LoweredKernel lower_kernel(const ScheduleItem& item, const LowerOptions& options) {
  if (item.ast->src(0)->op() != Ops::STORE) throw UOpError("lower_kernel: not a compute kernel");
  if (options.opts || !options.optimize || (!options.tensor_cores() && !options.staging))
    return Lowerer(item, options).run();
  try { // the heuristic's TC or STAGE may meet a reduce it cannot take (read through a reshape of
        // its index space): then the choices without them
    return Lowerer(item, options).run();
  } catch (const OptError&) {
    // a local-memory unit's list refused: the register units' list, then the rest
    auto local = [](const MatrixUnitChoice& c) { return sdk::matrix_local(c.unit); };
    if (std::any_of(options.matrix_units.begin(), options.matrix_units.end(), local)) {
      LowerOptions regs = options;
      std::erase_if(regs.matrix_units, local);
      return lower_kernel(item, regs);
    }
    LowerOptions plain = options;
    plain.matrix_units.clear();
    plain.staging = false;
    return Lowerer(item, plain).run();
  }
}

} // namespace tg
