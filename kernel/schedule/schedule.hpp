// Kernelize: turns a tensor-level graph into an ordered list of kernels. Each kernel computes one
// node into a new contiguous BUFFER: SINK(STORE(out BUFFER, value)), where `value` reads only
// BUFFER nodes (through movement ops). Fusion rules follow tinygrad's: elementwise chains fuse,
// elementwise producers fuse into a reduce, and elementwise consumers of a reduce fuse unless the
// reduce result is broadcast (EXPAND) or reduced again; movement ops never make a kernel.
#pragma once

#include "kernel/schedule/shapes.hpp"

#include <string>
#include <unordered_map>
#include <vector>

namespace tg {

struct ScheduleItem {
  UOpRef ast;                  // SINK(STORE(out, value))
  std::vector<UOpRef> buffers; // BUFFER nodes: [0] the output, then inputs in first-use order
  Dims shape;                  // shape of the value (the output's logical shape)
  std::string str() const;
};

struct ScheduleOptions {
  std::string device = "CPU"; // where kernels that read no buffer (constants, iota) run
  // A softmax whose weights only a reduce reads (attention's softmax(q k^T) v) is computed inside
  // that reduce's kernel: the scores, their max and sum are loops of that kernel, never stored.
  bool fuse_softmax = false;
};

struct Schedule {
  std::vector<ScheduleItem> items;
  // Every node that was computed, and what it became: RESHAPE(out BUFFER, shape) or the BUFFER.
  std::unordered_map<const UOp*, UOpRef> becomes;
  std::vector<UOpRef> keep_alive; // the original nodes keyed in `becomes`
};

// Schedules everything needed to realize `targets` on `device`. Targets that are already views of
// BUFFERs (movement ops only) produce no kernel and map to themselves.
Schedule create_schedule(const std::vector<UOpRef>& targets, const ScheduleOptions& options = {});

// What a computed node becomes: its contiguous output BUFFER seen in the node's shape.
UOpRef buffer_view(const UOpRef& buffer, const Dims& shape);

// True when u is a BUFFER seen through movement ops only (already materialized data).
bool is_buffer_view(const UOpRef& u);

} // namespace tg
