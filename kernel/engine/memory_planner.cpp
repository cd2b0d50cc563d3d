#include "kernel/engine/memory_planner.hpp"

#include "kernel/runtime/errors.hpp"

#include <algorithm>
#include <map>
#include <numeric>

namespace tg {

MemoryPlan plan_memory(std::span<const BufferLifetime> buffers) {
  MemoryPlan plan;
  plan.group_of.resize(buffers.size());
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return buffers[a].first != buffers[b].first ? buffers[a].first < buffers[b].first
                                                : buffers[a].bytes > buffers[b].bytes;
  });
  std::vector<size_t> busy_until; // per group: the last launch of its latest member
  for (size_t i : order) {
    const BufferLifetime& b = buffers[i];
    if (b.first > b.last)
      throw Error("plan_memory: buffer " + std::to_string(i) + " has first use after last use");
    plan.unplanned_bytes += b.bytes;
    size_t best = SIZE_MAX;
    for (size_t g = 0; g < busy_until.size(); ++g) {
      if (busy_until[g] >= b.first) continue; // a member is still live
      if (best == SIZE_MAX) {
        best = g;
        continue;
      }
      const uint64_t have = plan.group_bytes[g], cur = plan.group_bytes[best];
      const bool fits = have >= b.bytes, cur_fits = cur >= b.bytes;
      // the tightest group that fits; if none fits, the largest (it grows the least)
      if ((fits && (!cur_fits || have < cur)) || (!fits && !cur_fits && have > cur)) best = g;
    }
    if (best == SIZE_MAX) {
      best = busy_until.size();
      busy_until.push_back(0);
      plan.group_bytes.push_back(0);
    }
    busy_until[best] = b.last;
    plan.group_bytes[best] = std::max(plan.group_bytes[best], b.bytes);
    plan.group_of[i] = best;
  }
  for (uint64_t g : plan.group_bytes) plan.planned_bytes += g;
  std::map<size_t, int64_t> delta; // bytes that become live (+) or dead (-) at a launch
  for (const auto& b : buffers) {
    delta[b.first] += int64_t(b.bytes);
    delta[b.last + 1] -= int64_t(b.bytes);
  }
  int64_t live = 0;
  for (const auto& [at, d] : delta) {
    live += d;
    plan.peak_live_bytes = std::max(plan.peak_live_bytes, uint64_t(live));
  }
  return plan;
}

} // namespace tg
