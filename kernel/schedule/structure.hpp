// An expression's structure without its buffers' identities: its DAG children first, each node's
// sources as indices into that order, and a hash, with each BUFFER a placeholder (dtype, size,
// device). Two expressions of equal structure compute the same function of their buffers. The
// schedule cache replays kernels by it (kernel/engine/schedule_cache.hpp) and the gradient
// cache rebuilds gradient graphs by it (kernel/tensor/gradient_cache.hpp).
#pragma once

#include "kernel/ir/uop.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tg {

// How a node with an opaque arg other than a BUFFER's enters the key.
enum class OpaqueKeying {
  // A NOOP's opaque arg (a custom gradient's function) only as "a function is here": scheduling
  // and codegen treat the NOOP as its source. Any other opaque arg cannot be keyed.
  Presence,
  // By OpaqueArg::structural_kind(): two args of one kind do the same on equal structure (a
  // custom gradient whose function builds only on nodes of the graph). Without a kind: no key.
  Kind,
};

class Structure {
public:
  // One target is walked from itself (no SINK made and freed for the tiny op); several get a SINK.
  Structure(const std::vector<UOpRef>& targets, OpaqueKeying keying);

  const std::vector<UOpRef>& order() const { return order_; }
  size_t hash() const { return hash_; }
  OpaqueKeying keying() const { return keying_; }
  // The index of node u in order(), if it is there.
  std::optional<int32_t> find(const UOp* u) const;
  std::span<const int32_t> sources(size_t i) const {
    const int32_t* at = links_.data() + order_.size() + 1;
    return {at + links_[i], at + links_[i + 1]};
  }

private:
  size_t slot(const UOp* u) const;

  std::vector<UOpRef> order_;
  // One allocation for both (a realize builds a Structure every time): first, for each node and
  // one past the last, where its source indices start; then every node's source indices.
  std::vector<int32_t> links_;
  // node -> index, only for large graphs: a small one (the tiny op's 4 nodes) is searched in
  // order_, which saves the table's allocation on every realize. Flat open addressing, at most
  // half full: one allocation instead of one per node (a training step's realize walks ~1000).
  std::vector<std::pair<const UOp*, int32_t>> large_index_;
  int index_bits_ = 0;
  size_t hash_ = 0;
  OpaqueKeying keying_;
  static constexpr size_t kSmall = 16;
};

// What a cache keeps of a Structure: each node's op, dtype and arg (a BUFFER's size and device),
// never a node, so a cache entry keeps no tensor's data alive.
class StructureKey {
public:
  // nullopt where a node's opaque arg cannot be keyed (see OpaqueKeying).
  static std::optional<StructureKey> of(const Structure& s);
  size_t hash() const { return hash_; }
  bool matches(const Structure& s) const;

private:
  struct Node {
    Ops op;
    DType dtype;
    Arg arg;          // empty for a BUFFER and an opaque arg
    std::string kind; // an opaque arg's structural kind (OpaqueKeying::Kind)
    bool opaque = false;
    std::vector<int32_t> src;
    int64_t size = 0;   // a BUFFER's elements
    std::string device; // a BUFFER's device
  };
  size_t hash_ = 0;
  OpaqueKeying keying_ = OpaqueKeying::Presence;
  std::vector<Node> nodes_;
};

} // namespace tg
