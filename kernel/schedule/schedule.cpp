#include "kernel/schedule/schedule.hpp"

#include "kernel/schedule/buffer.hpp"

#include <algorithm>
#include <functional>
#include <set>
#include <unordered_set>

namespace tg {

namespace {

// The deepest expression one kernel computes: the most nodes on a path from a load or constant to
// the stored value. A deeper fused chain (100,000 lazy additions, a gradient through as many
// steps) is cut: each node at this depth is stored and read back by the next kernel. Lowering and
// the device compilers walk a kernel's expression recursively, so this bounds their stack (the
// lowerer refuses kernels over 2000 deep: codegen/lower.cpp); ordinary kernels stay far below.
constexpr int kMaxFusedDepth = 1000;
// A value recomputed inside a reduce at least this many times per element is stored instead.
constexpr int64_t kRecomputedReads = 4;

// An elementwise value that reads at least this many stored values (buffers, reduces) and is fused
// into more than one kernel is stored once instead (Scheduler::wide_and_shared).
constexpr size_t kWideInputs = 8;

bool expands(const UOpRef& u, ShapeMap& shapes) {
  if (u->op() != Ops::EXPAND) return false;
  return dims_prod(shapes(u)) != dims_prod(shapes(u->src(0)));
}

// The device of the first BUFFER/COPY under u (`fallback` if none: constants only).
std::string device_of(const UOpRef& u, const std::string& fallback) {
  for (const auto& n : toposort(u)) {
    if (n->op() == Ops::COPY) return *n->arg_if<std::string>();
    if (is_buffer(n)) return buffer_arg(n).device();
  }
  return fallback;
}

// A RESHAPE of a CONTIGUOUS (always stored, row-major) is a view of that buffer: a target of that
// form needs no kernel of its own. The packed CPU matmul (kernel/tensor/matmul_pack.cpp) relies on
// it: its reduce keeps its own (m, n/16, 16) shape and the (m, n) result is that view.
bool reshapes_stored(const UOpRef& u) {
  return u->op() == Ops::RESHAPE && u->src(0)->op() == Ops::CONTIGUOUS;
}

struct Scheduler {
  ShapeMap shapes;
  std::vector<UOpRef> order;                                     // children before parents
  std::unordered_map<const UOp*, std::vector<const UOp*>> users; // node -> nodes that read it
  std::unordered_set<const UOp*> realize;                        // nodes that become kernels
  std::unordered_set<const UOp*> targets;
  std::unordered_map<const UOp*, UOpRef> refs;
  std::unordered_set<const UOp*> loads; // nodes whose value reads a BUFFER
  // per node: up to kWideInputs of the stored values (buffers, reduces, copies) its value reads
  std::unordered_map<const UOp*, std::vector<const UOp*>> inputs;
  std::unordered_set<const UOp*> fused_softmax; // nodes fuse_softmax_groups took into a reduce's kernel

  void analyze(const std::vector<UOpRef>& roots) {
    order = toposort(UOp::sink(roots));
    order.pop_back(); // the SINK itself
    for (const auto& u : order) {
      refs.emplace(u.get(), u);
      bool reads = is_buffer(u);
      for (const auto& s : u->src()) {
        users[s.get()].push_back(u.get());
        reads |= loads.count(s.get()) != 0;
      }
      if (reads) loads.insert(u.get());
      std::vector<const UOp*>& in = inputs[u.get()];
      if (is_buffer(u) || u->op() == Ops::REDUCE_AXIS || u->op() == Ops::COPY || u->op() == Ops::CONTIGUOUS) {
        in.push_back(u.get());
        continue;
      }
      for (const auto& src : u->src())
        for (const UOp* x : inputs[src.get()]) {
          if (in.size() == kWideInputs) break;
          if (std::find(in.begin(), in.end(), x) == in.end()) in.push_back(x);
        }
    }
    for (const auto& r : roots) targets.insert(r.get());
  }

  // Stores each node at depth kMaxFusedDepth of a fused chain (counted from the kernel boundary
  // below it), so no kernel's expression is deeper. Runs after decide(): its boundaries reset the
  // count, so only chains that really fuse that deep are cut. A boundary added here only moves
  // work out of a kernel: each node can be a kernel's root, as any target can.
  // A kernel runs its first reduce's space with the optimizer's plan and any other reduce as a
  // plain loop per output (codegen/lower.cpp). Reduces over other spaces that a kernel would hold
  // beside the largest (a global gradient norm: the sum of every parameter's sum of squares, 148
  // reduces of GPT-2 in one kernel took 3 s on an H100) are stored instead, each its own kernel.
  // Runs after decide(); a boundary added here only moves work out of a kernel.
  void split_unrelated_reduces() {
    std::vector<const UOp*> roots(realize.begin(), realize.end());
    for (const UOp* root : roots) {
      std::vector<const UOp*> stack{root}, reduces;
      std::unordered_set<const UOp*> seen{root};
      while (!stack.empty()) {
        const UOp* u = stack.back();
        stack.pop_back();
        if (u->op() == Ops::REDUCE_AXIS) reduces.push_back(u);
        for (const auto& src : u->src())
          if (!realize.count(src.get()) && seen.insert(src.get()).second) stack.push_back(src.get());
      }
      if (reduces.size() < 2) continue;
      auto space = [&](const UOp* r) {
        return std::pair{shapes(refs.at(r)->src(0)), r->arg_if<ReduceArg>()->axes};
      };
      const UOp* largest = *std::max_element(reduces.begin(), reduces.end(), [&](const UOp* a, const UOp* b) {
        return dims_prod(shapes(refs.at(a)->src(0))) < dims_prod(shapes(refs.at(b)->src(0)));
      });
      const auto main_space = space(largest);
      for (const UOp* r : reduces)
        if (r != root && space(r) != main_space && !fused_softmax.count(r)) realize.insert(r);
    }
  }

  void bound_depth() {
    if (order.size() < size_t(kMaxFusedDepth)) return; // no path is that long
    std::unordered_map<const UOp*, int> depth;         // 1 for a leaf or a stored value
    depth.reserve(order.size());
    for (const auto& u : order) {
      int d = 0;
      for (const auto& s : u->src()) d = std::max(d, depth.at(s.get()));
      ++d;
      const Ops op = u->op();
      const bool storable =
          is_alu(op) || is_movement(op) || op == Ops::CAST || op == Ops::BITCAST || op == Ops::REDUCE_AXIS;
      if (d >= kMaxFusedDepth && storable) realize.insert(u.get());
      depth.emplace(u.get(), realize.count(u.get()) ? 1 : d);
    }
  }

  // A reduce must be materialized when, before reaching a kernel boundary, its value is
  // broadcast (each output element would recompute it), reduced again (nested loops), fused
  // into two kernels (each would compute it: e.g. a gradient read by both of Adam's moments), or
  // padded (a convolution followed by a padded pool: the kernel's output would be the padded
  // shape, whose axes no longer map onto the reduce's, and the optimizer could tile none of them).
  bool must_realize_reduce(const UOp* r) {
    std::vector<std::pair<const UOp*, bool>> stack{{r, false}}; // (node, a PAD lies between)
    std::unordered_set<const UOp*> seen;
    size_t kernels = 0;
    while (!stack.empty()) {
      auto [u, padded] = stack.back();
      stack.pop_back();
      for (const UOp* user : users[u]) {
        if (!seen.insert(user).second) continue;
        if (user->op() == Ops::REDUCE_AXIS) return true;
        if (user->op() == Ops::EXPAND && expands(refs.at(user), shapes)) return true;
        const bool pads = padded || user->op() == Ops::PAD;
        if (realize.count(user)) { // a boundary: that kernel fuses this reduce
          if (pads || ++kernels > 1) return true;
          continue;
        }
        stack.emplace_back(user, pads);
      }
    }
    return false;
  }

  // A cast between float dtypes (a bfloat16 matmul operand under autocast). Casts from bool or
  // integers stay fused: a one-hot mask is cheaper to recompute than to store, and codegen folds it.
  static bool float_cast(const UOp* u) {
    return u->op() == Ops::CAST && u->dtype().is_float() && u->src(0)->dtype().is_float();
  }

  // The reduce whose result float cast u reads through movement ops and float casts (a matmul's
  // output cast as attention heads; in the backward, a bfloat16 gradient cast back to float),
  // else nullptr. That reduce is stored instead of the cast: stored after the
  // cast, the matmul would be computed in the heads' permuted shape, whose axes no longer map
  // onto its own (no matrix units: GPT-2's q/k/v projections ran at 0.5 TFLOPS on an H100).
  // A narrowing cast that its reduce is read through alone (narrowing_cast_of) is stored itself.
  const UOp* cast_of_reduce(const UOp* u) {
    if (!float_cast(u) || reduce_under_cast(u)) return nullptr;
    const UOp* src = u->src(0).get();
    while (is_movement(src->op()) || float_cast(src)) src = src->src(0).get();
    return src->op() == Ops::REDUCE_AXIS ? src : nullptr;
  }

  // The one float cast to a narrower dtype that everything reading reduce r reads it through,
  // seen through reshapes that only add or drop dims of 1 (a bfloat16 product's attention
  // scores, summed in float32, cast back): stored instead of r, the same values in half the
  // bytes for r's kernel and every reader; else nullptr.
  const UOp* narrowing_cast_of(const UOp* r) {
    const UOp* u = r;
    while (users[u].size() == 1 && !targets.count(u)) {
      const UOp* user = users[u][0];
      if (float_cast(user)) return user->dtype().itemsize() < r->dtype().itemsize() ? user : nullptr;
      if (!unit_reshape(user) || realize.count(user)) return nullptr;
      u = user;
    }
    return nullptr;
  }

  // The reduce that narrowing_cast_of(reduce) is (the stored cast's own reduce), else nullptr.
  const UOp* reduce_under_cast(const UOp* cast) {
    if (!float_cast(cast)) return nullptr;
    const UOp* u = cast->src(0).get();
    while (unit_reshape(u)) u = u->src(0).get();
    return u->op() == Ops::REDUCE_AXIS && narrowing_cast_of(u) == cast ? u : nullptr;
  }

  // A RESHAPE that only adds or drops dims of size 1 (a product's summed axis).
  bool unit_reshape(const UOp* u) {
    if (u->op() != Ops::RESHAPE) return false;
    auto non_unit = [](const Dims& d) {
      Dims out;
      for (int64_t x : d)
        if (x != 1) out.push_back(x);
      return out;
    };
    return non_unit(shapes(refs.at(u))) == non_unit(shapes(u->src(0)));
  }

  // True when u's value is broadcast (a growing EXPAND, after movement ops and float casts) into a
  // reduce of the same kernel: every reduce iteration would recompute it, so storing it once is far
  // cheaper. Stored after the cast, a matmul reads its operand in the dtype the matrix units take
  // (under bfloat16 autocast, GPT-2's matmuls otherwise recompute LayerNorm and GELU per product,
  // off the matrix units).
  bool expanded_into_reduce(const UOp* u) {
    const bool float_value = u->dtype().is_float();
    std::vector<std::pair<const UOp*, bool>> stack{{u, false}};
    std::unordered_set<const UOp*> seen;
    while (!stack.empty()) {
      auto [n, expanded] = stack.back();
      stack.pop_back();
      for (const UOp* user : users[n]) {
        if (!seen.insert(user).second) continue;
        // only views lead to the expand, and float casts of a float value (an autocast operand)
        const bool view = is_movement(user->op()) || (float_value && float_cast(user));
        if (!view && !expanded) continue;
        bool now = expanded || (user->op() == Ops::EXPAND && expands(refs.at(user), shapes));
        // computed in this kernel, once per reduce input it feeds: stored when that is several
        // times per value (a matmul operand: n times). A pool's window reads each value about
        // (kernel / stride)^2 times (2.25 for 3x3 stride 2): recomputing beats a store and a load,
        // unless u is the epilogue of a reduce stored anyway.
        if (now && user->op() == Ops::REDUCE_AXIS &&
            (dims_prod(shapes(refs.at(user)->src(0))) >= kRecomputedReads * dims_prod(shapes(refs.at(u))) ||
             epilogue_of_reduce(u)))
          return true;
        if (!realize.count(user)) stack.push_back({user, now});
      }
    }
    return false;
  }

  // True when u is elementwise work on one reduce r of its size, reshaped at most (a
  // convolution's bias and activation; NOOP marks its custom gradient), and everything that
  // reads r leads to u. r is stored for the reduce u feeds anyway (must_realize_reduce), so
  // storing u instead costs no more memory traffic and computes the epilogue once per element,
  // not once per read (MobileNetV2's clamp, each NaN-aware max several instructions, ran 2.25
  // times per element in a stride-2 depthwise convolution's window).
  bool epilogue_of_reduce(const UOp* u) {
    std::unordered_set<const UOp*> cone{u};
    std::vector<const UOp*> stack{u};
    const UOp* reduce = nullptr;
    while (!stack.empty()) {
      const UOp* n = stack.back();
      stack.pop_back();
      for (const auto& s : n->src()) {
        const UOp* x = s.get();
        if (realize.count(x) || is_buffer(refs.at(x)) || x->op() == Ops::CONST || !loads.count(x)) continue;
        if (x->op() == Ops::REDUCE_AXIS) {
          if (reduce && reduce != x) return false;
          reduce = x;
        } else if (!is_alu(x->op()) && x->op() != Ops::CAST && x->op() != Ops::RESHAPE &&
                   x->op() != Ops::NOOP) {
          if (!is_buffer_view(refs.at(x))) return false; // computed behind a view: not plain epilogue
        } else if (cone.insert(x).second) {
          stack.push_back(x);
        }
      }
    }
    if (reduce == nullptr || dims_prod(shapes(refs.at(reduce))) != dims_prod(shapes(refs.at(u))))
      return false;
    for (const UOp* user : users[reduce])
      if (!cone.count(user)) return false;
    for (const UOp* n : cone)
      if (n != u)
        for (const UOp* user : users[n])
          if (!cone.count(user)) return false;
    return true;
  }

  // An elementwise value that reads kWideInputs or more stored values and is fused into more than
  // one kernel: each kernel would read them all again. A residual stream (forward: the sum of every
  // earlier block's output; backward: of every later block's gradient) is one: GPT-2's backward
  // kernels each read 12 more buffers per layer, up to 106, and NVRTC took 27 s to compile one of
  // them. Stored once, each kernel reads one buffer.
  bool wide_and_shared(const UOp* u) {
    if (inputs[u].size() < kWideInputs) return false;
    std::vector<const UOp*> stack{u};
    std::unordered_set<const UOp*> seen;
    size_t kernels = 0;
    while (!stack.empty()) {
      const UOp* n = stack.back();
      stack.pop_back();
      for (const UOp* user : users[n]) {
        if (!seen.insert(user).second) continue;
        if (realize.count(user)) {
          if (++kernels > 1) return true;
          continue;
        }
        stack.push_back(user);
      }
    }
    return false;
  }

  // What o's kernel computes once stored nodes below it are not stored (fuse_softmax_groups).
  struct Cone {
    std::unordered_set<const UOp*> nodes;
    std::vector<const UOp*> group, maxes; // the stored nodes taken in; the MAX reduces
    const UOp* outer = nullptr;           // the kernel's own reduce
    bool exp = false, ok = true;
  };
  // Members must lie under a reduce of o's kernel (an elementwise kernel, the softmax itself as a
  // target, would compute the row's max and sum once per element); `allowed`, when given, limits
  // the stored nodes taken in (the rest stay loads).
  Cone cone_of(const UOp* o, const std::unordered_set<const UOp*>* allowed) {
    Cone c;
    c.nodes.insert(o);
    c.outer = o->op() == Ops::REDUCE_AXIS ? o : nullptr;
    std::vector<std::pair<const UOp*, bool>> stack{
        {o, o->op() == Ops::REDUCE_AXIS}}; // (node, under a reduce)
    std::set<std::pair<const UOp*, bool>> seen;
    while (!stack.empty() && c.ok) {
      const auto [u, under] = stack.back();
      stack.pop_back();
      for (const auto& s : u->src()) {
        const UOp* n = s.get();
        if (is_buffer(s) || n->op() == Ops::CONST || n->op() == Ops::DEFINE_VAR) continue;
        const bool member = realize.count(n) && std::find(c.group.begin(), c.group.end(), n) != c.group.end();
        if (member && !under) c.ok = false; // every path to a member passes a reduce
        if (!seen.emplace(n, under).second) continue;
        if (realize.count(n) && !member) {
          const Ops op = n->op();
          if (op == Ops::COPY || op == Ops::CONTIGUOUS || targets.count(n)) continue; // stays a load
          if (op != Ops::REDUCE_AXIS && !is_alu(op) && op != Ops::CAST) continue;
          if (op != Ops::REDUCE_AXIS && !reads_reduce(n)) continue; // an operand stored for its own sake
          if (allowed && !allowed->count(n)) continue;
          if (!under) c.ok = false;
          c.group.push_back(n);
        }
        if (n->op() == Ops::REDUCE_AXIS && n->arg_if<ReduceArg>()->op == Ops::MAX &&
            std::find(c.maxes.begin(), c.maxes.end(), n) == c.maxes.end())
          c.maxes.push_back(n);
        // the outer reduce (the first one below o) runs along the last axis of its input, as
        // softmax(.) v does; a gradient's sum over the softmax's rows does not
        if (n->op() == Ops::REDUCE_AXIS && !realize.count(n) && !under) {
          c.outer = n;
          const auto& axes = n->arg_if<ReduceArg>()->axes;
          if (axes.size() != 1 || size_t(axes[0]) + 1 != shapes(s).size()) c.ok = false;
        }
        if (n->op() == Ops::PAD) c.ok = false; // a padded view of the group: its axes no longer map
        c.exp |= n->op() == Ops::EXP2;
        c.nodes.insert(n);
        stack.emplace_back(n, under || (n->op() == Ops::REDUCE_AXIS && !realize.count(n)));
      }
    }
    return c;
  }

  // A softmax feeding a reduce (attention: softmax(q k^T) v) is one kernel under
  // ScheduleOptions::fuse_softmax. decide() stores the scores, their max and sum and the weights
  // (each is broadcast or reduced again); here each kernel root o takes such stored nodes back
  // into its kernel: the max (one MAX reduce), what reads it (the sum, the weights) and the scores
  // it reads (a reduce of at most kInnerReduce per element, reading no other such node: stored
  // projections below stay loads). The kernel's reduce and every taken sum over the max's values
  // run over the max's keys (they become one loop, the online softmax), and nothing outside o's
  // kernel reads a taken node (a training step's backward reads them: they stay stored). The
  // kernel then runs the max, the sum and the scores' products as loops per output row (codegen:
  // nested reduces, and the online softmax that merges them).
  void fuse_softmax_groups() {
    constexpr int64_t kInnerReduce = 256;
    std::vector<const UOp*> roots;
    for (const auto& u : order)
      if (realize.count(u.get()) && u->op() != Ops::COPY && !is_buffer(u)) roots.push_back(u.get());
    for (const UOp* o : roots) {
      const Cone first = cone_of(o, nullptr);
      if (!first.ok || first.maxes.size() != 1 || first.group.empty()) continue;
      const UOp* max = first.maxes[0];
      std::unordered_set<const UOp*> allowed;
      for (const UOp* g : first.group) {
        bool keep = g == max || depends_on(refs.at(g), max);
        // (the scores: a reduce, or its narrowing cast stored in its place)
        const UOp* scores = g->op() == Ops::REDUCE_AXIS ? g : reduce_under_cast(g);
        if (!keep && scores && reduce_size(scores) <= kInnerReduce && depends_on(refs.at(max), g)) {
          keep = true;
          for (const UOp* h : first.group)
            if (h != g && depends_on(refs.at(g), h)) keep = false;
        }
        if (keep) allowed.insert(g);
      }
      const Cone c = cone_of(o, &allowed);
      if (!c.ok || c.maxes.size() != 1 || c.maxes[0] != max || !c.outer || !c.exp || c.group.empty())
        continue;
      const int64_t keys = reduce_size(max);
      bool ok = reduce_size(c.outer) == keys;
      for (const UOp* g : c.group)
        if (g->op() == Ops::REDUCE_AXIS && g != max && depends_on(refs.at(g), max) && reduce_size(g) != keys)
          ok = false;
      // Nodes of the cone that read a member (the members too) must be read inside the cone only:
      // another kernel would otherwise recompute the member. The rest (q, k, v, a causal mask
      // shared by every layer) may be read anywhere.
      std::unordered_set<const UOp*> above(c.group.begin(), c.group.end());
      for (const auto& u : order) {
        if (!ok) break;
        if (!c.nodes.count(u.get()) || u.get() == o) continue;
        for (const auto& src : u->src())
          if (above.count(src.get())) above.insert(u.get());
        if (above.count(u.get()))
          for (const UOp* user : users[u.get()])
            if (!c.nodes.count(user)) ok = false;
      }
      if (!ok) continue;
      for (const UOp* g : c.group) realize.erase(g);
      for (const UOp* n : c.nodes) // every reduce of the kernel but o runs nested in o's loops
        if (n != o && n->op() == Ops::REDUCE_AXIS) fused_softmax.insert(n);
    }
  }

  // Input elements per output element of REDUCE_AXIS r.
  int64_t reduce_size(const UOp* r) {
    const UOpRef& u = refs.at(r);
    return dims_prod(shapes(u->src(0))) / std::max<int64_t>(1, dims_prod(shapes(u)));
  }

  // True when u's value reads a REDUCE_AXIS of its own kernel or a stored one.
  bool reads_reduce(const UOp* u) {
    for (const UOp* x : inputs[u])
      if (x->op() == Ops::REDUCE_AXIS) return true;
    return false;
  }

  void decide() {
    // Parents first, so a reduce's decision sees every boundary above it.
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const UOpRef& u = *it;
      bool is_target = targets.count(u.get()) != 0;
      if (is_target && !is_buffer_view(u) && !reshapes_stored(u)) realize.insert(u.get());
      if (u->op() == Ops::CONTIGUOUS) realize.insert(u.get());
      if (u->op() == Ops::COPY) { // a transfer reads one whole contiguous buffer
        realize.insert(u.get());
        const UOpRef& src = u->src(0);
        bool plain = is_buffer(src) || (src->op() == Ops::RESHAPE && is_buffer(src->src(0)));
        if (!plain) realize.insert(src.get());
      }
      if (realize.count(u.get())) continue;
      if (u->op() == Ops::REDUCE_AXIS && must_realize_reduce(u.get())) {
        const UOp* cast = narrowing_cast_of(u.get());
        realize.insert(cast ? cast : u.get());
      } else if ((is_alu(u->op()) || float_cast(u.get())) && loads.count(u.get()) &&
                 expanded_into_reduce(u.get())) {
        const UOp* reduce = cast_of_reduce(u.get());
        realize.insert(reduce ? reduce : u.get());
      } else if (is_alu(u->op()) && wide_and_shared(u.get()))
        realize.insert(u.get());
    }
  }
};

} // namespace

UOpRef buffer_view(const UOpRef& buffer, const Dims& shape) {
  if (shape.size() == 1) return buffer;
  return UOp::make(Ops::RESHAPE, buffer->dtype(), {buffer}, Arg{std::vector<int64_t>(shape)});
}

bool is_buffer_view(const UOpRef& u) {
  const UOp* n = u.get();
  while (is_movement(n->op())) n = n->src(0).get();
  return n->op() == Ops::BUFFER;
}

std::string ScheduleItem::str() const {
  return "kernel " + dims_str(shape) + " over " + std::to_string(buffers.size()) + " buffers\n" + ast->str();
}

Schedule create_schedule(const std::vector<UOpRef>& targets, const ScheduleOptions& options) {
  Scheduler s;
  s.analyze(targets);
  s.decide();
  if (options.fuse_softmax) s.fuse_softmax_groups();
  s.split_unrelated_reduces();
  s.bound_depth();

  Schedule out;
  std::unordered_map<const UOp*, UOpRef> rebuilt; // original node -> node in kernel terms
  for (const auto& u : s.order) {
    // Rebuild u with realized sources replaced by their stored buffers.
    std::vector<UOpRef> src;
    bool changed = false;
    for (const auto& x : u->src()) {
      auto b = out.becomes.find(x.get());
      const UOpRef& nx = b != out.becomes.end() ? b->second : rebuilt.at(x.get());
      changed |= nx != x;
      src.push_back(nx);
    }
    UOpRef k = changed ? replace_src(u, std::move(src)) : u;
    rebuilt.emplace(u.get(), k);
    if (!s.realize.count(u.get())) continue;

    // CONTIGUOUS stores its source; COPY stores its source, read on the source device.
    UOpRef value = (u->op() == Ops::CONTIGUOUS || u->op() == Ops::COPY) ? k->src(0) : k;
    const Dims& shape = s.shapes(u);
    std::string device = u->op() == Ops::COPY ? *u->arg_if<std::string>() : device_of(k, options.device);
    UOpRef buffer = make_buffer(device, u->dtype(), dims_prod(shape));
    ScheduleItem item;
    item.shape = shape;
    if (u->op() == Ops::COPY) // a device transfer, not a kernel: SINK(COPY(out, source buffer))
      item.ast = UOp::sink({UOp::make(Ops::COPY, u->dtype(), {buffer, value}, u->arg())});
    else
      item.ast = UOp::sink({UOp::make(Ops::STORE, dtypes::void_, {buffer, value})});
    item.buffers.push_back(buffer);
    for (const auto& n : toposort(value))
      if (is_buffer(n) && std::find(item.buffers.begin(), item.buffers.end(), n) == item.buffers.end())
        item.buffers.push_back(n);
    out.items.push_back(std::move(item));
    out.becomes[u.get()] = buffer_view(buffer, shape);
    out.keep_alive.push_back(u);
  }
  for (const auto& t : targets)
    if (!out.becomes.count(t.get())) {
      UOpRef view = rebuilt.at(t.get()); // already a buffer view
      // or one RESHAPE of the CONTIGUOUS's buffer
      if (reshapes_stored(t)) {
        const UOpRef& stored = out.becomes.at(t->src(0).get());
        view = buffer_view(is_buffer(stored) ? stored : stored->src(0), s.shapes(t));
      }
      out.becomes[t.get()] = view;
      out.keep_alive.push_back(t);
    }
  return out;
}

} // namespace tg
