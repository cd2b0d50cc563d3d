#include "kernel/codegen/linearize.hpp"

#include "kernel/codegen/opt.hpp"
#include "kernel/ir/errors.hpp"

#include <tg/sdk/kernel_ir.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <unordered_set>

namespace tg {

namespace {

using RangeSet = std::vector<const UOp*>; // small, unordered

void merge_into(RangeSet& into, const RangeSet& from) {
  for (const UOp* r : from)
    if (std::find(into.begin(), into.end(), r) == into.end()) into.push_back(r);
}

class Linearizer {
public:
  Linearizer(const UOpRef& sink, const std::string& name) : builder_(name) {
    order_ = toposort(sink);
    order_.pop_back(); // the SINK
    for (size_t i = 0; i < order_.size(); ++i) position_[order_[i].get()] = i;
  }

  LinearKernel run();

private:
  struct Item {
    const UOp* node = nullptr; // a node emitted in this block, or
    const UOp* loop = nullptr; // a RANGE: its whole loop
  };

  void compute_ranges();
  void compute_nesting();
  void find_guarded_sums(const std::unordered_map<const UOp*, std::vector<const UOp*>>& users);
  void emit_guarded(const UOp* range);
  const UOp* deepest(const RangeSet& set) const;
  const UOp* block_of(const UOp* u) const;
  const UOp* parent(const UOp* range) const { return parent_.at(range); }
  // The item of `block` that holds u (u itself, or the loop that contains it); nullptr if u is
  // outside `block`.
  std::optional<Item> holder_in(const UOp* u, const UOp* block) const;
  std::vector<Item> sorted_items(const UOp* block);
  void emit_block(const UOp* block);
  void emit_loop(const UOp* range);
  void emit_node(const UOp* u);
  sdk::KernelBuilder::Ref ref(const UOpRef& u) const { return refs_.at(u.get()); }
  // A matrix op with C = c: WMMA, MMA (a register unit's: arg is its index; a local-memory unit's:
  // {index | flags, strides}) or WGMMA.
  sdk::KernelBuilder::Ref matrix_op(const UOp* m, sdk::KernelBuilder::Ref c) {
    const auto a = ref(m->src(0)), b = ref(m->src(1));
    if (m->op() == Ops::WMMA) return builder_.wmma(a, b, c, m->arg_int());
    if (const auto* v = m->arg_if<std::vector<int64_t>>())
      return m->op() == Ops::WGMMA ? builder_.wgmma(a, b, c, v->at(0), v->at(1))
                                   : builder_.mma(a, b, c, v->at(0), v->at(1));
    return builder_.mma(a, b, c, m->arg_int());
  }
  // Where a REDUCE's loops begin among its sources: a rescaled sum (REDUCE(MULACC, value, scale,
  // loops...), online_softmax.hpp) carries its scale first.
  static size_t first_loop(const UOp* r) {
    const auto* a = r->arg_if<ReduceArg>();
    return a && a->op == Ops::MULACC ? 2 : 1;
  }
  // One step of REDUCE r: its accumulator's value `acc` combined with this step's `val`.
  sdk::KernelBuilder::Ref combined(const UOp* r, sdk::KernelBuilder::Ref acc, sdk::KernelBuilder::Ref val) {
    const Ops op = r->arg_if<ReduceArg>()->op;
    if (op == Ops::MULACC) { // acc * scale + val; a vector sum shares one scalar scale
      sdk::KernelBuilder::Ref scale = ref(r->src(1));
      if (r->dtype().count > 1 && r->src(1)->dtype().count == 1)
        scale = builder_.vectorize(std::vector<sdk::KernelBuilder::Ref>(r->dtype().count, scale));
      return builder_.alu(TG_OP_MULACC, acc, scale, val);
    }
    if (op == Ops::MAX && r->dtype().is_float()) {
      // A float max propagates NaN (maximum_propagating_nan): the ABI leaves MAX of a NaN open.
      auto take = builder_.alu(TG_OP_OR, builder_.cmplt(acc, val), builder_.alu(TG_OP_CMPNE, val, val));
      return builder_.alu(TG_OP_WHERE, take, val, acc);
    }
    tg_op combine = op == Ops::MAX   ? (r->dtype().is_bool() ? TG_OP_OR : TG_OP_MAX)
                    : op == Ops::MUL ? (r->dtype().is_bool() ? TG_OP_AND : TG_OP_MUL)
                                     : (r->dtype().is_bool() ? TG_OP_OR : TG_OP_ADD);
    return builder_.alu(combine, acc, val);
  }
  // Whether m is a matrix op that chains through local-memory tiles (WGMMA, a local-memory MMA).
  static bool chained_op(const UOp* m) {
    return m->op() == Ops::WGMMA || (m->op() == Ops::MMA && m->arg_if<std::vector<int64_t>>() != nullptr);
  }
  // A fused chain of such ops (fused_mul_) accumulating into acc: the first op's C is acc.
  sdk::KernelBuilder::Ref op_chain(const UOp* m, sdk::KernelBuilder::Ref acc) {
    return matrix_op(m, chained_op(m->src(2).get()) ? op_chain(m->src(2).get(), acc) : acc);
  }

  sdk::KernelBuilder builder_;
  std::vector<UOpRef> order_;
  std::unordered_map<const UOp*, size_t> position_;
  std::unordered_map<const UOp*, RangeSet> ranges_;
  std::unordered_map<const UOp*, const UOp*> parent_; // RANGE -> enclosing RANGE (nullptr = top)
  std::unordered_map<const UOp*, int> depth_;
  std::unordered_map<const UOp*, std::vector<Item>> items_; // block (RANGE or nullptr) -> items
  std::unordered_map<const UOp*, std::vector<const UOp*>> reduces_opening_; // outer own range -> REDUCEs
  std::unordered_map<const UOp*, std::vector<const UOp*>> reduces_closing_; // inner own range -> REDUCEs
  std::unordered_map<const UOp*, sdk::KernelBuilder::Ref> refs_;
  std::vector<std::string> vars_;
  // DEFINE_GLOBAL -> the largest alignment its LOADs/STOREs state (what the kernel assumes of it)
  std::unordered_map<const UOp*, uint32_t> global_align_;
  // A LOAD's or STORE's int64 arg: the byte alignment of its address the lowerer proved (0: none).
  static uint32_t access_alignment(const UOp* u) {
    const int64_t* a = u->arg_if<int64_t>();
    return a ? uint32_t(*a) : 0;
  }
  std::unordered_set<const UOp*> fused_mul_; // float MULs (WMMAs) folded into their REDUCE's MULACC (WMMA)
  // Float sums of `c ? x : 0` whose x reads memory under the gate c (lowering's gated selection:
  // an embedding's gradient), accumulated under IF(c) at the end of their innermost loop: per step
  // only c is computed; x's loads and the adds run on the steps c selects. Without the IF every
  // lane of every step pays a select and an add (the selected steps are a few in thousands).
  struct Guarded {
    const UOp* cond = nullptr;       // scalar BOOL
    std::vector<const UOp*> reduces; // their REDUCEs, in closing order
    std::vector<const UOp*> body;    // nodes emitted only inside the IF, in toposort order
  };
  std::unordered_map<const UOp*, std::vector<Guarded>> guarded_; // innermost RANGE -> its IF groups
  std::unordered_set<const UOp*> deferred_;                      // body nodes and the WHEREs they replace
  std::unordered_set<const UOp*> guarded_reduces_;
  const UOp* open_cond_ = nullptr; // the condition of the IF being emitted: its gated loads need no gate
  uint64_t trips_outside_ = 1;     // product of the enclosing loops' trip counts
  std::optional<uint64_t> iterations_ = 0; // LinearKernel::loop_iterations
};

void Linearizer::compute_ranges() {
  for (const auto& u : order_) {
    RangeSet set;
    for (const auto& s : u->src()) merge_into(set, ranges_.at(s.get()));
    if (u->op() == Ops::RANGE) set.push_back(u.get());
    if (u->op() == Ops::REDUCE)
      for (size_t k = 1; k < u->src().size(); ++k) std::erase(set, u->src(k).get());
    ranges_[u.get()] = std::move(set);
  }
}

const UOp* Linearizer::deepest(const RangeSet& set) const {
  const UOp* best = nullptr;
  for (const UOp* r : set)
    if (!best || depth_.at(r) > depth_.at(best)) best = r;
  // Everything else must enclose the deepest one: the ranges of one node form a chain.
  for (const UOp* r : set) {
    const UOp* walk = best;
    while (walk && walk != r) walk = parent_.at(walk);
    if (walk != r) throw IRError("linearize: a node depends on two loops that are not nested");
  }
  return best;
}

void Linearizer::compute_nesting() {
  // REDUCE-owned ranges nest inside the loops the REDUCE itself depends on, in source order.
  std::vector<const UOp*> free_ranges;
  for (const auto& u : order_) {
    if (u->op() == Ops::RANGE) free_ranges.push_back(u.get());
  }
  std::unordered_set<const UOp*> owned;
  for (const auto& u : order_)
    if (u->op() == Ops::REDUCE)
      for (size_t k = first_loop(u.get()); k < u->src().size(); ++k) owned.insert(u->src(k).get());
  // Loops no REDUCE owns (the per-work-group loops of stores) are outermost, by creation id.
  std::vector<const UOp*> outer;
  for (const UOp* r : free_ranges)
    if (!owned.count(r)) outer.push_back(r);
  std::sort(outer.begin(), outer.end(),
            [](const UOp* a, const UOp* b) { return a->arg_int() < b->arg_int(); });
  const UOp* prev = nullptr;
  for (const UOp* r : outer) {
    parent_[r] = prev;
    depth_[r] = prev ? depth_[prev] + 1 : 1;
    prev = r;
  }
  // Users before sources: a nested REDUCE (a fused softmax's scores, inside the loop over keys)
  // depends on the loop of the REDUCE that reads it, whose place is then known.
  for (auto pos = order_.rbegin(); pos != order_.rend(); ++pos) {
    const UOpRef& u = *pos;
    if (u->op() != Ops::REDUCE || u->src().size() <= first_loop(u.get())) continue;
    const UOp* ctx = deepest(ranges_.at(u.get()));
    const UOp* up = ctx;
    for (size_t k = first_loop(u.get()); k < u->src().size(); ++k) {
      const UOp* r = u->src(k).get();
      auto it = parent_.find(r);
      if (it != parent_.end() && it->second != up)
        throw IRError("linearize: a RANGE is shared by REDUCEs in different loop nests");
      parent_[r] = up;
      depth_[r] = up ? depth_.at(up) + 1 : 1;
      up = r;
    }
    reduces_opening_[u->src(first_loop(u.get())).get()].push_back(u.get());
    reduces_closing_[u->src().back().get()].push_back(u.get());
  }
}

const UOp* Linearizer::block_of(const UOp* u) const {
  if (u->op() == Ops::RANGE) return parent(u); // a RANGE is its loop, which sits in the parent
  return deepest(ranges_.at(u));
}

std::optional<Linearizer::Item> Linearizer::holder_in(const UOp* u, const UOp* block) const {
  const UOp* b = block_of(u);
  if (b == block) return u->op() == Ops::RANGE ? Item{nullptr, u} : Item{u, nullptr};
  // climb from u's block (or its own loop) to the loop directly inside `block`
  const UOp* loop = u->op() == Ops::RANGE ? u : b;
  while (loop && parent(loop) != block) loop = parent(loop);
  if (!loop) return std::nullopt; // u lies outside `block`
  return Item{nullptr, loop};
}

std::vector<Linearizer::Item> Linearizer::sorted_items(const UOp* block) {
  auto& items = items_[block];
  // Dependencies among the items of this block, then a stable topological order.
  auto key = [](const Item& it) { return it.node ? it.node : it.loop; };
  std::unordered_map<const UOp*, size_t> index;
  for (size_t i = 0; i < items.size(); ++i) index[key(items[i])] = i;
  std::vector<std::vector<size_t>> users(items.size());
  std::vector<size_t> pending(items.size(), 0);
  auto add_deps = [&](size_t i, const UOp* node) {
    std::vector<const UOp*> srcs;
    for (const auto& s : node->src()) {
      // RUNNING reads its REDUCE's accumulator inside the loop, not the REDUCE's final value
      if (node->op() == Ops::RUNNING && s == node->src(0)) continue;
      if (fused_mul_.count(s.get())) { // emitted inside its MULACC: depend on its operands
        srcs.push_back(s->src(0).get());
        srcs.push_back(s->src(1).get());
      } else {
        srcs.push_back(s.get());
      }
    }
    for (const UOp* s : srcs) {
      auto h = holder_in(s, block);
      if (!h) continue;
      size_t j = index.at(key(*h));
      if (j == i) continue;
      users[j].push_back(i);
      ++pending[i];
    }
  };
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].node) {
      add_deps(i, items[i].node);
      continue;
    }
    // a loop depends on whatever its header and body read from this block, including the
    // values its REDUCEs accumulate (their ASSIGN sits at the end of the innermost loop)
    auto inside = [&](const UOp* range) {
      const UOp* loop = range;
      while (loop && loop != items[i].loop) loop = parent(loop);
      return loop == items[i].loop;
    };
    for (const auto& u : order_) {
      const UOp* n = u.get();
      if (inside(n->op() == Ops::RANGE ? n : block_of(n))) add_deps(i, n);
      if (n->op() == Ops::REDUCE && n->src().size() > 1 && inside(n->src().back().get())) add_deps(i, n);
    }
  }
  std::vector<size_t> ready;
  for (size_t i = 0; i < items.size(); ++i)
    if (pending[i] == 0) ready.push_back(i);
  auto earliest = [&](size_t i) { return position_.at(key(items[i])); };
  std::vector<Item> out;
  while (!ready.empty()) {
    auto best = std::min_element(ready.begin(), ready.end(),
                                 [&](size_t a, size_t b) { return earliest(a) < earliest(b); });
    size_t i = *best;
    ready.erase(best);
    out.push_back(items[i]);
    for (size_t j : users[i])
      if (--pending[j] == 0) ready.push_back(j);
  }
  if (out.size() != items.size()) throw IRError("linearize: cyclic dependencies between loops");
  return out;
}

void Linearizer::emit_loop(const UOp* range) {
  for (const UOp* r : reduces_opening_[range]) {
    Ops op = r->arg_if<ReduceArg>()->op;
    DType dt = r->dtype();
    double identity = op == Ops::MUL ? 1.0 : 0.0;
    UOpRef init =
        op == Ops::MAX
            ? UOp::constant(dt, dt.is_float() ? ConstValue{-std::numeric_limits<double>::infinity()}
                                              : ConstValue{dt.int_min()})
            : UOp::constant(dt, dt.is_float() ? ConstValue{identity} : ConstValue{int64_t(identity)});
    if (dt.is_bool()) init = UOp::constant(dt, op == Ops::MUL);
    // emitted here, in the loop that encloses this one: a nested reduce's loop may open inside
    // another loop, so the constant is not kept for later uses elsewhere
    const bool known = refs_.count(init.get()) != 0;
    emit_node(init.get());
    refs_[r] = builder_.acc(refs_.at(init.get()));
    if (!known) refs_.erase(init.get());
  }
  refs_[range] = builder_.range(ref(range->src(0)), ref(range->src(1)));
  const uint64_t outside = trips_outside_;
  if (range->src(0)->is_const() && range->src(1)->is_const()) {
    const int64_t n = const_as_int(range->src(1)->const_value()) - const_as_int(range->src(0)->const_value());
    const uint64_t trips = uint64_t(std::max<int64_t>(n, 0));
    constexpr uint64_t cap = uint64_t(1) << 62; // saturate: only comparisons with a limit follow
    trips_outside_ = trips && outside > cap / trips ? cap : outside * trips;
    if (iterations_) iterations_ = std::min(cap, *iterations_ + trips_outside_);
  } else {
    iterations_.reset();
  }
  emit_block(range);
  trips_outside_ = outside;
  emit_guarded(range);
  for (const UOp* r : reduces_closing_[range]) {
    if (guarded_reduces_.count(r)) continue;
    auto acc = refs_.at(r);
    if (fused_mul_.count(r->src(0).get())) {
      const UOpRef& m = r->src(0);
      builder_.assign(acc, chained_op(m.get()) ? op_chain(m.get(), acc)
                           : m->op() == Ops::WMMA || m->op() == Ops::MMA
                               ? matrix_op(m.get(), acc)
                               : builder_.alu(TG_OP_MULACC, ref(m->src(0)), ref(m->src(1)), acc));
      continue;
    }
    builder_.assign(acc, combined(r, acc, ref(r->src(0))));
  }
  builder_.end_range(refs_.at(range));
}

namespace {

// The one lane of a VECTORIZE whose lanes are all the same node (a broadcast), else u itself.
const UOp* broadcast_lane(const UOp* u) {
  if (u->op() != Ops::VECTORIZE || u->src().empty()) return u;
  const UOpRef& lane = u->src(0);
  return std::all_of(u->src().begin(), u->src().end(), [&](const UOpRef& s) { return s == lane; })
             ? lane.get()
             : u;
}

} // namespace

void Linearizer::find_guarded_sums(const std::unordered_map<const UOp*, std::vector<const UOp*>>& users) {
  auto users_of = [&](const UOp* u) -> const std::vector<const UOp*>& {
    static const std::vector<const UOp*> none;
    auto it = users.find(u);
    return it == users.end() ? none : it->second;
  };
  auto is_zero = [](const UOp* c) {
    c = broadcast_lane(c);
    if (!c->is_const()) return false;
    const ConstValue v = c->const_value();
    const double* d = std::get_if<double>(&v);
    return d && *d == 0 && !std::signbit(*d);
  };
  // candidates, grouped by innermost loop and condition
  for (const auto& u : order_) {
    const UOp* r = u.get();
    if (r->op() != Ops::REDUCE || r->src().size() < 2 || r->arg_if<ReduceArg>()->op != Ops::ADD ||
        !r->dtype().is_float())
      continue;
    const UOp* w = r->src(0).get();
    if (w->op() != Ops::WHERE || users_of(w).size() != 1 || !is_zero(w->src(2).get())) continue;
    const UOp* cond = broadcast_lane(w->src(0).get()); // lanes of one condition: that condition
    if (cond->dtype().count > 1) continue;
    auto& groups = guarded_[r->src().back().get()];
    auto g = std::find_if(groups.begin(), groups.end(), [&](const Guarded& x) { return x.cond == cond; });
    if (g == groups.end()) g = groups.insert(groups.end(), Guarded{cond, {}, {}});
    g->reduces.push_back(r);
  }
  for (auto& [range, groups] : guarded_) {
    for (Guarded& g : groups) {
      // nodes of the innermost loop that only the x's need: not c nor what c needs, every user
      // inside the IF
      std::unordered_set<const UOp*> wheres, needed_by_cond, body;
      for (const auto& n : toposort(g.reduces[0]->src(0)->src(0))) needed_by_cond.insert(n.get());
      std::vector<const UOp*> stack;
      for (const UOp* r : g.reduces) {
        wheres.insert(r->src(0).get());
        stack.push_back(r->src(0)->src(1).get());
      }
      while (!stack.empty()) {
        const UOp* n = stack.back();
        stack.pop_back();
        if (body.count(n) || needed_by_cond.count(n) || deferred_.count(n) || fused_mul_.count(n) ||
            n->op() == Ops::RANGE || n->op() == Ops::REDUCE || block_of(n) != range)
          continue;
        body.insert(n);
        for (const auto& s : n->src()) stack.push_back(s.get());
      }
      for (bool changed = true; changed;) {
        changed = false;
        for (auto it = body.begin(); it != body.end();) {
          const auto& us = users_of(*it);
          if (std::all_of(us.begin(), us.end(),
                          [&](const UOp* x) { return wheres.count(x) || body.count(x); })) {
            ++it;
          } else {
            it = body.erase(it);
            changed = true;
          }
        }
      }
      const UOp* cond = g.cond;
      if (std::none_of(body.begin(), body.end(), [&](const UOp* n) {
            return n->op() == Ops::LOAD && n->src().size() == 3 && n->src(1).get() == cond;
          }))
        continue; // nothing to skip but a select: left to the plain sum
      g.body.assign(body.begin(), body.end());
      std::sort(g.body.begin(), g.body.end(),
                [&](const UOp* a, const UOp* b) { return position_.at(a) < position_.at(b); });
      deferred_.insert(body.begin(), body.end());
      deferred_.insert(wheres.begin(), wheres.end());
      guarded_reduces_.insert(g.reduces.begin(), g.reduces.end());
    }
    std::erase_if(groups, [&](const Guarded& g) { return !guarded_reduces_.count(g.reduces[0]); });
  }
}

void Linearizer::emit_guarded(const UOp* range) {
  auto it = guarded_.find(range);
  if (it == guarded_.end()) return;
  for (const Guarded& g : it->second) {
    const auto branch = builder_.if_(refs_.at(g.cond));
    open_cond_ = g.cond;
    for (const UOp* n : g.body) emit_node(n);
    open_cond_ = nullptr;
    for (const UOp* r : g.reduces) {
      const auto acc = refs_.at(r);
      builder_.assign(acc, builder_.alu(TG_OP_ADD, acc, ref(r->src(0)->src(1))));
    }
    builder_.end_if(branch);
  }
}

void Linearizer::emit_block(const UOp* block) {
  for (const Item& item : sorted_items(block)) {
    if (item.loop)
      emit_loop(item.loop);
    else
      emit_node(item.node);
  }
}

void Linearizer::emit_node(const UOp* u) {
  if (refs_.count(u)) return;
  auto& b = builder_;
  auto src = [&](size_t i) { return ref(u->src(i)); };
  tg_dtype dt = to_abi(u->dtype());
  sdk::KernelBuilder::Ref out = 0;
  switch (u->op()) {
  case Ops::CONST: {
    auto v = u->const_value();
    if (u->dtype().is_float())
      out = b.const_float(dt, std::get<double>(v));
    else if (auto* bv = std::get_if<bool>(&v))
      out = b.const_int(dt, *bv ? 1 : 0);
    else
      out = b.const_int(dt, std::get<int64_t>(v));
    if (u->dtype().count > 1) { // the ABI's CONST is scalar: broadcast it
      std::vector<sdk::KernelBuilder::Ref> lanes(u->dtype().count, out);
      out = b.vectorize(lanes);
    }
    break;
  }
  case Ops::VECTORIZE: {
    std::vector<sdk::KernelBuilder::Ref> lanes;
    for (size_t i = 0; i < u->src().size(); ++i) lanes.push_back(src(i));
    out = b.vectorize(lanes);
    break;
  }
  case Ops::GEP:
    out = b.gep(src(0), uint16_t(u->arg_int()));
    break;
  case Ops::DEFINE_GLOBAL:
    out = b.global(uint32_t(u->arg_int()), dt, global_align_.count(u) ? global_align_.at(u) : 0);
    break;
  case Ops::DEFINE_LOCAL:
    out = b.local(u->arg_int(), dt);
    break;
  case Ops::BARRIER: // its sources (the local stores) are emitted before it; its arg: async copy groups in
                     // flight
    b.emit({TG_OP_BARRIER, TG_DTYPE_VOID, 0, 1, u->arg_if<int64_t>() ? *u->arg_if<int64_t>() : 0, 0, {}});
    refs_[u] = 0;
    return;
  case Ops::DEFINE_VAR: {
    const std::string& name = u->var_arg().name;
    auto it = std::find(vars_.begin(), vars_.end(), name);
    if (it == vars_.end()) it = vars_.insert(vars_.end(), name);
    out = b.var(uint32_t(it - vars_.begin()), dt);
    break;
  }
  case Ops::SPECIAL: {
    const auto& a = *u->arg_if<std::vector<int64_t>>();
    out = b.special(int(a.at(0)), int(a.at(1)));
    break;
  }
  case Ops::INDEX: // a third source (a BARRIER) only orders this access after it
    out = b.index(src(0), src(1));
    break;
  case Ops::LOAD:
    out = u->src().size() == 3 && u->src(1).get() != open_cond_
              ? b.load_gated(src(0), src(1), src(2))
              : b.load(src(0), u->dtype().count, access_alignment(u));
    break;
  case Ops::STORE:
    if (u->src().size() == 3)
      b.store_gated(src(0), src(1), src(2), access_alignment(u));
    else
      b.store(src(0), src(1), access_alignment(u));
    refs_[u] = 0;
    return;
  case Ops::REDUCE:
    if (!refs_.count(u)) throw IRError("linearize: REDUCE read before its loop");
    return;
  case Ops::RUNNING: { // the accumulator of a REDUCE inside its loop (its ASSIGN ends the step)
    const UOp* r = u->src(0).get();
    if (!refs_.count(r)) throw IRError("linearize: RUNNING outside its REDUCE's loop");
    out = u->arg_int() == 0 ? refs_.at(r) : combined(r, refs_.at(r), src(2));
    break;
  }
  case Ops::CAST:
    out = b.cast(src(0), dt);
    break;
  case Ops::WMMA:
  case Ops::MMA:
  case Ops::WGMMA:
    out = matrix_op(u, src(2));
    break;
  case Ops::BITCAST:
    out = b.bitcast(src(0), dt);
    break;
  default: {
    auto abi = to_abi(u->op());
    if (!abi || !is_alu(u->op()))
      throw IRError("linearize: no kernel IR for " + std::string(op_name(u->op())));
    switch (u->src().size()) {
    case 1:
      out = b.alu(*abi, src(0));
      break;
    case 2:
      out = b.alu(*abi, src(0), src(1));
      break;
    case 3:
      out = b.alu(*abi, src(0), src(1), src(2));
      break;
    default:
      throw IRError("linearize: bad source count");
    }
  }
  }
  refs_[u] = out;
}

LinearKernel Linearizer::run() {
  compute_ranges();
  compute_nesting();
  // acc + a*b in a float sum becomes one MULACC (a fused multiply-add where the target has one)
  std::unordered_map<const UOp*, int> users;
  for (const auto& u : order_)
    for (const auto& s : u->src()) ++users[s.get()];
  for (const auto& u : order_)
    if (u->op() == Ops::REDUCE && u->arg_if<ReduceArg>()->op == Ops::ADD && u->dtype().is_float() &&
        u->src(0)->op() == Ops::MUL && users[u->src(0).get()] == 1)
      fused_mul_.insert(u->src(0).get());
  // acc + WMMA/MMA(a, b, 0) becomes acc = WMMA/MMA(a, b, acc): the matrix unit accumulates in place
  for (const auto& u : order_)
    if (u->op() == Ops::REDUCE && u->arg_if<ReduceArg>()->op == Ops::ADD &&
        (u->src(0)->op() == Ops::WMMA || u->src(0)->op() == Ops::MMA) &&
        u->src(0)->src(2)->op() == Ops::CONST && users[u->src(0).get()] == 1)
      fused_mul_.insert(u->src(0).get());
  // acc + (a chain of WGMMAs or local-memory MMAs starting from 0) becomes acc = the chain
  // starting from acc
  for (const auto& u : order_) {
    if (u->op() != Ops::REDUCE || u->arg_if<ReduceArg>()->op != Ops::ADD) continue;
    std::vector<const UOp*> chain;
    const UOp* m = u->src(0).get();
    while (chained_op(m) && users[m] == 1) {
      chain.push_back(m);
      m = m->src(2).get();
    }
    if (!chain.empty() && m->op() == Ops::CONST) fused_mul_.insert(chain.begin(), chain.end());
  }
  for (const auto& u : order_)
    if ((u->op() == Ops::LOAD || u->op() == Ops::STORE) && access_alignment(u.get()) > 0 &&
        u->src(0)->op() == Ops::INDEX && u->src(0)->src(0)->op() == Ops::DEFINE_GLOBAL) {
      uint32_t& a = global_align_[u->src(0)->src(0).get()];
      a = std::max(a, access_alignment(u.get()));
    }
  std::unordered_map<const UOp*, std::vector<const UOp*>> user_lists;
  for (const auto& u : order_)
    for (const auto& s : u->src()) user_lists[s.get()].push_back(u.get());
  find_guarded_sums(user_lists);
  for (const auto& u : order_) {
    if (fused_mul_.count(u.get()) || deferred_.count(u.get())) continue;
    if (u->op() == Ops::RANGE)
      items_[parent(u.get())].push_back(Item{nullptr, u.get()});
    else
      items_[block_of(u.get())].push_back(Item{u.get(), nullptr});
  }
  emit_block(nullptr);
  LinearKernel out;
  try {
    out.ir = builder_.serialize();
  } catch (const sdk::IRError& e) {
    throw IRError(std::string("linearize produced invalid kernel IR: ") + e.what() + "\n" +
                  sdk::to_string(builder_.ir()));
  }
  out.buffer_count = builder_.ir().buffer_count;
  out.loop_iterations = iterations_;
  out.text = sdk::to_string(builder_.ir());
  return out;
}

} // namespace

LinearKernel linearize(const UOpRef& sink, const std::string& name) { return Linearizer(sink, name).run(); }

void check_loop_limit(const LinearKernel& kernel, const std::string& name, const std::string& opts,
                      uint64_t limit) {
  if (limit == 0 || !kernel.loop_iterations || *kernel.loop_iterations <= limit) return;
  throw OptError("kernel " + name + " with opts " + opts + " runs " +
                 std::to_string(*kernel.loop_iterations) +
                 " loop iterations per work item; the device allows " + std::to_string(limit) +
                 " (its max_loop_iterations attribute). Split the reduce over threads (GROUP, UNROLL) or, "
                 "under NOOPT=1, run without it");
}

} // namespace tg
