#pragma once
// View: one affine window on a flat buffer. Element (i0..in) lives at offset + sum(ik * strides[k])
// and is valid when every ik lies in mask[k] (padding reads outside it). Movement ops rewrite the
// numbers only; nothing is copied.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernel/shape/sint.hpp"

namespace tg {

using Mask = std::vector<std::pair<SInt, SInt>>; // per dim: [begin, end)

// Row-major strides for shape, 0 for dims of size 1.
Shape strides_for_shape(const Shape& shape);

struct View {
  Shape shape;
  Shape strides;
  SInt offset = 0;
  std::optional<Mask> mask;
  bool contiguous = true;

  // Canonical form: strides of size-1 dims are 0, a mask that covers everything is dropped.
  static View create(Shape shape, std::optional<Shape> strides = std::nullopt, SInt offset = 0,
                     std::optional<Mask> mask = std::nullopt);

  std::size_t ndim() const { return shape.size(); }
  bool operator==(const View& o) const;
  std::string str() const;

  // Movement ops. Argument errors throw ShapeError naming the shapes.
  View permute(const std::vector<std::size_t>& order) const;
  View expand(const Shape& new_shape) const;
  View pad(const std::vector<std::pair<SInt, SInt>>& before_after) const;
  View shrink(const std::vector<std::pair<SInt, SInt>>& begin_end) const;
  View flip(const std::vector<bool>& axes) const;
  // One view for the new shape, or nullopt when the element order cannot be expressed by one.
  std::optional<View> reshape(const Shape& new_shape) const;

  // Buffer index and validity (bool) for per-dim index expressions.
  std::pair<UOpRef, UOpRef> to_index(const std::vector<UOpRef>& idxs) const;

private:
  View resize(const std::vector<std::pair<SInt, SInt>>& arg, std::optional<Mask> new_mask) const;
};

} // namespace tg
