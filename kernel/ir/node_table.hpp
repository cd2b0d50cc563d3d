// Tables keyed by node address for one walk over a graph (the realized-value cache's substitution,
// autograd's graph walks): tsl::robin_map/robin_set, open addressing in one allocation per growth,
// where std::unordered_map allocates a node per entry on graphs of a training step's ~1000 nodes
// visited several times per step. Keys are raw pointers: the caller keeps the nodes alive.
#pragma once

#include "kernel/ir/uop.hpp"

#include <tsl/robin_map.h>
#include <tsl/robin_set.h>

#include <cstdint>
#include <vector>

namespace tg {

// Node addresses share their low bits (alignment) and robin_map masks the hash with a power of
// two: mix the high bits down.
struct NodeAddressHash {
  std::size_t operator()(const UOp* u) const noexcept {
    const uint64_t h = uint64_t(reinterpret_cast<std::uintptr_t>(u)) * 0x9e3779b97f4a7c15ULL;
    return std::size_t(h ^ (h >> 32));
  }
};

// node -> node.
class NodeMap {
public:
  NodeMap() { map_.reserve(512); }
  const UOpRef* find(const UOp* u) const {
    auto it = map_.find(u);
    return it == map_.end() ? nullptr : &it->second;
  }
  // Keeps the first value of a node.
  void emplace(const UOp* u, UOpRef v) { map_.try_emplace(u, std::move(v)); }

private:
  tsl::robin_map<const UOp*, UOpRef, NodeAddressHash> map_;
};

// `u` with each source replaced by its entry in `done` (every source has one): `u` itself when
// none changed, which most nodes of a walk do (no source vector is built for them).
inline UOpRef with_mapped_sources(const UOpRef& u, const NodeMap& done) {
  bool changed = false;
  for (const auto& s : u->src()) changed |= *done.find(s.get()) != s;
  if (!changed) return u;
  std::vector<UOpRef> src;
  src.reserve(u->src().size());
  for (const auto& s : u->src()) src.push_back(*done.find(s.get()));
  return replace_src(u, std::move(src));
}

// A set of nodes.
class NodeSet {
public:
  NodeSet() { set_.reserve(512); }
  bool count(const UOp* u) const { return set_.count(u) != 0; }
  void insert(const UOp* u) { set_.insert(u); }

private:
  tsl::robin_set<const UOp*, NodeAddressHash> set_;
};

} // namespace tg
