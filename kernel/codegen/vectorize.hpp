// Lane vectorization: the lowerer computes a tile of outputs as scalar lanes; lanes that differ
// only along one upcast dim are bundled here into vector values of the kernel IR (vcount = lanes),
// bottom-up, as an SLP vectorizer would: identical lanes become one broadcast, like ops become one
// vector op, loads of consecutive elements one vector load, accumulators one vector accumulator.
// What cannot be bundled stays scalar and is packed with VECTORIZE, so the result is always
// correct; only its speed depends on how much bundles.
#pragma once

#include "kernel/ir/uop.hpp"

#include <map>
#include <vector>

namespace tg {

class LaneVectorizer {
public:
  // lane_gates: the device reads a vector under a gate per lane (its attribute lane_gates, IR 1.4).
  explicit LaneVectorizer(bool lane_gates = false) : lane_gates_(lane_gates) {}
  // One vector value (dtype.vec(lanes.size())) whose lane k equals lanes[k].
  UOpRef bundle(const std::vector<UOpRef>& lanes);
  // Stores lane k of `vector` at ptrs[k] (INDEX nodes): one vector store when the pointers are
  // consecutive elements of one buffer, else a store per lane.
  std::vector<UOpRef> store(const std::vector<UOpRef>& ptrs, const UOpRef& vector);
  // Stores a tile of vectors (ptrs[g][k]: where lane k of vectors[g] goes). Vectors whose lanes
  // are not consecutive but whose lane k is consecutive across a run of vectors (channels in
  // lanes, stored NCHW, the columns across vectors) store transposed: per lane, one vector of
  // that run's values. Else as `store`, vector by vector.
  std::vector<UOpRef> store_tile(const std::vector<std::vector<UOpRef>>& ptrs,
                                 const std::vector<UOpRef>& vectors);

private:
  UOpRef broadcast(const UOpRef& scalar, size_t n);
  UOpRef pack(const std::vector<UOpRef>& lanes);
  UOpRef loads(const std::vector<UOpRef>& lanes);
  std::vector<UOpRef> selected_everywhere(const std::vector<UOpRef>& lanes);
  UOpRef strided_load(const std::vector<UOpRef>& lanes, size_t stride);
  UOpRef lane_gate(const std::vector<UOpRef>& gates);
  bool lane_gates_ = false;
  std::map<std::vector<const UOp*>, UOpRef> memo_;
  std::vector<UOpRef> keep_alive_; // memo keys are raw pointers
};

} // namespace tg
