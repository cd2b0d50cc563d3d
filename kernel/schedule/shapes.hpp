// Shapes of tensor-level nodes. Movement ops carry their result shape (or what determines it) in
// their arg; everything else takes its sources' shape. Tensor shapes here are concrete ints.
#pragma once

#include "kernel/ir/uop.hpp"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace tg {

using Dims = std::vector<int64_t>;

std::string dims_str(const Dims& d); // "(2, 3)"
int64_t dims_prod(const Dims& d);

// Movement-op args: RESHAPE/EXPAND the new shape, PERMUTE the order, PAD the (before, after)
// pairs flattened, SHRINK the (begin, end) pairs flattened, FLIP one 0/1 flag per dim.
struct MovementArg {
  static std::vector<std::pair<int64_t, int64_t>> pairs(const UOpRef& u);
};

// A tensor-level RANGE(0, n) with this id is "iota": a 1-D tensor whose element i is i. It needs
// no memory; codegen turns it into the element's index (arange is built on it).
inline constexpr int64_t kTensorIotaId = -1;

// Memoized shape inference over one graph walk.
class ShapeMap {
public:
  const Dims& operator()(const UOpRef& u);

private:
  std::unordered_map<const UOp*, Dims> memo_;
};

// Shape of one node computed from its sources' shapes (throws ShapeError on inconsistent args).
Dims infer_shape(const UOpRef& u, const std::vector<const Dims*>& src_shapes);

} // namespace tg
