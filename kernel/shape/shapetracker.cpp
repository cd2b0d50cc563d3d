#include "kernel/shape/shapetracker.hpp"

#include "kernel/ir/symbolic.hpp"

namespace tg {

ShapeTracker ShapeTracker::from_shape(const Shape& shape) { return ShapeTracker({View::create(shape)}); }

ShapeTracker::ShapeTracker(std::vector<View> views) : views_(std::move(views)) {
  if (views_.empty()) throw ShapeError("ShapeTracker: needs at least one view");
}

std::string ShapeTracker::str() const {
  std::string s = "ShapeTracker(views=(";
  for (std::size_t i = 0; i < views_.size(); ++i) s += (i ? ", " : "") + views_[i].str();
  return s + (views_.size() == 1 ? ",))" : "))");
}

ShapeTracker ShapeTracker::with_last(View v) const {
  ShapeTracker st = *this;
  st.views_.back() = std::move(v);
  st.merge_views();
  return st;
}

// Two adjacent views collapse when one of them is the identity on flat indices: a contiguous
// lower view adds nothing, and a contiguous upper view of as many elements is just a reshape of
// the lower one.
void ShapeTracker::merge_views() {
  while (views_.size() >= 2) {
    View& lower = views_[views_.size() - 2];
    const View& upper = views_.back();
    if (lower.contiguous) {
      views_.erase(views_.end() - 2);
      continue;
    }
    // (a contiguous view may also be a shrink from 0 of fewer elements: no reshape of the lower)
    if (upper.contiguous && prod(upper.shape) == prod(lower.shape)) {
      if (auto merged = lower.reshape(upper.shape)) {
        lower = std::move(*merged);
        views_.pop_back();
        continue;
      }
    }
    break;
  }
}

ShapeTracker ShapeTracker::reshape(const Shape& new_shape) const {
  if (auto v = views_.back().reshape(new_shape)) return with_last(std::move(*v));
  ShapeTracker st = *this;
  st.views_.push_back(View::create(new_shape));
  st.merge_views();
  return st;
}

ShapeTracker ShapeTracker::permute(const std::vector<std::size_t>& order) const {
  return with_last(views_.back().permute(order));
}
ShapeTracker ShapeTracker::expand(const Shape& new_shape) const {
  return with_last(views_.back().expand(new_shape));
}
ShapeTracker ShapeTracker::pad(const std::vector<std::pair<SInt, SInt>>& arg) const {
  return with_last(views_.back().pad(arg));
}
ShapeTracker ShapeTracker::shrink(const std::vector<std::pair<SInt, SInt>>& arg) const {
  return with_last(views_.back().shrink(arg));
}
ShapeTracker ShapeTracker::flip(const std::vector<bool>& axes) const {
  return with_last(views_.back().flip(axes));
}

std::pair<UOpRef, UOpRef> ShapeTracker::to_index(const std::vector<UOpRef>& idxs) const {
  auto [idx, valid] = views_.back().to_index(idxs);
  for (std::size_t v = views_.size() - 1; v-- > 0;) {
    const View& view = views_[v];
    // Unravel the flat index into the lower view's dims (row-major).
    std::vector<UOpRef> sub(view.ndim());
    SInt acc = 1;
    for (std::size_t d = view.ndim(); d-- > 0;) {
      UOpRef q = acc == 1 ? idx : idiv(idx, acc.to_uop(idx->dtype()));
      sub[d] = d == 0 ? q : q % view.shape[d].to_uop(idx->dtype());
      acc = acc * view.shape[d];
    }
    auto [i2, v2] = view.to_index(sub);
    idx = i2;
    valid = valid & v2;
  }
  return {simplify(idx), simplify(valid)};
}

std::vector<UOpRef> ShapeTracker::index_variables() const {
  std::vector<UOpRef> vars;
  for (std::size_t i = 0; i < ndim(); ++i)
    vars.push_back(
        UOp::variable("ridx" + std::to_string(i), 0, std::max<std::int64_t>(0, shape()[i].vmax() - 1)));
  return vars;
}

std::pair<UOpRef, UOpRef> ShapeTracker::to_index() const { return to_index(index_variables()); }

} // namespace tg
