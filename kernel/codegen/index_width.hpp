// Index width: the lowerer builds all index math in int64, so no address, loop bound or grid
// index can wrap however large a buffer or view is. This pass then computes in int32 every
// integer value whose bounds (vmin/vmax) prove that it fits, exactly as int64 would: kernels over
// fewer than 2^31 elements keep the int32 index math they always had, and in larger ones only
// the values that need 64 bits (an address past 2^31, a loop that long) stay int64.
#pragma once

#include "kernel/ir/uop.hpp"

#include <unordered_map>
#include <vector>

namespace tg {

class IndexNarrower {
public:
  // u with every narrowable int64 node computed in int32 (memoized: one narrower per kernel, so a
  // RANGE shared by several roots stays one loop).
  UOpRef operator()(const UOpRef& u);

private:
  std::unordered_map<const UOp*, UOpRef> memo_;
  std::vector<UOpRef> keep_alive_; // memo keys are raw pointers
};

} // namespace tg
