#include "kernel/engine/realized_cache.hpp"

#include "kernel/ir/node_table.hpp"
#include "kernel/schedule/buffer.hpp"

namespace tg {

std::optional<UOpRef> RealizedCache::find(const UOpRef& lazy, const std::string& device) {
  if (!lazy->keyed()) return std::nullopt; // never inserted: no lock
  std::lock_guard lock(mutex_);
  auto it = map_.find(lazy.get());
  if (it == map_.end()) return std::nullopt;
  UOpRef view = it->second.get();
  if (!view) {
    owned_ -= int64_t(it->second.owned != nullptr);
    map_.erase(it);
    return std::nullopt;
  }
  if (!on_device(view, device)) return std::nullopt;
  return view;
}

std::optional<UOpRef> RealizedCache::read(const UOpRef& lazy, const std::string& device) {
  std::optional<UOpRef> view = find(lazy, device);
  if (view && *view != lazy)
    if (RealizationListener* l = listener_.load(std::memory_order_acquire)) l->on_read(lazy, *view);
  return view;
}

std::vector<int32_t> RealizedCache::stored_among(const std::vector<UOpRef>& nodes,
                                                 const std::string& device) {
  std::lock_guard lock(mutex_);
  std::vector<int32_t> out;
  if (map_.empty()) return out;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (auto it = nodes[i]->keyed() ? map_.find(nodes[i].get()) : map_.end(); it != map_.end())
      if (UOpRef view = it->second.get(); view && on_device(view, device)) out.push_back(int32_t(i));
  return out;
}

void RealizedCache::insert(const UOpRef& lazy, const UOpRef& realized, bool owned) {
  std::lock_guard lock(mutex_);
  lazy->mark_keyed();
  Entry& e = map_[lazy.get()];
  owned_ += int64_t(owned) - int64_t(e.owned != nullptr);
  e = Entry{lazy, realized, owned ? realized : nullptr};
  ++generation_; // graphs substituted before may contain lazy
}

UOpRef RealizedCache::substitute(const UOpRef& root, const std::string& device) {
  std::lock_guard lock(mutex_);
  if (map_.empty()) return root;
  const bool settled_valid = settled_generation_ == generation_ && settled_device_ == device;
  NodeMap out;
  // Sets out[u] and returns true when u needs no walk below it.
  auto resolve = [&](const UOpRef& u) {
    if (auto it = u->keyed() ? map_.find(u.get()) : map_.end(); it != map_.end())
      if (UOpRef view = it->second.get(); view && on_device(view, device)) {
        out.emplace(u.get(), std::move(view));
        return true;
      }
    if (settled_valid)
      if (auto it = settled_.find(u.get()); it != settled_.end() && it->second.lock() == u) {
        out.emplace(u.get(), u);
        return true;
      }
    return false;
  };
  std::vector<std::pair<const UOpRef*, size_t>> stack; // post-order; a DAG, so no node twice
  if (!resolve(root)) stack.push_back({&root, 0});
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    const UOpRef& u = *node;
    if (next < u->src().size()) {
      const UOpRef& s = u->src(next++);
      if (!out.find(s.get()) && !resolve(s)) stack.push_back({&s, 0});
      continue;
    }
    out.emplace(u.get(), with_mapped_sources(u, out));
    stack.pop_back();
  }
  UOpRef result = *out.find(root.get());
  if (!settled_valid || settled_.size() > 4096) { // bounded: entries of dead nodes pile up
    settled_.clear();
    settled_generation_ = generation_;
    settled_device_ = device;
  }
  settled_.insert_or_assign(result.get(), result);
  if (result->op() == Ops::SINK)
    for (const auto& s : result->src()) settled_.insert_or_assign(s.get(), s);
  return result;
}

void RealizedCache::release_dead() {
  if (RealizationListener* l = listener_.load(std::memory_order_acquire)) l->before_release();
  purge();
}

void RealizedCache::purge() {
  std::lock_guard lock(mutex_);
  std::erase_if(map_, [this](const auto& kv) {
    if (kv.second.get()) return false;
    owned_ -= int64_t(kv.second.owned != nullptr);
    return true;
  });
}

void RealizedCache::clear() {
  std::unordered_map<const UOp*, Entry> dropped; // released after the lock
  std::lock_guard lock(mutex_);
  dropped.swap(map_);
  owned_ = 0;
  settled_.clear();
  ++generation_;
}

bool RealizedCache::on_device(const UOpRef& view, const std::string& device) {
  const UOpRef* u = &view;
  while (!is_buffer(*u) && !(*u)->src().empty()) u = &(*u)->src(0);
  return !is_buffer(*u) || buffer_arg(*u).device() == device;
}

UOpRef stored_buffer(const UOpRef& u) {
  if (is_buffer(u)) return u;
  if (u->op() == Ops::RESHAPE && is_buffer(u->src(0))) return u->src(0);
  return nullptr;
}

} // namespace tg
