// The plan of a kernel: what the heuristic sees of its axes (analyze) and each optimization applied
// to the per-axis plan (apply), checked against the kernel and the device (OptError).
#include "kernel/codegen/lower.hpp"
#include "kernel/codegen/lowerer.hpp"

#include "kernel/schedule/buffer.hpp"

#include <tg/sdk/matrix_unit.hpp>

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace tg::lower_detail {
namespace {

// value(), reduce() and the passes after lowering (lane bundling, the device's compiler) recurse
// along the kernel's expression. The scheduler stores every 1000th node of a deeper fused chain
// (schedule.cpp, kMaxFusedDepth); a kernel built otherwise that is deeper than this is refused
// before any of them runs, instead of overflowing the stack.
constexpr int kMaxKernelDepth = 2000;

// Throws UOpError when a path through `order` (a toposort) is longer than kMaxKernelDepth nodes.
void check_depth(const std::vector<UOpRef>& order) {
  if (order.size() <= size_t(kMaxKernelDepth)) return; // no path is that long
  std::unordered_map<const UOp*, int> depth;
  depth.reserve(order.size());
  for (const auto& u : order) {
    int d = 0;
    for (const auto& s : u->src()) d = std::max(d, depth.at(s.get()));
    if (++d > kMaxKernelDepth)
      throw UOpError("codegen: the kernel's expression is deeper than " + std::to_string(kMaxKernelDepth) +
                     " nodes (the scheduler splits fused chains every 1000 nodes)");
    depth.emplace(u.get(), d);
  }
}

// Movement ops are views: a value seen through them keeps its op. Strips them (outermost first, as
// leaf_strides collects them) and the CASTs between them when `casts`.
UOpRef strip_views(UOpRef u, std::vector<UOpRef>& mops, bool casts = false) {
  while (is_movement(u->op()) || (casts && u->op() == Ops::CAST)) {
    if (u->op() != Ops::CAST) mops.push_back(u);
    u = u->src(0);
  }
  return u;
}

} // namespace

std::optional<Lowerer::Equality> Lowerer::selected_equality() {
  if (first_reduce_->arg_if<ReduceArg>()->op != Ops::ADD) return std::nullopt;
  std::vector<UOpRef> mops, cond_mops;
  const UOpRef v = strip_views(first_reduce_->src(0), mops);
  UOpRef cond;
  if (v->op() == Ops::WHERE) {
    cond_mops = mops;
    cond = strip_views(v->src(0), cond_mops);
  } else if (v->op() == Ops::MUL) {
    for (size_t i = 0; i < 2 && !cond; ++i) {
      std::vector<UOpRef> m = mops;
      UOpRef s = strip_views(v->src(i), m);
      if (s->op() == Ops::CAST && s->src(0)->dtype().is_bool()) {
        cond_mops = m;
        cond = strip_views(s->src(0), cond_mops);
      }
    }
  }
  if (!cond || (cond->op() != Ops::CMPEQ && cond->op() != Ops::CMPNE)) return std::nullopt;
  if (cond->op() == Ops::CMPNE) { // Tensor::eq: CMPNE(CMPNE(a, b), true)
    std::vector<UOpRef> m;
    const UOpRef t = strip_views(cond->src(1), m);
    if (t->op() != Ops::CONST || !t->dtype().is_bool() || !std::get<bool>(t->const_value()))
      return std::nullopt;
    cond = strip_views(cond->src(0), cond_mops);
    if (cond->op() != Ops::CMPNE) return std::nullopt;
  }
  return Equality{cond, cond_mops};
}

int64_t Lowerer::one_hot_dim(const Dims& in_shape) {
  const auto& axes = first_reduce_->arg_if<ReduceArg>()->axes;
  const auto eq = selected_equality();
  if (!eq) return -1;
  const auto& [cond, cond_mops] = *eq;
  for (size_t side = 0; side < 2; ++side) {
    std::vector<UOpRef> iota_mops = cond_mops, other_mops = cond_mops;
    const UOpRef iota = strip_views(cond->src(side), iota_mops, true);
    if (iota->op() != Ops::RANGE) continue;
    const ShapeTracker st = tracker({iota->src(1)->arg_int()}, iota_mops);
    if (st.views().size() != 1) continue;
    const View& view = st.views().back();
    int64_t dim = -1;
    bool plain = view.strides.size() == in_shape.size();
    for (size_t d = 0; plain && d < in_shape.size(); ++d) {
      if (!view.strides[d].is_int())
        plain = false;
      else if (view.strides[d].value() == 1 && in_shape[d] > 1 && dim < 0 &&
               std::find(axes.begin(), axes.end(), int64_t(d)) != axes.end())
        dim = int64_t(d);
      else if (view.strides[d].value() != 0 && in_shape[d] > 1)
        plain = false;
    }
    if (!plain || dim < 0) continue;
    std::vector<Dims> others;
    strides_seen_.clear();
    leaf_strides(cond->src(1 - side), other_mops, in_shape, others);
    strides_seen_.clear();
    if (std::all_of(others.begin(), others.end(), [&](const Dims& s) { return s[size_t(dim)] == 0; }))
      return dim;
  }
  return -1;
}

std::vector<bool> Lowerer::selection_dims(const Dims& in_shape) {
  const auto eq = selected_equality();
  if (!eq || !first_reduce_->dtype().is_float()) return {};
  const auto& [cond, cond_mops] = *eq;
  std::vector<bool> varies(in_shape.size(), false);
  for (size_t side = 0; side < 2; ++side) {
    std::vector<UOpRef> mops = cond_mops;
    const UOpRef x = strip_views(cond->src(side), mops, true);
    std::vector<Dims> strides;
    if (x->op() == Ops::RANGE) { // an iota: its view's strides
      const ShapeTracker st = tracker({x->src(1)->arg_int()}, mops);
      Dims d;
      for (const auto& e : st.views().back().strides) d.push_back(e.is_int() ? e.value() : -1);
      if (st.views().size() == 1 && d.size() == in_shape.size())
        strides.push_back(d);
      else
        strides.push_back(Dims(in_shape.size(), -1));
    } else {
      strides_seen_.clear();
      leaf_strides(cond->src(side), cond_mops, in_shape, strides);
      strides_seen_.clear();
    }
    for (const auto& st : strides)
      for (size_t d = 0; d < in_shape.size(); ++d) varies[d] = varies[d] || st[d] != 0;
  }
  return varies;
}

std::vector<int64_t> Lowerer::permuted_dims(const UOpRef& root, const std::vector<int64_t>& out_dims,
                                            const std::vector<int64_t>& kept) {
  if (!root_mops_.empty() || out_dims.size() != kept.size()) return {};
  std::vector<UOpRef> mops;
  if (strip_views(root, mops, true) != first_reduce_) return {};
  const Dims& reduced = shapes_(first_reduce_);
  const ShapeTracker st = tracker(reduced, mops);
  if (st.views().size() != 1 || st.views().back().mask) return {};
  const View& view = st.views().back();
  Dims contiguous(reduced.size(), 1);
  for (size_t d = reduced.size(); d-- > 1;) contiguous[d - 1] = contiguous[d] * reduced[d];
  std::vector<int64_t> out;
  for (int64_t o : out_dims) {
    const auto& stride = view.strides[size_t(o)];
    const auto& size = view.shape[size_t(o)];
    auto it = std::find_if(kept.begin(), kept.end(), [&](int64_t d) {
      return stride.is_int() && size.is_int() && stride.value() == contiguous[size_t(d)] &&
             size.value() == reduced[size_t(d)];
    });
    if (it == kept.end() || std::find(out.begin(), out.end(), *it) != out.end()) return {};
    out.push_back(*it);
  }
  return out;
}

namespace {

// The reduce's kept dims, when they split the output's dims (each output dim of size > 1 the
// product of a run of them, in order), else `out`. A reduce computed in a finer shape than the
// kernel stores (a convolution over (N, cout/32, 32, oh, ow) panels seen as (N, cout, oh, ow) by
// a fused BatchNorm) keeps its axes: the heuristic sees which inputs are contiguous along them,
// and the index math needs no division to recover them.
Dims refined_shape(const Dims& out, const Dims& reduce_shape, const std::vector<int64_t>& reduce_axes) {
  Dims kept;
  for (size_t d = 0; d < reduce_shape.size(); ++d)
    if (reduce_shape[d] != 1 &&
        std::find(reduce_axes.begin(), reduce_axes.end(), int64_t(d)) == reduce_axes.end())
      kept.push_back(reduce_shape[d]);
  Dims refined;
  size_t k = 0;
  for (int64_t s : out) {
    if (s == 1) {
      refined.push_back(1);
      continue;
    }
    int64_t p = 1;
    while (p < s && k < kept.size()) {
      p *= kept[k];
      refined.push_back(kept[k++]);
    }
    if (p != s) return out;
  }
  return k == kept.size() ? refined : out;
}

} // namespace

KernelInfo Lowerer::analyze() {
  value_root_ = item_.ast->src(0)->src(1);
  store_perm_.clear();
  const UOpRef& value_root = value_root_;
  KernelInfo info;
  const std::vector<UOpRef> order = toposort(value_root);
  check_depth(order);
  // Reduces inside another reduce's input (a fused softmax's scores, max and sum: schedule.cpp)
  // run as plain loops within it; the plan is the outer one's.
  std::unordered_set<const UOp*>& nested = nested_;
  nested.clear();
  for (const auto& n : order)
    if (n->op() == Ops::REDUCE_AXIS && !nested.count(n.get()))
      for (const auto& m : toposort(n->src(0)))
        if (m->op() == Ops::REDUCE_AXIS) nested.insert(m.get());
  info.nested_reduces = !nested.empty();
  for (const auto& n : order) {
    if (n->op() == Ops::REDUCE_AXIS) {
      if (!first_reduce_ && !nested.count(n.get())) first_reduce_ = n;
      ++info.reduce_count;
    }
    info.transcendental += n->op() == Ops::EXP2 || n->op() == Ops::LOG2 || n->op() == Ops::SIN;
  }
  Dims root_shape = item_.shape;
  if (info.reduce_count == 1 && value_root_->op() == Ops::PERMUTE && !selected_equality()) {
    // A product stored transposed (an attention gradient's (..., n, m) view of its (..., m, n)
    // sum) whose stored order does not follow the reduce's kept dims and whose own order does is
    // planned in its own order and stored through the permutation: otherwise the heuristic maps
    // no axis and the kernel runs one scalar loop per output. (A selection sum stored transposed,
    // an embedding's gradient, is described through the permutation instead: below.)
    const auto& axes = first_reduce_->arg_if<ReduceArg>()->axes;
    const Dims& below = shapes_(value_root_->src(0));
    auto follows = [&](const Dims& shape) {
      Dims kept, out;
      const Dims& in = shapes_(first_reduce_->src(0));
      for (size_t d = 0; d < in.size(); ++d)
        if (in[d] != 1 && std::find(axes.begin(), axes.end(), int64_t(d)) == axes.end())
          kept.push_back(in[d]);
      const Dims refined = refined_shape(shape, shapes_(first_reduce_), axes);
      for (int64_t x : refined)
        if (x != 1) out.push_back(x);
      return out == kept;
    };
    if (!follows(item_.shape) && follows(below)) {
      store_perm_ = *value_root_->arg_if<std::vector<int64_t>>();
      value_root_ = value_root_->src(0);
      root_shape = below;
    }
  }
  out_shape_ = root_shape;
  if (info.reduce_count == 1) {
    const Dims refined =
        refined_shape(root_shape, shapes_(first_reduce_), first_reduce_->arg_if<ReduceArg>()->axes);
    if (refined != root_shape) {
      out_shape_ = refined;
      root_mops_ = {
          UOp::make(Ops::RESHAPE, value_root->dtype(), {value_root}, Arg{std::vector<int64_t>(refined)})};
    }
  }
  const Dims& S = out_shape_;
  info.output_dims = S.size();
  info.itemsize = value_root->dtype().itemsize();
  for (auto d : S) info.axes.push_back(AxisInfo{d});
  if (store_perm_.empty()) // stored row-major: along the innermost axis of more than one element
    for (int d = int(S.size()) - 1; d >= 0 && info.store_inner < 0; --d)
      if (S[size_t(d)] > 1) info.store_inner = d;
  if (first_reduce_) {
    info.reduce_op = first_reduce_->arg_if<ReduceArg>()->op;
    const Dims& in_shape = shapes_(first_reduce_->src(0));
    const auto& axes = first_reduce_->arg_if<ReduceArg>()->axes;
    auto reduced = [&](int64_t d) { return std::find(axes.begin(), axes.end(), d) != axes.end(); };
    std::vector<Dims> strides;
    leaf_strides(first_reduce_->src(0), {}, in_shape, strides);
    auto stride_count = [&](int64_t dim, int64_t value) {
      int64_t c = 0;
      for (const auto& st : strides) c += st[size_t(dim)] == value;
      return c;
    };
    // Reuse counts the loads inside the reduce loop: one that no reduce dim moves (a pool's bias,
    // read outside its window) is loaded once per output whatever the lanes are.
    auto reused = [&](int64_t dim) {
      int64_t c = 0;
      for (const auto& st : strides) {
        bool varies = false;
        for (auto a : axes) varies |= in_shape[size_t(a)] > 1 && st[size_t(a)] != 0;
        c += varies && st[size_t(dim)] == 0;
      }
      return c;
    };
    // Output dims map to the reduce's kept input dims in order of their non-1 sizes (the usual
    // case: the output is the reduce seen through elementwise ops and squeezes).
    std::vector<int64_t> out_dims, in_dims;
    for (int64_t d = 0; d < int64_t(S.size()); ++d)
      if (S[size_t(d)] > 1) out_dims.push_back(d);
    for (int64_t d = 0; d < int64_t(in_shape.size()); ++d)
      if (in_shape[size_t(d)] > 1 && !reduced(d)) in_dims.push_back(d);
    bool mapped = out_dims.size() == in_dims.size();
    for (size_t i = 0; mapped && i < out_dims.size(); ++i)
      mapped = S[size_t(out_dims[i])] == in_shape[size_t(in_dims[i])];
    axis_dim_.assign(S.size(), -1);
    for (size_t i = 0; mapped && i < out_dims.size(); ++i) axis_dim_[size_t(out_dims[i])] = in_dims[i];
    if (!mapped) axis_dim_.clear();
    for (size_t i = 0; mapped && i < out_dims.size(); ++i) {
      AxisInfo& a = info.axes[size_t(out_dims[i])];
      a.reuse = reused(in_dims[i]);
      a.contiguous = stride_count(in_dims[i], 1) > 0;
      a.every_second = stride_count(in_dims[i], 2) > 0;
    }
    for (int64_t d = 0; d < int64_t(in_shape.size()); ++d)
      if (reduced(d) && in_shape[size_t(d)] != 1) { // an empty axis too: its loop runs no step
        reduce_dims_.push_back(d);
        if (mapped) axis_dim_.push_back(d);
        info.axes.push_back(AxisInfo{in_shape[size_t(d)], true, stride_count(d, 0), stride_count(d, 1) > 0});
      }
    // a reduce axis whose steps continue where the next reduce axis ends (a 6x6 map): their lanes
    // together read one contiguous stretch
    const size_t first = info.axes.size() - reduce_dims_.size();
    for (size_t j = 0; j + 1 < reduce_dims_.size(); ++j)
      for (const auto& st : strides)
        info.axes[first + j].continues_inner |=
            st[size_t(reduce_dims_[j + 1])] == 1 &&
            st[size_t(reduce_dims_[j])] == in_shape[size_t(reduce_dims_[j + 1])];
    if (mapped && info.reduce_count == 1 && info.reduce_op == Ops::ADD) {
      info.product = matmul_axes(in_shape, out_dims, in_dims, false);
      info.matmul = matmul_axes(in_shape, out_dims, in_dims, true);
    }
    if (const int64_t d = one_hot_dim(in_shape); d >= 0)
      for (size_t j = 0; j < reduce_dims_.size(); ++j)
        if (reduce_dims_[j] == d) info.one_hot = int(first + j);
    if (const std::vector<bool> sel = selection_dims(in_shape);
        info.one_hot < 0 && info.reduce_count == 1 && !sel.empty()) {
      // A selection sum stored transposed (an embedding's gradient summed as (768, 50304) into a
      // (50304, 768) weight): its axes are described through the permutation. Other kernels keep
      // the in-order mapping their choices were measured with (and STAGE and TC rely on).
      std::vector<int64_t> kept = in_dims;
      if (!mapped) kept = permuted_dims(value_root, out_dims, in_dims);
      if (!kept.empty()) {
        info.selection = true;
        for (size_t i = 0; i < out_dims.size(); ++i) {
          AxisInfo& a = info.axes[size_t(out_dims[i])];
          a.selects = sel[size_t(kept[i])];
          if (!mapped) {
            a.reuse = reused(kept[i]);
            a.contiguous = stride_count(kept[i], 1) > 0;
          }
        }
        for (size_t j = 0; j < reduce_dims_.size(); ++j)
          info.axes[first + j].selects = sel[size_t(reduce_dims_[j])];
      }
    }
  } else { // elementwise: the inputs' strides along the output dims themselves
    std::vector<Dims> strides;
    leaf_strides(value_root, root_mops_, S, strides);
    const auto [narrow, gated] = leaf_masks(value_root, root_mops_, S);
    for (size_t d = 0; d < S.size(); ++d) {
      info.axes[d].masked = narrow[d];
      info.axes[d].gated = gated[d];
    }
    for (size_t d = 0; d < S.size(); ++d)
      for (const auto& st : strides) {
        info.axes[d].reuse += st[d] == 0;
        info.axes[d].contiguous |= st[d] == 1;
        info.axes[d].every_second |= st[d] == 2;
      }
  }
  for (const auto& a : info.axes) {
    AxisPlan p;
    p.size = p.padded = a.size;
    p.parts[0].size = a.size;
    plan_.push_back(std::move(p));
  }
  return info;
}

void Lowerer::apply(const Opt& o, const KernelInfo& info) {
  auto refuse = [&](const std::string& why) {
    std::string axes;
    for (const auto& a : info.axes)
      axes += (axes.empty() ? "" : ",") + std::to_string(a.size) + (a.reduce ? "r" : "");
    throw OptError("optimization " + to_string(o) + " does not fit kernel with axes (" + axes + "): " + why);
  };
  if (o.axis < 0 || size_t(o.axis) >= plan_.size())
    refuse("no such axis (" + std::to_string(info.output_dims) + " output axes, " +
           std::to_string(plan_.size() - info.output_dims) + " reduce axes)");
  if (o.op == OptOp::TC) return apply_tc(o, info, refuse);
  if (o.amount < 2) refuse("the amount must be at least 2");
  if (tc_ && o.op != OptOp::UPCAST && o.op != OptOp::LOCAL && o.op != OptOp::STAGE)
    refuse("only UPCAST, LOCAL and STAGE may follow TC");
  if (!staged_.empty() && o.op != OptOp::UPCAST && o.op != OptOp::LOCAL && o.op != OptOp::STAGE)
    refuse("only UPCAST, LOCAL and STAGE may follow STAGE");
  AxisPlan& ax = plan_[size_t(o.axis)];
  const bool reduce_axis = size_t(o.axis) >= info.output_dims;
  if (o.op == OptOp::PADTO) {
    if (ax.parts.size() != 1) refuse("PADTO must come before the other optimizations of its axis");
    if (ax.padded != ax.size) refuse("the axis is padded already");
    if (reduce_axis && info.reduce_count != 1)
      refuse("a reduce axis can be padded only in a kernel with one reduce (it has " +
             std::to_string(info.reduce_count) + ")");
    ax.padded = (ax.size + o.amount - 1) / o.amount * o.amount;
    ax.parts[0].size = ax.padded;
    return;
  }
  if (o.op == OptOp::STAGE) {
    if (ax.has(OptOp::STAGE)) refuse("an axis takes one STAGE");
    if (info.reduce_count != 1)
      refuse("the kernel has " + std::to_string(info.reduce_count) + " reduces; STAGE needs exactly one");
    if (reduce_axis) apply_stage(refuse);
  }
  const bool output_op = o.op == OptOp::UPCAST || o.op == OptOp::LOCAL || o.op == OptOp::LOOP;
  if (output_op && reduce_axis) refuse("an output-axis optimization on a reduce axis");
  if (!output_op && !reduce_axis) refuse("a reduce-axis optimization on an output axis");
  const size_t rest = ax.rest_index();
  const int64_t rest_size = ax.parts[rest].size;
  bool ragged = false;
  if (o.amount > rest_size)
    refuse("the amount exceeds what is left of the axis (" + std::to_string(rest_size) + ")");
  if (rest_size % o.amount != 0) {
    // a LOOP may be ragged when only UPCAST lanes (inside it) were split off the axis before
    const bool only_upcasts = std::all_of(ax.parts.begin(), ax.parts.end(),
                                          [](const Part& p) { return p.rest || p.op == OptOp::UPCAST; });
    if (o.op != OptOp::LOOP || !only_upcasts || ax.padded != ax.size)
      refuse("the amount does not divide what is left of the axis (" + std::to_string(rest_size) +
             "); pad it first with PADTO");
    ragged = true; // the last work item loops over the remainder only
  }
  auto lanes = [](const std::vector<LanePart>& parts) {
    int64_t n = 1;
    for (const auto& p : parts) n *= p.size;
    return n;
  };
  int local_axis = -1;
  switch (o.op) {
  case OptOp::UPCAST:
    // lanes outside a loop would be a loop's length apart: UPCAST first, then LOOP over its lanes
    if (ax.has(OptOp::LOOP)) refuse("UPCAST after LOOP on one axis (apply the UPCAST first)");
    if (lanes(upcasts_) * o.amount > 256) refuse("more than 256 upcast lanes");
    break;
  case OptOp::UNROLL:
    if (lanes(unrolls_) * o.amount > 64) refuse("more than 64 unrolled lanes");
    break;
  case OptOp::LOOP:
    if (ax.has(OptOp::LOOP)) refuse("an axis takes one LOOP");
    break;
  case OptOp::GROUP:
  case OptOp::GROUPTOP:
    if (options_.local_memory_bytes == 0) refuse("the device has no work-group local memory");
    if (info.reduce_count != 1)
      refuse("the kernel has " + std::to_string(info.reduce_count) + " reduces; GROUP needs exactly one");
    if (group_axis_ >= 0) refuse("one GROUP per kernel");
    [[fallthrough]];
  case OptOp::LOCAL: {
    if (local_axes_ == 3) refuse("a work group has at most 3 dimensions");
    uint64_t threads = uint64_t(o.amount);
    for (int k = 0; k < local_axes_; ++k) threads *= local_[size_t(k)];
    if (threads > options_.max_local_threads)
      refuse(std::to_string(threads) + " threads per work group, the device allows " +
             std::to_string(options_.max_local_threads));
    if (uint64_t(o.amount) > options_.max_local_size[size_t(local_axes_)])
      refuse("work-group size " + std::to_string(o.amount) + " along local axis " +
             std::to_string(local_axes_) + ", the device allows " +
             std::to_string(options_.max_local_size[size_t(local_axes_)]));
    local_axis = local_axes_++;
    local_[size_t(local_axis)] = uint32_t(o.amount);
    if (o.op != OptOp::LOCAL) group_axis_ = local_axis;
    break;
  }
  case OptOp::PADTO:
  case OptOp::TC:
  case OptOp::STAGE:
    break;
  }
  ax.parts[rest].size = ragged ? (rest_size + o.amount - 1) / o.amount : rest_size / o.amount;
  ax.ragged |= ragged;
  Part part{o.op, o.amount, false, local_axis};
  if (o.op == OptOp::UPCAST || o.op == OptOp::UNROLL) {
    auto& list = o.op == OptOp::UPCAST ? upcasts_ : unrolls_;
    part.lane_id = int(list.size());
    list.push_back({size_t(o.axis), o.amount});
  }
  // GROUPTOP takes the top of the axis (thread t: one contiguous block); the others the bottom
  ax.parts.insert(ax.parts.begin() + std::ptrdiff_t(o.op == OptOp::GROUPTOP ? rest : rest + 1), part);
}

} // namespace tg::lower_detail
