#include "kernel/engine/schedule_cache.hpp"

#include "kernel/runtime/devices.hpp"
#include "kernel/schedule/buffer.hpp"

#include <optional>
#include <unordered_map>

namespace tg {

namespace {
constexpr size_t kMaxEntries = 4096; // a bound for programs whose structures never repeat
} // namespace

// How to replay a schedule: buffers are named by node index (>= 0: an input BUFFER of the
// expression) or by ~j (< 0: the output of the schedule's j-th kernel).
struct ScheduleCache::Entry {
  StructureKey key;
  std::string device; // ScheduleOptions::device: where kernels reading no buffer run
  bool noopt = false, stage = true, fuse_softmax = false;
  int beam = 0;
  struct Output {
    std::string device;
    DType dtype;
    int64_t size = 0;
    Dims shape;
    // The device's allocator, so a replay allocates without looking the device up by name. An
    // entry keeps its device open as its kernels do: forget_kernels drops it on unload.
    std::shared_ptr<Allocator> allocator;
  };
  std::vector<Output> outputs; // one per kernel
  struct Launch {
    std::shared_ptr<PreparedKernel> kernel; // null: an empty output
    std::vector<int32_t> buffers;
  };
  std::vector<Launch> launches;
  std::vector<std::pair<int32_t, int32_t>> becomes; // node index -> output index, or -1: the node itself
  // Hits while TG_EAGER_BATCH=1. From the second on, the kernels go as one launch_batch:
  // the CUDA plugin builds a graph for each new kernel sequence, which an expression replayed
  // once would pay for nothing.
  mutable std::atomic<uint64_t> replays{0};

  bool matches(const Structure& g, const ScheduleOptions& options, const Config& c) const {
    return device == options.device && fuse_softmax == options.fuse_softmax && noopt == c.noopt &&
           beam == c.beam && stage == c.stage && key.matches(g);
  }
};

namespace {

// The entry for a schedule just run, or null when it cannot be replayed (a copy between
// devices, a result that is not a kernel's output).
std::shared_ptr<const ScheduleCache::Entry>
make_entry(const Structure& g, const Schedule& s, std::span<const std::shared_ptr<PreparedKernel>> kernels,
           const ScheduleOptions& options, const Config& settings) {
  using Entry = ScheduleCache::Entry;
  std::optional<StructureKey> key = StructureKey::of(g);
  if (!key) return nullptr; // an opaque arg other than a custom gradient's
  auto e = std::make_shared<Entry>();
  e->key = std::move(*key);
  e->device = options.device;
  e->fuse_softmax = options.fuse_softmax;
  e->noopt = settings.noopt;
  e->beam = settings.beam;
  e->stage = settings.stage;
  std::unordered_map<const UOp*, int32_t> output_of;
  if (kernels.size() != s.items.size()) return nullptr;
  for (size_t i = 0; i < s.items.size(); ++i) {
    const ScheduleItem& item = s.items[i];
    if (item.ast->src(0)->op() == Ops::COPY) return nullptr;
    const UOpRef& out = item.buffers[0];
    output_of.emplace(out.get(), int32_t(e->outputs.size()));
    e->outputs.push_back({buffer_arg(out).device(), out->dtype(), buffer_arg(out).size(), item.shape,
                          open_device(buffer_arg(out).device()).allocator});
    Entry::Launch l;
    l.kernel = kernels[i]; // null for an empty output
    for (const auto& b : item.buffers) {
      if (auto o = output_of.find(b.get()); o != output_of.end())
        l.buffers.push_back(~o->second);
      else if (auto n = g.find(b.get()))
        l.buffers.push_back(*n);
      else
        return nullptr;
    }
    e->launches.push_back(std::move(l));
  }
  for (const auto& lazy : s.keep_alive) {
    auto n = g.find(lazy.get());
    if (!n) return nullptr;
    const UOpRef& view = s.becomes.at(lazy.get());
    if (view == lazy) {
      e->becomes.push_back({*n, -1});
      continue;
    }
    const UOpRef& buffer = is_buffer(view) ? view : view->src(0);
    auto o = output_of.find(buffer.get());
    if (o == output_of.end() || buffer_view(buffer, e->outputs[size_t(o->second)].shape) != view)
      return nullptr;
    e->becomes.push_back({*n, o->second});
  }
  return e;
}

} // namespace

ScheduleCache::Bound ScheduleCache::bind(const Entry& e, const Structure& g) const {
  std::vector<UOpRef> outputs;
  outputs.reserve(e.outputs.size());
  for (const auto& o : e.outputs) {
    outputs.push_back(make_buffer(o.device, o.dtype, o.size));
    buffer_arg(outputs.back())
        .set_storage(o.allocator->alloc(uint64_t(o.size) * uint64_t(o.dtype.itemsize())));
  }
  Bound out;
  std::vector<PreparedLaunch>& launches = out.launches;
  launches.reserve(e.launches.size());
  for (const auto& l : e.launches) {
    PreparedLaunch p{l.kernel, {}};
    p.buffers.reserve(l.buffers.size());
    for (int32_t b : l.buffers) p.buffers.push_back(b >= 0 ? g.order()[size_t(b)] : outputs[size_t(~b)]);
    launches.push_back(std::move(p));
  }
  // (off by default: no count, so the replay path pays nothing for it)
  out.batch = settings_.eager_batch && e.replays.fetch_add(1, std::memory_order_relaxed) >= 1;
  Schedule& s = out.schedule;
  s.keep_alive.reserve(e.becomes.size());
  for (auto [node, output] : e.becomes) {
    const UOpRef& lazy = g.order()[size_t(node)];
    s.becomes[lazy.get()] =
        output < 0 ? lazy : buffer_view(outputs[size_t(output)], e.outputs[size_t(output)].shape);
    s.keep_alive.push_back(lazy);
  }
  return out;
}

std::shared_ptr<const ScheduleCache::Entry> ScheduleCache::find(const Structure& g,
                                                                const ScheduleOptions& options) {
  {
    std::lock_guard lock(mutex_);
    auto [first, last] = entries_.equal_range(g.hash());
    for (auto it = first; it != last; ++it)
      if (it->second->matches(g, options, settings_)) {
        ++hits_;
        return it->second;
      }
  }
  ++misses_;
  return nullptr;
}

void ScheduleCache::insert(const Structure& g, const Schedule& s,
                           std::span<const std::shared_ptr<PreparedKernel>> kernels,
                           const ScheduleOptions& options) {
  auto entry = make_entry(g, s, kernels, options, settings_);
  if (!entry) return;
  std::lock_guard lock(mutex_);
  if (entries_.size() >= kMaxEntries) entries_.clear();
  entries_.emplace(g.hash(), std::move(entry));
}

ScheduleCacheStats ScheduleCache::stats() {
  std::lock_guard lock(mutex_);
  return {hits_.load(), misses_.load(), entries_.size(), batched_.load()};
}

void ScheduleCache::clear() {
  std::lock_guard lock(mutex_);
  entries_.clear();
}

} // namespace tg
