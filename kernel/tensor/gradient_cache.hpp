// The gradient cache. A gradient graph is a function of the forward graph's structure, of which of
// its values an earlier realize stored, and of what was asked (the targets, the root's shape, the
// device): a training step that builds the same forward graph over new buffers gets the same
// gradient graph over those buffers. The second gradient() of a structure (the first only notes
// it: a structure seen once may never return) records the graph the rules built as a template:
// each node outside the forward graph by op, dtype, arg and sources, each node inside it by
// index. Later ones rebuild the graph from the template with UOp::make instead
// of running the rules; hash-consing makes those the very nodes the rules build (TG_GRADIENT_CACHE=2
// checks that on every hit). A template keeps no node, so it keeps no tensor's data alive.
// Thread-safe. Off with TG_GRADIENT_CACHE=0 (kernel/engine/config.hpp).
#pragma once

#include "kernel/schedule/structure.hpp"
#include "kernel/tensor/tensor.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tg::detail {

// What one gradient() call is keyed by: `context` is the forward graph with its stored values
// (OpaqueKeying::Kind); `asked` everything else its result depends on, as numbers.
struct GradientQuery {
  const Structure& context;
  std::vector<int64_t> asked;
  std::string device;
};

// The gradients an earlier call of the same query built, rebuilt over this query's nodes, or
// nullopt.
std::optional<std::vector<Tensor>> cached_gradients(const GradientQuery& q);

// Records what a call that missed built, from the second miss of its structure on (the first
// only notes the structure). Nothing is kept where the gradients reach a buffer or an opaque arg
// outside the context (a captured tensor): those would not follow the next step's.
void remember_gradients(const GradientQuery& q, const std::vector<Tensor>& grads);

struct GradientCacheStats {
  uint64_t hits = 0;
  uint64_t misses = 0;       // built by the rules (and remembered where they could be)
  uint64_t not_reusable = 0; // misses whose gradients could not be remembered
  size_t entries = 0;
};
GradientCacheStats gradient_cache_stats();

void forget_gradients();

} // namespace tg::detail
