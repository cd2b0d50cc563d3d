// What a kernel's reads look like along its axes, for the heuristic (lower_plan.cpp: analyze):
// each buffer read's strides per axis and the axes its validity masks.
#include "kernel/codegen/lowerer.hpp"
#include "kernel/ir/evaluate.hpp"
#include "kernel/schedule/buffer.hpp"
#include "kernel/shape/shapetracker.hpp"

#include <algorithm>
#include <set>

namespace tg::lower_detail {

namespace {

// Calls leaf(buffer, mops) for every BUFFER under root with the movement ops above it, depth first
// with an explicit stack (sources pushed in reverse: the leaves come out in the order a recursive
// walk would give, which STAGE relies on), so a deep kernel cannot overflow. A DAG (threefry
// reuses its values in every round): each (node, view path) once, as `seen` records. A nested
// reduce has its own index space: not entered.
template <class Leaf>
void visit_leaves(const UOpRef& root, const std::vector<UOpRef>& root_mops,
                  std::set<std::vector<const void*>>& seen, Leaf&& leaf) {
  std::vector<std::pair<UOpRef, std::vector<UOpRef>>> stack{{root, root_mops}};
  while (!stack.empty()) {
    auto [u, mops] = std::move(stack.back());
    stack.pop_back();
    std::vector<const void*> key{u.get()};
    for (const auto& m : mops) key.push_back(m.get());
    if (!seen.insert(std::move(key)).second) continue;
    if (u->op() == Ops::BUFFER) {
      leaf(u, mops);
      continue;
    }
    if (u->op() == Ops::REDUCE_AXIS) continue;
    if (is_movement(u->op())) mops.push_back(u);
    for (auto s = u->src().rbegin(); s != u->src().rend(); ++s) stack.emplace_back(*s, mops);
  }
}

} // namespace

void Lowerer::leaf_strides(const UOpRef& root, const std::vector<UOpRef>& root_mops, const Dims& base,
                           std::vector<Dims>& out) {
  visit_leaves(root, root_mops, strides_seen_, [&](const UOpRef& buffer, const std::vector<UOpRef>& mops) {
    out.push_back(buffer_strides(buffer, mops, base));
  });
}

// Strides of one buffer read through mops, per dim of base (see leaf_strides).
Dims Lowerer::buffer_strides(const UOpRef& u, const std::vector<UOpRef>& mops, const Dims& base) const {
  ShapeTracker st = tracker({buffer_arg(u).size()}, mops);
  // A stride of 0 in the top view means the load ignores that index whatever lies below;
  // other strides are exact when there is a single view. Through stacked views, measure the
  // step of the index expression along each dim at two points (origin and middle).
  Dims strides(base.size(), -1);
  const View& top = st.views().back();
  for (size_t d = 0; d < base.size(); ++d) {
    const SInt& s = top.strides[d];
    if (s.is_int() && (s.value() == 0 || st.views().size() == 1)) strides[d] = s.value();
  }
  if (st.views().size() > 1 && all_int(st.shape())) {
    std::vector<UOpRef> vars; // int64, like the kernel's index math, so a large view cannot wrap
    for (size_t k = 0; k < st.ndim(); ++k)
      vars.push_back(UOp::variable("ridx" + std::to_string(k), 0,
                                   std::max<int64_t>(0, st.shape()[k].vmax() - 1), kIndex));
    auto [index, valid] = st.to_index(vars);
    (void)valid;
    try {
      Evaluator eval(index);
      for (size_t d = 0; d < base.size(); ++d) {
        if (strides[d] == 0 || base[d] < 2) continue;
        int64_t step = 0;
        bool same = true;
        for (int point = 0; point < 2 && same; ++point) {
          Bindings b0, b1;
          for (size_t k = 0; k < vars.size(); ++k) {
            int64_t v = point == 0 ? 0 : (base[k] - 1) / 2;
            if (k == d) v = std::min(v, base[k] - 2);
            b0.set(vars[k], v);
            b1.set(vars[k], k == d ? v + 1 : v);
          }
          int64_t diff = const_as_int(eval.run(b1)) - const_as_int(eval.run(b0));
          same = point == 0 || diff == step;
          step = diff;
        }
        if (same) strides[d] = step;
      }
    } catch (const IRError&) { // an expression the evaluator cannot compute: leave unknown
    }
  }
  return strides;
}

std::pair<std::vector<bool>, std::vector<bool>>
Lowerer::leaf_masks(const UOpRef& root, const std::vector<UOpRef>& root_mops, const Dims& base) const {
  std::vector<bool> narrow(base.size(), false), gated(base.size(), false);
  std::vector<ShapeTracker> masked; // the reads with a mask in some view
  std::set<std::vector<const void*>> seen;
  visit_leaves(root, root_mops, seen, [&](const UOpRef& buffer, const std::vector<UOpRef>& mops) {
    ShapeTracker st = tracker({buffer_arg(buffer).size()}, mops);
    bool any = false;
    for (const View& v : st.views()) any |= v.mask.has_value();
    if (!any || st.ndim() != base.size()) return;
    const View& top = st.views().back();
    if (top.mask)
      for (size_t k = 0; k < base.size(); ++k) {
        const auto& [b, e] = (*top.mask)[k];
        if (b.is_int() && e.is_int() && base[k] >= 2 && 2 * (e.value() - b.value()) <= base[k])
          narrow[k] = true;
      }
    masked.push_back(std::move(st));
  });
  // Which dims the validity reads (an index expression per read): only where some dim is narrow,
  // the one case the heuristic asks (a padded convolution input alone does not pay for this).
  if (std::find(narrow.begin(), narrow.end(), true) == narrow.end()) return {narrow, gated};
  std::vector<UOpRef> vars;
  for (size_t k = 0; k < base.size(); ++k)
    vars.push_back(UOp::variable("midx" + std::to_string(k), 0, std::max<int64_t>(0, base[k] - 1), kIndex));
  for (const ShapeTracker& st : masked)
    for (const UOpRef& n : toposort(st.to_index(vars).second))
      for (size_t k = 0; k < vars.size(); ++k) gated[k] = gated[k] || n == vars[k];
  return {narrow, gated};
}

} // namespace tg::lower_detail
