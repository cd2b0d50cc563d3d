#include "kernel/engine/kernel_cache.hpp"

#include "kernel/schedule/buffer.hpp"

#include <unordered_map>

namespace tg {

// The item with its buffers replaced by placeholders: equal structure -> the same node. The
// cache keeps this key, so it must share no inner node with the tensor graph the item came from:
// the realized-value cache frees a stored result when its expression dies, and a kept expression
// would keep that result forever (a kernel reading no buffer, e.g. ones({n}).sum(), is its own
// expression). Every other leaf (constants) is wrapped in a NOOP, so each node above a leaf is
// the key's own; the leaves themselves are never stored results.
UOpRef KernelCache::key_of(const ScheduleItem& item) {
  const std::vector<UOpRef> order = toposort(item.ast);
  std::unordered_map<const UOp*, UOpRef> done; // sized once: this runs on every launch
  done.reserve(order.size());
  for (size_t i = 0; i < item.buffers.size(); ++i) {
    const auto& b = item.buffers[i];
    done[b.get()] =
        UOp::make(Ops::DEFINE_GLOBAL, b->dtype(), {}, std::vector<int64_t>{int64_t(i), buffer_arg(b).size()});
  }
  for (const auto& u : order) {
    if (done.count(u.get())) continue; // a buffer, placed above
    if (u->op() == Ops::NOOP) {        // identity for codegen (it only carries a custom gradient)
      done[u.get()] = done.at(u->src(0).get());
      continue;
    }
    if (u->src().empty()) {
      done[u.get()] = UOp::make(Ops::NOOP, u->dtype(), {u});
      continue;
    }
    std::vector<UOpRef> src;
    src.reserve(u->src().size());
    bool changed = false;
    for (const auto& s : u->src()) {
      src.push_back(done.at(s.get()));
      changed |= src.back() != s;
    }
    done[u.get()] = changed ? replace_src(u, std::move(src)) : u;
  }
  return done.at(item.ast.get());
}

std::shared_ptr<PreparedKernel> KernelCache::find(const std::string& cache_name, const UOpRef& key) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find({cache_name, key.get()});
  return it == entries_.end() ? nullptr : it->second.kernel;
}

void KernelCache::insert(const std::string& cache_name, UOpRef key, std::shared_ptr<PreparedKernel> kernel) {
  std::lock_guard lock(mutex_);
  const UOp* raw = key.get();
  entries_[{cache_name, raw}] = Entry{std::move(key), std::move(kernel)};
}

void KernelCache::forget_device(const std::string& device_name) {
  std::lock_guard lock(mutex_);
  std::erase_if(entries_, [&](const auto& entry) {
    const std::string& name = entry.first.first; // "CPU" or "CPU|NOOPT"
    return name == device_name || name.starts_with(device_name + "|");
  });
}

void KernelCache::clear() {
  std::lock_guard lock(mutex_);
  entries_.clear();
}

} // namespace tg
