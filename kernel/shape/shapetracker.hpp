#pragma once
// ShapeTracker: a stack of Views. The last view maps the tensor's indices to the flat index of the
// view below it, and so on down to the buffer. Movement ops change the last view; when a reshape
// cannot be expressed by one view a new view is pushed, and adjacent views are merged back
// whenever one of them is a plain contiguous layout.
#include <string>
#include <utility>
#include <vector>

#include "kernel/shape/view.hpp"

namespace tg {

class ShapeTracker {
public:
  static ShapeTracker from_shape(const Shape& shape);
  explicit ShapeTracker(std::vector<View> views);

  const std::vector<View>& views() const { return views_; }
  const Shape& shape() const { return views_.back().shape; }
  std::size_t ndim() const { return shape().size(); }
  SInt size() const { return prod(shape()); }
  bool contiguous() const { return views_.size() == 1 && views_[0].contiguous; }
  std::string str() const;
  bool operator==(const ShapeTracker& o) const { return views_ == o.views_; }

  ShapeTracker reshape(const Shape& new_shape) const;
  ShapeTracker permute(const std::vector<std::size_t>& order) const;
  ShapeTracker expand(const Shape& new_shape) const;
  ShapeTracker pad(const std::vector<std::pair<SInt, SInt>>& before_after) const;
  ShapeTracker shrink(const std::vector<std::pair<SInt, SInt>>& begin_end) const;
  ShapeTracker flip(const std::vector<bool>& axes) const;

  // Buffer index and validity for per-dim index expressions, simplified.
  std::pair<UOpRef, UOpRef> to_index(const std::vector<UOpRef>& idxs) const;
  // Same, with one variable per dim: ridx{i} in [0, dim-1].
  std::pair<UOpRef, UOpRef> to_index() const;
  std::vector<UOpRef> index_variables() const;

private:
  ShapeTracker with_last(View v) const;
  void merge_views();
  std::vector<View> views_;
};

} // namespace tg
