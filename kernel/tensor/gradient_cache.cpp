#include "kernel/tensor/gradient_cache.hpp"

#include "kernel/engine/engine.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

namespace tg::detail {

namespace {

constexpr size_t kMaxEntries = 256; // a bound for programs whose structures never repeat
constexpr size_t kMaxSeen = 4096;

// A gradient graph without its nodes. A reference >= 0 names a node of the query's context, ~j
// the template's j-th node.
struct Template {
  StructureKey key;
  std::vector<int64_t> asked;
  std::string device;
  struct Node {
    Ops op;
    DType dtype;
    Arg arg;
    std::vector<int32_t> src;
  };
  std::vector<Node> nodes; // children first
  struct Output {
    int32_t ref;
    Dims shape;
    std::string device;
  };
  std::vector<Output> outputs;

  bool matches(const GradientQuery& q) const {
    return asked == q.asked && device == q.device && key.matches(q.context);
  }
};

// The template of `grads` over q's context, or null where a node outside the context holds a
// buffer or an opaque arg (the next step's graph would not have it).
std::shared_ptr<const Template> make_template(const GradientQuery& q, const std::vector<Tensor>& grads) {
  std::optional<StructureKey> key = StructureKey::of(q.context);
  if (!key) return nullptr;
  auto t = std::make_shared<Template>(Template{std::move(*key), q.asked, q.device, {}, {}});
  std::vector<UOpRef> roots;
  for (const auto& g : grads) roots.push_back(g.uop());
  std::unordered_map<const UOp*, int32_t> ref;
  // Each node's reference, walking children first; the context's nodes are not entered.
  std::vector<std::pair<const UOp*, size_t>> stack;
  auto reference = [&](const UOp* u) -> std::optional<int32_t> {
    if (auto i = q.context.find(u)) return *i;
    if (auto r = ref.find(u); r != ref.end()) return r->second;
    return std::nullopt;
  };
  for (const auto& root : roots) {
    if (reference(root.get())) continue;
    stack.push_back({root.get(), 0});
    while (!stack.empty()) {
      auto& [u, next] = stack.back();
      if (next < u->src().size()) {
        const UOp* s = u->src(next++).get();
        if (!reference(s)) stack.push_back({s, 0});
        continue;
      }
      if (u->op() == Ops::BUFFER || u->arg_if<OpaqueArgRef>()) return nullptr;
      Template::Node n{u->op(), u->dtype(), u->arg(), {}};
      n.src.reserve(u->src().size());
      for (const auto& s : u->src()) n.src.push_back(*reference(s.get()));
      ref.emplace(u, ~int32_t(t->nodes.size()));
      t->nodes.push_back(std::move(n));
      stack.pop_back();
    }
  }
  for (const auto& g : grads) t->outputs.push_back({*reference(g.uop().get()), g.shape(), g.device()});
  return t;
}

std::vector<Tensor> rebuild(const Template& t, const Structure& context) {
  std::vector<UOpRef> built;
  built.reserve(t.nodes.size());
  auto node = [&](int32_t r) -> const UOpRef& {
    return r >= 0 ? context.order()[size_t(r)] : built[size_t(~r)];
  };
  for (const auto& n : t.nodes) {
    std::vector<UOpRef> src;
    src.reserve(n.src.size());
    for (int32_t r : n.src) src.push_back(node(r));
    built.push_back(UOp::make(n.op, n.dtype, std::move(src), n.arg));
  }
  std::vector<Tensor> out;
  out.reserve(t.outputs.size());
  for (const auto& o : t.outputs) out.emplace_back(node(o.ref), o.shape, o.device);
  return out;
}

struct GradientCache {
  std::mutex mutex;
  std::unordered_multimap<size_t, std::shared_ptr<const Template>> entries;
  std::unordered_set<size_t> seen_once; // structure hashes that missed once
  std::atomic<uint64_t> hits{0}, misses{0}, not_reusable{0};
};
GradientCache& cache() { return engine().extension<GradientCache>(); }

} // namespace

std::optional<std::vector<Tensor>> cached_gradients(const GradientQuery& q) {
  GradientCache& c = cache();
  std::shared_ptr<const Template> hit;
  {
    std::lock_guard lock(c.mutex);
    auto [first, last] = c.entries.equal_range(q.context.hash());
    for (auto it = first; it != last && !hit; ++it)
      if (it->second->matches(q)) hit = it->second;
  }
  if (!hit) return std::nullopt;
  ++c.hits;
  return rebuild(*hit, q.context);
}

void remember_gradients(const GradientQuery& q, const std::vector<Tensor>& grads) {
  GradientCache& c = cache();
  ++c.misses;
  {
    // A structure seen once may never come back (shapes that change every step): its key and
    // template are made from its second sighting on.
    std::lock_guard lock(c.mutex);
    if (c.seen_once.size() >= kMaxSeen) c.seen_once.clear();
    if (c.seen_once.insert(q.context.hash()).second) return;
  }
  auto t = make_template(q, grads);
  if (!t) {
    ++c.not_reusable;
    return;
  }
  std::lock_guard lock(c.mutex);
  if (c.entries.size() >= kMaxEntries) c.entries.clear();
  c.entries.emplace(q.context.hash(), std::move(t));
}

GradientCacheStats gradient_cache_stats() {
  GradientCache& c = cache();
  std::lock_guard lock(c.mutex);
  return {c.hits.load(), c.misses.load(), c.not_reusable.load(), c.entries.size()};
}

void forget_gradients() {
  GradientCache& c = cache();
  std::lock_guard lock(c.mutex);
  c.entries.clear();
}

} // namespace tg::detail
