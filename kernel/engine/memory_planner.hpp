// The JIT's memory planner: intermediates of a captured step whose lifetimes (the launches that
// first and last touch them) are disjoint share one allocation, sized to the largest of them.
// Greedy over first use: a buffer takes the free group that fits it most tightly, else grows the
// largest free group, else opens a new one. Each group is one device allocation, so the device's
// alignment holds for every member.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tg {

struct BufferLifetime {
  size_t first = 0, last = 0; // launch indices, first <= last; both ends are live
  uint64_t bytes = 0;
};

struct MemoryPlan {
  std::vector<size_t> group_of;      // per buffer, its group
  std::vector<uint64_t> group_bytes; // per group, the allocation size
  uint64_t unplanned_bytes = 0;      // every buffer in its own allocation
  uint64_t planned_bytes = 0;        // sum of group_bytes
  uint64_t peak_live_bytes = 0;      // most bytes live at one launch: no plan does better
};

MemoryPlan plan_memory(std::span<const BufferLifetime> buffers);

} // namespace tg
