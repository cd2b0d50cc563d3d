#include "kernel/schedule/structure.hpp"

#include "kernel/schedule/buffer.hpp"

#include <algorithm>
#include <bit>
#include <functional>

namespace tg {

namespace {

size_t mix(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

size_t dtype_hash(DType d) {
  return size_t(d.scalar) | size_t(d.count) << 8 | size_t(d.ptr) << 24 | size_t(d.local) << 25;
}

constexpr size_t kOpaqueNoopHash = 0x6f70617175654e4fULL;

const OpaqueArg* opaque_arg(const UOp& u) {
  auto* o = u.arg_if<OpaqueArgRef>();
  return o ? o->get() : nullptr;
}

} // namespace

Structure::Structure(const std::vector<UOpRef>& targets, OpaqueKeying keying)
    : order_(toposort(targets.size() == 1 ? targets[0] : UOp::sink(targets))), keying_(keying) {
  if (order_.size() > kSmall) {
    index_bits_ = std::bit_width(2 * order_.size() - 1);
    large_index_.assign(size_t(1) << index_bits_, {nullptr, 0});
  }
  const size_t n = order_.size();
  links_.reserve((n + 1) + 2 * n); // most nodes have one or two sources: one allocation
  links_.resize(n + 1);
  for (size_t i = 0; i < order_.size(); ++i) {
    const UOp& u = *order_[i];
    if (order_.size() > kSmall) large_index_[slot(&u)] = {&u, int32_t(i)};
    links_[i] = int32_t(links_.size() - (n + 1));
    size_t h = mix(size_t(u.op()), dtype_hash(u.dtype()));
    for (const auto& s : u.src()) {
      links_.push_back(find(s.get()).value()); // toposort: every source comes before its user
      h = mix(h, size_t(links_.back()));
    }
    if (u.op() == Ops::BUFFER) { // a placeholder: what it holds, not which buffer
      const BufferArg& b = buffer_arg(order_[i]);
      h = mix(mix(h, std::hash<int64_t>{}(b.size())), std::hash<std::string>{}(b.device()));
    } else if (const OpaqueArg* o = opaque_arg(u)) {
      h = mix(h, keying == OpaqueKeying::Presence ? kOpaqueNoopHash
                                                  : std::hash<std::string_view>{}(o->structural_kind()));
    } else {
      h = mix(h, arg_hash(u.arg()));
    }
    hash_ = mix(hash_, h);
  }
  links_[n] = int32_t(links_.size() - (n + 1));
}

std::optional<int32_t> Structure::find(const UOp* u) const {
  if (order_.size() > kSmall) {
    const auto& [node, index] = large_index_[slot(u)];
    return node ? std::optional<int32_t>(index) : std::nullopt;
  }
  for (size_t i = order_.size(); i-- > 0;) // from the end: a node's sources are mostly just before it
    if (order_[i].get() == u) return int32_t(i);
  return std::nullopt;
}

// u's slot in large_index_, or the empty one where it would go (linear probing from a
// multiplicative hash's high bits: node addresses share their low bits).
size_t Structure::slot(const UOp* u) const {
  const size_t mask = large_index_.size() - 1;
  size_t i = (reinterpret_cast<std::uintptr_t>(u) * 0x9e3779b97f4a7c15ULL) >> (64 - index_bits_);
  while (large_index_[i].first && large_index_[i].first != u) i = (i + 1) & mask;
  return i;
}

std::optional<StructureKey> StructureKey::of(const Structure& s) {
  StructureKey k;
  k.hash_ = s.hash();
  k.keying_ = s.keying();
  k.nodes_.reserve(s.order().size());
  for (size_t i = 0; i < s.order().size(); ++i) {
    const UOpRef& u = s.order()[i];
    auto src = s.sources(i);
    Node n{u->op(), u->dtype(), {}, {}, false, {src.begin(), src.end()}, 0, {}};
    if (u->op() == Ops::BUFFER) {
      n.size = buffer_arg(u).size();
      n.device = buffer_arg(u).device();
    } else if (const OpaqueArg* o = opaque_arg(*u)) {
      // An opaque arg may change what runs and may keep what it refers to alive in a cache: it
      // is keyed only where the keying vouches for it, and never kept.
      n.opaque = true;
      if (s.keying() == OpaqueKeying::Presence) {
        if (u->op() != Ops::NOOP) return std::nullopt;
      } else {
        if (o->structural_kind().empty()) return std::nullopt;
        n.kind = std::string(o->structural_kind());
      }
    } else {
      n.arg = u->arg();
    }
    k.nodes_.push_back(std::move(n));
  }
  return k;
}

bool StructureKey::matches(const Structure& s) const {
  if (hash_ != s.hash() || keying_ != s.keying() || nodes_.size() != s.order().size()) return false;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node& k = nodes_[i];
    const UOp& u = *s.order()[i];
    if (k.op != u.op() || !(k.dtype == u.dtype())) return false;
    auto src = s.sources(i);
    if (!std::equal(src.begin(), src.end(), k.src.begin(), k.src.end())) return false;
    const OpaqueArg* o = k.op == Ops::BUFFER ? nullptr : opaque_arg(u);
    if (k.op == Ops::BUFFER) {
      const BufferArg& b = buffer_arg(s.order()[i]);
      if (b.size() != k.size || b.device() != k.device) return false;
    } else if (k.opaque != (o != nullptr)) {
      return false;
    } else if (k.opaque) {
      if (keying_ == OpaqueKeying::Presence ? u.op() != Ops::NOOP : o->structural_kind() != k.kind)
        return false;
    } else if (!arg_equal(k.arg, u.arg())) {
      return false;
    }
  }
  return true;
}

} // namespace tg
