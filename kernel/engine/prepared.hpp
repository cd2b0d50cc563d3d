// What the engine launches: a kernel lowered, linearized, compiled and loaded for one device, and
// one launch of it on bound buffers.
#pragma once

#include "kernel/codegen/linearize.hpp"
#include "kernel/codegen/lower.hpp"
#include "kernel/engine/program_cache.hpp"

#include <memory>
#include <vector>

namespace tg {

// One kernel ready to launch on a device: lowered, linearized, compiled and loaded.
struct PreparedKernel {
  LoweredKernel lowered;
  LinearKernel linear;
  std::shared_ptr<CachedProgram> program;
};

// One kernel of a replayed schedule: its prepared kernel (null for an empty output) and its
// BUFFER nodes, [0] the output.
struct PreparedLaunch {
  std::shared_ptr<PreparedKernel> kernel;
  std::vector<UOpRef> buffers;
};

} // namespace tg
